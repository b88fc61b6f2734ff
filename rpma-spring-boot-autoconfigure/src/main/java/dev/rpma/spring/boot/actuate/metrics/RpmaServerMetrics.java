package dev.rpma.spring.boot.actuate.metrics;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Clock;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaException;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerObserver;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * Micrometer metrics of an RDMA server: binds an {@link RpmaEndpointMetrics} to each endpoint as it is
 * created, registers error counters as new librpma errors appear, times the connection handlers, the
 * time requests wait in the queue, and (each session's first message, then one in
 * {@value RpmaServer#HANDLER_TIMING_SAMPLE}) the message handlers, and counts each event loop's time
 * busy and idle. The timers publish a percentile histogram, so percentiles can be computed by the monitoring system (turn it off with
 * {@code management.metrics.distribution.percentiles-histogram.rpma.handler.duration=false}).
 */
public class RpmaServerMetrics implements RpmaServerObserver {

    /** Time a connection handler took to decide a request, by {@code endpoint}, {@code handler} and {@code exception}. */
    public static final String HANDLER_DURATION = "rpma.handler.duration";

    /** Time a request waited in the queue for a handler thread, by {@code endpoint}. */
    public static final String QUEUE_WAIT = "rpma.request.queue.wait";

    /** Time a message handler took, sampled, by {@code endpoint}, {@code handler} and {@code outcome}. */
    public static final String MESSAGE_HANDLER_DURATION = "rpma.message.handler.duration";

    /** Time an event loop spent, by {@code loop} and {@code state}: {@code idle} (waiting) or {@code busy}. */
    public static final String LOOP_TIME = "rpma.event.loop.time";

    private static final String NONE = "none";

    private final MeterRegistry registry;

    private final Map<String, RpmaEndpointMetrics> endpoints = new ConcurrentHashMap<>();

    private final Map<String, Timer> queueWaits = new ConcurrentHashMap<>();

    private final Map<HandlerTimerKey, Timer> handlerDurations = new ConcurrentHashMap<>();

    private final Map<HandlerTimerKey, Timer> messageDurations = new ConcurrentHashMap<>();

    public RpmaServerMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void endpointCreated(RpmaServedEndpoint server) {
        RpmaEndpointMetrics existing = this.endpoints.get(server.name());
        if (existing != null) {
            // created anew after its device came back: the meters are there, and its counters carried over
            existing.follow(server);
            return;
        }
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
    public void loopsCreated(List<RpmaEventLoop> loops) {
        for (RpmaEventLoop loop : loops) {
            FunctionCounter.builder(LOOP_TIME, loop, (l) -> l.idleNanos() / 1e9).tag("loop", loop.name())
                .tag("state", "idle").baseUnit("seconds").description("Time the event loop spent waiting for events")
                .register(this.registry);
            FunctionCounter.builder(LOOP_TIME, loop, (l) -> Math.max(0, l.aliveNanos() - l.idleNanos()) / 1e9)
                .tag("loop", loop.name()).tag("state", "busy").baseUnit("seconds")
                .description("Time the event loop spent handling events, messages and tasks, or busy-polling")
                .register(this.registry);
        }
    }

    @Override
    public void messageHandled(String endpoint, String handlerName, long nanos, boolean failed) {
        HandlerTimerKey key = new HandlerTimerKey(endpoint, handlerName, failed ? "failure" : "success");
        Timer timer = this.messageDurations.get(key);
        if (timer == null) {
            timer = this.messageDurations.computeIfAbsent(key, (k) -> Timer.builder(MESSAGE_HANDLER_DURATION)
                .tag("endpoint", k.endpoint)
                .tag("handler", k.handler)
                .tag("outcome", k.exception)
                .description("Time a message handler took, for each session's first message and then one in "
                        + RpmaServer.HANDLER_TIMING_SAMPLE)
                .publishPercentileHistogram()
                .register(this.registry));
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public <T> T handle(RpmaIncomingRequest request, String handlerName, Callable<T> invocation) throws Exception {
        Clock clock = this.registry.config().clock();
        long start = clock.monotonicTime();
        Throwable failure = null;
        try {
            return invocation.call();
        }
        catch (Exception | Error ex) {
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

    private static String exceptionTag(@Nullable Throwable failure) {
        if (failure == null) {
            return NONE;
        }
        String name = failure.getClass().getSimpleName();
        return name.isEmpty() ? failure.getClass().getName() : name;
    }

    /**
     * Not a record: a record's {@code hashCode} and {@code equals} are bootstrapped method handles, which
     * code compiled by C1, the JIT's first tier, calls without inlining; looked up once per request, they
     * showed in the acceptor's profile with {@code -XX:TieredStopAtLevel=1}.
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
