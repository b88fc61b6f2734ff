package dev.rpma.sample;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.stereotype.Component;

import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaRegions;
import dev.rpma.server.RpmaSession;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaSessionEvent;

/**
 * librpma's example 03-read-to-persistent on the {@code read-to-persistent} endpoint, the one example
 * in which the server reads: the client registers its {@code struct hello_t} with
 * {@code RPMA_MR_USAGE_READ_SRC} and connects with {@code struct common_data} describing it
 * ({@code data_offset}: where the string starts). Once the connection is established the server reads
 * the {@value #HELLO_STR_SIZE}-byte string with {@code rpma_read} into the region
 * {@value PersistentHandler#REGION} at {@value #OFFSET} ({@link RpmaSession#read}; no thread waits for
 * it), makes it durable ({@link RpmaRegions#makeDurable}), and disconnects, as the example's server
 * does: its client waits for that CLOSED, then disconnects itself. A request whose private data is no
 * {@code struct common_data} is rejected.
 */
@Component
class ReadToPersistentHandler {

    static final String ENDPOINT = "read-to-persistent";

    /** {@code HELLO_STR_SIZE} of the example: what the server reads. */
    static final int HELLO_STR_SIZE = 1024;

    /**
     * Where the string lands in the region: half way, clear of what the other persistent endpoints'
     * clients write in the tests (from offset 0, and 1 KiB for the examples' greeting).
     */
    static final int OFFSET = 512 * 1024;

    private static final String COMMON_DATA = "commonData";

    private static final Log logger = LogFactory.getLog(ReadToPersistentHandler.class);

    private final RpmaRegions regions;

    ReadToPersistentHandler(RpmaRegions regions) {
        this.regions = regions;
    }

    @RpmaConnectionHandler(endpoint = ENDPOINT)
    void accept(RpmaIncomingRequest request) {
        byte[] privateData = request.privateData();
        RpmaCommonData data;
        try {
            data = RpmaCommonData.decode(privateData);
        }
        catch (IllegalArgumentException ex) {
            reject(request, (privateData.length < RpmaCommonData.SIZE)
                    ? "its " + privateData.length + " bytes of private data are fewer than struct common_data's "
                            + RpmaCommonData.SIZE
                    : "its private data is no struct common_data: " + ex.getMessage());
            return;
        }
        int descriptor = data.memoryRegionDescriptor().length;
        if (descriptor != RpmaMemoryRegion.DESCRIPTOR_SIZE) {
            reject(request, "its struct common_data says mr_desc_size " + descriptor + ", not "
                    + RpmaMemoryRegion.DESCRIPTOR_SIZE);
            return;
        }
        request.attributes().put(COMMON_DATA, data);
        request.connect();
    }

    private static void reject(RpmaIncomingRequest request, String why) {
        logger.info("read-to-persistent: rejecting a request: " + why);
        request.reject();
    }

    @RpmaSessionEvent(endpoint = ENDPOINT)
    void established(RpmaSession session) {
        RpmaCommonData data = (RpmaCommonData) session.attributes().get(COMMON_DATA);
        try {
            session.read(data.memoryRegionDescriptor(), data.dataOffset(), PersistentHandler.REGION, OFFSET,
                    HELLO_STR_SIZE).whenComplete((read, failure) -> {
                        try {
                            if (failure == null) {
                                // one page on the loop, as the gpspm endpoint's requests are made durable
                                this.regions.makeDurable(PersistentHandler.REGION, OFFSET, HELLO_STR_SIZE);
                            }
                            else {
                                logger.warn("read-to-persistent: session " + session.id() + ": " + failure.getMessage());
                            }
                        }
                        finally {
                            session.close();
                        }
                    });
        }
        catch (IllegalArgumentException ex) {
            // the descriptor is the client's: a region too small for the string
            logger.info("read-to-persistent: session " + session.id() + " is closed unread: " + ex.getMessage());
            session.close();
        }
    }
}
