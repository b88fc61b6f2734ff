package dev.rpma.server;

/** Life of a served endpoint. */
public enum RpmaEndpointState {

    /** Listening, not yet accepting. */
    CREATED,
    /** Accepting connection requests. */
    RUNNING,
    /** Listening, but rejecting every request (see {@link RpmaServedEndpoint#pause()}). */
    PAUSED,
    /** Stopping: no new requests; sessions are given the grace period. */
    STOPPING,
    /** Stopped; every native object is released. */
    STOPPED,
    /** Stopped by an error that left the endpoint unusable; see {@link RpmaServedEndpoint#failure()}. */
    FAILED
}
