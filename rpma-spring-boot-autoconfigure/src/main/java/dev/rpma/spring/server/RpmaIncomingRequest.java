package dev.rpma.spring.server;

import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaConnectionRequest;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaMemoryRegion;
import dev.rpma.jna.RpmaPeer;

/**
 * A connection request as a handler sees it: its private data, a receive posted before accept,
 * and exactly one decision: {@link #connect} or {@link #reject()}, from any thread, before the
 * request deadline. A second decision, or one after the deadline, fails with
 * {@link IllegalStateException}; rejects are carried out on the endpoint's owner thread.
 */
public final class RpmaIncomingRequest {

    static final int PENDING = 0;
    static final int CONNECTING = 1;
    static final int CONNECTED = 2;
    static final int REJECTED = 3;
    static final int FAILED = 4;

    private static final AtomicIntegerFieldUpdater<RpmaIncomingRequest> STATE = AtomicIntegerFieldUpdater
        .newUpdater(RpmaIncomingRequest.class, "state");

    /**
     * A field with an updater rather than an AtomicInteger: one object less per request on the
     * acceptor. Starts as 0, {@link #PENDING}, without a volatile store in the constructor.
     */
    private volatile int state;

    private final RpmaAcceptor acceptor;

    final RpmaConnectionRequest request;

    final long obtainedNanos;

    final long deadlineNanos;

    private volatile RejectReason rejectReason;

    volatile RpmaServerConnection connection;

    RpmaIncomingRequest(RpmaAcceptor acceptor, RpmaConnectionRequest request, long obtainedNanos, long deadlineNanos) {
        this.acceptor = acceptor;
        this.request = request;
        this.obtainedNanos = obtainedNanos;
        this.deadlineNanos = deadlineNanos;
    }

    /** The name of the endpoint the request arrived on. */
    public String endpointName() {
        return this.acceptor.endpointName();
    }

    /** The private data the client sent (a copy); over RoCE possibly zero-padded. */
    public byte[] privateData() {
        // the request's own copy, taken when librpma handed it out, stays private to it
        return this.request.privateData();
    }

    /**
     * The peer of the endpoint the request arrived on: register the memory the connection will use
     * with it (e.g. the buffer of a receive posted before accepting). Thread-safe.
     */
    public RpmaPeer peer() {
        return this.request.endpoint().peer();
    }

    /** Posts a receive before accepting, so the client's first message has a buffer. Any thread. */
    public void receive(RpmaMemoryRegion destination, long offset, long length, long context) {
        if (this.state != PENDING) {
            throw decidedError("post a receive on");
        }
        this.request.receive(destination, offset, length, context);
    }

    /** Accepts without private data. */
    public RpmaServerConnection connect() {
        return connect(null);
    }

    /**
     * Accepts the request, sending {@code privateData} (at most
     * {@value RpmaConnectionRequest#MAX_ACCEPT_PRIVATE_DATA} bytes) to the client. The returned
     * connection is tracked by the endpoint: wait for {@link RpmaServerConnection#awaitEstablished}
     * before using its data path. Any thread.
     *
     * @throws IllegalStateException when the request was already decided or passed its deadline
     * @throws RpmaException when librpma fails to accept (the request is then gone)
     */
    public RpmaServerConnection connect(byte[] privateData) {
        if (privateData != null && privateData.length > RpmaConnectionRequest.MAX_ACCEPT_PRIVATE_DATA) {
            throw new IllegalArgumentException("Private data of " + privateData.length + " bytes is too long: an"
                    + " accept carries at most " + RpmaConnectionRequest.MAX_ACCEPT_PRIVATE_DATA + " bytes");
        }
        if (!STATE.compareAndSet(this, PENDING, CONNECTING)) {
            throw decidedError("connect");
        }
        RpmaConnection accepted;
        try {
            accepted = this.acceptor.accept(this.request, privateData);
        }
        catch (RuntimeException ex) {
            this.state = FAILED;
            this.acceptor.connectFailed(this, ex);
            throw ex;
        }
        RpmaServerConnection tracked = this.acceptor.connected(this, accepted);
        this.connection = tracked;
        this.state = CONNECTED;
        return tracked;
    }

    /** Rejects the request; the client sees REJECTED. Any thread. */
    public void reject() {
        if (!rejectIfPending(RejectReason.HANDLER)) {
            throw decidedError("reject");
        }
    }

    /** Whether a decision was taken (connected, rejected, or failed). */
    public boolean isDecided() {
        return this.state != PENDING;
    }

    /** Why it was rejected, or {@code null}. */
    public RejectReason rejectReason() {
        return this.rejectReason;
    }

    boolean rejectIfPending(RejectReason reason) {
        if (!STATE.compareAndSet(this, PENDING, REJECTED)) {
            return false;
        }
        this.rejectReason = reason;
        this.acceptor.reject(this, reason);
        return true;
    }

    int state() {
        return this.state;
    }

    /** Whether librpma's request still has to be consumed. */
    boolean isNativePending() {
        return this.request.isPending();
    }

    private IllegalStateException decidedError(String action) {
        String now = switch (this.state) {
            case CONNECTING, CONNECTED -> "it was already connected";
            case REJECTED -> "it was already rejected (" + this.rejectReason.tag() + ")";
            default -> "connecting it failed";
        };
        return new IllegalStateException("Cannot " + action + " the connection request on endpoint '" + endpointName()
                + "': " + now + ". A request is decided exactly once, before the request deadline");
    }
}
