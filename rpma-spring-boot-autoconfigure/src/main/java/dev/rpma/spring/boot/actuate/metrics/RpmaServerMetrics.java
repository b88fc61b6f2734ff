package dev.rpma.spring.boot.actuate.metrics;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import dev.rpma.jna.RpmaException;
import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaServerObserver;

/**
 * Micrometer metrics of an RDMA server: binds an {@link RpmaEndpointMetrics} to each endpoint as it is
 * created, registers error counters as new librpma errors appear, and times the handlers and the
 * time requests wait in the queue. Both timers publish a percentile histogram, so percentiles can be
 * computed by the monitoring system (turn it off with
 * {@code management.metrics.distribution.percentiles-histogram.rpma.handler.duration=false}).
 */
public class RpmaServerMetrics implements RpmaServerObserver {

    /** Time a handler took to decide a request, by {@code endpoint}, {@code handler} and {@code exception}. */
    public static final String HANDLER_DURATION = "rpma.handler.duration";

    /** Time a request waited in the queue for a handler thread, by {@code endpoint}. */
    public static final String QUEUE_WAIT = "rpma.request.queue.wait";

    /** The wrapper the server core carries a handler's checked exception in; the tag names the cause. */
    private static final String CHECKED_EXCEPTION_CARRIER = "dev.rpma.spring.server.RpmaAcceptor$RpmaHandlerException";

    private static final String NONE = "none";

    private final MeterRegistry registry;

    private final Map<String, RpmaEndpointMetrics> endpoints = new ConcurrentHashMap<>();

    private final Map<String, Timer> queueWaits = new ConcurrentHashMap<>();

    private final Map<HandlerTimerKey, Timer> handlerDurations = new ConcurrentHashMap<>();

    public RpmaServerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void endpointCreated(RpmaEndpointServer server) {
        RpmaEndpointMetrics metrics = new RpmaEndpointMetrics(server);
        metrics.bindTo(this.registry);
        this.endpoints.put(server.name(), metrics);
    }

    @Override
    public void error(String endpoint, RpmaException error) {
        RpmaEndpointMetrics metrics = this.endpoints.get(endpoint);
        if (metrics != null) {
            metrics.bindNewErrors();
        }
    }

    @Override
    public void queueWait(String endpoint, Duration wait) {
        this.queueWaits.computeIfAbsent(endpoint, (name) -> Timer.builder(QUEUE_WAIT)
            .tag("endpoint", name)
            .description("Time a connection request waited in the queue for a handler thread")
            .publishPercentileHistogram()
            .register(this.registry)).record(wait);
    }

    @Override
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Supplier<T> invocation) {
        Clock clock = this.registry.config().clock();
        long start = clock.monotonicTime();
        Throwable failure = null;
        try {
            return invocation.get();
        }
        catch (RuntimeException | Error ex) {
            failure = ex;
            throw ex;
        }
        finally {
            handlerDuration(request.endpointName(), handlerName, exceptionTag(failure))
                .record(clock.monotonicTime() - start, TimeUnit.NANOSECONDS);
        }
    }

    /** Runs for every request (on the acceptor thread for an inline handler): a lookup, no lambda. */
    private Timer handlerDuration(String endpoint, String handler, String exception) {
        HandlerTimerKey key = new HandlerTimerKey(endpoint, handler, exception);
        Timer timer = this.handlerDurations.get(key);
        return (timer != null) ? timer : this.handlerDurations.computeIfAbsent(key, this::newHandlerDuration);
    }

    private Timer newHandlerDuration(HandlerTimerKey key) {
        return Timer.builder(HANDLER_DURATION)
            .tag("endpoint", key.endpoint)
            .tag("handler", key.handler)
            .tag("exception", key.exception)
            .description("Time a connection handler took to decide a request")
            .publishPercentileHistogram()
            .register(this.registry);
    }

    private static String exceptionTag(Throwable failure) {
        if (failure == null) {
            return NONE;
        }
        Throwable thrown = (failure.getClass().getName().equals(CHECKED_EXCEPTION_CARRIER) && failure.getCause() != null)
                ? failure.getCause() : failure;
        String name = thrown.getClass().getSimpleName();
        return name.isEmpty() ? thrown.getClass().getName() : name;
    }

    /**
     * Not a record: a record's {@code hashCode} and {@code equals} are bootstrapped method handles, and
     * under C1 (the sample app's JIT in the soft-RoCE VM) they showed in the acceptor's profile.
     */
    private static final class HandlerTimerKey {

        private final String endpoint;

        private final String handler;

        private final String exception;

        HandlerTimerKey(String endpoint, String handler, String exception) {
            this.endpoint = endpoint;
            this.handler = handler;
            this.exception = exception;
        }

        @Override
        public boolean equals(Object other) {
            return other instanceof HandlerTimerKey key && this.endpoint.equals(key.endpoint)
                    && this.handler.equals(key.handler) && this.exception.equals(key.exception);
        }

        @Override
        public int hashCode() {
            return (31 * this.endpoint.hashCode() + this.handler.hashCode()) * 31 + this.exception.hashCode();
        }
    }
}
