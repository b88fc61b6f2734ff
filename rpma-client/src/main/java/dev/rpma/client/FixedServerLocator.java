package dev.rpma.client;

import org.jspecify.annotations.Nullable;

/** The one server of a client built with an address and a port. */
record FixedServerLocator(RpmaServerAddress server) implements RpmaServerLocator {

    @Override
    public RpmaServerAddress next(@Nullable RpmaServerAddress previous) {
        return this.server;
    }

    @Override
    public String toString() {
        return this.server.toString();
    }
}
