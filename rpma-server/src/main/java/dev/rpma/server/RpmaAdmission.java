package dev.rpma.server;

import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * The admission step of an endpoint: decides from a connection request's private data, before the
 * request takes a place under the connection limit, a slot of the handlers' queue or a handler
 * thread, whether it goes on to the connection handler. A refused request is rejected at once and
 * counted as {@link RejectReason#UNAUTHENTICATED} or {@link RejectReason#RATE_LIMITED}.
 *
 * <p>It runs on the endpoint's acceptor thread, for every request the endpoint takes, so it must be
 * cheap and must never block (no I/O, no locks held by other threads for long): while it runs, the
 * endpoint takes no other request. One that throws has the request rejected as unauthenticated.
 * The built-in one is {@link dev.rpma.server.admission.RpmaTokenAdmission}.
 */
@FunctionalInterface
public interface RpmaAdmission {

    /**
     * Decides one request.
     *
     * @param endpoint the name of the endpoint the request arrived on
     * @param privateData the request's private data (a copy the step may keep); it comes from a peer
     *     that is not authenticated yet: escape it before logging it ({@link RpmaEscaping})
     */
    Decision admit(String endpoint, byte[] privateData);

    /**
     * This step, then {@code next} on what this one admitted (the private data it passes on): a request
     * goes on only when both admit it.
     */
    default RpmaAdmission andThen(RpmaAdmission next) {
        Objects.requireNonNull(next, "next");
        return (endpoint, privateData) -> {
            Decision first = admit(endpoint, privateData);
            if (!first.isAdmitted()) {
                return first;
            }
            byte[] passedOn = first.privateData();
            Decision second = next.admit(endpoint, (passedOn != null) ? passedOn : privateData);
            return (second.isAdmitted() && second.privateData() == null) ? first : second;
        };
    }

    /** {@code admission} on the endpoint named {@code endpoint}; every other endpoint's requests pass as they are. */
    static RpmaAdmission forEndpoint(String endpoint, RpmaAdmission admission) {
        Objects.requireNonNull(endpoint, "endpoint");
        Objects.requireNonNull(admission, "admission");
        return (name, privateData) -> endpoint.equals(name) ? admission.admit(name, privateData) : Decision.ADMIT;
    }

    /** What an admission step decided: admitted, with the private data the handler sees, or refused, with the reason. */
    final class Decision {

        /** Admitted; the handler and the session see the private data as the client sent it. */
        public static final Decision ADMIT = new Decision(null, null);

        /** Refused: the request does not prove who sent it. */
        public static final Decision UNAUTHENTICATED = new Decision(RejectReason.UNAUTHENTICATED, null);

        /** Refused: the sender sends more requests than it may. */
        public static final Decision RATE_LIMITED = new Decision(RejectReason.RATE_LIMITED, null);

        private final @Nullable RejectReason rejectReason;

        private final byte @Nullable [] privateData;

        private Decision(@Nullable RejectReason rejectReason, byte @Nullable [] privateData) {
            this.rejectReason = rejectReason;
            this.privateData = privateData;
        }

        /**
         * Admitted; the connection handler ({@link RpmaIncomingRequest#privateData()}) and the session
         * ({@link RpmaSession#privateData()}) see {@code privateData} instead of what the client sent: for
         * instance what follows a token the step consumed.
         */
        public static Decision admit(byte[] privateData) {
            return new Decision(null, Arrays.copyOf(privateData, privateData.length));
        }

        public boolean isAdmitted() {
            return this.rejectReason == null;
        }

        /** {@link RejectReason#UNAUTHENTICATED} or {@link RejectReason#RATE_LIMITED} when refused, else {@code null}. */
        public @Nullable RejectReason rejectReason() {
            return this.rejectReason;
        }

        /** What the handler sees instead of the private data received, or {@code null}: what was received. */
        public byte @Nullable [] privateData() {
            return (this.privateData != null) ? Arrays.copyOf(this.privateData, this.privateData.length) : null;
        }

        /** The admitted private data without a copy, for the acceptor that hands it on. */
        byte @Nullable [] privateDataUnsafe() {
            return this.privateData;
        }

        @Override
        public String toString() {
            // never the bytes: they come from a peer
            return (this.rejectReason != null) ? "Decision[refused: " + this.rejectReason.tag() + "]"
                    : (this.privateData != null) ? "Decision[admitted, " + this.privateData.length + " bytes passed on]"
                            : "Decision[admitted]";
        }
    }
}
