package dev.rpma.client;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;

/**
 * What an {@link RpmaClient} was built with; checked by {@link RpmaClientBuilder#build()}.
 *
 * @param privateData the application's private data of each connect, without a token
 * @param admissionKey the key of the admission token put in front of it, {@code null} for none
 */
record RpmaClientSettings(String name, RpmaServerLocator servers, byte[] privateData, int poolSize,
        Duration connectTimeout, Duration requestTimeout, int receiveSlots, int sendSlots, int maxMessageSize,
        RpmaWireMode mode, int rawWindow, int oneSidedDepth, Backoff backoff, int maxRetries, int eventLoops,
        Duration busyPoll, List<RpmaMessageCodec> codecs, @Nullable RpmaAdmissionKey admissionKey) {

    /**
     * The private data of one connect attempt, {@code null} for none: with a key, a token issued now with a
     * nonce of its own in front of the application's data, since the server admits a token once and a fixed
     * one would be refused as a replay from the second connection of the pool or the first reconnect on.
     */
    byte @Nullable [] connectPrivateData() {
        RpmaAdmissionKey key = this.admissionKey;
        if (key != null) {
            return RpmaAdmissionToken.issue(key, this.privateData);
        }
        return (this.privateData.length > 0) ? this.privateData : null;
    }

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
