package dev.rpma.spring.server;

/** Life of an endpoint server. */
public enum RpmaEndpointState {

    /** Listening, not yet accepting. */
    CREATED,
    /** Accepting connection requests. */
    RUNNING,
    /** Listening, but rejecting every request (see {@link RpmaEndpointServer#pause()}). */
    PAUSED,
    /** Stopping: no new requests; handlers and connections are given the grace period. */
    STOPPING,
    /** Stopped; every native object is released. */
    STOPPED,
    /** Stopped by an error that left the endpoint unusable; see {@link RpmaEndpointServer#failure()}. */
    FAILED
}
