package dev.rpma.client;

import java.util.Objects;

/**
 * Where one connection of an {@link RpmaClient} connects: a server's IP address, reachable over RDMA,
 * and the port of its endpoint.
 */
public record RpmaServerAddress(String address, int port) {

    public RpmaServerAddress {
        Objects.requireNonNull(address, "address");
        if (address.isBlank()) {
            throw new IllegalArgumentException("A server's address must not be blank");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1 to 65535, got " + port);
        }
    }

    /** {@code address:port}. */
    @Override
    public String toString() {
        return this.address + ":" + this.port;
    }
}
