package dev.rpma.spring.boot.autoconfigure;

import org.springframework.context.ApplicationEvent;

import dev.rpma.server.RpmaServer;

/** Every endpoint accepts connection requests. */
public class RpmaServerStartedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    public RpmaServerStartedEvent(RpmaServer server) {
        super(server);
    }

    public RpmaServer getServer() {
        return (RpmaServer) getSource();
    }
}
