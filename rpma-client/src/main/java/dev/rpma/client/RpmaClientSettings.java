package dev.rpma.client;

import java.time.Duration;
import java.util.List;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaWireMode;

/** What an {@link RpmaClient} was built with; checked by {@link RpmaClientBuilder#build()}. */
record RpmaClientSettings(String name, String address, int port, byte[] privateData, int poolSize,
        Duration connectTimeout, Duration requestTimeout, int receiveSlots, int sendSlots, int maxMessageSize,
        RpmaWireMode mode, int rawWindow, int oneSidedDepth, Backoff backoff, int maxRetries, int eventLoops,
        Duration busyPoll, List<RpmaMessageCodec> codecs) {

    /** {@code address:port}, for messages. */
    String server() {
        return this.address + ":" + this.port;
    }

    boolean framed() {
        return this.mode == RpmaWireMode.FRAMED;
    }

    /** Bytes each receive is posted for: the largest frame (framed) or message (raw). */
    int receiveLength() {
        return framed() ? dev.rpma.server.RpmaFraming.slotSize(this.maxMessageSize) : this.maxMessageSize;
    }
}
