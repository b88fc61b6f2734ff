package dev.rpma.server;

/** Life of a session; it only moves forward. */
public enum RpmaSessionState {

    /** Accepted; waiting for the connection to be established. */
    ACCEPTED,
    /** Established: messages flow. */
    ESTABLISHED,
    /** Ending: disconnected, waiting for the connection manager to confirm. */
    CLOSING,
    /** Ended: its connection and buffers are released. */
    CLOSED
}
