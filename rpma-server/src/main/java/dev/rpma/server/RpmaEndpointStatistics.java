package dev.rpma.server;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;

import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaException;

/**
 * Counters of one served endpoint: requests by outcome, librpma errors by function and code, the
 * connections' events, sessions by how they ended, messages and bytes both ways, bad messages, and
 * the last errors. Thread-safe; written by the endpoint's threads, read by metrics, health and the
 * actuator endpoint.
 */
public final class RpmaEndpointStatistics {

    /** How many of the last errors are kept. */
    public static final int LAST_ERRORS = 16;

    /**
     * A work request the server posts, which a failed completion is counted by (its {@code wr_id} says
     * which; the opcode of a failed completion is undefined); bounded, so usable as a metric tag.
     */
    public enum WorkRequest {
        /** A receive slot, the session's own or a shared receive queue's. */
        RECEIVE,
        /** A send slot. */
        SEND,
        /** A session's read of the client's memory ({@link RpmaSession#read}). */
        READ;

        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /** What was wrong with a message that ended its session; bounded, so usable as a metric tag. */
    public enum BadMessage {
        /** Larger than a receive slot. */
        OVERSIZED,
        /** Zero bytes. */
        EMPTY,
        /** Not of the endpoint's protocol (a bad frame, or the handler said so). */
        MALFORMED;

        public String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final LongAdder obtained = new LongAdder();

    private final LongAdder accepted = new LongAdder();

    private final LongAdder failedToConnect = new LongAdder();

    private final LongAdder deviceLosses = new LongAdder();

    private final LongAdder recoveries = new LongAdder();

    private final Map<RejectReason, LongAdder> rejected = new EnumMap<>(RejectReason.class);

    private final Map<RpmaConnectionEvent, LongAdder> events = new EnumMap<>(RpmaConnectionEvent.class);

    private final Map<RpmaSessionEnd.Reason, LongAdder> ended = new EnumMap<>(RpmaSessionEnd.Reason.class);

    private final Map<BadMessage, LongAdder> badMessages = new EnumMap<>(BadMessage.class);

    private final Map<WorkRequest, LongAdder> failedCompletions = new EnumMap<>(WorkRequest.class);

    private final Map<ErrorKey, LongAdder> errors = new ConcurrentHashMap<>();

    private final AtomicInteger activeConnections = new AtomicInteger();

    private final LongAdder messagesReceived = new LongAdder();

    private final LongAdder messagesSent = new LongAdder();

    private final LongAdder bytesReceived = new LongAdder();

    private final LongAdder bytesSent = new LongAdder();

    private final LongAdder handlerFailures = new LongAdder();

    private final LongAdder sendsQueued = new LongAdder();

    private final AtomicInteger sendsWaiting = new AtomicInteger();

    private final ArrayDeque<RpmaErrorRecord> lastErrors = new ArrayDeque<>();

    private final Consumer<RpmaException> errorListener;

    RpmaEndpointStatistics() {
        this((ex) -> {
        });
    }

    /** @param errorListener told of each librpma error after it was counted */
    RpmaEndpointStatistics(Consumer<RpmaException> errorListener) {
        this.errorListener = errorListener;
        for (RejectReason reason : RejectReason.values()) {
            this.rejected.put(reason, new LongAdder());
        }
        for (RpmaConnectionEvent event : RpmaConnectionEvent.values()) {
            this.events.put(event, new LongAdder());
        }
        for (RpmaSessionEnd.Reason reason : RpmaSessionEnd.Reason.values()) {
            this.ended.put(reason, new LongAdder());
        }
        for (BadMessage bad : BadMessage.values()) {
            this.badMessages.put(bad, new LongAdder());
        }
        for (WorkRequest request : WorkRequest.values()) {
            this.failedCompletions.put(request, new LongAdder());
        }
    }

    /** A function and code a librpma error was counted under. */
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

    void recordDeviceLoss() {
        this.deviceLosses.increment();
    }

    void recordRecovery() {
        this.recoveries.increment();
    }

    /** How often the endpoint's RDMA device was found gone. */
    public long deviceLosses() {
        return this.deviceLosses.sum();
    }

    /** How often the endpoint listened again after its device came back. */
    public long recoveries() {
        return this.recoveries.sum();
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

    void recordSessionEnded(RpmaSessionEnd.Reason reason) {
        this.ended.get(reason).increment();
        this.activeConnections.decrementAndGet();
    }

    void recordReceived(int bytes) {
        this.messagesReceived.increment();
        this.bytesReceived.add(bytes);
    }

    void recordSent(int bytes) {
        this.messagesSent.increment();
        this.bytesSent.add(bytes);
    }

    void recordBadMessage(BadMessage bad) {
        this.badMessages.get(bad).increment();
    }

    void recordHandlerFailure() {
        this.handlerFailures.increment();
    }

    void recordFailedCompletion(WorkRequest request) {
        this.failedCompletions.get(request).increment();
    }

    void recordSendQueued() {
        this.sendsQueued.increment();
        this.sendsWaiting.incrementAndGet();
    }

    void recordQueuedSendsLeft(int count) {
        this.sendsWaiting.addAndGet(-count);
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

    /** Connection events seen of {@code event}'s kind (ESTABLISHED, CLOSED, LOST). */
    public long events(RpmaConnectionEvent event) {
        return this.events.get(event).sum();
    }

    /** Accepted connections not yet deleted: the sessions alive. */
    public int activeConnections() {
        return this.activeConnections.get();
    }

    /** Sessions that ended for {@code reason}. */
    public long sessionsEnded(RpmaSessionEnd.Reason reason) {
        return this.ended.get(reason).sum();
    }

    public long messagesReceived() {
        return this.messagesReceived.sum();
    }

    public long messagesSent() {
        return this.messagesSent.sum();
    }

    public long bytesReceived() {
        return this.bytesReceived.sum();
    }

    public long bytesSent() {
        return this.bytesSent.sum();
    }

    /** Messages that ended their session for being {@code bad}. */
    public long badMessages(BadMessage bad) {
        return this.badMessages.get(bad).sum();
    }

    /**
     * Completions of {@code request} that failed other than by a flush (the connection broke) or a
     * message too long (a {@link BadMessage#OVERSIZED}): e.g. a remote access error, or a client that
     * posted no receive in time.
     */
    public long failedCompletions(WorkRequest request) {
        return this.failedCompletions.get(request).sum();
    }

    /** Message handler invocations that threw (other than {@link RpmaProtocolException}). */
    public long handlerFailures() {
        return this.handlerFailures.sum();
    }

    /** Sends that had to wait for a send slot or for credits, since the start. */
    public long sendsQueued() {
        return this.sendsQueued.sum();
    }

    /** Sends waiting for a send slot or for credits now. */
    public int sendsWaiting() {
        return this.sendsWaiting.get();
    }

    /** librpma errors by function and code. */
    public Map<ErrorKey, Long> errors() {
        Map<ErrorKey, Long> copy = new LinkedHashMap<>();
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
