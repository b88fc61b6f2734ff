package dev.rpma.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.RpmaConnectionRequest;

/**
 * A connection request as a connection handler sees it: the client's private data, attributes for
 * the session, and exactly one decision, {@link #connect} or {@link #reject()}, from any thread,
 * before the request deadline. A second decision, or one after the deadline or the endpoint's stop,
 * fails with {@link IllegalStateException}.
 *
 * <p>The endpoint's acceptor carries the decision out on its own thread, where every librpma call
 * on the request is made: for a connect it posts the session's receives, accepts, and hands the new
 * session to an event loop; the handler does not wait for that. Whether the accept succeeded shows in
 * the endpoint's statistics, and the session's listeners hear of it when it is established.
 */
public final class RpmaIncomingRequest {

    static final int PENDING = 0;
    static final int CONNECTING = 1;
    static final int REJECTED = 2;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RpmaIncomingRequest.class, "state", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Starts as 0, {@link #PENDING}, without a volatile store in the constructor. */
    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    private final Acceptor acceptor;

    final RpmaConnectionRequest request;

    final long obtainedNanos;

    final long deadlineNanos;

    private volatile @Nullable RejectReason rejectReason;

    private volatile byte @Nullable [] acceptPrivateData;

    private @Nullable Map<String, Object> attributes;

    /**
     * What the endpoint's admission step passed on instead of the private data received (what follows a
     * token), or {@code null}; set by the acceptor before any handler sees the request.
     */
    byte @Nullable [] admittedPrivateData;

    /** Whether it holds a place under the endpoint's connection limit; the acceptor's only. */
    boolean reserved;

    /** The data-path loop whose shared receive queue its queue pair was made with; -1: none yet. */
    int loopIndex = -1;

    /**
     * The decision taken before this one on another thread, while both wait for the acceptor: the
     * link of the acceptor's list of decisions, so that handing a decision over allocates nothing.
     */
    @Nullable RpmaIncomingRequest decidedBefore;

    /** The request handed to a handler thread after this one: the link of the acceptor's {@link PendingRequests}. */
    @Nullable RpmaIncomingRequest pendingAfter;

    RpmaIncomingRequest(Acceptor acceptor, RpmaConnectionRequest request, long obtainedNanos, long deadlineNanos) {
        this.acceptor = acceptor;
        this.request = request;
        this.obtainedNanos = obtainedNanos;
        this.deadlineNanos = deadlineNanos;
    }

    /** The name of the endpoint the request arrived on. */
    public String endpointName() {
        return this.acceptor.endpointName();
    }

    /**
     * The private data the client sent (a copy); over RoCE possibly zero-padded. On an endpoint whose
     * admission step passes on a part of it, that part: with the admission token, the bytes that
     * follow the token, exactly as many as the client sent. Escape it before logging it
     * ({@link RpmaEscaping}): it comes from a peer.
     */
    public byte[] privateData() {
        byte[] admitted = this.admittedPrivateData;
        return (admitted != null) ? Arrays.copyOf(admitted, admitted.length) : this.request.privateData();
    }

    /**
     * Attributes the session will carry ({@link RpmaSession#attributes()}): set them before the
     * connect, on the thread that decides.
     */
    public Map<String, Object> attributes() {
        if (this.attributes == null) {
            this.attributes = new LinkedHashMap<>();
        }
        return this.attributes;
    }

    /**
     * The descriptor of exposed region {@code name} as the client will address it (21 bytes, for
     * {@code rpma_mr_remote_from_descriptor}); put it into the accept's private data, for instance as
     * {@link RpmaCommonData}.
     *
     * @throws IllegalArgumentException when no region has that name or it is not exposed to this endpoint
     */
    public byte[] regionDescriptor(String name) {
        return this.acceptor.regionDescriptor(name);
    }

    /**
     * {@code struct common_data} for exposed region {@code name}, its data at offset 0: the region's
     * descriptor and that of the peer configuration it declares (whether it takes direct writes to
     * PMem), as librpma's examples 04 and 05 accept with; {@code commonData(name).encode()} is the
     * accept's private data.
     *
     * @throws IllegalArgumentException when no region has that name or it is not exposed to this endpoint
     */
    public RpmaCommonData commonData(String name) {
        return commonData(name, 0);
    }

    /** {@link #commonData(String)} with the client's data starting at {@code dataOffset} in the region. */
    public RpmaCommonData commonData(String name, int dataOffset) {
        return this.acceptor.commonData(name, dataOffset);
    }

    /** Accepts without private data. */
    public void connect() {
        connect(null);
    }

    /**
     * Accepts the request, sending {@code privateData} (at most
     * {@value RpmaConnectionRequest#MAX_ACCEPT_PRIVATE_DATA} bytes) to the client. Any thread.
     *
     * @throws IllegalArgumentException when the private data is longer than an accept carries
     * @throws IllegalStateException when the request was already decided, passed its deadline, or its endpoint stops
     */
    public void connect(byte @Nullable [] privateData) {
        if (privateData != null && privateData.length > RpmaConnectionRequest.MAX_ACCEPT_PRIVATE_DATA) {
            throw new IllegalArgumentException("Private data of " + privateData.length + " bytes is too long: an"
                    + " accept carries at most " + RpmaConnectionRequest.MAX_ACCEPT_PRIVATE_DATA + " bytes over"
                    + " RoCE/InfiniBand; send more once the session is established");
        }
        // not clone(): the JDK 17 C1 compiler calls into the VM for it, and this code runs once per connection
        byte[] data = (privateData != null) ? Arrays.copyOf(privateData, privateData.length) : null;
        if (!STATE.compareAndSet(this, PENDING, CONNECTING)) {
            throw decidedError("connect");
        }
        // before the hand-over, after which the acceptor reads it
        this.acceptPrivateData = data;
        this.acceptor.decided(this);
    }

    /** Rejects the request; the client sees REJECTED. Any thread. */
    public void reject() {
        if (!rejectIfPending(RejectReason.HANDLER)) {
            throw decidedError("reject");
        }
    }

    /** Whether a decision was taken. */
    public boolean isDecided() {
        return state() != PENDING;
    }

    /** Why it was rejected, or {@code null}. */
    public @Nullable RejectReason rejectReason() {
        return this.rejectReason;
    }

    /** Rejects it for {@code reason} unless decided already; the acceptor carries it out. */
    boolean rejectIfPending(RejectReason reason) {
        if (!STATE.compareAndSet(this, PENDING, REJECTED)) {
            return false;
        }
        this.rejectReason = reason;
        this.acceptor.decided(this);
        return true;
    }

    int state() {
        return (int) STATE.getVolatile(this);
    }

    byte @Nullable [] acceptPrivateData() {
        return this.acceptPrivateData;
    }

    /** The attributes set, or an empty map; read by the acceptor after the decision. */
    Map<String, Object> attributesSet() {
        return (this.attributes != null) ? this.attributes : Map.of();
    }

    private IllegalStateException decidedError(String action) {
        RejectReason reason = this.rejectReason;
        String now = (state() == CONNECTING) ? "it was already connected"
                : "it was already rejected (" + ((reason != null) ? reason.tag() : "?") + ")";
        return new IllegalStateException("Cannot " + action + " the connection request on endpoint '" + endpointName()
                + "': " + now + ". A request is decided exactly once, before the request deadline and the endpoint's"
                + " stop");
    }
}
