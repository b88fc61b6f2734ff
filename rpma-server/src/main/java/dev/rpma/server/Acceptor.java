package dev.rpma.server;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaLogThread;

/**
 * The acceptor of one endpoint, on an event loop of its own (or, with {@code acceptor.on-event-loop},
 * on the server's first data-path loop, which then starts the sessions it serves without a hand-off):
 * the endpoint's owner, so every librpma call that is not thread-safe on it
 * ({@code rpma_ep_next_conn_req}, {@code rpma_conn_req_delete}, {@code rpma_ep_shutdown}) runs on
 * this one thread, and so does every call on a request
 * ({@code rpma_conn_req_recv}, {@code rpma_conn_req_connect}), which also keeps a connect from
 * overlapping a {@code rpma_ep_next_conn_req} on the same endpoint (librpma's accept-to-migrate window,
 * in which the endpoint's channel can swallow the new connection's ESTABLISHED).
 *
 * <p>It takes the request the endpoint's fd announces and, when the fd shows another, a burst until
 * librpma has none, up to {@value #REQUESTS_PER_READINESS} per readiness (and looks once per poll
 * interval without one, since librdmacm may swallow a readiness); lets the endpoint's admission step
 * and request-rate limit refuse it; reserves each request a place under the endpoint's connection
 * limit; and hands it to the connection handler, on a handler thread through the bounded queue or
 * on this thread for an inline handler. Decisions come back here, those of handler threads in
 * batches: a connect gets the session's slots, its receives posted, the accept, and an event loop; a
 * reject is carried out; a request undecided at its deadline is rejected.
 *
 * <p>Outcomes of {@code rpma_ep_next_conn_req}: a request; nothing ({@code null}); {@code RPMA_E_INVAL}
 * (an event that was not a request) is counted and the acceptor goes on, unless the endpoint's device is
 * gone (librpma reports a device removal only this way), when it stops as FAILED with
 * {@link RpmaDeviceLostException} and tells its endpoint; {@code EINTR} is retried at
 * once. A shortage of resources ({@code RPMA_E_NOMEM}, or {@code RPMA_E_PROVIDER} with {@code ENOMEM},
 * {@code EMFILE}, {@code ENFILE}, {@code ENOBUFS}, {@code EAGAIN}: the request's queues could not be
 * made) and any other provider error are counted and retried after a growing back-off (at most
 * {@value #BACKOFF_MAX_MILLIS} ms), during which the endpoint is DEGRADED and which its next success
 * ends. A shortage is waited out however long it lasts, as it passes when resources are freed; more
 * than max-consecutive-errors other provider errors in a row, {@code RPMA_E_PROVIDER} with
 * {@code EBADF} or {@code ENODEV}, or any other code stop accepting, and the endpoint is FAILED.
 *
 * <p>Longer than most types: taking requests, the hand-off to the handlers, carrying out their
 * decisions and the deadlines all happen on the acceptor's thread and share its state (the pending
 * requests, the decisions, the back-off); the queues they use ({@code PendingRequests},
 * {@code HandlerQueue}) are types of their own.
 */
final class Acceptor implements RpmaEventLoop.IoHandler {

    private static final Logger logger = LoggerFactory.getLogger(Acceptor.class);

    private static final long BACKOFF_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    static final long BACKOFF_MAX_MILLIS = 1000;

    private static final long BACKOFF_MAX_NANOS = TimeUnit.MILLISECONDS.toNanos(BACKOFF_MAX_MILLIS);

    /**
     * Requests taken per readiness of the endpoint's fd at most. One per readiness cost a round of
     * the loop per request (its {@code epoll_wait}, clock readings and look at tasks and timers), and
     * decisions came back one round, so one wake-up, each; the bound keeps a long burst from holding
     * decisions and timers back.
     */
    static final int REQUESTS_PER_READINESS = 64;

    private final EndpointContext context;

    private final RpmaEndpoint endpoint;

    /**
     * The request configuration; with a shared receive queue per data-path loop, one per loop (naming
     * its queue), by loop index. The queue pair is created with the request, so the loop is then
     * chosen before {@code rpma_ep_next_conn_req}.
     */
    private final @Nullable RpmaConnectionConfig[] requestConfigs;

    private final boolean sharedReceives;

    private final RpmaRequestHandler handler;

    /** {@code null}: every request goes on to the handler. */
    private final @Nullable RpmaAdmission admission;

    /** {@code null}: no request-rate limit. Loop thread only. */
    private final @Nullable RequestRateLimiter rateLimiter;

    private final RpmaEventLoop loop;

    /** {@code null} for an inline handler. */
    private final @Nullable HandlerPool pool;

    private final RpmaRegions regions;

    /** The completion batch of each data-path loop, by index. */
    private final RpmaCompletions[] batches;

    private final RpmaEndpointSettings.Acceptor settings;

    private final long deadlineNanos;

    private final PendingRequests pending = new PendingRequests();

    /** The lines a flood of requests could repeat, under this class's logger. */
    private final RateLimitedLog warnings = new RateLimitedLog(logger);

    /**
     * Decisions taken on other threads and not yet carried out, the latest first, linked through
     * {@link RpmaIncomingRequest#decidedBefore}: a decision costs its thread one compare-and-set, and
     * only the one that finds the list empty hands the acceptor a task (and perhaps a wake-up); the
     * others ride along with it.
     */
    private final AtomicReference<@Nullable RpmaIncomingRequest> decisions = new AtomicReference<>();

    private final Runnable carryOutDecisions = this::carryOutDecisions;

    /** Told once the acceptor found its device gone and stopped. */
    private final Runnable onDeviceLost;

    private volatile boolean paused;

    private volatile @Nullable Throwable failure;

    /** The error the acceptor backs off from, until its next success; {@code null} while it takes requests. */
    private volatile @Nullable RpmaException degradedBy;

    // owned by the loop
    private int endpointFd = -1;

    private long registration;

    private boolean watching;

    private boolean stopped;

    /** Transient errors in a row: how long the back-off is. */
    private int errorsInARow;

    /** Of them, those that are no shortage of resources: what max-consecutive-errors bounds. */
    private int unexplainedInARow;

    private RpmaEventLoop.@Nullable Timer deadlineTimer;

    private long deadlineTimerAt;

    Acceptor(EndpointContext context, RpmaEndpoint endpoint, @Nullable RpmaConnectionConfig[] requestConfigs,
            RpmaRequestHandler handler, @Nullable RpmaAdmission admission, RpmaEventLoop loop, @Nullable HandlerPool pool,
            RpmaRegions regions, RpmaCompletions[] batches, Runnable onDeviceLost) {
        this.context = context;
        this.onDeviceLost = onDeviceLost;
        this.endpoint = endpoint;
        this.requestConfigs = requestConfigs;
        this.sharedReceives = context.shared != null;
        this.handler = handler;
        this.admission = admission;
        RpmaEndpointSettings.RequestRate rate = context.settings.limits().requestRate();
        this.rateLimiter = (rate != null) ? new RequestRateLimiter(rate, System.nanoTime()) : null;
        this.loop = loop;
        this.pool = pool;
        this.regions = regions;
        this.batches = batches;
        this.settings = context.settings.acceptor();
        this.deadlineNanos = this.settings.requestDeadline().toNanos();
    }

    String endpointName() {
        return this.context.name();
    }

    boolean isPaused() {
        return this.paused;
    }

    void setPaused(boolean paused) {
        this.paused = paused;
    }

    @Nullable Throwable failure() {
        return this.failure;
    }

    @Nullable RpmaException degradedBy() {
        return this.degradedBy;
    }

    byte[] regionDescriptor(String name) {
        return this.regions.descriptor(name, endpointName());
    }

    RpmaCommonData commonData(String name, int dataOffset) {
        return this.regions.commonData(name, dataOffset, endpointName());
    }

    // ---------------------------------------------------------------- start and stop, on the loop

    /** Starts watching the endpoint; the loop thread owns it from now on. */
    void start() {
        this.endpoint.configureBlocking(false);
        this.endpointFd = this.endpoint.fd();
        watch();
        scheduleUnpromptedLook();
    }

    private void watch() {
        this.registration = this.loop.register(this.endpointFd, this, 0);
        this.watching = true;
    }

    private void unwatch() {
        if (this.watching) {
            this.watching = false;
            this.loop.unregister(this.endpointFd, this.registration);
        }
    }

    /**
     * Stops accepting: the decisions already taken are carried out, every request not yet decided
     * is rejected as {@link RejectReason#SHUTDOWN} (those in the handlers' queue too), the handler
     * threads are told to stop, and the endpoint is shut down. The sessions go on.
     */
    void stop() {
        if (this.stopped) {
            return;
        }
        this.stopped = true;
        unwatch();
        carryOutDecisions();
        if (this.pool != null) {
            for (Runnable queued : this.pool.drain()) {
                ((HandlerInvocation) queued).request.rejectIfPending(RejectReason.SHUTDOWN);
            }
        }
        this.pending.drain((request) -> request.rejectIfPending(RejectReason.SHUTDOWN));
        if (this.pool != null) {
            // after the rejects: a handler the interrupt wakes finds its request decided, as SHUTDOWN, and
            // does not reject it as HANDLER_FAILED first
            this.pool.shutdown();
        }
        carryOutDecisions();
        try {
            this.endpoint.close();
        }
        catch (RuntimeException ex) {
            logger.warn("Shutting down RDMA endpoint '{}' failed: {}", endpointName(), ex.getMessage());
        }
    }

    // ---------------------------------------------------------------- taking requests

    @Override
    public void onReadable(int kind) {
        takeRequests();
    }

    /**
     * Takes the request the fd announced and, if the fd is still readable after it, a burst: more
     * until librpma has none, up to {@link #REQUESTS_PER_READINESS}. A lone request costs no look
     * that finds nothing (a failed read that librpma logs as an error, which the log bridge demotes);
     * a burst costs at most one, at its end, instead of a {@code poll(2)} before each of its requests
     * (a fifth of the acceptor's own CPU per request, measured with the dispatch benchmark).
     */
    private void takeRequests() {
        for (int i = 0; i < REQUESTS_PER_READINESS; i++) {
            if (i == 1 && !this.loop.isReadableNow(this.endpointFd)) {
                return;
            }
            if (!takeRequest()) {
                return;
            }
        }
    }

    /**
     * Looks at the endpoint once per poll interval whether or not its fd said so, since librdmacm may
     * swallow an event's readiness; no more often, as an empty look costs a failed read that librpma
     * logs.
     */
    private void scheduleUnpromptedLook() {
        this.loop.schedule(() -> {
            if (!this.stopped) {
                takeRequest();
                scheduleUnpromptedLook();
            }
        }, this.settings.pollInterval());
    }

    /** One look at the endpoint; {@code true} when it found a request and the acceptor may look again. */
    private boolean takeRequest() {
        if (this.stopped || !this.watching) {
            return false;
        }
        RpmaConnectionRequest request;
        int loopIndex = this.sharedReceives ? this.context.loops.leastOwned() : -1;
        try {
            request = this.endpoint.nextConnectionRequest(this.requestConfigs[Math.max(loopIndex, 0)]);
        }
        catch (RpmaException ex) {
            onAcceptError(ex);
            return false;
        }
        if (this.errorsInARow > 0) {
            recovered();
        }
        if (request == null) {
            return false;
        }
        this.context.statistics.recordObtained();
        dispatch(request, loopIndex);
        return true;
    }

    private void onAcceptError(RpmaException ex) {
        this.context.statistics.recordError(ex);
        RpmaFailureKind kind = RpmaFailureKind.classify(ex);
        if (kind == RpmaFailureKind.INVALID) {
            // librpma reports a device removal only this way: the device itself tells the two apart
            if (isDeviceGone()) {
                fail(new RpmaDeviceLostException(this.endpoint.address(), ex));
                this.onDeviceLost.run();
                return;
            }
            logger.warn("RDMA endpoint '{}' dropped an event that was not a connection request: {}", endpointName(),
                    ex.getMessage());
            return;
        }
        if (kind == RpmaFailureKind.INTERRUPTED) {
            return;
        }
        if (!kind.isTransient()) {
            fail(new RpmaAcceptorException("the endpoint is unusable", ex));
            return;
        }
        this.errorsInARow++;
        if (!kind.isResourceShortage() && ++this.unexplainedInARow > this.settings.maxConsecutiveErrors()) {
            fail(new RpmaAcceptorException(this.unexplainedInARow + " errors in a row", ex));
            return;
        }
        long backoff = Math.min(BACKOFF_MAX_NANOS, BACKOFF_MIN_NANOS << Math.min(20, this.errorsInARow - 1));
        if (this.degradedBy == null) {
            logger.warn("RDMA endpoint '{}' is degraded: {}{}; it keeps listening and tries again after a growing pause"
                    + " (at most {} ms)", endpointName(), ex.getMessage(), kind.isResourceShortage()
                            ? " (short of memory, locked memory or file descriptors for a request's queues)" : "",
                    BACKOFF_MAX_MILLIS);
        }
        else {
            logger.debug("RDMA endpoint '{}': {}; retrying in {} ms", endpointName(), ex.getMessage(),
                    TimeUnit.NANOSECONDS.toMillis(backoff));
        }
        this.degradedBy = ex;
        // level-triggered: a readable fd would be reported again at once, so it is not watched meanwhile
        unwatch();
        this.loop.schedule(() -> {
            if (!this.stopped) {
                watch();
                // one look at once, readable or not: a success ends the degradation
                takeRequests();
            }
        }, Duration.ofNanos(backoff));
    }

    /** Whether the endpoint's device is known to be gone; an unknown answer is no. */
    private boolean isDeviceGone() {
        try {
            return !this.endpoint.peer().isDevicePresent();
        }
        catch (RuntimeException ex) {
            logger.warn("RDMA endpoint '{}': whether its device is still there is unknown: {}", endpointName(),
                    ex.getMessage());
            return false;
        }
    }

    /** The first success after errors: the endpoint takes requests again. */
    private void recovered() {
        if (this.degradedBy != null) {
            logger.info("RDMA endpoint '{}' takes requests again after {} error(s) in a row", endpointName(),
                    this.errorsInARow);
        }
        this.errorsInARow = 0;
        this.unexplainedInARow = 0;
        this.degradedBy = null;
    }

    private void fail(RpmaAcceptorException ex) {
        this.failure = ex;
        this.degradedBy = null;
        if (ex instanceof RpmaDeviceLostException) {
            // an event of the outside world, not a defect: its stack trace says nothing
            logger.error("RDMA endpoint '{}' ({}:{}) stops accepting: {}", endpointName(), this.endpoint.address(),
                    this.endpoint.port(), ex.getMessage());
        }
        else {
            RpmaLogThread.error(logger, "RDMA endpoint '" + endpointName() + "' (" + this.endpoint.address() + ":"
                    + this.endpoint.port() + ") failed and stops accepting: " + ex.getMessage(), ex);
        }
        stop();
    }

    private void dispatch(RpmaConnectionRequest request, int loopIndex) {
        // when the loop's round began, which the endpoint's readiness started: no clock read per request
        long now = this.loop.clockNanos();
        RpmaIncomingRequest incoming = new RpmaIncomingRequest(this, request, now, now + this.deadlineNanos);
        incoming.loopIndex = loopIndex;
        if (this.paused) {
            incoming.rejectIfPending(RejectReason.PAUSED);
            return;
        }
        RejectReason refused = admit(incoming, now);
        if (refused != null) {
            incoming.rejectIfPending(refused);
            return;
        }
        if (!this.context.registry.reserve()) {
            incoming.rejectIfPending(RejectReason.CAPACITY);
            return;
        }
        incoming.reserved = true;
        if (this.pool == null) {
            invoke(incoming);
            return;
        }
        if (!this.pool.offer(new HandlerInvocation(incoming))) {
            incoming.rejectIfPending(RejectReason.QUEUE_FULL);
            return;
        }
        // after the offer, which may fail: a handler thread may decide it meanwhile, but that decision
        // is carried out on this thread, after this, and dropDecided then forgets it
        this.pending.add(incoming);
        scheduleDeadline(incoming.deadlineNanos);
    }

    /**
     * The admission step, then the request-rate limit: on this thread, before the request takes a place
     * under the limit, a queue slot or a handler thread, so that a refused request costs its reject and
     * no more. The limit comes second, so that requests the step refuses use up none of the permits of
     * those it admits. Returns why the request is refused, or {@code null}.
     */
    private @Nullable RejectReason admit(RpmaIncomingRequest incoming, long now) {
        RpmaAdmission admission = this.admission;
        if (admission != null) {
            RpmaAdmission.Decision decision;
            try {
                decision = admission.admit(endpointName(), incoming.request.privateData());
            }
            catch (Throwable ex) {
                // as a handler's failure: the request is still rejected, so nothing native is left behind
                this.warnings.warn("admission", "The admission step " + admission + " of endpoint '" + endpointName()
                        + "' failed; the request was rejected as unauthenticated", ex);
                return RejectReason.UNAUTHENTICATED;
            }
            if (!decision.isAdmitted()) {
                RejectReason reason = decision.rejectReason();
                return (reason != null) ? reason : RejectReason.UNAUTHENTICATED;
            }
            incoming.admittedPrivateData = decision.privateDataUnsafe();
        }
        RequestRateLimiter limiter = this.rateLimiter;
        return (limiter != null && !limiter.tryAcquire(now)) ? RejectReason.RATE_LIMITED : null;
    }

    // ---------------------------------------------------------------- decisions

    /**
     * A decision was taken; the acceptor carries it out on its own thread: at once when it was taken
     * there (an inline handler, a deadline, a stop), else with the other decisions taken meanwhile,
     * in its next round. A request is decided once, so it joins the list once.
     */
    void decided(RpmaIncomingRequest request) {
        if (this.loop.inLoop()) {
            carryOut(request);
            return;
        }
        RpmaIncomingRequest latest;
        do {
            latest = this.decisions.get();
            request.decidedBefore = latest;
        }
        while (!this.decisions.compareAndSet(latest, request));
        if (latest == null && !this.loop.tryExecute(this.carryOutDecisions)) {
            // cannot happen while a handler thread runs: the acceptor's loop outlives the handler pool
            logger.error("A decision on endpoint '{}' came after its acceptor stopped", endpointName());
        }
    }

    /** Carries out the decisions handed over, oldest first, and forgets the requests they settled. */
    private void carryOutDecisions() {
        RpmaIncomingRequest latest = this.decisions.getAndSet(null);
        // reversed in place: each link then points to the decision taken after it
        RpmaIncomingRequest oldest = null;
        while (latest != null) {
            RpmaIncomingRequest before = latest.decidedBefore;
            latest.decidedBefore = oldest;
            oldest = latest;
            latest = before;
        }
        while (oldest != null) {
            RpmaIncomingRequest next = oldest.decidedBefore;
            oldest.decidedBefore = null;
            carryOut(oldest);
            oldest = next;
        }
        this.pending.dropDecided();
    }

    private void carryOut(RpmaIncomingRequest request) {
        if (!request.request.isPending()) {
            return;
        }
        int state = request.state();
        if (state == RpmaIncomingRequest.CONNECTING) {
            connect(request);
        }
        else if (state == RpmaIncomingRequest.REJECTED) {
            reject(request);
        }
    }

    private void reject(RpmaIncomingRequest request) {
        RejectReason reason = request.rejectReason();
        this.context.statistics.recordRejected((reason != null) ? reason : RejectReason.HANDLER_FAILED);
        release(request);
        try {
            request.request.reject();
        }
        catch (RpmaException ex) {
            this.context.statistics.recordError(ex);
            this.warnings.warn("reject", "Rejecting a connection request on endpoint '" + endpointName()
                    + "' failed", ex);
        }
    }

    /**
     * Gives the request its session's slots and posts its receives (so the client's first message has
     * a buffer), accepts it, and hands the session to the event loop with the fewest sessions; with a
     * shared receive queue, to the loop whose queue the request was made with, its receives posted.
     */
    private void connect(RpmaIncomingRequest request) {
        RpmaConnectionRequest native_ = request.request;
        BufferPool buffers = this.context.buffers;
        BufferPool.Block block = null;
        if (buffers != null) {
            try {
                block = buffers.take();
            }
            catch (RuntimeException ex) {
                if (ex instanceof RpmaException rpma) {
                    this.context.statistics.recordError(rpma);
                }
                this.warnings.warn("slots", "Endpoint '" + endpointName() + "' has no memory for another"
                        + " session's slots; a request was rejected", ex);
                this.context.statistics.recordRejected(RejectReason.CAPACITY);
                release(request);
                native_.reject();
                return;
            }
        }
        RpmaConnection connection;
        try {
            if (block != null && !this.sharedReceives) {
                int slots = this.context.settings.messages().receiveSlots();
                for (int i = 0; i < slots; i++) {
                    native_.receive(block.receiveRegion, block.receiveOffset(i), block.receiveLength(), i);
                }
            }
            connection = native_.connect(request.acceptPrivateData());
        }
        catch (RuntimeException ex) {
            if (block != null) {
                buffers.give(block);
            }
            if (native_.isPending()) {
                native_.reject();
            }
            release(request);
            // the error first: whoever sees the failed connect counted (a test, a scrape) sees its cause too
            if (ex instanceof RpmaException rpma) {
                this.context.statistics.recordError(rpma);
            }
            this.context.statistics.recordFailedToConnect();
            this.warnings.warn("accept", "Accepting a connection request on endpoint '" + endpointName()
                    + "' failed; the client sees the connection rejected or lost", ex);
            return;
        }
        this.context.statistics.recordAccepted();
        this.context.statistics.recordConnectionOpened();
        int loopIndex = (request.loopIndex >= 0) ? this.context.loops.own(request.loopIndex) : this.context.loops.next();
        ServerSession session = new ServerSession(this.context, connection, loopIndex, request.privateData(),
                request.attributesSet(), block, this.batches[loopIndex]);
        this.context.registry.added(session);
        // a task also on the acceptor's own loop (on-event-loop), which runs it in this round without a
        // wake-up: not at once, since the loop may be amid a batch of ready fds, one of them a session
        // that ended earlier in it, whose registration the new session's would take over
        if (!this.context.loops.loop(loopIndex).tryExecute(session::attach)) {
            // the data path stopped under a stop that raced with this accept: the session ends here
            session.end(RpmaSessionEnd.of(RpmaSessionEnd.Reason.SHUTDOWN, "the server stopped"));
        }
    }

    /** A request that will not become a session gives its place under the limit back. */
    private void release(RpmaIncomingRequest request) {
        if (request.reserved) {
            request.reserved = false;
            this.context.registry.unreserve();
        }
    }

    // ---------------------------------------------------------------- deadlines

    private void scheduleDeadline(long deadline) {
        if (this.deadlineTimer != null && this.deadlineTimerAt - deadline <= 0) {
            return;
        }
        if (this.deadlineTimer != null) {
            this.deadlineTimer.cancel();
        }
        this.deadlineTimerAt = deadline;
        this.deadlineTimer = this.loop.schedule(this::expireDeadlines,
                Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    private void expireDeadlines() {
        this.deadlineTimer = null;
        Long next = this.pending.settle(System.nanoTime(), (request) -> {
            if (request.rejectIfPending(RejectReason.DEADLINE)) {
                this.warnings.warn("deadline", "Connection handler " + this.handler.name() + " did not connect"
                        + " or reject a request on endpoint '" + endpointName() + "' within "
                        + this.settings.requestDeadline() + "; the request was rejected");
            }
        });
        if (next != null) {
            scheduleDeadline(next);
        }
    }

    // ---------------------------------------------------------------- the handler

    private void invoke(RpmaIncomingRequest request) {
        try {
            this.context.observer.handle(request, this.handler.name(), new Invocation(request));
            if (request.rejectIfPending(RejectReason.HANDLER_FAILED)) {
                this.warnings.warn("connection-handler", "Connection handler " + this.handler.name()
                        + " returned without connecting or rejecting a request on endpoint '" + endpointName()
                        + "'; the request was rejected");
            }
        }
        catch (Throwable ex) {
            boolean rejected = request.rejectIfPending(RejectReason.HANDLER_FAILED);
            // may run on the acceptor's own thread (inline): rate-limited, the stack trace once
            this.warnings.error("connection-handler", "Connection handler " + this.handler.name()
                    + " failed on endpoint '" + endpointName() + "'" + (rejected ? "; the request was rejected" : ""),
                    ex);
        }
    }

    /** The handler call the observer wraps. */
    private final class Invocation implements Callable<Void> {

        private final RpmaIncomingRequest request;

        Invocation(RpmaIncomingRequest request) {
            this.request = request;
        }

        @Override
        public Void call() throws Exception {
            Acceptor.this.handler.handle(this.request);
            return null;
        }
    }

    /** A request on its way to a handler thread. */
    private final class HandlerInvocation implements Runnable {

        final RpmaIncomingRequest request;

        HandlerInvocation(RpmaIncomingRequest request) {
            this.request = request;
        }

        @Override
        public void run() {
            Acceptor.this.context.observer.queueWait(endpointName(),
                    Duration.ofNanos(System.nanoTime() - this.request.obtainedNanos));
            if (!this.request.isDecided()) {
                invoke(this.request);
            }
        }
    }

    /** Requests handed to handler threads and still held; loop thread only, for tests. */
    int heldRequests() {
        return this.pending.size();
    }

    @Override
    public String toString() {
        return "Acceptor[" + endpointName() + "]";
    }
}
