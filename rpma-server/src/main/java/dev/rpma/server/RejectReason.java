package dev.rpma.server;

import java.util.Locale;

/** Why a connection request was rejected; bounded, so usable as a metric tag. */
public enum RejectReason {

    /** The handler called {@link RpmaIncomingRequest#reject()}. */
    HANDLER,
    /** The queue to the handlers was full. */
    QUEUE_FULL,
    /** The endpoint had as many connections as its limit allows. */
    CAPACITY,
    /** The handler threw, or returned without connecting or rejecting. */
    HANDLER_FAILED,
    /** The handler did not decide within the request deadline. */
    DEADLINE,
    /** Accepting is paused. */
    PAUSED,
    /** The endpoint was stopping. */
    SHUTDOWN,
    /** The endpoint's admission step refused it (see {@link RpmaAdmission}): a missing, wrong, expired or replayed token. */
    UNAUTHENTICATED,
    /**
     * The endpoint's request-rate limit ({@link RpmaEndpointSettings.Limits#requestRate()}) was reached, or its
     * admission step said so.
     */
    RATE_LIMITED;

    /** Lower-case tag value. */
    public String tag() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }
}
