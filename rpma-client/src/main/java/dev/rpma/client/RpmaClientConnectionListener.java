package dev.rpma.client;

/**
 * Told when a pooled connection of an {@link RpmaClient} is established and when it ends, for
 * protocols whose steps follow the connection's life (librpma's example 01 reads the accept's private
 * data, then waits for the server to disconnect). Called on the connection's event loop: return at
 * once. Both methods do nothing by default.
 */
public interface RpmaClientConnectionListener {

    /** A listener that ignores everything. */
    RpmaClientConnectionListener NONE = new RpmaClientConnectionListener() {
    };

    /**
     * {@code connection} is established. During the call its {@link RpmaClientConnection#privateData()},
     * {@link RpmaClientConnection#commonData()} and {@link RpmaClientConnection#remoteRegionSize()} are
     * the accept's, even when the server ends the connection at once (they are cleared when it ends).
     */
    default void established(RpmaClientConnection connection) {
    }

    /**
     * An attempt of {@code connection} failed, or its established connection ended, for {@code why}:
     * {@link RpmaConnectRejectedException}, {@link RpmaServerUnreachableException} (the connect timeout
     * included), {@link RpmaConnectionLostException} (the server's CLOSED, LOST, a failed completion). The
     * pool connects again after its back-off; a client that is closing tells nothing.
     */
    default void ended(RpmaClientConnection connection, RpmaClientException why) {
    }
}
