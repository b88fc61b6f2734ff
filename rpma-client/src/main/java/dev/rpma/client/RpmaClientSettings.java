package dev.rpma.client;

import java.time.Duration;
import java.util.List;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaWireMode;

/** What an {@link RpmaClient} was built with; checked by {@link RpmaClientBuilder#build()}. */
record RpmaClientSettings(String name, RpmaServerLocator servers, byte[] privateData, int poolSize,
        Duration connectTimeout, Duration requestTimeout, int receiveSlots, int sendSlots, int maxMessageSize,
        RpmaWireMode mode, int rawWindow, int oneSidedDepth, Backoff backoff, int maxRetries, int eventLoops,
        Duration busyPoll, List<RpmaMessageCodec> codecs) {

    /** {@code address:port}, or what the locator calls its servers, for messages. */
    String server() {
        return this.servers.toString();
    }

    boolean framed() {
        return this.mode == RpmaWireMode.FRAMED;
    }

    /** Bytes each receive is posted for: the largest frame (framed) or message (raw). */
    int receiveLength() {
        return framed() ? dev.rpma.server.RpmaFraming.slotSize(this.maxMessageSize) : this.maxMessageSize;
    }
}
