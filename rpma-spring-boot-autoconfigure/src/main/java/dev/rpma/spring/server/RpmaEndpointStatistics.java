package dev.rpma.spring.server;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.RpmaException;

/**
 * Counters of one endpoint server: requests by outcome, acceptor errors by code and function,
 * connection events, active connections, and the last errors. Thread-safe; read by metrics, health
 * and the actuator endpoint.
 */
public final class RpmaEndpointStatistics {

    /** How many of the last errors are kept. */
    public static final int LAST_ERRORS = 16;

    private final LongAdder obtained = new LongAdder();

    private final LongAdder accepted = new LongAdder();

    private final LongAdder failedToConnect = new LongAdder();

    private final Map<RejectReason, LongAdder> rejected = new EnumMap<>(RejectReason.class);

    private final Map<RpmaConnectionEvent, LongAdder> events = new EnumMap<>(RpmaConnectionEvent.class);

    private final Map<ErrorKey, LongAdder> errors = new ConcurrentHashMap<>();

    private final AtomicInteger activeConnections = new AtomicInteger();

    private final ArrayDeque<RpmaErrorRecord> lastErrors = new ArrayDeque<>();

    private final Consumer<RpmaException> errorListener;

    RpmaEndpointStatistics() {
        this((ex) -> {
        });
    }

    /** @param errorListener told of each error after it was counted */
    RpmaEndpointStatistics(Consumer<RpmaException> errorListener) {
        this.errorListener = errorListener;
        for (RejectReason reason : RejectReason.values()) {
            this.rejected.put(reason, new LongAdder());
        }
        for (RpmaConnectionEvent event : RpmaConnectionEvent.values()) {
            this.events.put(event, new LongAdder());
        }
    }

    /** A function and code an acceptor error was counted under. */
    public record ErrorKey(String function, String code) {
    }

    void recordObtained() {
        this.obtained.increment();
    }

    void recordAccepted() {
        this.accepted.increment();
    }

    void recordFailedToConnect() {
        this.failedToConnect.increment();
    }

    void recordRejected(RejectReason reason) {
        this.rejected.get(reason).increment();
    }

    void recordEvent(RpmaConnectionEvent event) {
        this.events.get(event).increment();
    }

    void recordConnectionOpened() {
        this.activeConnections.incrementAndGet();
    }

    void recordConnectionDeleted() {
        this.activeConnections.decrementAndGet();
    }

    void recordError(RpmaException ex) {
        this.errors.computeIfAbsent(new ErrorKey(ex.function(), ex.error().cName()), key -> new LongAdder()).increment();
        RpmaErrorRecord record = RpmaErrorRecord.of(ex);
        synchronized (this.lastErrors) {
            if (this.lastErrors.size() == LAST_ERRORS) {
                this.lastErrors.removeFirst();
            }
            this.lastErrors.addLast(record);
        }
        try {
            this.errorListener.accept(ex);
        }
        catch (RuntimeException listenerFailure) {
            // a failing observer must not turn a counted, transient error into a dead acceptor
        }
    }

    /** Connection requests obtained from librpma. */
    public long obtained() {
        return this.obtained.sum();
    }

    /** Requests whose connect succeeded. */
    public long accepted() {
        return this.accepted.sum();
    }

    /** Requests whose connect failed in librpma. */
    public long failedToConnect() {
        return this.failedToConnect.sum();
    }

    public long rejected(RejectReason reason) {
        return this.rejected.get(reason).sum();
    }

    /** All rejected requests. */
    public long rejectedTotal() {
        long total = 0;
        for (LongAdder adder : this.rejected.values()) {
            total += adder.sum();
        }
        return total;
    }

    public long events(RpmaConnectionEvent event) {
        return this.events.get(event).sum();
    }

    public int activeConnections() {
        return this.activeConnections.get();
    }

    /** Acceptor errors by function and code. */
    public Map<ErrorKey, Long> errors() {
        Map<ErrorKey, Long> copy = new java.util.LinkedHashMap<>();
        this.errors.forEach((key, adder) -> copy.put(key, adder.sum()));
        return copy;
    }

    /** The count of one function and code, a live view for gauges. */
    public long errors(String function, String code) {
        LongAdder adder = this.errors.get(new ErrorKey(function, code));
        return (adder != null) ? adder.sum() : 0;
    }

    /** The last {@value #LAST_ERRORS} errors, oldest first. */
    public List<RpmaErrorRecord> lastErrors() {
        synchronized (this.lastErrors) {
            return new ArrayList<>(this.lastErrors);
        }
    }
}
