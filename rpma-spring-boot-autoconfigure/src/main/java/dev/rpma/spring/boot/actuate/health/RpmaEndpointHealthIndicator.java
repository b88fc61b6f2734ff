package dev.rpma.spring.boot.actuate.health;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaEndpointState;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaServer;

/**
 * Health of one RDMA endpoint: {@code UP} while it takes requests; {@code OUT_OF_SERVICE} while paused
 * (it turns every client away), before it listens and starts accepting, and from the moment it is
 * stopping; {@code DOWN} with the cause once the endpoint or its acceptor failed, and while it is
 * degraded (short of resources for new connections: it takes none, and is {@code UP} again once it
 * does), or while the network link of its address is down (no client reaches it then, though librpma
 * reports nothing: the detail {@code link} says why). Details: address, port, state, request queue
 * depth and capacity, active sessions.
 */
public class RpmaEndpointHealthIndicator implements HealthIndicator {

    private final RpmaServer server;

    private final RpmaEndpointSettings settings;

    public RpmaEndpointHealthIndicator(RpmaServer server, RpmaEndpointSettings settings) {
        this.server = server;
        this.settings = settings;
    }

    @Override
    public Health health() {
        RpmaServedEndpoint endpoint = this.server.endpoint(this.settings.name());
        if (endpoint == null) {
            return Health.outOfService().withDetail("address", this.settings.address())
                .withDetail("port", this.settings.port())
                .withDetail("state", RpmaEndpointState.CREATED.name())
                .build();
        }
        RpmaEndpointState state = endpoint.state();
        String link = (state == RpmaEndpointState.RUNNING || state == RpmaEndpointState.DEGRADED
                || state == RpmaEndpointState.PAUSED) ? endpoint.linkProblem() : null;
        Health.Builder builder = (link != null) ? Health.down().withDetail("link", link) : switch (state) {
            case RUNNING -> Health.up();
            // it listens but turns every client away: readiness probes must send traffic elsewhere
            case PAUSED -> Health.outOfService();
            case FAILED -> (endpoint.failure() != null) ? Health.down(endpoint.failure()) : Health.down();
            // it takes no new clients until the shortage passes: probes must send them elsewhere meanwhile
            case DEGRADED -> (endpoint.degradedBy() != null) ? Health.down(endpoint.degradedBy()) : Health.down();
            case CREATED, STOPPING, STOPPED -> Health.outOfService();
        };
        return builder.withDetail("address", this.settings.address())
            .withDetail("port", this.settings.port())
            .withDetail("state", state.name())
            .withDetail("queueSize", endpoint.queueSize())
            .withDetail("queueCapacity", endpoint.queueCapacity())
            .withDetail("activeSessions", endpoint.activeConnections())
            .build();
    }
}
