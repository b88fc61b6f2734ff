package dev.rpma.server;

/**
 * Told when sessions are established and when they end. Called on the session's event loop, which
 * serves other sessions too: keep it short and never block. An exception is logged and otherwise
 * ignored.
 */
public interface RpmaSessionListener {

    /** The connection is established; messages can be sent. */
    default void sessionEstablished(RpmaSession session) {
    }

    /**
     * The session ended: its connection is deleted and its buffers are released. Called once per
     * session that a connection handler accepted, established or not.
     */
    default void sessionEnded(RpmaSession session, RpmaSessionEnd end) {
    }
}
