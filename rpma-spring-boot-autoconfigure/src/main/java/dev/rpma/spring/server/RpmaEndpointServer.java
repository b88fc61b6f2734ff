package dev.rpma.spring.server;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaThread;
import dev.rpma.jna.io.ThreadScheduling;

/**
 * One listening endpoint served: its {@link RpmaAcceptor} thread (the endpoint's owner), the
 * bounded queue and threads of its handlers, and its statistics. Created listening but paused;
 * {@link #start()} hands the endpoint to the acceptor thread; {@link #stop(Runnable)} stops it
 * gracefully (see {@link RpmaEndpointSettings#gracePeriod()}).
 */
public final class RpmaEndpointServer {

    private static final Log logger = LogFactory.getLog(RpmaEndpointServer.class);

    private final RpmaEndpointSettings settings;

    private final RpmaEndpoint endpoint;

    private final RpmaConnectionConfig requestConfig;

    private final ThreadPoolExecutor executor;

    private final RpmaEndpointStatistics statistics;

    private final RpmaAcceptor acceptor;

    private final CountDownLatch terminated = new CountDownLatch(1);

    private final List<Runnable> stopCallbacks = new ArrayList<>();

    private volatile RpmaEndpointState state = RpmaEndpointState.CREATED;

    private Thread thread;

    /**
     * @param requestConfig sizes the queues of each request's connection; closed by this server
     */
    public RpmaEndpointServer(RpmaEndpointSettings settings, RpmaEndpoint endpoint, RpmaConnectionConfig requestConfig,
            RpmaRequestHandler handler, RpmaServerObserver observer, List<RpmaConnectionEventListener> listeners) {
        this.settings = settings;
        this.endpoint = endpoint;
        this.requestConfig = requestConfig;
        this.statistics = new RpmaEndpointStatistics((error) -> observer.error(settings.name(), error));
        this.executor = new ThreadPoolExecutor(settings.handlerThreads(), settings.handlerThreads(), 0,
                TimeUnit.MILLISECONDS, new RpmaHandlerQueue(settings.queueCapacity(), settings.handlerSpinLooks()),
                handlerThreadFactory(settings, ThreadScheduling::batchCurrentThread), RpmaAcceptor.REFUSE);
        this.acceptor = new RpmaAcceptor(settings, endpoint, requestConfig, this.executor, handler, this.statistics,
                observer, List.copyOf(listeners));
        observer.endpointCreated(this);
    }

    public String name() {
        return this.settings.name();
    }

    public RpmaEndpointSettings settings() {
        return this.settings;
    }

    /** The listening endpoint; owned by the acceptor thread once started. */
    public RpmaEndpoint endpoint() {
        return this.endpoint;
    }

    public RpmaEndpointStatistics statistics() {
        return this.statistics;
    }

    public RpmaEndpointState state() {
        RpmaEndpointState current = this.state;
        if (current == RpmaEndpointState.RUNNING && this.acceptor.isPaused()) {
            return RpmaEndpointState.PAUSED;
        }
        return current;
    }

    /** What stopped the endpoint when it is {@link RpmaEndpointState#FAILED}, else {@code null}. */
    public Throwable failure() {
        return this.acceptor.failure();
    }

    /** Requests waiting for a handler thread. */
    public int queueSize() {
        return this.executor.getQueue().size();
    }

    public int queueCapacity() {
        return this.settings.queueCapacity();
    }

    /** Accepted connections not yet deleted. */
    public int activeConnections() {
        return this.statistics.activeConnections();
    }

    /** Starts accepting on a new non-daemon thread, which becomes the endpoint's owner. */
    public synchronized void start() {
        if (this.thread != null) {
            return;
        }
        Thread acceptorThread = new RpmaThread(this::runAcceptor, "rpma-acceptor-" + name());
        // non-daemon: a server whose only work is RDMA keeps the JVM alive
        acceptorThread.setDaemon(false);
        this.endpoint.handOffTo(acceptorThread);
        this.acceptor.bindTo(acceptorThread);
        this.thread = acceptorThread;
        this.state = RpmaEndpointState.RUNNING;
        if (!this.settings.inlineHandler()) {
            // now rather than on the first requests, which would otherwise wait for thread creation
            this.executor.prestartAllCoreThreads();
        }
        acceptorThread.start();
    }

    private void runAcceptor() {
        try {
            this.acceptor.run();
        }
        finally {
            closeRequestConfig();
            this.state = (this.acceptor.failure() != null) ? RpmaEndpointState.FAILED : RpmaEndpointState.STOPPED;
            this.terminated.countDown();
            List<Runnable> callbacks;
            synchronized (this) {
                callbacks = new ArrayList<>(this.stopCallbacks);
                this.stopCallbacks.clear();
            }
            callbacks.forEach(Runnable::run);
        }
    }

    /** Rejects (and counts) every request until {@link #resume()}. */
    public void pause() {
        this.acceptor.setPaused(true);
    }

    public void resume() {
        this.acceptor.setPaused(false);
    }

    /**
     * Stops gracefully and runs {@code callback} once everything native of this endpoint is
     * released (at once if it never started).
     */
    public void stop(Runnable callback) {
        synchronized (this) {
            if (this.thread == null) {
                closeUnstarted();
                callback.run();
                return;
            }
            if (this.terminated.getCount() > 0) {
                if (this.state == RpmaEndpointState.RUNNING) {
                    this.state = RpmaEndpointState.STOPPING;
                }
                this.stopCallbacks.add(callback);
                this.acceptor.requestStop();
                return;
            }
        }
        callback.run();
    }

    /** Waits until the acceptor thread ended; {@code false} on timeout. */
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
        return this.terminated.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Releases an endpoint that never started, on the thread that created it. */
    synchronized void closeUnstarted() {
        if (this.thread == null && this.state == RpmaEndpointState.CREATED) {
            this.state = RpmaEndpointState.STOPPED;
            this.executor.shutdownNow();
            try {
                this.endpoint.close();
            }
            finally {
                closeRequestConfig();
                this.acceptor.closeUnstarted();
                this.terminated.countDown();
            }
        }
    }

    /** Whether the acceptor released its own fd (it does when its loop ends, or when it never ran). */
    boolean isAcceptorReleased() {
        return this.acceptor.isReleased();
    }

    private void closeRequestConfig() {
        if (this.requestConfig != null) {
            this.requestConfig.close();
        }
    }

    /**
     * Handler threads, under {@code SCHED_BATCH} unless the settings say otherwise: the acceptor wakes
     * one for a request, and a woken thread of the default policy often takes the acceptor's own CPU
     * (measured with the dispatch benchmark, docs/benchmarks.md). Each carries its budget of looks at
     * the {@link RpmaHandlerQueue} before it parks.
     *
     * @param batchCurrentThread puts the calling thread under {@code SCHED_BATCH}; 0 or the errno
     */
    static ThreadFactory handlerThreadFactory(RpmaEndpointSettings settings, IntSupplier batchCurrentThread) {
        String prefix = "rpma-" + settings.name() + "-handler-";
        AtomicInteger count = new AtomicInteger();
        AtomicBoolean warned = new AtomicBoolean();
        return (runnable) -> {
            Runnable body = !settings.batchHandlerThreads() ? runnable : () -> {
                int errno = batchCurrentThread.getAsInt();
                if (errno != 0 && warned.compareAndSet(false, true)) {
                    logger.warn("RDMA endpoint '" + settings.name() + "': its handler threads keep the default"
                            + " scheduling policy, sched_setscheduler(SCHED_BATCH) failed with errno " + errno
                            + "; set rpma.server.acceptor.handler-batch-scheduling=false to not try");
                }
                runnable.run();
            };
            Thread thread = new RpmaHandlerQueue.HandlerThread(body, prefix + count.incrementAndGet(),
                    settings.handlerSpinLooks());
            thread.setDaemon(true);
            return thread;
        };
    }

    @Override
    public String toString() {
        return "RpmaEndpointServer[" + name() + " " + this.settings.address() + ":" + this.settings.port() + " " + state() + "]";
    }
}
