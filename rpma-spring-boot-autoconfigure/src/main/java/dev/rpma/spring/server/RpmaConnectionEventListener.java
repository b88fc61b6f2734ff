package dev.rpma.spring.server;

import dev.rpma.jna.RpmaConnectionEvent;

/**
 * Reacts to the events of accepted connections (ESTABLISHED, CLOSED, LOST). Called on the
 * endpoint's event-loop thread, which also accepts requests: keep it short and never block.
 */
@FunctionalInterface
public interface RpmaConnectionEventListener {

    void onEvent(RpmaServerConnection connection, RpmaConnectionEvent event);
}
