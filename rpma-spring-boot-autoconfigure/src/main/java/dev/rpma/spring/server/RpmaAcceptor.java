package dev.rpma.spring.server;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionHandler;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Supplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.rpma.jna.Errno;
import dev.rpma.jna.RpmaConnection;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaConnectionEvent;
import dev.rpma.jna.RpmaConnectionRequest;
import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaError;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.io.FdPoller;

/**
 * The acceptor of one endpoint: the endpoint's owner thread and its only event loop.
 *
 * <p>It polls the non-blocking endpoint fd and the event fds of its accepted connections together
 * with a wake-up, calls {@code rpma_ep_next_conn_req} when the endpoint fd polls readable (and once
 * per poll interval without) while it has requests, up to a burst per round, hands each request to
 * the handler executor through its bounded queue (or runs it itself, for an inline handler), reads
 * connection events, and runs the tasks other threads hand it (rejects, new connections). So every
 * librpma call that is not thread-safe ({@code rpma_ep_next_conn_req}, {@code rpma_conn_req_delete},
 * {@code rpma_ep_shutdown}) runs on this thread, and stopping never waits on a blocked native call.
 *
 * <p>Outcomes of {@code rpma_ep_next_conn_req}: a request is dispatched; nothing available waits for
 * the fd; {@code RPMA_E_INVAL} (an event that was not a connection request) is counted and the loop
 * goes on; {@code RPMA_E_PROVIDER} and {@code RPMA_E_NOMEM} are counted and retried with a bounded
 * back-off ({@code EINTR} at once); {@code RPMA_E_PROVIDER} with {@code EBADF}/{@code ENODEV}, any other
 * code, or more than {@code maxConsecutiveErrors} failures in a row stop the endpoint as
 * {@link RpmaEndpointState#FAILED}.
 */
final class RpmaAcceptor implements Runnable {

    private static final Log logger = LogFactory.getLog(RpmaAcceptor.class);

    /** Connections one endpoint tracks at most; requests beyond are rejected as the queue being full. */
    static final int MAX_CONNECTIONS = 4096;

    /**
     * The handler pool's policy when its queue is full: the invocation is marked, not thrown out as
     * an exception, because a full queue is an expected condition of an overloaded server and the
     * default policy builds an exception with a stack trace and the pool's description (under its
     * main lock) for each request turned away, just when the acceptor is busiest.
     */
    static final RejectedExecutionHandler REFUSE = (task, pool) -> ((HandlerInvocation) task).refused = true;

    /** Requests taken from librpma per loop iteration, so connection events are not starved. */
    private static final int REQUESTS_PER_ROUND = 64;

    private static final long BACKOFF_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private static final long BACKOFF_MAX_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Longest poll while stopping, so the grace period is checked often. */
    private static final int STOPPING_POLL_MILLIS = 20;

    private final RpmaEndpointSettings settings;

    private final RpmaEndpoint endpoint;

    private final RpmaConnectionConfig requestConfig;

    private final ThreadPoolExecutor executor;

    private final RpmaRequestHandler handler;

    private final RpmaEndpointStatistics statistics;

    private final RpmaServerObserver observer;

    private final List<RpmaConnectionEventListener> listeners;

    private final long requestDeadlineNanos;

    private final long pollIntervalNanos;

    private final FdPoller poller = new FdPoller(MAX_CONNECTIONS + 1);

    private int endpointFd = -1;

    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

    /**
     * Accepts on other threads share it, {@code rpma_ep_next_conn_req} takes it alone while a request
     * is in flight (only a request in flight can be accepted meanwhile). An accepted request's CM id
     * stays on the endpoint's event channel from {@code rdma_accept} until librpma migrates it to
     * the connection's own channel, inside {@code rpma_conn_req_connect}; a
     * {@code rpma_ep_next_conn_req} in that window can read the connection's ESTABLISHED, which
     * librpma then drops as an unexpected event, so the connection never sees it (observed under
     * soft-RoCE). Fair, so that a stream of accepts cannot starve the loop.
     */
    private final ReentrantReadWriteLock channel = new ReentrantReadWriteLock(true);

    /** A wake-up was written and the loop has not returned from its wait since: later ones need no syscall. */
    private final AtomicBoolean wakeupPending = new AtomicBoolean();

    // owned by the loop thread
    private final List<RpmaServerConnection> connections = new ArrayList<>();

    private final ArrayDeque<RpmaIncomingRequest> inFlight = new ArrayDeque<>();

    private final int[] fds = new int[MAX_CONNECTIONS + 1];

    private int consecutiveErrors;

    /** When to look at the endpoint even if its fd did not poll readable. */
    private long nextUnpromptedLook;

    /** Rounds woken by a readable fd, counted to read the clock only in some of them. */
    private int eventRounds;

    /** A tracked connection was deleted: the round ends by dropping it from {@link #connections}. */
    private boolean deletedSinceRound;

    /**
     * The last round looked at the endpoint and found a request: requests may be coming in a burst,
     * so this round's look goes on while the endpoint's fd says there are more.
     */
    private boolean lastLookFoundARequest;

    /**
     * Whether {@link #backoffUntil} is still ahead: the loop reads the clock only while it is, or while
     * a request is in flight.
     */
    private boolean backingOff;

    private long backoffUntil;

    private volatile Thread thread;

    private volatile boolean stopRequested;

    private volatile boolean paused;

    private volatile Throwable failure;

    RpmaAcceptor(RpmaEndpointSettings settings, RpmaEndpoint endpoint, RpmaConnectionConfig requestConfig,
            ThreadPoolExecutor executor, RpmaRequestHandler handler, RpmaEndpointStatistics statistics,
            RpmaServerObserver observer, List<RpmaConnectionEventListener> listeners) {
        this.settings = settings;
        this.endpoint = endpoint;
        this.requestConfig = requestConfig;
        this.executor = executor;
        this.handler = handler;
        this.statistics = statistics;
        this.observer = observer;
        this.listeners = listeners;
        this.requestDeadlineNanos = settings.requestDeadline().toNanos();
        this.pollIntervalNanos = settings.pollInterval().toNanos();
    }

    String endpointName() {
        return this.settings.name();
    }

    void bindTo(Thread thread) {
        this.thread = thread;
    }

    boolean isLoopThread() {
        return Thread.currentThread() == this.thread;
    }

    void requestStop() {
        this.stopRequested = true;
        wakeup();
    }

    void setPaused(boolean paused) {
        this.paused = paused;
    }

    boolean isPaused() {
        return this.paused;
    }

    Throwable failure() {
        return this.failure;
    }

    @Override
    public void run() {
        try {
            this.endpoint.configureBlocking(false);
            this.endpointFd = this.endpoint.fd();
            while (!this.stopRequested) {
                iterate(true);
            }
        }
        catch (Throwable ex) {
            this.failure = ex;
            logger.error("RDMA endpoint '" + endpointName() + "' (" + this.endpoint.address() + ":" + this.endpoint.port()
                    + ") failed and stops accepting: " + ex.getMessage(), ex);
        }
        finally {
            shutDown();
        }
    }

    /** One round: wait, run handed-over tasks, take requests, read connection events, expire deadlines. */
    private void iterate(boolean accepting) {
        // The clock only when a deadline is pending: where the clock source is not the TSC (the emulated
        // HPET of the soft-RoCE VM, some virtual machines), each read is a system call.
        long now = (this.backingOff || !this.inFlight.isEmpty()) ? System.nanoTime() : 0;
        if (this.backingOff && now - this.backoffUntil >= 0) {
            this.backingOff = false;
        }
        boolean acceptNow = accepting && !this.backingOff;
        int count = 0;
        if (acceptNow) {
            this.fds[count++] = this.endpointFd;
        }
        int firstConnection = count;
        int tracked = this.connections.size();
        for (int i = 0; i < tracked; i++) {
            this.fds[count++] = this.connections.get(i).eventFd;
        }
        int ready = this.poller.await(this.fds, count, pollTimeout(now, accepting));
        // before the tasks run: a task added from here on is either run below or wakes the next wait
        this.wakeupPending.set(false);
        runTasks();
        if (acceptNow && (this.poller.isReadable(0) || unpromptedLookDue(ready))) {
            acceptAvailable();
        }
        else {
            this.lastLookFoundARequest = false;
        }
        for (int i = 0; i < tracked; i++) {
            if (this.poller.isReadable(firstConnection + i)) {
                drainEvents(this.connections.get(i));
            }
        }
        if (this.deletedSinceRound) {
            this.deletedSinceRound = false;
            this.connections.removeIf((connection) -> connection.deleted);
        }
        settleRequests();
    }

    /** Wakes the loop; one write per wait however many threads hand it work meanwhile. Any thread. */
    private void wakeup() {
        // read first: while a wake-up is pending, handler threads only share the flag's cache line
        if (!this.wakeupPending.get() && !this.wakeupPending.getAndSet(true)) {
            this.poller.wakeup();
        }
    }

    private int pollTimeout(long now, boolean accepting) {
        long timeout = accepting ? this.pollIntervalNanos : TimeUnit.MILLISECONDS.toNanos(STOPPING_POLL_MILLIS);
        if (accepting && this.backingOff) {
            timeout = Math.min(timeout, this.backoffUntil - now);
        }
        RpmaIncomingRequest oldest = this.inFlight.peekFirst();
        if (oldest != null) {
            timeout = Math.min(timeout, Math.max(0, oldest.deadlineNanos - now));
        }
        return (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeout + 999_999));
    }

    private void runTasks() {
        Runnable task;
        while ((task = this.tasks.poll()) != null) {
            task.run();
        }
    }

    /**
     * Takes requests while librpma has them, up to {@link #REQUESTS_PER_ROUND}: a lone request costs
     * no look beyond its own (the next wait polls the endpoint's fd anyway), a burst one round for its
     * first request and then one round per {@link #REQUESTS_PER_ROUND}, ending with a single empty
     * look; an empty endpoint is looked at only when its fd is readable or once per poll interval.
     */
    private void acceptAvailable() {
        boolean burst = this.lastLookFoundARequest;
        this.lastLookFoundARequest = false;
        for (int i = 0; i < REQUESTS_PER_ROUND && !this.stopRequested; i++) {
            if (i == 1 && (!burst || !this.poller.isReadableNow(this.endpointFd))) {
                // A lone request, the common case: a look now would find nothing, and librpma reports
                // that as an ERROR line through the JNA log callback. A real burst keeps the fd readable.
                return;
            }
            RpmaConnectionRequest request;
            // No request in flight, none that another thread could be accepting: no lock to take
            boolean lock = !this.inFlight.isEmpty();
            if (lock) {
                this.channel.writeLock().lock();
            }
            try {
                request = this.endpoint.nextConnectionRequest(this.requestConfig);
            }
            catch (RpmaException ex) {
                lookedAt(System.nanoTime());
                onAcceptError(ex);
                return;
            }
            finally {
                if (lock) {
                    this.channel.writeLock().unlock();
                }
            }
            this.consecutiveErrors = 0;
            if (request == null) {
                lookedAt(System.nanoTime());
                return;
            }
            this.lastLookFoundARequest = true;
            this.statistics.recordObtained();
            dispatch(request);
        }
    }

    /**
     * Whether to look at the endpoint although its fd did not poll readable: once per poll interval, as
     * librdmacm may swallow an event's readiness, but no more often, as every empty look costs a failed
     * read and a log line from librpma through the log callback. The clock is read when the wait
     * returned with no fd readable, and in every 16th round of connection events: not after each.
     */
    private boolean unpromptedLookDue(int ready) {
        if (ready > 0 && (++this.eventRounds & 15) != 0) {
            return false;
        }
        return System.nanoTime() - this.nextUnpromptedLook >= 0;
    }

    private void lookedAt(long now) {
        this.nextUnpromptedLook = now + this.pollIntervalNanos;
    }

    private void onAcceptError(RpmaException ex) {
        this.statistics.recordError(ex);
        if (ex.error() == RpmaError.INVAL) {
            logger.warn("RDMA endpoint '" + endpointName() + "' dropped an event that was not a connection request: "
                    + ex.getMessage());
            return;
        }
        if (ex.error() == RpmaError.PROVIDER && ex.errno() == Errno.EINTR) {
            return;
        }
        boolean transientError = ex.error() == RpmaError.NOMEM
                || (ex.error() == RpmaError.PROVIDER && ex.errno() != Errno.EBADF && ex.errno() != Errno.ENODEV);
        if (!transientError) {
            throw new RpmaAcceptorException("the endpoint is unusable", ex);
        }
        this.consecutiveErrors++;
        if (this.consecutiveErrors > this.settings.maxConsecutiveErrors()) {
            throw new RpmaAcceptorException(this.consecutiveErrors + " errors in a row", ex);
        }
        long backoff = Math.min(BACKOFF_MAX_NANOS, BACKOFF_MIN_NANOS << Math.min(20, this.consecutiveErrors - 1));
        this.backoffUntil = System.nanoTime() + backoff;
        this.backingOff = true;
        logger.warn("RDMA endpoint '" + endpointName() + "': " + ex.getMessage() + "; retrying in "
                + TimeUnit.NANOSECONDS.toMillis(backoff) + " ms (" + this.consecutiveErrors + " in a row)");
    }

    private void dispatch(RpmaConnectionRequest request) {
        long now = System.nanoTime();
        lookedAt(now);
        RpmaIncomingRequest incoming = new RpmaIncomingRequest(this, request, now, now + this.requestDeadlineNanos);
        if (this.paused) {
            incoming.rejectIfPending(RejectReason.PAUSED);
            return;
        }
        if (this.connections.size() + this.inFlight.size() >= MAX_CONNECTIONS) {
            incoming.rejectIfPending(RejectReason.QUEUE_FULL);
            return;
        }
        if (this.settings.inlineHandler()) {
            this.inFlight.addLast(incoming);
            new HandlerInvocation(incoming).invoke();
            return;
        }
        HandlerInvocation invocation = new HandlerInvocation(incoming);
        this.executor.execute(invocation);
        if (invocation.refused) {
            incoming.rejectIfPending(RejectReason.QUEUE_FULL);
            return;
        }
        this.inFlight.addLast(incoming);
    }

    /** Drops decided requests from the front of the in-flight queue and rejects those past their deadline. */
    private void settleRequests() {
        Iterator<RpmaIncomingRequest> it = this.inFlight.iterator();
        while (it.hasNext()) {
            RpmaIncomingRequest request = it.next();
            int state = request.state();
            // only an undecided request has a deadline; the walk ends at the first one still within it
            if (state == RpmaIncomingRequest.PENDING && System.nanoTime() - request.deadlineNanos >= 0) {
                if (request.rejectIfPending(RejectReason.DEADLINE)) {
                    logger.warn("Connection handler " + this.handler.name() + " did not connect or reject a request on"
                            + " endpoint '" + endpointName() + "' within " + this.settings.requestDeadline()
                            + "; the request was rejected");
                }
                state = request.state();
            }
            if (state == RpmaIncomingRequest.PENDING || state == RpmaIncomingRequest.CONNECTING) {
                return;
            }
            if (state == RpmaIncomingRequest.REJECTED && request.isNativePending()) {
                return; // the reject task is on its way
            }
            it.remove();
        }
    }

    /** Called by {@link RpmaIncomingRequest} after its state moved to REJECTED. */
    void reject(RpmaIncomingRequest request, RejectReason reason) {
        this.statistics.recordRejected(reason);
        if (isLoopThread()) {
            rejectNatively(request);
        }
        else {
            this.tasks.add(() -> rejectNatively(request));
            wakeup();
        }
    }

    private void rejectNatively(RpmaIncomingRequest request) {
        if (!request.isNativePending()) {
            return;
        }
        try {
            request.request.reject();
        }
        catch (RpmaException ex) {
            this.statistics.recordError(ex);
            logger.warn("Rejecting a connection request on endpoint '" + endpointName() + "' failed: " + ex.getMessage());
        }
    }

    /** Runs a request's {@code rpma_conn_req_connect} while no {@code rpma_ep_next_conn_req} reads the endpoint. */
    RpmaConnection accept(RpmaConnectionRequest request, byte[] privateData) {
        if (isLoopThread()) {
            // the thread that calls rpma_ep_next_conn_req is busy here
            return request.connect(privateData);
        }
        this.channel.readLock().lock();
        try {
            return request.connect(privateData);
        }
        finally {
            this.channel.readLock().unlock();
        }
    }

    /** Called on the connecting thread after librpma accepted the request. */
    RpmaServerConnection connected(RpmaIncomingRequest request, RpmaConnection connection) {
        this.statistics.recordAccepted();
        this.statistics.recordConnectionOpened();
        RpmaServerConnection tracked = new RpmaServerConnection(connection, endpointName(), request.privateData());
        if (isLoopThread()) {
            register(tracked);
        }
        else {
            this.tasks.add(() -> register(tracked));
            wakeup();
        }
        return tracked;
    }

    void connectFailed(RpmaIncomingRequest request, RuntimeException ex) {
        this.statistics.recordFailedToConnect();
        if (ex instanceof RpmaException rpmaException) {
            this.statistics.recordError(rpmaException);
        }
    }

    private void register(RpmaServerConnection connection) {
        try {
            connection.connection().configureEventsBlocking(false);
            connection.eventFd = connection.connection().eventFd();
            this.connections.add(connection);
        }
        catch (RuntimeException ex) {
            logger.error("Tracking a new connection on endpoint '" + endpointName() + "' failed; it is closed", ex);
            connection.deleteWhenReturned = true;
            teardown(connection, RpmaConnectionEvent.LOST);
        }
    }

    /**
     * Reads the connection's events while its fd says there are some. Reading until librpma has none
     * would end with a failed read that librpma logs at ERROR, through the JNA log callback, once per
     * connection event; a look at the fd costs one system call.
     */
    private void drainEvents(RpmaServerConnection connection) {
        do {
            if (!readEvent(connection)) {
                return;
            }
        }
        while (!connection.deleted && !connection.isClosed() && this.poller.isReadableNow(connection.eventFd));
    }

    /** Reads and handles one event; {@code false} when there was none. */
    private boolean readEvent(RpmaServerConnection connection) {
        if (connection.deleted || connection.isClosed()) {
            return false;
        }
        RpmaConnectionEvent event;
        try {
            event = connection.connection().nextEvent();
        }
        catch (RpmaException ex) {
            this.statistics.recordError(ex);
            logger.warn("Reading an event of a connection on endpoint '" + endpointName() + "' failed; it is"
                    + " treated as lost: " + ex.getMessage());
            event = RpmaConnectionEvent.LOST;
        }
        if (event == null) {
            return false;
        }
        this.statistics.recordEvent(event);
        connection.onEvent(event);
        notifyListeners(connection, event);
        if (event != RpmaConnectionEvent.ESTABLISHED) {
            teardown(connection, event);
        }
        return true;
    }

    private void notifyListeners(RpmaServerConnection connection, RpmaConnectionEvent event) {
        for (RpmaConnectionEventListener listener : this.listeners) {
            try {
                listener.onEvent(connection, event);
            }
            catch (RuntimeException ex) {
                logger.warn("Connection event listener " + listener + " failed on " + event, ex);
            }
        }
    }

    /** As librpma requires of a server: after CLOSED (or LOST), disconnect, then delete. */
    private void teardown(RpmaServerConnection connection, RpmaConnectionEvent event) {
        connection.onEvent(event);
        try {
            connection.connection().disconnect();
        }
        catch (RuntimeException ex) {
            logger.debug("Disconnecting a " + event + " connection on endpoint '" + endpointName() + "' failed", ex);
        }
        if (connection.borrowers.get() == 0) {
            delete(connection);
        }
        else {
            connection.deleteWhenReturned = true;
        }
    }

    private void delete(RpmaServerConnection connection) {
        if (connection.deleted) {
            return;
        }
        connection.deleted = true;
        this.deletedSinceRound = true;
        try {
            connection.connection().close();
        }
        catch (RpmaException ex) {
            this.statistics.recordError(ex);
            logger.warn("Deleting a connection on endpoint '" + endpointName() + "' failed: " + ex.getMessage());
        }
        finally {
            this.statistics.recordConnectionDeleted();
        }
    }

    /** A handler that used {@code connection} returned. */
    private void handlerReturned(RpmaServerConnection connection) {
        if (connection.borrowers.decrementAndGet() == 0) {
            if (isLoopThread()) {
                deleteIfReturned(connection);
                return;
            }
            this.tasks.add(() -> deleteIfReturned(connection));
            wakeup();
        }
    }

    private void deleteIfReturned(RpmaServerConnection connection) {
        if (connection.deleteWhenReturned) {
            delete(connection);
        }
    }

    /**
     * Graceful stop, on the owner thread: reject queued requests, serve handlers and connections for
     * the grace period, then reject what is undecided, disconnect and delete every connection and
     * shut the endpoint down.
     */
    private void shutDown() {
        List<Runnable> queued = new ArrayList<>();
        this.executor.getQueue().drainTo(queued);
        for (Runnable runnable : queued) {
            ((HandlerInvocation) runnable).request.rejectIfPending(RejectReason.SHUTDOWN);
        }
        this.executor.shutdown();
        Duration grace = this.settings.gracePeriod();
        long graceEnd = System.nanoTime() + (grace.isNegative() ? Long.MAX_VALUE / 2 : grace.toNanos());
        try {
            while (System.nanoTime() - graceEnd < 0 && !isSettled()) {
                iterate(false);
            }
            if (!isSettled()) {
                logger.info("RDMA endpoint '" + endpointName() + "': grace period " + grace + " over with "
                        + this.connections.size() + " connection(s) open; disconnecting them");
            }
            // reject before interrupting, so a handler woken by the interrupt finds its request decided
            for (RpmaIncomingRequest request : this.inFlight) {
                request.rejectIfPending(RejectReason.SHUTDOWN);
            }
            this.executor.shutdownNow();
            for (RpmaServerConnection connection : this.connections) {
                if (!connection.isClosed()) {
                    teardown(connection, RpmaConnectionEvent.CLOSED);
                }
            }
            awaitHandlers();
            runTasks();
            for (RpmaIncomingRequest request : this.inFlight) {
                rejectNatively(request);
            }
            for (RpmaServerConnection connection : this.connections) {
                delete(connection);
            }
            this.connections.clear();
            this.inFlight.clear();
        }
        catch (Throwable ex) {
            logger.error("Stopping RDMA endpoint '" + endpointName() + "' failed", ex);
            if (this.failure == null) {
                this.failure = ex;
            }
        }
        finally {
            closeEndpoint();
        }
    }

    private boolean isSettled() {
        runTasks();
        return this.executor.isTerminated() && this.connections.isEmpty() && this.tasks.isEmpty()
                && this.inFlight.stream().noneMatch(RpmaIncomingRequest::isNativePending);
    }

    /** Handlers were interrupted; a disconnected connection fails their data path, so they return. */
    private void awaitHandlers() throws InterruptedException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!this.executor.awaitTermination(STOPPING_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
            runTasks();
            if (System.nanoTime() - until > 0) {
                logger.warn("RDMA endpoint '" + endpointName() + "': handlers still running after the grace period;"
                        + " their connections are deleted once their native calls return");
                return;
            }
        }
    }

    /** Releases the loop's own fd for an acceptor whose loop never ran (the endpoint is closed by its creator). */
    void closeUnstarted() {
        this.poller.close();
    }

    /** Whether the loop's own fd is released. */
    boolean isReleased() {
        return this.poller.isClosed();
    }

    private void closeEndpoint() {
        try {
            this.endpoint.close();
        }
        catch (RuntimeException ex) {
            logger.warn("Shutting down RDMA endpoint '" + endpointName() + "' failed: " + ex.getMessage());
        }
        finally {
            this.poller.close();
        }
    }

    int trackedConnections() {
        return this.connections.size();
    }

    /**
     * Runs the handler and settles the request if the handler did not: on a handler thread
     * ({@link #run}), or on this thread for an inline handler ({@link #invoke}). It is the observer's
     * invocation too, so a request costs no extra object for it.
     */
    final class HandlerInvocation implements Runnable, Supplier<Void> {

        final RpmaIncomingRequest request;

        /** Set by {@link #REFUSE} on the acceptor thread, inside the pool's {@code execute}: the queue was full. */
        boolean refused;

        HandlerInvocation(RpmaIncomingRequest request) {
            this.request = request;
        }

        /** On a handler thread: the request waited in the queue until now. */
        @Override
        public void run() {
            RpmaAcceptor.this.observer.queueWait(endpointName(),
                    Duration.ofNanos(System.nanoTime() - this.request.obtainedNanos));
            invoke();
        }

        void invoke() {
            RpmaAcceptor acceptor = RpmaAcceptor.this;
            if (this.request.isDecided()) {
                return;
            }
            try {
                acceptor.observer.handle(this.request, acceptor.handler.name(), this);
                if (this.request.rejectIfPending(RejectReason.HANDLER_FAILED)) {
                    logger.warn("Connection handler " + acceptor.handler.name() + " returned without connecting or"
                            + " rejecting a request on endpoint '" + endpointName() + "'; the request was rejected");
                }
            }
            catch (Throwable ex) {
                Throwable cause = (ex instanceof RpmaHandlerException) ? ex.getCause() : ex;
                boolean rejected = this.request.rejectIfPending(RejectReason.HANDLER_FAILED);
                logger.error("Connection handler " + acceptor.handler.name() + " failed on endpoint '" + endpointName()
                        + "'" + (rejected ? "; the request was rejected" : ""), cause);
            }
            finally {
                RpmaServerConnection connection = this.request.connection;
                if (connection != null) {
                    acceptor.handlerReturned(connection);
                }
            }
        }

        /** The handler itself, called by the observer. */
        @Override
        public Void get() {
            try {
                RpmaAcceptor.this.handler.handle(this.request);
            }
            catch (RuntimeException ex) {
                throw ex;
            }
            catch (Exception ex) {
                throw new RpmaHandlerException(ex);
            }
            return null;
        }
    }

    /** Carries a checked exception of a handler through the observer's supplier. */
    static final class RpmaHandlerException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        RpmaHandlerException(Throwable cause) {
            super(cause);
        }
    }
}
