package dev.rpma.sample;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.RpmaRegions;
import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaMessageHandler;

/**
 * The shape of librpma's example 09-flush-to-persistent-GPSPM (the general-purpose server
 * persistency method) on the {@code gpspm} endpoint, in raw messages of fixed layout instead of the
 * example's protocol buffers: the accept carries {@code struct common_data} of the region
 * {@value PersistentHandler#REGION}; the client writes into it with {@code rpma_write}, then sends a
 * flush request, 24 bytes little-endian {@code {u64 offset; u64 length; u64 op_context}} (offset
 * from {@code data_offset}, which is 0); the server makes the range durable
 * ({@link RpmaRegions#makeDurable}) and only then answers with the 8-byte {@code op_context}. The
 * request arrives after the write's data on the same connection, so what the server makes durable
 * is what the client wrote.
 */
@Component
class FlushByMessageHandler {

    static final int REQUEST_SIZE = 3 * Long.BYTES;

    private final RpmaRegions regions;

    FlushByMessageHandler(RpmaRegions regions) {
        this.regions = regions;
    }

    @RpmaConnectionHandler(endpoint = "gpspm")
    void accept(RpmaIncomingRequest request) {
        request.connect(request.commonData(PersistentHandler.REGION).encode());
    }

    @RpmaMessageHandler(endpoint = "gpspm")
    ByteBuffer flush(ByteBuffer message, RpmaSession session) {
        if (message.remaining() != REQUEST_SIZE) {
            throw new RpmaProtocolException("a flush request is " + REQUEST_SIZE + " bytes, not " + message.remaining());
        }
        ByteBuffer request = message.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long offset = request.getLong(0);
        long length = request.getLong(8);
        long context = request.getLong(16);
        int capacity = this.regions.memory(PersistentHandler.REGION).capacity();
        if (offset < 0 || length < 0 || offset > capacity || length > capacity - offset) {
            throw new RpmaProtocolException("a flush request for " + length + " bytes at " + offset + " is outside the "
                    + capacity + "-byte region");
        }
        this.regions.makeDurable(PersistentHandler.REGION, (int) offset, (int) length);
        return session.newMessage().order(ByteOrder.LITTLE_ENDIAN).putLong(context).flip();
    }
}
