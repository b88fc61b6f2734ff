package dev.rpma.spring.boot.autoconfigure;

import org.springframework.context.ApplicationEvent;

import dev.rpma.server.RpmaServer;

/** Every endpoint stopped and every native object of the server is released. */
public class RpmaServerStoppedEvent extends ApplicationEvent {

    private static final long serialVersionUID = 1L;

    public RpmaServerStoppedEvent(RpmaServer server) {
        super(server);
    }

    public RpmaServer getServer() {
        return (RpmaServer) getSource();
    }
}
