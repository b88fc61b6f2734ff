package dev.rpma.server;

/** Life of a served endpoint. */
public enum RpmaEndpointState {

    /** Listening, not yet accepting. */
    CREATED,
    /** Accepting connection requests. */
    RUNNING,
    /** Listening, but rejecting every request (see {@link RpmaServedEndpoint#pause()}). */
    PAUSED,
    /**
     * Listening, but taking no request for now: obtaining one failed, for lack of resources (memory,
     * locked memory or file descriptors for its queues) or with a provider error that may pass
     * ({@link RpmaServedEndpoint#degradedBy()}). The acceptor tries again after a growing pause of at
     * most a second, and the endpoint is RUNNING again at its next success; sessions go on meanwhile.
     */
    DEGRADED,
    /** Stopping: no new requests; sessions are given the grace period. */
    STOPPING,
    /** Stopped; every native object is released. */
    STOPPED,
    /** Stopped by an error that left the endpoint unusable; see {@link RpmaServedEndpoint#failure()}. */
    FAILED
}
