package dev.rpma.server;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaException;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * One endpoint a server serves: its acceptor (on an event loop of its own, or with
 * {@code acceptor.on-event-loop} on the server's first data-path loop; either is the owner of the
 * librpma endpoint), its handler threads, its sessions (on the server's data-path loops), its buffers and its
 * counters. Created listening but not accepting by {@link RpmaServer#listen} (and again, as a new
 * object with the same counters, once a lost device is back); started and stopped by its server, or
 * given up ({@link #abandon}) when its device is lost.
 *
 * <p>A little over 400 lines: its view for users (state, failure, queue, sessions, pause) and its
 * three ends (stop, release of an unstarted one, abandon after a device loss) share its parts, and
 * the ends' order of release is easier to check side by side.
 */
public final class RpmaServedEndpoint {

    private static final Logger logger = LoggerFactory.getLogger(RpmaServedEndpoint.class);

    private final EndpointContext context;

    private final RpmaEndpoint endpoint;

    /** The request configuration: one, or with a shared receive queue one per data-path loop. */
    private final @Nullable RpmaConnectionConfig[] requestConfigs;

    private final RpmaEventLoop acceptorLoop;

    /** Whether the acceptor's loop is its own, started and ended with it, or a data-path loop the server owns. */
    private final boolean ownsAcceptorLoop;

    private final @Nullable HandlerPool handlerPool;

    private final Acceptor acceptor;

    /** For the start's log line only. */
    private final @Nullable RpmaAdmission admission;

    private final CountDownLatch acceptorStopped = new CountDownLatch(1);

    /** Whether the acceptor's stop ran on its loop (it takes no request after it), even if it threw. */
    private volatile boolean acceptorStopRan;

    private volatile RpmaEndpointState state = RpmaEndpointState.CREATED;

    /** Set when its device is gone, whether its acceptor or another endpoint of its peer found out. */
    private volatile @Nullable RpmaDeviceLostException deviceLoss;

    private boolean released;

    RpmaServedEndpoint(EndpointContext context, RpmaEndpoint endpoint, @Nullable RpmaConnectionConfig[] requestConfigs,
            RpmaRequestHandler handler, @Nullable RpmaAdmission admission, RpmaRegions regions,
            dev.rpma.binding.RpmaCompletions[] batches, java.util.function.Consumer<RpmaServedEndpoint> deviceLossListener) {
        this.context = context;
        this.endpoint = endpoint;
        this.requestConfigs = requestConfigs;
        RpmaEndpointSettings.Acceptor settings = context.settings.acceptor();
        this.ownsAcceptorLoop = !settings.onEventLoop();
        this.acceptorLoop = this.ownsAcceptorLoop ? new RpmaEventLoop("rpma-acceptor-" + context.name(), Duration.ZERO)
                : context.loops.loop(0);
        this.handlerPool = settings.inlineHandler() ? null
                : new HandlerPool("rpma-" + context.name() + "-handler", settings.handlerThreads(),
                        settings.queueCapacity(), settings.spinLooks(), settings.batchScheduling(),
                        dev.rpma.binding.io.ThreadScheduling::batchCurrentThread);
        this.admission = admission;
        this.acceptor = new Acceptor(context, endpoint, requestConfigs, handler, admission, this.acceptorLoop,
                this.handlerPool, regions, batches, () -> deviceLossListener.accept(this));
    }

    public String name() {
        return this.context.name();
    }

    public RpmaEndpointSettings settings() {
        return this.context.settings;
    }

    public RpmaEndpointStatistics statistics() {
        return this.context.statistics;
    }

    public RpmaEndpointState state() {
        RpmaEndpointState current = this.state;
        if (this.deviceLoss != null && current != RpmaEndpointState.STOPPED) {
            return RpmaEndpointState.FAILED;
        }
        if (current == RpmaEndpointState.RUNNING && this.acceptor.failure() != null) {
            return RpmaEndpointState.FAILED;
        }
        if (current == RpmaEndpointState.RUNNING && this.acceptor.degradedBy() != null) {
            return RpmaEndpointState.DEGRADED;
        }
        if (current == RpmaEndpointState.RUNNING && this.acceptor.isPaused()) {
            return RpmaEndpointState.PAUSED;
        }
        return current;
    }

    /** What stopped the endpoint when it is {@link RpmaEndpointState#FAILED}, else {@code null}. */
    public @Nullable Throwable failure() {
        Throwable failure = this.acceptor.failure();
        return (failure != null) ? failure : this.deviceLoss;
    }

    /**
     * What is wrong with the network link of its address (the interface is down, or the address is
     * gone), or {@code null} when the link is up: asked anew each time, for health checks.
     */
    public @Nullable String linkProblem() {
        return NetworkLink.problem(this.context.settings.address());
    }

    /** Whether its device was found gone; its server may listen anew once the device is back. */
    public boolean isDeviceLost() {
        return this.deviceLoss != null;
    }

    /**
     * The error its acceptor backs off from while it is {@link RpmaEndpointState#DEGRADED} (the
     * latest of those in a row), else {@code null}.
     */
    public @Nullable RpmaException degradedBy() {
        return this.acceptor.degradedBy();
    }

    /** Requests waiting for a handler thread. */
    public int queueSize() {
        return (this.handlerPool != null) ? this.handlerPool.queued() : 0;
    }

    /** How many requests may wait for a handler thread; 0 for an inline handler. */
    public int queueCapacity() {
        return (this.handlerPool != null) ? this.context.settings.acceptor().queueCapacity() : 0;
    }

    /** Accepted connections not yet deleted: its sessions. */
    public int activeConnections() {
        return this.context.statistics.activeConnections();
    }

    /** The sessions now, in no order. */
    public List<RpmaSession> sessions() {
        return List.copyOf(this.context.registry.sessions());
    }

    /** Whether its sessions have a data path (it has message handlers). */
    public boolean hasMessageHandlers() {
        return this.context.hasDataPath();
    }

    /** Bytes of registered memory its sessions' slots (and its shared receive queues' slots) take. */
    public long registeredBufferBytes() {
        return this.context.registeredBytes();
    }

    /**
     * Receives posted on its shared receive queues and not yet filled (0 without them): when it nears
     * 0, clients' messages wait for a receive; raise {@code messages.shared-receive-slots}.
     */
    public int sharedReceivesPosted() {
        return this.context.sharedReceivesPosted();
    }

    /** Rejects (and counts) every request until {@link #resume()}; the sessions go on. */
    public void pause() {
        this.acceptor.setPaused(true);
    }

    public void resume() {
        this.acceptor.setPaused(false);
    }

    // ---------------------------------------------------------------- the server's

    /** Hands the endpoint to the acceptor's thread and starts accepting; by the creating thread. */
    synchronized void start() {
        if (this.state != RpmaEndpointState.CREATED) {
            return;
        }
        this.endpoint.handOffTo(this.acceptorLoop.thread());
        if (this.context.shared != null) {
            for (int i = 0; i < this.context.shared.length; i++) {
                // the loops run already: each takes its queue's completions from now on
                this.context.loops.loop(i).execute(this.context.shared[i]::attach);
            }
        }
        if (this.handlerPool != null) {
            this.handlerPool.start();
        }
        if (this.context.messagePool != null) {
            this.context.messagePool.start();
        }
        if (this.ownsAcceptorLoop) {
            this.acceptorLoop.start();
        }
        this.acceptorLoop.execute(this.acceptor::start);
        this.state = RpmaEndpointState.RUNNING;
        logger.info("RDMA endpoint '{}' listening on {}:{} ({})", name(), this.endpoint.address(), this.endpoint.port(),
                describe());
    }

    private String describe() {
        RpmaEndpointSettings.Acceptor acceptor = this.context.settings.acceptor();
        String handlers = acceptor.inlineHandler() ? "connection handler inline"
                : acceptor.handlerThreads() + " handler threads, queue " + acceptor.queueCapacity();
        String messages = "no message handlers";
        if (this.context.hasDataPath()) {
            RpmaEndpointSettings.Messages m = this.context.settings.messages();
            String slots = m.sharesReceives()
                    ? "a shared receive queue of " + m.sharedReceiveSlots() + " slots per event loop and " + m.sendSlots()
                            + " send slots per session, "
                    : m.receiveSlots() + " receive and " + m.sendSlots() + " send slots per session, ";
            messages = m.mode().name().toLowerCase(java.util.Locale.ROOT) + " messages of up to " + m.maxMessageSize()
                    + " bytes, " + slots + "handled on the " + ((m.dispatch() == RpmaMessageDispatch.LOOP) ? "event loop"
                            : "message pool of " + m.dispatchThreads());
        }
        RpmaEndpointSettings.Limits limits = this.context.settings.limits();
        RpmaEndpointSettings.RequestRate rate = limits.requestRate();
        return handlers + ", " + messages + ", at most " + limits.maxConnections() + " connections"
                + ((rate != null) ? ", at most " + ((rate.perSecond() == Math.rint(rate.perSecond()))
                        ? String.valueOf((long) rate.perSecond()) : String.valueOf(rate.perSecond()))
                        + " requests a second (bursts of " + rate.burst() + ")" : "")
                + ((this.admission != null) ? ", admission by " + this.admission : "");
    }

    /** Stops accepting (see {@link Acceptor#stop()}); the sessions go on. Any thread; does not wait. */
    void stopAccepting() {
        synchronized (this) {
            if (this.state == RpmaEndpointState.RUNNING) {
                this.state = RpmaEndpointState.STOPPING;
            }
        }
        stopAcceptor();
    }

    /** Has the acceptor stop on its own thread, or counts it stopped when its loop runs no more. */
    private void stopAcceptor() {
        if (!this.acceptorLoop.tryExecute(() -> {
            try {
                this.acceptor.stop();
            }
            finally {
                this.acceptorStopRan = true;
                this.acceptorStopped.countDown();
            }
        })) {
            this.acceptorStopped.countDown();
        }
    }

    /**
     * Waits until accepting stopped and the handler threads returned, then ends the acceptor's loop,
     * all by {@code deadline} ({@link System#nanoTime()}); logs what is still running then, which the
     * stop leaves behind. By the stopping thread.
     *
     * @return whether the acceptor's loop ended (else the endpoint is left open, and so its peer)
     */
    boolean awaitAcceptingStopped(long deadline) throws InterruptedException {
        if (!this.acceptorStopped.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            logger.error("RDMA endpoint '{}': its acceptor did not stop within the shutdown timeout (stuck in a native"
                    + " call or an inline connection handler?{}); the endpoint, its request configuration and the"
                    + " server's peers are left to the process's exit", name(),
                    this.ownsAcceptorLoop ? "" : " or, on the event loop it shares, in a message handler");
        }
        if (this.handlerPool != null && !this.handlerPool
            .awaitTermination(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
            logger.warn("RDMA endpoint '{}': connection handler threads {} still run after the shutdown timeout; they"
                    + " are left behind (their requests were rejected)", name(), this.handlerPool.aliveThreads());
        }
        if (!this.ownsAcceptorLoop) {
            // the server's loop goes on, for the sessions; the acceptor is done once its stop ran there
            return acceptorEnded();
        }
        // a handler that decides from now on finds its request rejected (SHUTDOWN): nothing is handed over
        this.acceptorLoop.shutdown();
        return this.acceptorLoop.awaitTermination(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
    }

    /**
     * Gives the endpoint up after its device was lost, and releases all it opened on the device, so that
     * the kernel can finish removing it: accepting stops (if its acceptor did not find out itself), its
     * sessions end as {@link RpmaSessionEnd.Reason#LOST}, and once they are deleted and the acceptor's
     * loop ended, its shared receive queues (on their loops, which go on), slots and request
     * configurations are released. By the server's recovery thread; waits until {@code deadline}
     * ({@link System#nanoTime()}) at most.
     *
     * @return whether everything was released (else its peer must stay open, and the device's removal waits)
     */
    boolean abandon(RpmaDeviceLostException loss, long deadline) throws InterruptedException {
        // once per endpoint object: one created anew after the device came back is another
        this.deviceLoss = loss;
        this.context.statistics.recordDeviceLoss();
        stopAcceptor();
        this.context.registry.endAll(RpmaSessionEnd.of(RpmaSessionEnd.Reason.LOST, "the RDMA device is gone"));
        boolean acceptorEnded = awaitAcceptingStopped(deadline);
        boolean sessionsGone = this.context.registry.awaitEmpty(Math.max(0, deadline - System.nanoTime()));
        if (!sessionsGone) {
            logger.error("RDMA endpoint '{}': {} session(s) were not deleted after its device was lost; what they hold on"
                    + " the device stays, and the device's removal waits: {}", name(), this.context.registry.reserved(),
                    this.context.registry.sessions().stream().limit(20).map(ServerSession::toString).toList());
            return false;
        }
        boolean queuesClosed = detachSharedReceives(deadline);
        release(true);
        return acceptorEnded && queuesClosed;
    }

    /** Deletes the shared receive queues on their loops, which go on serving other endpoints. */
    private boolean detachSharedReceives(long deadline) throws InterruptedException {
        if (this.context.shared == null) {
            return true;
        }
        CountDownLatch detached = new CountDownLatch(this.context.shared.length);
        for (SharedReceives queue : this.context.shared) {
            if (queue == null || !queue.loop().tryExecute(() -> {
                try {
                    queue.detachAndClose();
                }
                finally {
                    detached.countDown();
                }
            })) {
                detached.countDown();
            }
        }
        if (!detached.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
            logger.error("RDMA endpoint '{}': an event loop did not delete its shared receive queue in time (blocked in"
                    + " a message handler?); the queue stays, and the device's removal waits", name());
            return false;
        }
        return true;
    }

    ConnectionRegistry registry() {
        return this.context.registry;
    }

    /**
     * Releases what is left once the sessions are gone: the message pool, the slots' registered
     * memory, and, once the acceptor's loop ended (a call it is stuck in may hold them), the request
     * configurations. By the stopping thread, after {@link #awaitAcceptingStopped}.
     */
    void release(boolean sessionsGone) {
        synchronized (this) {
            if (this.released) {
                return;
            }
            this.released = sessionsGone && acceptorEnded();
        }
        if (this.context.messagePool != null) {
            this.context.messagePool.shutdown();
        }
        if (sessionsGone && this.context.buffers != null) {
            this.context.buffers.close();
        }
        if (acceptorEnded()) {
            closeConfigs(this.requestConfigs);
        }
        synchronized (this) {
            this.state = (failure() != null) ? RpmaEndpointState.FAILED : RpmaEndpointState.STOPPED;
        }
        logger.info("RDMA endpoint '{}' stopped", name());
    }

    /** Releases an endpoint that never started, on the thread that created it. */
    synchronized void closeUnstarted() {
        if (this.state != RpmaEndpointState.CREATED) {
            return;
        }
        this.state = RpmaEndpointState.STOPPED;
        try {
            this.endpoint.close();
        }
        finally {
            if (this.ownsAcceptorLoop) {
                this.acceptorLoop.shutdown();
            }
            if (this.handlerPool != null) {
                this.handlerPool.shutdown();
            }
            if (this.context.messagePool != null) {
                this.context.messagePool.shutdown();
            }
            this.context.closeSharedReceives();
            if (this.context.buffers != null) {
                this.context.buffers.close();
            }
            closeConfigs(this.requestConfigs);
        }
    }

    /**
     * Deletes the shared receive queues, once their loops ended and every connection made with them
     * is deleted; by the stopping thread.
     */
    void releaseSharedReceives() {
        this.context.closeSharedReceives();
    }

    /**
     * Whether no call of the acceptor can come any more, so that what it uses (the request
     * configurations) can be released: its loop ended, or on a server's loop, its stop ran there.
     */
    private boolean acceptorEnded() {
        return this.acceptorLoop.isTerminated() || (!this.ownsAcceptorLoop && this.acceptorStopRan);
    }

    static void closeConfigs(@Nullable RpmaConnectionConfig[] configs) {
        for (RpmaConnectionConfig config : configs) {
            if (config != null) {
                config.close();
            }
        }
    }

    /** The acceptor's loop, for tests. */
    RpmaEventLoop acceptorLoop() {
        return this.acceptorLoop;
    }

    /** The acceptor, for tests. */
    Acceptor acceptor() {
        return this.acceptor;
    }

    @Override
    public String toString() {
        return "RpmaServedEndpoint[" + name() + " " + this.context.settings.address() + ":" + this.context.settings.port()
                + " " + state() + "]";
    }
}
