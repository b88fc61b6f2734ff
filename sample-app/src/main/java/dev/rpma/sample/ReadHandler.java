package dev.rpma.sample;

import org.springframework.stereotype.Component;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaRegions;
import dev.rpma.spring.annotation.RpmaConnectionHandler;

/**
 * librpma's example 02-read-to-volatile on the {@code read} endpoint: the accept's private data
 * carries the descriptor of the region {@value #REGION} ({@code struct common_data}), and the client
 * reads it with {@code rpma_read}, which the server never sees.
 *
 * <p>The region is the starter's (configured as {@code rpma.server.regions.greeting}): registered
 * READ_SRC once when the server starts, shared by every connection, deregistered after the last one
 * is deleted. The handler fills it here, before the server listens, and returns at once for each
 * request; nothing waits while a client reads.
 */
@Component
class ReadHandler {

    static final String REGION = "greeting";

    ReadHandler(RpmaRegions regions) {
        byte[] content = ExampleProtocols.cString(ExampleProtocols.READ_CONTENT);
        regions.memory(REGION).put(0, content);
    }

    @RpmaConnectionHandler(endpoint = "read")
    void read(RpmaIncomingRequest request) {
        request.connect(RpmaCommonData.of(request.regionDescriptor(REGION)).encode());
    }
}
