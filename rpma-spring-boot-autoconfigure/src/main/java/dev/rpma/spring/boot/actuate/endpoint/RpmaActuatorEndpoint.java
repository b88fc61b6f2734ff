package dev.rpma.spring.boot.actuate.endpoint;

import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaEndpointState;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaErrorRecord;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.server.RpmaSessionState;

/**
 * The {@code rpma} actuator endpoint: each RDMA endpoint's address, state, queue, sessions (open ones,
 * up to {@value #SESSIONS_SHOWN}, and how the others ended), messages, request totals by outcome, error
 * counts and last errors ({@value RpmaEndpointStatistics#LAST_ERRORS} at most); and pausing or resuming
 * accepting on one endpoint. It is read-only unless the application allows the pause and resume
 * explicitly ({@code management.endpoint.rpma.access=unrestricted}), since anyone who reaches them
 * can turn every client away. It shows counters, states and librpma's error texts only, never a
 * request's private data, a session's attributes or a message's bytes.
 */
@Endpoint(id = "rpma", defaultAccess = Access.READ_ONLY)
public class RpmaActuatorEndpoint {

    /** Open sessions listed per endpoint at most, so that a busy server's answer stays small. */
    public static final int SESSIONS_SHOWN = 100;

    private static final List<RpmaConnectionEvent> SERVER_EVENTS = List.of(RpmaConnectionEvent.ESTABLISHED,
            RpmaConnectionEvent.CLOSED, RpmaConnectionEvent.LOST);

    private final RpmaServer server;

    public RpmaActuatorEndpoint(RpmaServer server) {
        this.server = server;
    }

    /** Every endpoint, by name, in configuration order. */
    @ReadOperation
    public RpmaServerDescriptor server() {
        Map<String, EndpointDescriptor> endpoints = new LinkedHashMap<>();
        this.server.endpoints().forEach((name, endpoint) -> endpoints.put(name, describe(endpoint)));
        return new RpmaServerDescriptor(endpoints);
    }

    /** One endpoint, or {@code null} (404) when there is none of that name. */
    @ReadOperation
    public @Nullable EndpointDescriptor endpoint(@Selector String name) {
        RpmaServedEndpoint endpoint = this.server.endpoint(name);
        return (endpoint != null) ? describe(endpoint) : null;
    }

    /**
     * Pauses ({@code "pause"}: requests are rejected and counted as {@code paused}) or resumes
     * ({@code "resume"}) accepting on one endpoint; returns its state afterwards, {@code null} (404)
     * when there is no endpoint of that name.
     */
    @WriteOperation
    public @Nullable EndpointDescriptor accepting(@Selector String name, String action) {
        RpmaServedEndpoint endpoint = this.server.endpoint(name);
        if (endpoint == null) {
            return null;
        }
        switch (action.toLowerCase(Locale.ROOT)) {
            case "pause" -> endpoint.pause();
            case "resume" -> endpoint.resume();
            default -> throw new InvalidEndpointRequestException(
                    "Unknown action '" + action + "'; use 'pause' or 'resume'", "Unknown action");
        }
        return describe(endpoint);
    }

    private static EndpointDescriptor describe(RpmaServedEndpoint endpoint) {
        RpmaEndpointStatistics statistics = endpoint.statistics();
        int size = endpoint.queueSize();
        int capacity = endpoint.queueCapacity();
        Map<String, Long> rejected = new LinkedHashMap<>();
        for (RejectReason reason : RejectReason.values()) {
            rejected.put(reason.tag(), statistics.rejected(reason));
        }
        Map<String, Long> events = new LinkedHashMap<>();
        for (RpmaConnectionEvent event : SERVER_EVENTS) {
            events.put(event.name().toLowerCase(Locale.ROOT), statistics.events(event));
        }
        List<ErrorCountDescriptor> errors = statistics.errors().entrySet().stream()
            .map((entry) -> new ErrorCountDescriptor(entry.getKey().function(), entry.getKey().code(), entry.getValue()))
            .sorted(Comparator.comparing(ErrorCountDescriptor::function).thenComparing(ErrorCountDescriptor::code))
            .toList();
        List<ErrorDescriptor> lastErrors = statistics.lastErrors().stream().map(ErrorDescriptor::of).toList();
        Map<String, Long> ended = new LinkedHashMap<>();
        for (RpmaSessionEnd.Reason reason : RpmaSessionEnd.Reason.values()) {
            ended.put(reason.tag(), statistics.sessionsEnded(reason));
        }
        List<SessionDescriptor> open = endpoint.sessions().stream().sorted(Comparator.comparingLong(RpmaSession::id))
            .limit(SESSIONS_SHOWN)
            .map((session) -> new SessionDescriptor(session.id(), session.state(), session.messagesReceived(),
                    session.messagesSent()))
            .toList();
        Map<String, Long> bad = new LinkedHashMap<>();
        for (RpmaEndpointStatistics.BadMessage kind : RpmaEndpointStatistics.BadMessage.values()) {
            bad.put(kind.tag(), statistics.badMessages(kind));
        }
        Throwable failure = (endpoint.failure() != null) ? endpoint.failure() : endpoint.degradedBy();
        return new EndpointDescriptor(endpoint.name(), endpoint.settings().address(), endpoint.settings().port(),
                endpoint.state(), (failure != null) ? failure.getMessage() : null,
                new QueueDescriptor(size, capacity, Math.max(0, capacity - size)),
                new SessionsDescriptor(statistics.activeConnections(), ended, open),
                endpoint.hasMessageHandlers() ? new MessagesDescriptor(statistics.messagesReceived(),
                        statistics.messagesSent(), statistics.bytesReceived(), statistics.bytesSent(), bad,
                        statistics.handlerFailures(), statistics.sendsWaiting(), statistics.sendsQueued(),
                        endpoint.registeredBufferBytes()) : null,
                new RequestsDescriptor(statistics.obtained(), statistics.accepted(), rejected,
                        statistics.failedToConnect()),
                events, errors, lastErrors);
    }

    /**
     * All endpoints.
     *
     * @param endpoints by name, in configuration order
     */
    public record RpmaServerDescriptor(Map<String, EndpointDescriptor> endpoints) implements OperationResponseBody {
    }

    /**
     * One endpoint.
     *
     * @param name the endpoint's name
     * @param address the address it listens on
     * @param port the port it listens on
     * @param state its state
     * @param failure what stopped it, when {@link RpmaEndpointState#FAILED}; the error it backs off from,
     *     when {@link RpmaEndpointState#DEGRADED}; else absent
     * @param queue the queue of requests waiting for a handler thread
     * @param sessions the sessions: how many are open, how the others ended, the open ones
     * @param messages the sessions' messages; absent for an endpoint without message handlers
     * @param requests requests by outcome since the start
     * @param connectionEvents events of accepted connections by type
     * @param errors librpma errors by function and code since the start
     * @param lastErrors the last errors, oldest first
     */
    public record EndpointDescriptor(String name, String address, int port, RpmaEndpointState state,
            @Nullable String failure, QueueDescriptor queue, SessionsDescriptor sessions,
            @Nullable MessagesDescriptor messages, RequestsDescriptor requests, Map<String, Long> connectionEvents,
            List<ErrorCountDescriptor> errors, List<ErrorDescriptor> lastErrors) implements OperationResponseBody {
    }

    /**
     * The sessions of an endpoint.
     *
     * @param active open now (accepted, established or ending)
     * @param ended ended since the start, by reason
     * @param open the open ones, oldest first, at most {@value RpmaActuatorEndpoint#SESSIONS_SHOWN}
     */
    public record SessionsDescriptor(int active, Map<String, Long> ended, List<SessionDescriptor> open) {
    }

    /**
     * One open session.
     *
     * @param id its number
     * @param state where it is in its life
     * @param messagesReceived messages it received
     * @param messagesSent messages it sent
     */
    public record SessionDescriptor(long id, RpmaSessionState state, long messagesReceived, long messagesSent) {
    }

    /**
     * The messages of an endpoint's sessions since the start.
     *
     * @param received messages received
     * @param sent messages sent
     * @param bytesReceived their payloads' bytes
     * @param bytesSent their payloads' bytes
     * @param bad messages that ended their session, by what was wrong
     * @param handlerFailures message handler invocations that threw
     * @param sendsWaiting sends waiting for a slot or credits now
     * @param sendsQueued sends that had to wait
     * @param slotMemory bytes of registered memory the sessions' slots take
     */
    public record MessagesDescriptor(long received, long sent, long bytesReceived, long bytesSent, Map<String, Long> bad,
            long handlerFailures, int sendsWaiting, long sendsQueued, long slotMemory) {
    }

    /**
     * The request queue.
     *
     * @param size requests waiting
     * @param capacity requests it holds at most
     * @param remaining requests it can still take
     */
    public record QueueDescriptor(int size, int capacity, int remaining) {
    }

    /**
     * Connection requests by outcome.
     *
     * @param obtained taken from librpma
     * @param accepted connected
     * @param rejected rejected, by reason
     * @param failedToConnect whose connect failed in librpma
     */
    public record RequestsDescriptor(long obtained, long accepted, Map<String, Long> rejected, long failedToConnect) {
    }

    /**
     * How often a librpma function failed with a code.
     *
     * @param function the C function
     * @param code the {@code RPMA_E_*} name
     * @param count how often
     */
    public record ErrorCountDescriptor(String function, String code, long count) {
    }

    /**
     * One error.
     *
     * @param time when it happened
     * @param function the C function
     * @param code the {@code RPMA_E_*} name
     * @param errno the provider's errno, 0 if none
     * @param message librpma's text
     */
    public record ErrorDescriptor(Instant time, String function, String code, int errno, String message) {

        static ErrorDescriptor of(RpmaErrorRecord record) {
            return new ErrorDescriptor(record.time(), record.function(), record.code(), record.errno(),
                    record.message());
        }
    }
}
