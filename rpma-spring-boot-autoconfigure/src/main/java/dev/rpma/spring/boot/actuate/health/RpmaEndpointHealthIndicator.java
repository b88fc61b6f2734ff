package dev.rpma.spring.boot.actuate.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaEndpointState;

/**
 * Health of one RDMA endpoint: {@code UP} while it listens and its acceptor runs (also while paused),
 * {@code DOWN} with the cause once the endpoint or its acceptor failed, {@code OUT_OF_SERVICE} before it
 * starts accepting and from the moment it is stopping. Details: address, port, state, queue depth and
 * capacity, active connections.
 */
public class RpmaEndpointHealthIndicator implements HealthIndicator {

    private final RpmaEndpointServer server;

    public RpmaEndpointHealthIndicator(RpmaEndpointServer server) {
        this.server = server;
    }

    @Override
    public Health health() {
        RpmaEndpointState state = this.server.state();
        Health.Builder builder = switch (state) {
            case RUNNING, PAUSED -> Health.up();
            case FAILED -> (this.server.failure() != null) ? Health.down(this.server.failure()) : Health.down();
            case CREATED, STOPPING, STOPPED -> Health.outOfService();
        };
        return builder.withDetail("address", this.server.settings().address())
            .withDetail("port", this.server.settings().port())
            .withDetail("state", state.name())
            .withDetail("queueSize", this.server.queueSize())
            .withDetail("queueCapacity", this.server.queueCapacity())
            .withDetail("activeConnections", this.server.activeConnections())
            .build();
    }
}
