package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.time.Duration;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

import dev.rpma.client.protocol.CommonData;
import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.MemoryUsage;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaServerConnection;

/**
 * librpma's example 02-read-to-volatile on the {@code read} endpoint: registers the string with
 * READ_SRC, sends the region's descriptor in the accept's private data ({@code struct common_data}),
 * and keeps the region until the client has closed the connection; the client reads with
 * {@code rpma_read}, which the server never sees.
 *
 * <p>One region per connection, owned by the handler invocation: it is deregistered when the
 * connection closes, on this thread, before the handler returns, and so always before the server
 * deletes its peer at shutdown (the acceptor closes a connection at the latest when the grace period
 * ends, which ends this wait). A region shared by all connections would need its own shutdown hook
 * between "all connections closed" and "peer deleted", which the starter does not offer. The price:
 * a handler thread waits for as long as a read connection is open.
 */
@Component
class ReadHandler {

    private static final Log logger = LogFactory.getLog(ReadHandler.class);

    /** Longest wait for the client to close before the region goes anyway. */
    private static final Duration MAX_CONNECTION_TIME = Duration.ofHours(1);

    @RpmaConnectionHandler(endpoint = "read")
    void read(RpmaIncomingRequest request) throws InterruptedException {
        byte[] content = ExampleProtocols.cString(ExampleProtocols.READ_CONTENT);
        ByteBuffer memory = ByteBuffer.allocateDirect(content.length).put(0, content);
        try (RpmaMemoryRegion region = request.peer().register(memory, MemoryUsage.READ_SRC)) {
            RpmaServerConnection connection = request.connect(CommonData.of(region.descriptor()).encode());
            if (!connection.awaitClosed(MAX_CONNECTION_TIME)) {
                logger.warn("read: a client kept its connection for " + MAX_CONNECTION_TIME + "; disconnecting it");
                connection.disconnect();
            }
        }
    }
}
