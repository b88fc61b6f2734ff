package dev.rpma.spring.boot.actuate.metrics;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.MeterBinder;

import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaEndpointStatistics.ErrorKey;
import dev.rpma.server.RpmaSessionEnd;

/**
 * The meters of one served endpoint, read from its {@link RpmaEndpointStatistics} and queue at each
 * scrape (nothing is counted twice, nothing on the data path). Every meter is tagged {@code endpoint};
 * every other tag takes a bounded set of values. librpma errors are registered as their function and
 * code first appear: call {@link #bindNewErrors()} after an error.
 */
public final class RpmaEndpointMetrics implements MeterBinder {

    /** Requests waiting for a handler thread. */
    public static final String QUEUE_SIZE = "rpma.request.queue.size";

    /** Requests the queue holds at most. */
    public static final String QUEUE_CAPACITY = "rpma.request.queue.capacity";

    /** Requests the queue can still take before requests are rejected as queue-full. */
    public static final String QUEUE_REMAINING = "rpma.request.queue.remaining";

    /** Connection requests by {@code outcome} and {@code reason}. */
    public static final String REQUESTS = "rpma.requests";

    /** librpma errors by {@code code} and {@code function}. */
    public static final String ACCEPTOR_ERRORS = "rpma.acceptor.errors";

    /** Sessions (accepted connections) not yet deleted. */
    public static final String ACTIVE_SESSIONS = "rpma.sessions.active";

    /** Sessions that ended, by {@code reason}. */
    public static final String SESSIONS_ENDED = "rpma.sessions.ended";

    /** Messages, by {@code direction}: {@code received} or {@code sent}. */
    public static final String MESSAGES = "rpma.messages";

    /** Bytes of messages' payloads, by {@code direction}. */
    public static final String MESSAGE_BYTES = "rpma.message.bytes";

    /** Messages that ended their session, by {@code reason}: {@code oversized}, {@code empty}, {@code malformed}. */
    public static final String BAD_MESSAGES = "rpma.messages.bad";

    /** Message handler invocations that threw. */
    public static final String MESSAGE_HANDLER_FAILURES = "rpma.message.handler.failures";

    /**
     * Completions that failed (other than flushes and messages too long), by the {@code operation} the
     * server posted: {@code receive} or {@code send}.
     */
    public static final String FAILED_COMPLETIONS = "rpma.completions.failed";

    /** Sends waiting for a send slot or for credits now. */
    public static final String SENDS_WAITING = "rpma.sends.waiting";

    /** Sends that had to wait for a send slot or for credits. */
    public static final String SENDS_QUEUED = "rpma.sends.queued";

    /** Registered memory of the sessions' receive and send slots, and of the shared receive queues' slots. */
    public static final String SLOT_MEMORY = "rpma.sessions.slot.memory";

    /** Receives posted on the endpoint's shared receive queues and not yet filled. */
    public static final String SHARED_RECEIVES_POSTED = "rpma.receives.shared.posted";

    /** Events of accepted connections by {@code type}. */
    public static final String CONNECTION_EVENTS = "rpma.connection.events";

    /** Times the endpoint's RDMA device was found gone, and times it listened again once it was back. */
    public static final String DEVICE_EVENTS = "rpma.device.events";

    /** The connection events a server sees. */
    static final List<RpmaConnectionEvent> SERVER_EVENTS = List.of(RpmaConnectionEvent.ESTABLISHED,
            RpmaConnectionEvent.CLOSED, RpmaConnectionEvent.LOST);

    private static final String NONE = "none";

    /** The endpoint now: the one created anew after its device came back replaces the lost one. */
    private volatile RpmaServedEndpoint server;

    private final Tags tags;

    private final List<MeterRegistry> registries = new ArrayList<>();

    private final Set<ErrorKey> boundErrors = new LinkedHashSet<>();

    public RpmaEndpointMetrics(RpmaServedEndpoint server) {
        this(server, Tags.empty());
    }

    /** @param extraTags added to every meter, after {@code endpoint} */
    public RpmaEndpointMetrics(RpmaServedEndpoint server, Iterable<Tag> extraTags) {
        this.server = server;
        this.tags = Tags.of("endpoint", server.name()).and(extraTags);
    }

    /**
     * Reads {@code endpoint} from now on: the endpoint of the same name created anew after its device
     * came back, whose counters carry on those of the lost one.
     */
    public void follow(RpmaServedEndpoint endpoint) {
        this.server = endpoint;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        RpmaServedEndpoint server = this.server;
        RpmaEndpointStatistics statistics = server.statistics();
        Gauge.builder(QUEUE_SIZE, this, (m) -> m.server.queueSize()).tags(this.tags).baseUnit("requests")
            .description("Connection requests waiting for a handler thread").strongReference(true).register(registry);
        Gauge.builder(QUEUE_CAPACITY, this, (m) -> m.server.queueCapacity()).tags(this.tags).baseUnit("requests")
            .description("Connection requests the queue holds at most").strongReference(true).register(registry);
        Gauge.builder(QUEUE_REMAINING, this, (m) -> Math.max(0, m.server.queueCapacity() - m.server.queueSize()))
            .tags(this.tags).baseUnit("requests")
            .description("Connection requests the queue can still take before rejecting them as queue-full")
            .strongReference(true).register(registry);
        Gauge.builder(ACTIVE_SESSIONS, statistics, RpmaEndpointStatistics::activeConnections).tags(this.tags)
            .baseUnit("sessions").description("Sessions (accepted connections) not yet deleted").strongReference(true)
            .register(registry);
        FunctionCounter.builder(DEVICE_EVENTS, statistics, RpmaEndpointStatistics::deviceLosses).tags(this.tags)
            .tag("event", "lost").baseUnit("events").description("Losses and recoveries of the endpoint's RDMA device")
            .register(registry);
        FunctionCounter.builder(DEVICE_EVENTS, statistics, RpmaEndpointStatistics::recoveries).tags(this.tags)
            .tag("event", "recovered").baseUnit("events")
            .description("Losses and recoveries of the endpoint's RDMA device").register(registry);
        for (RpmaSessionEnd.Reason reason : RpmaSessionEnd.Reason.values()) {
            FunctionCounter.builder(SESSIONS_ENDED, statistics, (s) -> s.sessionsEnded(reason)).tags(this.tags)
                .tag("reason", reason.tag()).baseUnit("sessions").description("Sessions that ended, by why")
                .register(registry);
        }
        FunctionCounter.builder(MESSAGES, statistics, RpmaEndpointStatistics::messagesReceived).tags(this.tags)
            .tag("direction", "received").baseUnit("messages").description("Messages of the sessions")
            .register(registry);
        FunctionCounter.builder(MESSAGES, statistics, RpmaEndpointStatistics::messagesSent).tags(this.tags)
            .tag("direction", "sent").baseUnit("messages").description("Messages of the sessions").register(registry);
        FunctionCounter.builder(MESSAGE_BYTES, statistics, RpmaEndpointStatistics::bytesReceived).tags(this.tags)
            .tag("direction", "received").baseUnit("bytes").description("Bytes of the sessions' message payloads")
            .register(registry);
        FunctionCounter.builder(MESSAGE_BYTES, statistics, RpmaEndpointStatistics::bytesSent).tags(this.tags)
            .tag("direction", "sent").baseUnit("bytes").description("Bytes of the sessions' message payloads")
            .register(registry);
        for (RpmaEndpointStatistics.BadMessage bad : RpmaEndpointStatistics.BadMessage.values()) {
            FunctionCounter.builder(BAD_MESSAGES, statistics, (s) -> s.badMessages(bad)).tags(this.tags)
                .tag("reason", bad.tag()).baseUnit("messages").description("Messages that ended their session")
                .register(registry);
        }
        FunctionCounter.builder(MESSAGE_HANDLER_FAILURES, statistics, RpmaEndpointStatistics::handlerFailures)
            .tags(this.tags).baseUnit("invocations").description("Message handler invocations that threw")
            .register(registry);
        for (RpmaEndpointStatistics.WorkRequest request : RpmaEndpointStatistics.WorkRequest.values()) {
            FunctionCounter.builder(FAILED_COMPLETIONS, statistics, (s) -> s.failedCompletions(request)).tags(this.tags)
                .tag("operation", request.tag()).baseUnit("completions")
                .description("Completions that failed, by the operation the server posted").register(registry);
        }
        Gauge.builder(SENDS_WAITING, statistics, RpmaEndpointStatistics::sendsWaiting).tags(this.tags)
            .baseUnit("messages").description("Sends waiting for a send slot or for the client's credits")
            .strongReference(true).register(registry);
        FunctionCounter.builder(SENDS_QUEUED, statistics, RpmaEndpointStatistics::sendsQueued).tags(this.tags)
            .baseUnit("messages").description("Sends that had to wait for a send slot or for the client's credits")
            .register(registry);
        Gauge.builder(SLOT_MEMORY, this, (m) -> m.server.registeredBufferBytes()).tags(this.tags).baseUnit("bytes")
            .description("Registered memory of the sessions' receive and send slots and of the shared receive"
                    + " queues' slots")
            .strongReference(true)
            .register(registry);
        Gauge.builder(SHARED_RECEIVES_POSTED, this, (m) -> m.server.sharedReceivesPosted()).tags(this.tags)
            .baseUnit("receives")
            .description("Receives posted on the endpoint's shared receive queues and not yet filled (0 without"
                    + " them); near 0, clients' messages wait for one")
            .strongReference(true).register(registry);
        requests(registry, "accepted", NONE, statistics, RpmaEndpointStatistics::accepted);
        for (RejectReason reason : RejectReason.values()) {
            requests(registry, "rejected", reason.tag(), statistics, (s) -> s.rejected(reason));
        }
        requests(registry, "failed", "connect-error", statistics, RpmaEndpointStatistics::failedToConnect);
        for (RpmaConnectionEvent event : SERVER_EVENTS) {
            FunctionCounter.builder(CONNECTION_EVENTS, statistics, (s) -> s.events(event))
                .tags(this.tags).tag("type", event.name().toLowerCase(Locale.ROOT)).baseUnit("events")
                .description("Events of accepted connections").register(registry);
        }
        synchronized (this) {
            this.registries.add(registry);
            for (ErrorKey key : this.boundErrors) {
                registerError(registry, key);
            }
        }
        bindNewErrors();
    }

    /** Registers a counter for each function and code that failed since the last call; idempotent. */
    public void bindNewErrors() {
        Set<ErrorKey> current = this.server.statistics().errors().keySet();
        synchronized (this) {
            for (ErrorKey key : current) {
                if (this.boundErrors.add(key)) {
                    for (MeterRegistry registry : this.registries) {
                        registerError(registry, key);
                    }
                }
            }
        }
    }

    private void requests(MeterRegistry registry, String outcome, String reason, RpmaEndpointStatistics statistics,
            java.util.function.ToDoubleFunction<RpmaEndpointStatistics> count) {
        FunctionCounter.builder(REQUESTS, statistics, count).tags(this.tags).tag("outcome", outcome).tag("reason", reason)
            .baseUnit("requests").description("Connection requests by outcome").register(registry);
    }

    private void registerError(MeterRegistry registry, ErrorKey key) {
        String function = key.function();
        String code = key.code();
        FunctionCounter.builder(ACCEPTOR_ERRORS, this.server.statistics(), (s) -> s.errors(function, code))
            .tags(this.tags).tag("code", code).tag("function", function).baseUnit("errors")
            .description("librpma errors met by the endpoint's acceptor and its connections").register(registry);
    }
}
