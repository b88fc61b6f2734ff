package dev.rpma.spring.boot.autoconfigure.client;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaClientObserver;

/**
 * The clients' meters: {@code rpma.client.requests} (a timer with a percentile histogram, by client,
 * server, route and outcome), {@code rpma.client.in-flight}, {@code rpma.client.connections} (by
 * state), {@code rpma.client.reconnects} and {@code rpma.client.late-replies}.
 *
 * <p>When the requests are observed ({@link RpmaClientObservations}), Micrometer's meter handler makes
 * {@code rpma.client.requests} from the observations, with the same tags and {@code error}, and this
 * class does not time them: a meter of one name must not be registered with two sets of tags.
 * Otherwise the timers are made once per client, server, route and outcome, so a request that ends
 * allocates nothing here.
 */
public final class RpmaClientMetrics implements RpmaClientObserver, RpmaClients.Listener {

    private static final Outcome[] OUTCOMES = Outcome.values();

    private final MeterRegistry registry;

    private final boolean timesRequests;

    /** Timers by client, server and route, then by outcome (null until its first request). */
    private final Map<String, Map<String, Map<String, Timer[]>>> timers = new ConcurrentHashMap<>();

    /**
     * @param timesRequests whether this times the requests; {@code false} when they are observed and
     *     the timer comes from the observations
     */
    public RpmaClientMetrics(MeterRegistry registry, boolean timesRequests) {
        this.registry = registry;
        this.timesRequests = timesRequests;
    }

    /** The {@code route} tag of a route: {@code none} in raw mode. */
    static String routeTag(String route) {
        return route.isEmpty() ? "none" : route;
    }

    /** Registers the gauges of {@code client}, which read it while it lives. */
    @Override
    public void created(RpmaClient client) {
        Gauge.builder("rpma.client.in-flight", client, RpmaClient::inFlight).tag("client", client.name())
            .description("Requests and one-sided operations in flight or waiting").register(this.registry);
        for (RpmaClientConnectionState state : RpmaClientConnectionState.values()) {
            Gauge.builder("rpma.client.connections", client, (c) -> c.connectionStates().get(state))
                .tag("client", client.name()).tag("state", state.name().toLowerCase(Locale.ROOT).replace('_', '-'))
                .description("Pooled connections by state").register(this.registry);
        }
    }

    @Override
    public void requestCompleted(String client, String server, String route, Outcome outcome, long nanos) {
        if (!this.timesRequests) {
            return;
        }
        Timer[] byOutcome = timers(client, server, route);
        Timer timer = byOutcome[outcome.ordinal()];
        if (timer == null) {
            // made on first use, so that an outcome never met has no series (each has its histogram's)
            timer = Timer.builder("rpma.client.requests").tag("client", client).tag("server", server)
                .tag("route", routeTag(route)).tag("outcome", outcome.tag())
                .description("Requests, messages and exchanges of the RDMA clients, by outcome")
                .publishPercentileHistogram()
                .register(this.registry);
            // a race registers the same meter twice: the registry returns the one it has
            byOutcome[outcome.ordinal()] = timer;
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
    }

    private Timer[] timers(String client, String server, String route) {
        Map<String, Map<String, Timer[]>> byServer = this.timers.get(client);
        if (byServer == null) {
            byServer = this.timers.computeIfAbsent(client, (key) -> new ConcurrentHashMap<>());
        }
        Map<String, Timer[]> byRoute = byServer.get(server);
        if (byRoute == null) {
            byRoute = byServer.computeIfAbsent(server, (key) -> new ConcurrentHashMap<>());
        }
        Timer[] byOutcome = byRoute.get(route);
        if (byOutcome == null) {
            byOutcome = byRoute.computeIfAbsent(route, (key) -> new Timer[OUTCOMES.length]);
        }
        return byOutcome;
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
