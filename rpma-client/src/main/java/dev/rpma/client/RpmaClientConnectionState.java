package dev.rpma.client;

/** Where one pooled connection of an {@link RpmaClient} is. */
public enum RpmaClientConnectionState {
    /** Its connection request is out; requests given to it wait. */
    CONNECTING,
    /** Established: it sends requests and one-sided operations. */
    ESTABLISHED,
    /** The last attempt failed or the connection was lost; the next attempt is scheduled. */
    BACKING_OFF,
    /** The client is closing it. */
    CLOSING,
    /** Deleted, for good. */
    CLOSED
}
