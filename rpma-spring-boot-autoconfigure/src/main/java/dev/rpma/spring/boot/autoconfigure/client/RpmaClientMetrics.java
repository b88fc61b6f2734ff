package dev.rpma.spring.boot.autoconfigure.client;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaClientObserver;

/**
 * The clients' meters: {@code rpma.client.requests} (a timer by client and outcome),
 * {@code rpma.client.in-flight}, {@code rpma.client.connections} (by state),
 * {@code rpma.client.reconnects} and {@code rpma.client.late-replies}.
 */
public final class RpmaClientMetrics implements RpmaClientObserver, RpmaClients.Listener {

    private final MeterRegistry registry;

    public RpmaClientMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** Registers the gauges of {@code client}, which read it while it lives. */
    @Override
    public void created(RpmaClient client) {
        Gauge.builder("rpma.client.in-flight", client, RpmaClient::inFlight).tag("client", client.name())
            .description("Requests and one-sided operations in flight or waiting").register(this.registry);
        for (RpmaClientConnectionState state : RpmaClientConnectionState.values()) {
            Gauge.builder("rpma.client.connections", client, (c) -> c.connectionStates().get(state))
                .tag("client", client.name()).tag("state", state.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'))
                .description("Pooled connections by state").register(this.registry);
        }
    }

    @Override
    public void requestCompleted(String client, Outcome outcome, long nanos) {
        Timer.builder("rpma.client.requests").tag("client", client).tag("outcome", outcome.tag())
            .description("Requests, messages and exchanges of the RDMA clients, by outcome").register(this.registry)
            .record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public void reconnectScheduled(String client, int attempt, Duration delay) {
        this.registry.counter("rpma.client.reconnects", "client", client).increment();
    }

    @Override
    public void lateReplyDropped(String client) {
        this.registry.counter("rpma.client.late-replies", "client", client).increment();
    }
}
