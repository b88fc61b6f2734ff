package dev.rpma.client;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.FlushType;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaPeerConfig;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaEscaping;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaLogThread;

/**
 * One place of an {@link RpmaClient}'s pool, owned by its event loop: it connects, serves the
 * connection's data path ({@link ClientDataPath}), and when the connection fails or ends, fails or
 * hands on what it held and connects again after a back-off. Every librpma call on its request,
 * connection and remote region runs on its loop; other threads hand it work with {@code execute}.
 *
 * <p>States ({@link RpmaClientConnectionState}): CONNECTING from the request until ESTABLISHED or a
 * failure (REJECTED, UNREACHABLE, LOST, CLOSED, the connect timeout), then BACKING_OFF until the next
 * attempt; ESTABLISHED until the server's CLOSED, a LOST or a failed completion; CLOSING when the
 * client closes (the client disconnects, and deletes on its CLOSED, at most 3 s later), then CLOSED.
 * The state is written on the loop only and read anywhere.
 *
 * <p>It is some 850 lines because a connection's life (connect, back-off, teardown) and the hand-over
 * of its requests share one loop-confined state that splitting would expose; the frames and completions
 * are in {@link ClientDataPath}, the requests in flight in {@link InFlightRequests}, their timeouts in
 * {@link RequestTimer}.
 */
final class ClientConnection implements RpmaClientConnection, PoolChoice.Candidate, RpmaEventLoop.IoHandler {

    private static final Logger logger = LoggerFactory.getLogger(ClientConnection.class);

    private static final VarHandle HELD;

    static {
        try {
            HELD = MethodHandles.lookup().findVarHandle(ClientConnection.class, "held", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** How long a connection the client closes waits for its CLOSED before it is deleted anyway. */
    static final Duration DISCONNECT_TIMEOUT = Duration.ofSeconds(3);

    private final RpmaClient client;

    private final RpmaClientSettings settings;

    private final int index;

    final RpmaEventLoop loop;

    final int loopIndex;

    /**
     * Whether a request made on its loop is submitted in the call ({@link #takeOnLoop}): framed, the
     * server sends only into receives it was granted; raw, only when the receives outnumber the raw
     * window, so that an exchange sent before the receive of the reply being delivered is posted
     * again still finds one for its answer.
     */
    private final boolean submitsOnLoop;

    /** Requests and operations other threads handed to its loop that the loop has not taken yet. */
    private final AtomicInteger handedOver = new AtomicInteger();

    /**
     * Requests and operations its loop holds and has not finished: written by the loop alone (opaque
     * writes, so that a request made and answered on the loop costs no atomic read-modify-write),
     * read anywhere ({@link #load}).
     */
    @SuppressWarnings("unused") // through HELD
    private int held;

    private volatile RpmaClientConnectionState state = RpmaClientConnectionState.CONNECTING;

    /** Why the last attempt failed or the last connection ended; {@code null} once established. */
    private volatile @Nullable RpmaClientException lastFailure;

    private volatile byte[] privateData = new byte[0];

    private volatile @Nullable RpmaCommonData commonData;

    private volatile long remoteRegionSize;

    /** The strongest flush the server's peer configuration allows; VISIBILITY without one. */
    private volatile FlushType flushType = FlushType.VISIBILITY;

    // owned by the loop
    private @Nullable ClientSlots slots;

    private @Nullable RpmaConnection connection;

    private @Nullable ClientDataPath data;

    private @Nullable RpmaRemoteMemoryRegion remote;

    private int eventFd = -1;

    private long eventRegistration;

    private boolean registered;

    private RpmaEventLoop.@Nullable Timer timer;

    private int failuresInARow;

    /** The server of the current or last attempt, from the client's locator; {@code null} before the first. */
    private volatile @Nullable RpmaServerAddress target;

    private boolean everConnected;

    private @Nullable Runnable whenClosed;

    /** While {@link #ended} takes the completions that came before the end; on the loop. */
    private boolean ending;

    /**
     * Requests that lost their connection with no other connection to go to: they wait for this one's
     * next connection (their timeouts still run), and fail with its failure if that attempt fails.
     */
    private final ArrayDeque<PendingRequest> parked = new ArrayDeque<>();

    /** The timeouts of the requests it holds, parked ones too. */
    private final RequestTimer timeouts;

    ClientConnection(RpmaClient client, RpmaClientSettings settings, int index, RpmaEventLoop loop, int loopIndex) {
        this.client = client;
        this.settings = settings;
        this.index = index;
        this.loop = loop;
        this.loopIndex = loopIndex;
        this.submitsOnLoop = settings.framed() || settings.receiveSlots() > settings.rawWindow();
        this.timeouts = new RequestTimer(loop, this::sweep);
    }

    // ---------------------------------------------------------------- RpmaClientConnection

    @Override
    public int index() {
        return this.index;
    }

    @Override
    public RpmaClientConnectionState state() {
        return this.state;
    }

    @Override
    public byte[] privateData() {
        return this.privateData.clone();
    }

    @Override
    public @Nullable RpmaCommonData commonData() {
        return this.commonData;
    }

    @Override
    public FlushType flushType() {
        return this.flushType;
    }

    @Override
    public long remoteRegionSize() {
        return this.remoteRegionSize;
    }

    @Override
    public int inFlight() {
        return load();
    }

    /** Requests and operations given to it and not finished, as far as this thread can see; any thread. */
    @Override
    public int load() {
        return this.handedOver.get() + (int) HELD.getOpaque(this);
    }

    private void countHeld(int delta) {
        HELD.setOpaque(this, (int) HELD.getOpaque(this) + delta);
    }

    /** On the loop: what another thread handed over is held by the loop from now on. */
    private void takenOver() {
        countHeld(1);
        this.handedOver.decrementAndGet();
    }

    /**
     * Hands {@code request} to the loop, where {@link #take} takes it, and counts it here: as held when
     * the caller is the loop itself (a request made in a callback), else as handed over. {@code false},
     * and not counted, once the loop has stopped.
     */
    boolean handOver(PendingRequest request) {
        request.ownPayload();
        request.owner = this;
        if (this.loop.inLoop()) {
            request.handedOver = false;
            countHeld(1);
        }
        else {
            request.handedOver = true;
            this.handedOver.incrementAndGet();
        }
        if (this.loop.tryExecute(request)) {
            return true;
        }
        release(request);
        return false;
    }

    /**
     * Submits a request made on this connection's loop (in a callback) in the call, where the task
     * queue would run it only after the callback and the rest of the loop's work: with one request in
     * flight, that way is all inside its round trip. {@code false} on another thread, and when the
     * receives do not allow it ({@link #submitsOnLoop}): then {@link #handOver}.
     */
    boolean takeOnLoop(PendingRequest request) {
        if (!this.submitsOnLoop || !this.loop.inLoop()) {
            return false;
        }
        request.owner = this;
        request.handedOver = false;
        countHeld(1);
        submit(request);
        if (request.owner == this && (!request.posted || request.idempotent)) {
            // it waits here, or may be sent again after a lost connection: the caller may reuse its
            // array (one handed to another connection's loop took its copy on the way)
            request.ownPayload();
        }
        return true;
    }

    /** On the loop: takes a request handed over ({@link #handOver}). */
    void take(PendingRequest request) {
        if (request.handedOver) {
            request.handedOver = false;
            takenOver();
        }
        submit(request);
    }

    /** Stops counting {@code request} here: on the loop when it holds it, anywhere while it is handed over. */
    void release(PendingRequest request) {
        if (request.owner != this) {
            return;
        }
        request.owner = null;
        if (request.handedOver) {
            request.handedOver = false;
            this.handedOver.decrementAndGet();
        }
        else {
            countHeld(-1);
        }
    }

    @Override
    public CompletableFuture<Void> read(RpmaMemoryRegion destination, long destinationOffset, long remoteOffset,
            long length) {
        return operate(new OneSidedOperation(OneSidedOperation.Kind.READ, destination, destinationOffset, remoteOffset,
                length, 0));
    }

    @Override
    public CompletableFuture<Void> write(long remoteOffset, RpmaMemoryRegion source, long sourceOffset, long length) {
        return operate(new OneSidedOperation(OneSidedOperation.Kind.WRITE, source, sourceOffset, remoteOffset, length, 0));
    }

    @Override
    public CompletableFuture<Void> atomicWrite(long remoteOffset, long value) {
        return operate(new OneSidedOperation(OneSidedOperation.Kind.ATOMIC_WRITE, null, 0, remoteOffset, 8, value));
    }

    @Override
    public CompletableFuture<Void> flush(long remoteOffset, long length, FlushType type) {
        return operate(new OneSidedOperation(OneSidedOperation.Kind.FLUSH, null, 0, remoteOffset, length,
                (type == FlushType.PERSISTENT) ? 0 : 1));
    }

    private CompletableFuture<Void> operate(OneSidedOperation operation) {
        this.handedOver.incrementAndGet();
        if (!this.loop.tryExecute(() -> startOperation(operation))) {
            this.handedOver.decrementAndGet();
            operation.future.completeExceptionally(new RpmaClientClosedException(this.settings.server()));
        }
        return operation.future;
    }

    private void startOperation(OneSidedOperation operation) {
        takenOver();
        ClientDataPath path = this.data;
        if (this.state != RpmaClientConnectionState.ESTABLISHED || path == null) {
            operationDone(operation, new RpmaClientException(this.settings.server(), "Connection " + this.index
                    + " to " + this.settings.server() + " is " + this.state + ", not established", null));
            return;
        }
        RpmaRemoteMemoryRegion region = this.remote;
        if (region == null) {
            operationDone(operation, new RpmaClientException(this.settings.server(), "The server at "
                    + this.settings.server() + " described no memory region in its accept's private data (no struct"
                    + " common_data)", null));
            return;
        }
        path.submit(operation, region);
    }

    // ---------------------------------------------------------------- connecting, on the loop

    /** Sends a connection request; on the loop. */
    void open() {
        this.timer = null;
        if (this.client.isClosing()) {
            return;
        }
        if (this.everConnected || this.failuresInARow > 0) {
            this.client.reconnecting();
        }
        moveTo(RpmaClientConnectionState.CONNECTING);
        RpmaServerAddress server;
        try {
            server = this.settings.servers().next(this.target);
        }
        catch (RpmaClientException ex) {
            connectFailed(ex);
            return;
        }
        catch (RuntimeException ex) {
            connectFailed(new RpmaServerUnreachableException(this.settings.server(), "choosing a server failed: " + ex,
                    ex));
            return;
        }
        this.target = server;
        ClientSlots buffers;
        RpmaConnectionRequest request;
        try {
            RpmaPeer peer = this.client.peer(server.address());
            buffers = slots(peer);
            try (RpmaConnectionConfig config = this.client.rpma().newConnectionConfig()) {
                int receives = this.settings.receiveSlots();
                int sends = this.settings.sendSlots() + this.settings.oneSidedDepth();
                config.timeout(this.settings.connectTimeout()).rqSize(receives).sqSize(sends).cqSize(receives + sends);
                request = peer.newConnectionRequest(server.address(), server.port(), config);
            }
        }
        catch (RpmaException ex) {
            connectFailed(new RpmaServerUnreachableException(server(), ex.function()
                    + " failed: no RDMA route to the server (" + ex.getMessage() + ")", ex));
            return;
        }
        ClientDataPath path = new ClientDataPath(this, this.settings, buffers, this.loop);
        RpmaConnection made;
        try {
            path.postReceives(request);
            made = request.connect(this.settings.connectPrivateData());
        }
        catch (RpmaException ex) {
            connectFailed(new RpmaServerUnreachableException(server(), ex.function() + " failed: "
                    + ex.getMessage(), ex));
            return;
        }
        finally {
            request.close();
        }
        this.connection = made;
        this.data = path;
        try {
            this.eventFd = made.eventFd();
            FileDescriptors.setBlocking(this.eventFd, false);
            this.eventRegistration = this.loop.register(this.eventFd, this, 0);
            this.registered = true;
        }
        catch (RuntimeException ex) {
            connectFailed(new RpmaClientException(this.settings.server(), "Watching the connection's events failed: "
                    + ex.getMessage(), ex));
            return;
        }
        this.timer = this.loop.schedule(this::connectTimedOut, this.settings.connectTimeout());
        PendingRequest waiting;
        while ((waiting = this.parked.poll()) != null) {
            if (!waiting.finished) {
                path.submit(waiting);
            }
        }
    }

    /** Its post failed and ended the connection, which handed on what it held before: on to another. */
    void notSent(PendingRequest request) {
        this.client.elsewhere(request, this, null);
    }

    /** Keeps {@code request} for the next connection, within its timeout; on the loop, while BACKING_OFF. */
    void park(PendingRequest request) {
        this.parked.add(request);
        this.timeouts.watch(request.deadlineNanos);
    }

    private ClientSlots slots(RpmaPeer peer) {
        ClientSlots current = this.slots;
        if (current != null && current.peer != peer) {
            // the server is on another device: the previous connection is deleted, nothing uses them
            this.slots = null;
            current.close();
            current = null;
        }
        if (current == null) {
            current = new ClientSlots(peer, this.settings.receiveSlots(), this.settings.sendSlots(),
                    this.settings.receiveLength());
            this.slots = current;
        }
        return current;
    }

    private void connectTimedOut() {
        this.timer = null;
        if (this.state == RpmaClientConnectionState.CONNECTING) {
            connectFailed(new RpmaServerUnreachableException(server(), "the connection was not established"
                    + " within the connect timeout of " + this.settings.connectTimeout(), null));
        }
    }

    @Override
    public void onReadable(int kind) {
        RpmaConnection current = this.connection;
        if (current == null) {
            return;
        }
        RpmaConnectionEvent event;
        try {
            event = current.nextEvent();
        }
        catch (RpmaException ex) {
            ended(new RpmaConnectionLostException(this.settings.server(), "reading its event failed: " + ex.getMessage(),
                    ex));
            return;
        }
        if (event == null) {
            return;
        }
        switch (event) {
            case ESTABLISHED -> established(current);
            case REJECTED -> ended(new RpmaConnectRejectedException(server()));
            case UNREACHABLE -> ended(new RpmaServerUnreachableException(server(),
                    "RPMA_CONN_UNREACHABLE: nothing listens on the port, or no route answered", null));
            case CLOSED -> {
                if (this.state == RpmaClientConnectionState.CLOSING) {
                    delete();
                    closed();
                }
                else {
                    ended(new RpmaConnectionLostException(server(), "the server closed the connection"
                            + " (RPMA_CONN_CLOSED)", null));
                }
            }
            default -> ended(new RpmaConnectionLostException(server(), "the connection was " + event
                    + " (RPMA_CONN_" + event + ")", null));
        }
    }

    private void established(RpmaConnection current) {
        if (this.state != RpmaClientConnectionState.CONNECTING) {
            return;
        }
        cancelTimer();
        byte[] accepted = current.privateData();
        this.privateData = accepted;
        this.commonData = commonDataOf(accepted);
        RpmaCommonData common = this.commonData;
        try {
            if (common != null) {
                RpmaRemoteMemoryRegion region = this.client.rpma().remoteMemoryRegion(common.memoryRegionDescriptor());
                this.remote = region;
                this.remoteRegionSize = region.size();
                this.flushType = applyPeerConfig(current, common);
            }
            ClientDataPath path = this.data;
            if (path != null) {
                path.attach(current);
            }
        }
        catch (RuntimeException ex) {
            ended(new RpmaConnectionLostException(this.settings.server(), "starting its data path failed: "
                    + ex.getMessage(), ex));
            return;
        }
        this.failuresInARow = 0;
        this.lastFailure = null;
        this.everConnected = true;
        moveTo(RpmaClientConnectionState.ESTABLISHED);
        this.client.established(this);
        try {
            this.client.connectionListener().established(this);
        }
        catch (RuntimeException ex) {
            listenerFailed("The connection listener", ex);
        }
    }

    /**
     * Applies the peer configuration the accept carries after the region's descriptor, as librpma's
     * example 05 client does, so that a persistent flush is allowed where the server declares direct
     * write to persistent memory; that flush is then the one to use.
     */
    private FlushType applyPeerConfig(RpmaConnection current, RpmaCommonData common) {
        byte[] descriptor = common.peerConfigDescriptor();
        if (descriptor.length == 0) {
            return FlushType.VISIBILITY;
        }
        try (RpmaPeerConfig config = this.client.rpma().peerConfigFromDescriptor(descriptor)) {
            current.applyRemotePeerConfig(config);
            return config.directWriteToPmem() ? FlushType.PERSISTENT : FlushType.VISIBILITY;
        }
    }

    private static @Nullable RpmaCommonData commonDataOf(byte[] privateData) {
        if (privateData.length < RpmaCommonData.SIZE) {
            return null;
        }
        try {
            RpmaCommonData data = RpmaCommonData.decode(privateData);
            return (data.memoryRegionDescriptor().length == RpmaMemoryRegion.DESCRIPTOR_SIZE) ? data : null;
        }
        catch (IllegalArgumentException ex) {
            // private data of another protocol
            return null;
        }
    }

    // ---------------------------------------------------------------- requests, on the loop

    /** Takes a request handed over ({@link #take}); another connection gets it when this one cannot. On the loop. */
    void submit(PendingRequest request) {
        if (request.finished) {
            return;
        }
        ClientDataPath path = this.data;
        boolean open = this.state == RpmaClientConnectionState.CONNECTING
                || this.state == RpmaClientConnectionState.ESTABLISHED;
        if (!open || path == null) {
            this.client.elsewhere(request, this, null);
            return;
        }
        // the loop's reading of the clock: one that expires meanwhile is sent, and then timed out by the timer
        if (request.deadlineNanos - this.loop.clockNanos() <= 0) {
            timedOut(request);
            return;
        }
        this.timeouts.watch(request.deadlineNanos);
        if (!path.submit(request)) {
            this.client.elsewhere(request, this, null);
        }
    }

    /** The timer fired: what it holds past its deadline is taken out and times out, the earliest first. */
    private void sweep(RequestTimer timer) {
        List<PendingRequest> due = new ArrayList<>();
        timer.takeDue(this.parked, due);
        ClientDataPath path = this.data;
        if (path != null) {
            path.takeDue(timer, due);
        }
        if (due.size() > 1) {
            due.sort((a, b) -> Long.signum(a.deadlineNanos - b.deadlineNanos));
        }
        for (PendingRequest request : due) {
            try {
                timedOut(request);
            }
            catch (RuntimeException ex) {
                // taken out already: the others must still end
                listenerFailed("The observer", ex);
            }
        }
    }

    /**
     * Ends {@code request} with its timeout: taken out of the queues and tables, or never in one (a raw
     * exchange sent keeps its place, {@link ClientDataPath#takeDue}).
     */
    private void timedOut(PendingRequest request) {
        finish(request, RpmaClientObserver.Outcome.TIMEOUT, null,
                new RpmaRequestTimeoutException(this.settings.server(), request.describe(), request.timeout));
    }

    void succeed(PendingRequest request, byte[] reply) {
        finish(request, RpmaClientObserver.Outcome.SUCCESS, reply, null);
    }

    void remoteError(PendingRequest request, String text) {
        finish(request, RpmaClientObserver.Outcome.REMOTE_ERROR, null,
                new RpmaRemoteErrorException(this.settings.server(), request.routeText, text));
    }

    void finishCancelled(PendingRequest request) {
        finish(request, RpmaClientObserver.Outcome.CLOSED, null, null);
    }

    /**
     * Records the outcome once: the load counted down, the end reported where something takes it (an
     * observer of the client, the request's observation), the future completed.
     */
    void finish(PendingRequest request, RpmaClientObserver.Outcome outcome, byte @Nullable [] reply,
            @Nullable Throwable failure) {
        if (request.finished) {
            return;
        }
        request.finished = true;
        ClientConnection counted = request.owner;
        if (counted != null) {
            counted.release(request);
        }
        this.client.completed(request, outcome, failure);
        if (failure != null) {
            request.completeExceptionally(failure);
        }
        else if (reply != null) {
            request.complete(reply);
        }
    }

    /** The operation ended; on the loop, which counted it when it started it. */
    void operationDone(OneSidedOperation operation, @Nullable Throwable failure) {
        countHeld(-1);
        if (failure != null) {
            operation.future.completeExceptionally(failure);
        }
        else {
            operation.future.complete(null);
        }
    }

    @Nullable RpmaClientException lastFailure() {
        return this.lastFailure;
    }

    @Nullable RpmaRemoteMemoryRegion remoteRegion() {
        return this.remote;
    }

    void unsolicited(byte[] message) {
        RpmaClientMessageListener listener = this.client.messageListener();
        if (listener == null) {
            return;
        }
        try {
            listener.onMessage(message, this);
        }
        catch (RuntimeException ex) {
            listenerFailed("The message listener", ex);
        }
    }

    /**
     * A listener threw: on the loop, one line with the exception's class and escaped message (it may
     * quote what the server sent); its stack trace from the log thread ({@link RpmaLogThread}).
     */
    private void listenerFailed(String listener, RuntimeException ex) {
        RpmaLogThread.warn(logger, listener + " of RPMA client '" + this.settings.name() + "' failed: "
                + RpmaEscaping.describe(ex, 1024), ex);
    }

    void lateReply() {
        this.client.observer().lateReplyDropped(this.settings.name());
    }

    // ---------------------------------------------------------------- failures and the end, on the loop

    /** The data path cannot go on (a failed completion or call, a frame out of protocol). */
    void dataPathFailed(String why, @Nullable Throwable cause) {
        if (this.state == RpmaClientConnectionState.ESTABLISHED && !this.ending) {
            ended(new RpmaConnectionLostException(this.settings.server(), why, cause));
        }
    }

    private void connectFailed(RpmaClientException why) {
        ended(why);
    }

    /**
     * The connection failed or ended: it is deleted, what it held fails or goes to another connection,
     * and the next attempt is scheduled.
     */
    private void ended(RpmaClientException why) {
        if (this.state == RpmaClientConnectionState.CLOSING || this.state == RpmaClientConnectionState.CLOSED) {
            return;
        }
        boolean wasEstablished = this.state == RpmaClientConnectionState.ESTABLISHED;
        cancelTimer();
        ClientDataPath path = this.data;
        ClientDataPath.Leftovers left = null;
        if (path != null) {
            if (wasEstablished) {
                // a failed completion among the last ones is this same end, not another one
                this.ending = true;
                try {
                    path.drainBeforeEnd();
                }
                finally {
                    this.ending = false;
                }
            }
            left = path.stop();
        }
        RpmaConnection current = this.connection;
        if (current != null) {
            try {
                current.disconnect();
            }
            catch (RpmaException ex) {
                // the server may be gone already; the delete releases the connection either way
                logger.debug("Disconnecting connection {} of RPMA client '{}' failed: {}", this.index,
                        this.settings.name(), ex.getMessage());
            }
        }
        delete();
        this.lastFailure = why;
        this.failuresInARow++;
        Duration delay = this.settings.backoff().delay(this.failuresInARow);
        moveTo(RpmaClientConnectionState.BACKING_OFF);
        if (wasEstablished) {
            logger.warn("Connection {} of RPMA client '{}' ended: {}; connecting again in {}", this.index,
                    this.settings.name(), why.getMessage(), delay);
        }
        else {
            logger.warn("Connection {} of RPMA client '{}' failed: {}; trying again in {}", this.index,
                    this.settings.name(), why.getMessage(), delay);
        }
        List<PendingRequest> again = new ArrayList<>(this.parked);
        this.parked.clear();
        again.forEach((request) -> this.client.elsewhere(request, this, why));
        if (left != null) {
            for (OneSidedOperation operation : left.operations()) {
                operationDone(operation, why);
            }
            for (PendingRequest request : left.sent()) {
                if (request.idempotent && request.retries < this.settings.maxRetries()) {
                    request.retries++;
                    request.requestId = -1;
                    this.client.elsewhere(request, this, why);
                }
                else {
                    finish(request, outcomeOf(why), null, why);
                }
            }
            for (PendingRequest request : left.unsent()) {
                this.client.elsewhere(request, this, why);
            }
        }
        try {
            this.client.connectionListener().ended(this, why);
        }
        catch (RuntimeException ex) {
            listenerFailed("The connection listener", ex);
        }
        this.client.observer().reconnectScheduled(this.settings.name(), this.failuresInARow, delay);
        this.timer = this.loop.schedule(this::open, delay);
    }

    /** The server of the current or last attempt ({@code address:port}), for the messages of its failures. */
    String server() {
        RpmaServerAddress server = this.target;
        return (server != null) ? server.toString() : this.settings.server();
    }

    static RpmaClientObserver.Outcome outcomeOf(RpmaClientException failure) {
        if (failure instanceof RpmaConnectRejectedException) {
            return RpmaClientObserver.Outcome.REJECTED;
        }
        if (failure instanceof RpmaServerUnreachableException) {
            return RpmaClientObserver.Outcome.UNREACHABLE;
        }
        if (failure instanceof RpmaClientClosedException) {
            return RpmaClientObserver.Outcome.CLOSED;
        }
        return (failure instanceof RpmaConnectionLostException) ? RpmaClientObserver.Outcome.LOST
                : RpmaClientObserver.Outcome.FAILED;
    }

    /** Unwatches and deletes the connection and its remote region; the slots stay for the next one. */
    private void delete() {
        if (this.registered) {
            // before the delete, which closes the fd
            this.loop.unregister(this.eventFd, this.eventRegistration);
            this.registered = false;
        }
        ClientDataPath path = this.data;
        if (path != null) {
            path.stop();
            this.data = null;
        }
        RpmaRemoteMemoryRegion region = this.remote;
        this.remote = null;
        if (region != null) {
            region.close();
        }
        RpmaConnection current = this.connection;
        this.connection = null;
        if (current != null) {
            current.close();
        }
        this.privateData = new byte[0];
        this.commonData = null;
        this.remoteRegionSize = 0;
        this.flushType = FlushType.VISIBILITY;
    }

    /**
     * Closes for good (the client closes): what it holds fails, an established connection is
     * disconnected and deleted on its CLOSED (at most {@link #DISCONNECT_TIMEOUT} later), the slots are
     * deregistered, then {@code whenDone} runs; on the loop.
     */
    void close(Runnable whenDone) {
        this.whenClosed = whenDone;
        cancelTimer();
        RpmaClientConnectionState before = this.state;
        moveTo(RpmaClientConnectionState.CLOSING);
        ClientDataPath path = this.data;
        if (path != null) {
            ClientDataPath.Leftovers left = path.stop();
            RpmaClientClosedException closed = new RpmaClientClosedException(this.settings.server());
            left.operations().forEach((operation) -> operationDone(operation, closed));
            left.sent().forEach((request) -> finish(request, RpmaClientObserver.Outcome.CLOSED, null, closed));
            left.unsent().forEach((request) -> finish(request, RpmaClientObserver.Outcome.CLOSED, null, closed));
        }
        RpmaClientClosedException closedNow = new RpmaClientClosedException(this.settings.server());
        this.parked.forEach((request) -> finish(request, RpmaClientObserver.Outcome.CLOSED, null, closedNow));
        this.parked.clear();
        RpmaConnection current = this.connection;
        if (current == null || before != RpmaClientConnectionState.ESTABLISHED) {
            delete();
            closed();
            return;
        }
        try {
            current.disconnect();
        }
        catch (RpmaException ex) {
            delete();
            closed();
            return;
        }
        this.timer = this.loop.schedule(() -> {
            this.timer = null;
            delete();
            closed();
        }, DISCONNECT_TIMEOUT);
    }

    private void closed() {
        if (this.state == RpmaClientConnectionState.CLOSED) {
            return;
        }
        cancelTimer();
        ClientSlots buffers = this.slots;
        this.slots = null;
        try {
            if (buffers != null) {
                buffers.close();
            }
        }
        catch (RuntimeException ex) {
            RpmaLogThread.warn(logger, "Deregistering the slots of connection " + this.index + " of RPMA client '"
                    + this.settings.name() + "' failed: " + RpmaEscaping.describe(ex, 1024), ex);
        }
        moveTo(RpmaClientConnectionState.CLOSED);
        Runnable done = this.whenClosed;
        this.whenClosed = null;
        if (done != null) {
            done.run();
        }
    }

    private void cancelTimer() {
        if (this.timer != null) {
            this.timer.cancel();
            this.timer = null;
        }
    }

    private void moveTo(RpmaClientConnectionState next) {
        RpmaClientConnectionState before = this.state;
        if (before == next) {
            return;
        }
        this.state = next;
        this.client.observer().connectionState(this.settings.name(), before, next);
    }

    @Override
    public String toString() {
        return "RpmaClientConnection[" + this.settings.name() + " #" + this.index + ", " + this.state + ", in flight "
                + load() + "]";
    }
}
