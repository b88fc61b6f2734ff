package dev.rpma.spring.boot.actuate.endpoint;

import java.time.Instant;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.spring.server.RejectReason;
import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaEndpointState;
import dev.rpma.spring.server.RpmaEndpointStatistics;
import dev.rpma.spring.server.RpmaErrorRecord;
import dev.rpma.spring.server.RpmaServer;

/**
 * The {@code rpma} actuator endpoint: each RDMA endpoint's address, state, queue, connections, request
 * totals by outcome, error counts and last errors ({@value RpmaEndpointStatistics#LAST_ERRORS} at most);
 * and pausing or resuming accepting on one endpoint. It shows counters and librpma's error texts only,
 * never a request's private data.
 */
@Endpoint(id = "rpma")
public class RpmaServerEndpoint {

    private static final List<RpmaConnectionEvent> SERVER_EVENTS = List.of(RpmaConnectionEvent.ESTABLISHED,
            RpmaConnectionEvent.CLOSED, RpmaConnectionEvent.LOST);

    private final RpmaServer server;

    public RpmaServerEndpoint(RpmaServer server) {
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
        RpmaEndpointServer endpoint = this.server.endpoint(name);
        return (endpoint != null) ? describe(endpoint) : null;
    }

    /**
     * Pauses ({@code "pause"}: requests are rejected and counted as {@code paused}) or resumes
     * ({@code "resume"}) accepting on one endpoint; returns its state afterwards, {@code null} (404)
     * when there is no endpoint of that name.
     */
    @WriteOperation
    public @Nullable EndpointDescriptor accepting(@Selector String name, String action) {
        RpmaEndpointServer endpoint = this.server.endpoint(name);
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

    private static EndpointDescriptor describe(RpmaEndpointServer endpoint) {
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
        Throwable failure = endpoint.failure();
        return new EndpointDescriptor(endpoint.name(), endpoint.settings().address(), endpoint.settings().port(),
                endpoint.state(), (failure != null) ? failure.getMessage() : null,
                new QueueDescriptor(size, capacity, Math.max(0, capacity - size)), statistics.activeConnections(),
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
     * @param failure what stopped it, when {@link RpmaEndpointState#FAILED}; else absent
     * @param queue the queue of requests waiting for a handler thread
     * @param activeConnections accepted connections not yet deleted
     * @param requests requests by outcome since the start
     * @param connectionEvents events of accepted connections by type
     * @param errors librpma errors by function and code since the start
     * @param lastErrors the last errors, oldest first
     */
    public record EndpointDescriptor(String name, String address, int port, RpmaEndpointState state,
            @Nullable String failure, QueueDescriptor queue, int activeConnections, RequestsDescriptor requests,
            Map<String, Long> connectionEvents, List<ErrorCountDescriptor> errors, List<ErrorDescriptor> lastErrors)
            implements OperationResponseBody {
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
