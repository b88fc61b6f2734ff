package dev.rpma.sample;

import org.springframework.stereotype.Component;

import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandler;

/**
 * librpma's examples 04-write-to-persistent (endpoint {@code write}) and 05-flush-to-persistent
 * (endpoint {@code flush}) over the region {@value #REGION}, which lives in a file
 * ({@code rpma.server.regions.persistent}: a file mapped shared by default, or a file on a DAX file
 * system with {@code store: dax}). The accept carries {@code struct common_data}: for {@code write}
 * the region's descriptor alone, as example 04's server sends it (its client flushes with a read
 * after the write); for {@code flush} also the descriptor of the region's peer configuration, from
 * which example 05's client learns whether it may flush with {@code RPMA_FLUSH_TYPE_PERSISTENT} (dax
 * with direct write to PMem) or must use {@code RPMA_FLUSH_TYPE_VISIBILITY}.
 *
 * <p>The server takes no part in the transfers; as the examples' servers do, it waits for the client
 * to disconnect. What the clients wrote is in the file when the app starts again.
 */
@Component
class PersistentHandler {

    static final String REGION = "persistent";

    @RpmaConnectionHandler(endpoint = "write")
    void write(RpmaIncomingRequest request) {
        request.connect(RpmaCommonData.of(request.regionDescriptor(REGION)).encode());
    }

    @RpmaConnectionHandler(endpoint = "flush")
    void flush(RpmaIncomingRequest request) {
        request.connect(request.commonData(REGION).encode());
    }
}
