package dev.rpma.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.server.RpmaFraming;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * A client of one RDMA server (or of the instances of one service, chosen per connection attempt by an
 * {@link RpmaServerLocator}): a pool of connections on event loops of its own, framed requests whose
 * replies are correlated by request id (many in flight per connection, within the server's credits),
 * raw messages for servers with a protocol of their own, and one-sided access through
 * {@link #connection()}. Built with {@link #builder(Rpma)}; thread-safe.
 *
 * <p>A request goes to the established connection with the fewest requests in flight (in turn among
 * equals), or waits on a connection that is connecting; with none, it fails at once with why the last
 * attempt failed. Requests a lost connection held wait for its next connection when no other
 * connection can take them, within their timeout. Its future completes on the connection's event
 * loop: chain blocking work with the {@code *Async} methods. When a connection is lost, the requests it had sent fail with
 * {@link RpmaConnectionLostException} unless marked idempotent (those are sent again on another
 * connection, at most {@code max-retries} times); requests not yet sent move to another connection;
 * the connection is made again after an exponential back-off.
 *
 * <p>The client owns its peers (one per RDMA device its servers are reached through), its loops and its
 * connections; {@link #close()} frees them once.
 *
 * <p>Past 500 lines because it is the whole public API (request, send, exchange, registration, the
 * pool's state) and the choice of a connection for each call; what a connection does is in
 * {@link ClientConnection}.
 */
public final class RpmaClient implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RpmaClient.class);

    private static final VarHandle ROTATION;

    static {
        try {
            ROTATION = MethodHandles.lookup().findVarHandle(RpmaClient.class, "rotation", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** The route of a raw request: none (never written to, so one serves them all). */
    private static final byte[] NO_ROUTE = new byte[0];

    private final Rpma rpma;

    /**
     * The first peer: opened by {@link #start} for a client of one address, so that a missing device fails
     * the build; for a client of located servers, by the first connection attempt ({@link #peer(String)}).
     * {@link #register} registers on it.
     */
    private volatile @Nullable RpmaPeer peer;

    /**
     * The peer of each server address attempted, one per device: librdmacm refuses a connection on a
     * peer of another device than the one that routes to the server. Guarded by {@code this}.
     */
    private final Map<String, RpmaPeer> peers = new HashMap<>();

    private final RpmaClientSettings settings;

    /**
     * {@link RpmaClientSettings#server()}, taken once: a locator's {@code toString} makes a new String
     * per call, and the end of every request reports it.
     */
    private final String server;

    private final RpmaClientObserver observer;

    private final RpmaRequestObserver requestObserver;

    private final @Nullable RpmaClientMessageListener listener;

    private final RpmaClientConnectionListener connectionListener;

    private final RpmaEventLoopGroup loops;

    private final ClientConnection[] connections;

    private final EncodingSession encoding;

    /**
     * Where {@link #choose} starts looking, advanced by each choice: opaque reads and writes, not an
     * atomic increment per request, so two threads choosing at once may start at the same place, which
     * only changes which of equally loaded connections is taken.
     */
    @SuppressWarnings("unused") // through ROTATION
    private int rotation;

    private final AtomicBoolean closing = new AtomicBoolean();

    private final AtomicLong reconnects = new AtomicLong();

    private RpmaClient(Rpma rpma, @Nullable RpmaPeer peer, RpmaClientSettings settings, RpmaClientObserver observer,
            RpmaRequestObserver requestObserver, @Nullable RpmaClientMessageListener listener,
            RpmaClientConnectionListener connectionListener) {
        this.rpma = rpma;
        this.peer = peer;
        if (peer != null) {
            this.peers.put(peer.address(), peer);
        }
        this.settings = settings;
        this.server = settings.server();
        this.observer = observer;
        this.requestObserver = requestObserver;
        this.listener = listener;
        this.connectionListener = connectionListener;
        this.loops = new RpmaEventLoopGroup(settings.eventLoops(), "rpma-client-" + settings.name() + "-",
                settings.busyPoll());
        this.connections = new ClientConnection[settings.poolSize()];
        for (int i = 0; i < this.connections.length; i++) {
            int loop = this.loops.next();
            this.connections[i] = new ClientConnection(this, settings, i, this.loops.loop(loop), loop);
        }
        this.encoding = new EncodingSession(settings.name(), settings.maxMessageSize());
    }

    /** A builder of a client that calls librpma through {@code rpma} ({@link Rpma#get()}). */
    public static RpmaClientBuilder builder(Rpma rpma) {
        return new RpmaClientBuilder(rpma);
    }

    static RpmaClient start(Rpma rpma, RpmaClientSettings settings, RpmaClientObserver observer,
            RpmaRequestObserver requestObserver, @Nullable RpmaClientMessageListener listener,
            RpmaClientConnectionListener connectionListener) {
        RpmaPeer peer = (settings.servers() instanceof FixedServerLocator fixed)
                ? rpma.openPeer(fixed.server().address(), PeerRole.CLIENT) : null;
        RpmaClient client;
        try {
            client = new RpmaClient(rpma, peer, settings, observer, requestObserver, listener, connectionListener);
        }
        catch (RuntimeException ex) {
            if (peer != null) {
                peer.close();
            }
            throw ex;
        }
        client.loops.start();
        for (ClientConnection connection : client.connections) {
            connection.loop.execute(connection::open);
        }
        return client;
    }

    /** The name it was built with. */
    public String name() {
        return this.settings.name();
    }

    /** {@code address:port} of the server, or what its {@link RpmaServerLocator} calls its servers. */
    public String server() {
        return this.server;
    }

    // ---------------------------------------------------------------- framed requests

    /** A request to {@code route}; the future completes with the reply's payload. See {@link #request(String, byte[], RpmaRequestOptions)}. */
    public CompletableFuture<byte[]> request(String route, byte[] payload) {
        return request(route, payload, RpmaRequestOptions.DEFAULT);
    }

    /**
     * A framed REQUEST to the server's handler of {@code route}. The future completes with the
     * REPLY's payload, or fails with {@link RpmaRemoteErrorException} (an ERROR frame),
     * {@link RpmaRequestTimeoutException}, {@link RpmaConnectionLostException},
     * {@link RpmaConnectRejectedException} or {@link RpmaServerUnreachableException} (no connection
     * could be made), {@link RpmaClientClosedException}.
     *
     * @throws IllegalArgumentException when the route or payload is longer than the framing takes
     * @throws IllegalStateException in raw mode
     */
    public CompletableFuture<byte[]> request(String route, byte[] payload, RpmaRequestOptions options) {
        requireMode(true, "request");
        return dispatch(framed(PendingRequest.Kind.REQUEST, route, payload, options));
    }

    /**
     * A request whose payload a codec encodes ({@code byte[]} as it is) and whose reply a codec
     * decodes into {@code replyType} ({@code byte[]} as it is); the String codec is built in, more are
     * added with {@link RpmaClientBuilder#codec}.
     */
    public <T> CompletableFuture<T> request(String route, Object value, Class<T> replyType) {
        byte[] payload = encode(value);
        RpmaMessageCodec decoder = (replyType == byte[].class) ? null : codecFor(replyType, false);
        return request(route, payload).thenApply((reply) -> decode(reply, replyType, decoder));
    }

    /**
     * {@link #request(String, byte[])}, waiting at most {@code timeout} for the reply (the request's
     * timeout too).
     *
     * @throws RpmaClientException how it failed (the subclasses of {@link #request(String, byte[], RpmaRequestOptions)})
     */
    public byte[] requestBlocking(String route, byte[] payload, Duration timeout) {
        return await(request(route, payload, RpmaRequestOptions.DEFAULT.withTimeout(timeout)), timeout);
    }

    /** A one-way framed MESSAGE to {@code route}; the future completes once it is posted. */
    public CompletableFuture<Void> send(String route, byte[] payload) {
        requireMode(true, "send(route, payload)");
        return dispatch(framed(PendingRequest.Kind.MESSAGE, route, payload, RpmaRequestOptions.DEFAULT))
            .thenApply((ignored) -> null);
    }

    // ---------------------------------------------------------------- raw messages

    /** Raw mode: one message of {@code payload}; the future completes once it is posted. */
    public CompletableFuture<Void> send(byte[] payload) {
        requireMode(false, "send(payload)");
        return dispatch(raw(PendingRequest.Kind.RAW_SEND, payload)).thenApply((ignored) -> null);
    }

    /**
     * Raw mode: one message, answered by the next message the server sends on that connection (at most
     * {@code raw-window} exchanges wait per connection, so the answers cannot be confused with one
     * another if the server answers in order). Never retried.
     */
    public CompletableFuture<byte[]> exchange(byte[] payload) {
        requireMode(false, "exchange");
        return dispatch(raw(PendingRequest.Kind.RAW_EXCHANGE, payload));
    }

    // ---------------------------------------------------------------- connections

    /** The established connection with the fewest requests in flight, for one-sided access. */
    public RpmaClientConnection connection() {
        ClientConnection chosen = choose(null, false);
        if (chosen == null) {
            RpmaClientException why = lastFailure();
            throw (why != null) ? why : new RpmaClientException(server(), "No connection to " + server()
                    + " is established yet", null);
        }
        return chosen;
    }

    /**
     * Registers {@code memory} on the client's first peer, for the one-sided operations of its connections
     * ({@link RpmaClientConnection#read} and {@link RpmaClientConnection#write}): a device refuses a region
     * of another peer (another protection domain) with a local protection error, which ends the
     * connection; so with located servers on several devices, only the connections on the first one's
     * device take it. Close the region before the client.
     *
     * @throws IllegalStateException when the client's peer is not open yet (a client of located servers
     *     opens it at its first connection attempt) or the client is closed
     */
    public RpmaMemoryRegion register(ByteBuffer memory, MemoryUsage... usages) {
        RpmaPeer opened = this.peer;
        if (opened == null || this.closing.get()) {
            throw new IllegalStateException("RPMA client '" + name() + "' has no open peer to register memory on"
                    + ((opened == null) ? " yet: its first connection attempt opens it" : ": it is closed"));
        }
        return opened.register(memory, usages);
    }

    /** Every pooled connection, in pool order. */
    public List<RpmaClientConnection> connections() {
        return List.of(this.connections);
    }

    /** Requests and operations in flight or waiting, on every connection. */
    public int inFlight() {
        int sum = 0;
        for (ClientConnection connection : this.connections) {
            sum += connection.load();
        }
        return sum;
    }

    /** How many pooled connections are in each state. */
    public Map<RpmaClientConnectionState, Integer> connectionStates() {
        Map<RpmaClientConnectionState, Integer> states = new EnumMap<>(RpmaClientConnectionState.class);
        for (RpmaClientConnectionState state : RpmaClientConnectionState.values()) {
            states.put(state, 0);
        }
        for (ClientConnection connection : this.connections) {
            states.merge(connection.state(), 1, Integer::sum);
        }
        return states;
    }

    /** Connection attempts after the first of each pooled connection. */
    public long reconnects() {
        return this.reconnects.get();
    }

    /**
     * Closes the client once: requests and operations still pending fail with
     * {@link RpmaClientClosedException}, each connection is disconnected and deleted (after its CLOSED,
     * at most 3 s), the slots deregistered, the loops stopped and the peers deleted. Waits for it, a
     * bounded time; idempotent.
     */
    @Override
    public void close() {
        if (!this.closing.compareAndSet(false, true)) {
            return;
        }
        CountDownLatch closed = new CountDownLatch(this.connections.length);
        for (ClientConnection connection : this.connections) {
            if (!connection.loop.tryExecute(() -> connection.close(closed::countDown))) {
                closed.countDown();
            }
        }
        boolean clean = false;
        try {
            clean = closed.await(ClientConnection.DISCONNECT_TIMEOUT.toMillis() + 5000, TimeUnit.MILLISECONDS);
            this.loops.shutdown();
            clean &= this.loops.awaitTermination(Duration.ofSeconds(5));
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        if (!clean) {
            logger.error("RPMA client '{}' did not close its connections in time; its peers are left to the process's"
                    + " exit", name());
            return;
        }
        List<RpmaPeer> opened;
        synchronized (this) {
            opened = this.peers.values().stream().distinct().toList();
        }
        for (RpmaPeer each : opened) {
            each.close();
        }
    }

    // ---------------------------------------------------------------- for the connections

    Rpma rpma() {
        return this.rpma;
    }

    /**
     * The client's peer of the RDMA device that routes to {@code address}, opened at the first attempt to
     * that address; a device's peer serves every address it routes to.
     *
     * @throws dev.rpma.binding.RpmaException when no RDMA device routes to it
     */
    synchronized RpmaPeer peer(String address) {
        RpmaPeer known = this.peers.get(address);
        if (known != null) {
            return known;
        }
        RpmaPeer opened = this.rpma.openPeer(address, PeerRole.CLIENT);
        for (RpmaPeer other : this.peers.values()) {
            if (other.sameDevice(opened)) {
                opened.close();
                this.peers.put(address, other);
                return other;
            }
        }
        this.peers.put(address, opened);
        if (this.peer == null) {
            this.peer = opened;
        }
        return opened;
    }

    RpmaClientObserver observer() {
        return this.observer;
    }

    /** {@code request} ended: reported to the observer, its observation stopped; once per request. */
    void completed(PendingRequest request, RpmaClientObserver.Outcome outcome, @Nullable Throwable failure) {
        if (this.observer != RpmaClientObserver.NONE) {
            // only then: a clock read can be a system call
            this.observer.requestCompleted(name(), server(), request.routeText, outcome,
                    System.nanoTime() - request.startNanos);
        }
        if (request.observed != null) {
            request.observed.stop(outcome, failure);
        }
    }

    @Nullable RpmaClientMessageListener messageListener() {
        return this.listener;
    }

    RpmaClientConnectionListener connectionListener() {
        return this.connectionListener;
    }

    boolean isClosing() {
        return this.closing.get();
    }

    void reconnecting() {
        this.reconnects.incrementAndGet();
    }

    void established(ClientConnection connection) {
        logger.debug("Connection {} of RPMA client '{}' to {} is established", connection.index(), name(),
                connection.server());
    }

    /**
     * Gives {@code request}, held by {@code from} (on its loop), to another connection: an
     * established one, else one that is connecting; with none, it fails with {@code why} or with why
     * the pool's last attempt failed.
     */
    void elsewhere(PendingRequest request, ClientConnection from, @Nullable RpmaClientException why) {
        ClientConnection target = this.closing.get() ? null : choose(from, true);
        RpmaClientException cause = (why != null) ? why : from.lastFailure();
        if (target == null && !this.closing.get() && from.state() == RpmaClientConnectionState.BACKING_OFF
                && (cause == null || cause instanceof RpmaConnectionLostException)) {
            // lost, not refused: the connection is made again soon, and the request's timeout still runs
            from.park(request);
            return;
        }
        if (target == null) {
            RpmaClientException failure = this.closing.get() ? new RpmaClientClosedException(server())
                    : (cause != null) ? cause : failureWithoutConnection();
            from.finish(request, ClientConnection.outcomeOf(failure), null, failure);
            return;
        }
        from.release(request);
        if (!target.handOver(request)) {
            from.finish(request, RpmaClientObserver.Outcome.CLOSED, null, new RpmaClientClosedException(server()));
        }
    }

    // ---------------------------------------------------------------- the rest

    private CompletableFuture<byte[]> dispatch(PendingRequest request) {
        ClientConnection target = this.closing.get() ? null : choose(null, true);
        if (target == null) {
            RpmaClientException failure = this.closing.get() ? new RpmaClientClosedException(server())
                    : failureWithoutConnection();
            completed(request, ClientConnection.outcomeOf(failure), failure);
            request.completeExceptionally(failure);
            return request;
        }
        if (!target.takeOnLoop(request) && !target.handOver(request)) {
            RpmaClientClosedException closed = new RpmaClientClosedException(server());
            completed(request, RpmaClientObserver.Outcome.CLOSED, closed);
            request.completeExceptionally(closed);
        }
        return request;
    }

    /**
     * The established connection with the fewest in flight, other than {@code not}, else with
     * {@code orConnecting} the connecting one with the fewest ({@link PoolChoice}); each choice starts
     * one place further round the pool, so that equally loaded connections take turns.
     */
    private @Nullable ClientConnection choose(@Nullable ClientConnection not, boolean orConnecting) {
        int size = this.connections.length;
        int start = 0;
        if (size > 1) {
            int turn = (int) ROTATION.getOpaque(this);
            ROTATION.setOpaque(this, turn + 1);
            start = Math.floorMod(turn, size);
        }
        return PoolChoice.choose(this.connections, not, start, orConnecting);
    }

    private @Nullable RpmaClientException lastFailure() {
        for (ClientConnection connection : this.connections) {
            RpmaClientException failure = connection.lastFailure();
            if (failure != null) {
                return failure;
            }
        }
        return null;
    }

    private RpmaClientException failureWithoutConnection() {
        RpmaClientException last = lastFailure();
        if (last instanceof RpmaConnectRejectedException rejected) {
            return rejected;
        }
        if (last instanceof RpmaServerUnreachableException unreachable) {
            return unreachable;
        }
        return new RpmaConnectionLostException(server(), "no connection is established or connecting (the pool"
                + " connects again after its back-off)" + ((last != null) ? "; the last ended: " + last.getMessage() : ""),
                last);
    }

    private PendingRequest framed(PendingRequest.Kind kind, String route, byte[] payload, RpmaRequestOptions options) {
        byte[] routeBytes = route.getBytes(StandardCharsets.UTF_8);
        if (routeBytes.length > RpmaFraming.MAX_ROUTE_LENGTH) {
            throw new IllegalArgumentException("The route \"" + route + "\" is longer than "
                    + RpmaFraming.MAX_ROUTE_LENGTH + " bytes (UTF-8)");
        }
        checkPayload(payload);
        Duration timeout = (options.timeout() != null) ? options.timeout() : this.settings.requestTimeout();
        return new PendingRequest(kind, routeBytes, route, payload, options.idempotent(), timeout, madeAt(),
                this.requestObserver.start(name(), server(), route));
    }

    private PendingRequest raw(PendingRequest.Kind kind, byte[] payload) {
        checkPayload(payload);
        if (payload.length == 0) {
            throw new IllegalArgumentException("An empty message cannot be sent in raw mode: the server would see a"
                    + " receive of 0 bytes");
        }
        return new PendingRequest(kind, NO_ROUTE, "", payload, false, this.settings.requestTimeout(), madeAt(),
                this.requestObserver.start(name(), server(), ""));
    }

    /**
     * When a request is made: the clock; or, for one made on an event loop (in a callback) when no
     * observer times requests, the loop's reading of the clock when its round began, which is free
     * where a clock read is a system call. Its timeout then runs from up to a round's work earlier.
     */
    private long madeAt() {
        RpmaEventLoop loop;
        if (this.observer == RpmaClientObserver.NONE && (loop = RpmaEventLoop.current()) != null) {
            return loop.clockNanos();
        }
        return System.nanoTime();
    }

    private void checkPayload(byte[] payload) {
        if (payload.length > this.settings.maxMessageSize()) {
            throw new IllegalArgumentException("A payload of " + payload.length + " bytes is larger than the client's"
                    + " max-message-size of " + this.settings.maxMessageSize() + " bytes");
        }
    }

    private void requireMode(boolean framed, String method) {
        if (this.settings.framed() != framed) {
            throw new IllegalStateException("RPMA client '" + name() + "' is " + this.settings.mode() + "; " + method
                    + " needs " + (framed ? "framed" : "raw") + " mode");
        }
    }

    private byte[] encode(Object value) {
        if (value instanceof byte[] bytes) {
            return bytes;
        }
        RpmaMessageCodec codec = codecFor(value.getClass(), true);
        ByteBuffer encoded = codec.encode(value, this.encoding);
        byte[] bytes = new byte[encoded.remaining()];
        encoded.get(encoded.position(), bytes);
        return bytes;
    }

    private RpmaMessageCodec codecFor(Class<?> type, boolean encode) {
        for (RpmaMessageCodec codec : this.settings.codecs()) {
            if (encode ? codec.canEncode(type) : codec.canDecode(type)) {
                return codec;
            }
        }
        throw new IllegalArgumentException("No codec of RPMA client '" + name() + "' " + (encode ? "encodes " : "decodes ")
                + type.getName() + "; add one with RpmaClientBuilder.codec(...)");
    }

    private static <T> T decode(byte[] reply, Class<T> type, @Nullable RpmaMessageCodec codec) {
        if (codec == null) {
            return type.cast(reply);
        }
        try {
            return type.cast(codec.decode(ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN), type));
        }
        catch (RpmaProtocolException ex) {
            throw new IllegalStateException("The reply is not a " + type.getName() + ": " + ex.getMessage(), ex);
        }
    }

    private byte[] await(CompletableFuture<byte[]> future, Duration timeout) {
        try {
            // the request's own timer fails it first; this bound only keeps a thread from waiting for ever
            return future.get(timeout.toNanos() + TimeUnit.SECONDS.toNanos(5), TimeUnit.NANOSECONDS);
        }
        catch (ExecutionException ex) {
            if (ex.getCause() instanceof RuntimeException runtime) {
                throw runtime;
            }
            throw new RpmaClientException(server(), "The request failed: " + ex.getCause(), ex.getCause());
        }
        catch (TimeoutException ex) {
            future.cancel(false);
            throw new RpmaRequestTimeoutException(server(), "a blocking request", timeout);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            future.cancel(false);
            throw new RpmaClientException(server(), "Interrupted while waiting for a reply from " + server(), ex);
        }
    }

    @Override
    public String toString() {
        return "RpmaClient[" + name() + " -> " + server() + ", " + this.settings.mode() + ", pool "
                + this.connections.length + "]";
    }
}
