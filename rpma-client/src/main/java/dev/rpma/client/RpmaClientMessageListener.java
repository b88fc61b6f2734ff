package dev.rpma.client;

/**
 * Gets the messages of a connection that no request waits for: MESSAGE frames from a framed server,
 * raw messages while no exchange awaits one. Called on the connection's event loop: return at once.
 */
@FunctionalInterface
public interface RpmaClientMessageListener {

    void onMessage(byte[] message, RpmaClientConnection connection);
}
