package dev.rpma.server;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.server.loop.RpmaEventLoop;
import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * An RDMA server: one peer per distinct address (and one per peer an endpoint names for itself),
 * one {@link RpmaServedEndpoint} per endpoint (each with its acceptor), the event loops of the data
 * path that every endpoint's sessions share, and the exposed memory regions. Created without touching
 * librpma; {@link #listen()} checks that what it will register fits under the memory-lock limit
 * ({@link RpmaMemoryLockException}), opens the peers, registers the regions and listens, fully or not
 * at all (if anything fails, what was already created is released before the exception leaves);
 * {@link #start()} accepts.
 *
 * <p>Threads: an acceptor thread per endpoint, {@code rpma-acceptor-<endpoint>} (or, with
 * {@code acceptor.on-event-loop}, the first data-path loop), owns its librpma endpoint and carries
 * out every decision on its requests; the data-path loops,
 * {@code rpma-loop-<n>}, each own the connections assigned to them (events, completions, slots,
 * teardown); connection handlers are called on each endpoint's handler threads (or inline on its acceptor),
 * message handlers on the session's loop (or an endpoint's message pool). All of them are daemons;
 * while the server runs, the thread {@code rpma-server} keeps the JVM alive.
 *
 * <p>{@link #stop(Runnable)}: every endpoint stops accepting at once (requests not yet decided are
 * rejected as shutdown); the sessions are given the grace period to end by themselves (negative:
 * forever, zero: not at all); the rest are disconnected, and deleted once their CLOSED came or after
 * {@link ServerSession#DISCONNECT_TIMEOUT}. Then the slots' memory and the regions are deregistered,
 * the loops stop and the peers are deleted, last, as librpma requires. A stop always ends, at the
 * latest the shutdown timeout after the grace period: an acceptor, handler or loop stuck in
 * application code or a native call is left behind with what it may still use, with a log line that
 * says what was left, and the keep-alive thread ends, so that the JVM can exit.
 *
 * <p>When the RDMA device of a peer is lost, {@link DeviceRecovery} releases what the server had on it
 * and, with device recovery on, listens anew on the peer's endpoints once the device is back; the
 * endpoints are then new objects of the same names, with their counters carried over.
 *
 * <p>Longer than most types because the order of creation and release is the point: listen, start,
 * the stop's phases and the release and re-creation of a lost device's peer are kept side by side so
 * that the order librpma requires (connections, then memory, then peers) can be read in one place.
 */
public final class RpmaServer {

    private static final Logger logger = LoggerFactory.getLogger(RpmaServer.class);

    /** After its first, one message handler invocation in this many per session is timed for the observer. */
    public static final int HANDLER_TIMING_SAMPLE = 64;

    /** Completions taken per {@code rpma_cq_get_wc} on a data-path loop. */
    static final int COMPLETION_BATCH = 16;

    private final Rpma rpma;

    private final RpmaServerSettings settings;

    private final Components components;

    /**
     * By {@link RpmaEndpointSettings#peerKey()}: one per address, and one per peer an endpoint names.
     * Changed under {@link #lifecycle} (a peer whose device was lost leaves it, and comes back with it).
     */
    private final Map<String, RpmaPeer> peers = new LinkedHashMap<>();

    /**
     * Set whole by {@link #listen()}, and whenever an endpoint is created anew after its device came back
     * (under {@link #lifecycle}); read by any thread.
     */
    private volatile Map<String, RpmaServedEndpoint> endpoints = Map.of();

    /** The threads that release and recover a lost device, by peer key; under {@link #lifecycle}. */
    private final Map<String, Thread> recoveries = new LinkedHashMap<>();

    private final EndpointFactory endpointFactory;

    private final RpmaRegions regions;

    private final RpmaEventLoopGroup loops;

    private final CountDownLatch stopped = new CountDownLatch(1);

    private final Object lifecycle = new Object();

    private volatile boolean listening;

    private @Nullable Thread keepAlive;

    private boolean stopping;

    private final List<Runnable> stopCallbacks = new ArrayList<>();

    /**
     * A server that does not listen yet; nothing native is created.
     *
     * @throws IllegalArgumentException when the settings contradict themselves (two endpoints or
     *     regions of one name, a region for an endpoint that is not configured)
     */
    public RpmaServer(Rpma rpma, RpmaServerSettings settings, Components components) {
        this.rpma = rpma;
        this.settings = settings;
        this.components = components;
        java.util.Set<String> names = new java.util.HashSet<>();
        for (RpmaEndpointSettings endpoint : settings.endpoints()) {
            if (!names.add(endpoint.name())) {
                throw new IllegalArgumentException("Two endpoints are named '" + endpoint.name() + "'");
            }
        }
        this.regions = new RpmaRegions(settings.regions(), settings.endpoints());
        this.loops = new RpmaEventLoopGroup(settings.eventLoops(), "rpma-loop-", settings.busyPoll());
        RpmaCompletions[] batches = new RpmaCompletions[settings.eventLoops()];
        for (int i = 0; i < batches.length; i++) {
            batches[i] = new RpmaCompletions(COMPLETION_BATCH);
        }
        this.endpointFactory = new EndpointFactory(rpma, components, this.regions, this.loops, batches,
                this::deviceLost);
    }

    /** What the server needs besides the settings. */
    public interface Components {

        /** The connection handler of an endpoint. */
        RpmaRequestHandler handler(String endpoint);

        /**
         * The message handlers of an endpoint by route; empty when it has none (its sessions then have
         * no data path). In raw mode there is one, with route {@code ""}.
         */
        default Map<String, RpmaMessageListener> messageListeners(String endpoint) {
            return Map.of();
        }

        /**
         * The configuration for the requests of an endpoint, its queues at least {@code needed}, or
         * {@code null} for librpma's defaults (only when nothing is needed).
         */
        @Nullable RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed);

        /**
         * The admission step of an endpoint, run on its acceptor thread before a request takes anything
         * (see {@link RpmaAdmission}); {@code null}, the default, admits every request.
         */
        default @Nullable RpmaAdmission admission(String endpoint) {
            return null;
        }

        /** Hooks around the server; none by default. */
        default RpmaServerObserver observer() {
            return RpmaServerObserver.NONE;
        }

        /** Who is told of an endpoint's sessions; nobody by default. */
        default List<RpmaSessionListener> sessionListeners(String endpoint) {
            return List.of();
        }
    }

    /** A server listening on every endpoint, not accepting yet: {@code new RpmaServer(...).listen()}. */
    public static RpmaServer listen(Rpma rpma, RpmaServerSettings settings, Components components) {
        RpmaServer server = new RpmaServer(rpma, settings, components);
        server.listen();
        return server;
    }

    /**
     * Opens the peers, registers the regions, and listens on every endpoint; accepts nothing yet.
     * Once; if it fails, nothing native is left and the server is stopped.
     */
    public void listen() {
        synchronized (this.lifecycle) {
            if (this.listening || this.stopping) {
                throw new IllegalStateException("The RDMA server listens already, or has stopped");
            }
            Map<String, RpmaServedEndpoint> created = new LinkedHashMap<>();
            MemoryLockBudget memory = null;
            try {
                // before anything native: a wiring mistake is reported as itself, not hidden behind a missing device
                for (RpmaEndpointSettings endpoint : this.settings.endpoints()) {
                    checkMessageHandlers(endpoint, this.components.messageListeners(endpoint.name()).keySet());
                }
                // and a memory-lock limit too small for the configuration as itself, not as a bare ENOMEM
                memory = MemoryLockBudget.of(this.settings,
                        (name) -> !this.components.messageListeners(name).isEmpty(), this.rpma.memoryLockLimit());
                memory.check();
                for (RpmaEndpointSettings endpoint : this.settings.endpoints()) {
                    peer(this.rpma, endpoint, this.peers);
                }
                this.regions.register(this.rpma, this.settings.endpoints(), this.peers);
                for (RpmaEndpointSettings endpoint : this.settings.endpoints()) {
                    created.put(endpoint.name(),
                            this.endpointFactory.create(endpoint, this.peers.get(endpoint.peerKey()), null));
                }
            }
            catch (RuntimeException ex) {
                created.values().forEach(RpmaServedEndpoint::closeUnstarted);
                this.regions.deregister();
                this.loops.shutdown();
                closePeers(this.peers);
                this.stopping = true;
                this.stopped.countDown();
                throw (memory != null) ? memoryLockFailure(ex, memory) : ex;
            }
            this.endpoints = Collections.unmodifiableMap(created);
            this.listening = true;
        }
        this.endpoints.values().forEach(this.components.observer()::endpointCreated);
        this.components.observer().loopsCreated(this.loops.loops());
    }

    /** A raw endpoint has at most one message handler; a framed one's routes fit in a frame. */
    private static void checkMessageHandlers(RpmaEndpointSettings settings, Set<String> routes) {
        if (settings.messages().mode() == RpmaWireMode.RAW && routes.size() > 1) {
            throw new IllegalArgumentException("Endpoint '" + settings.name() + "' is raw, so its messages have no route,"
                    + " but it has " + routes.size() + " message handlers " + routes + ": give it one, or use the"
                    + " framed mode");
        }
        for (String route : routes) {
            if (route.getBytes(StandardCharsets.UTF_8).length > FramedWire.MAX_ROUTE_LENGTH) {
                throw new IllegalArgumentException("Route '" + route + "' of endpoint '" + settings.name() + "' is longer"
                        + " than " + FramedWire.MAX_ROUTE_LENGTH + " bytes (UTF-8): shorten it");
            }
        }
    }

    /** An ENOMEM of a registration at listen is the memory-lock limit, named with what the server registers. */
    private static RuntimeException memoryLockFailure(RuntimeException failure, MemoryLockBudget memory) {
        if (failure instanceof RpmaException rpma
                && RpmaFailureKind.classify(rpma) == RpmaFailureKind.MEMORY_LOCK_LIMIT) {
            return new RpmaMemoryLockException(memory.limit(), memory.startBytes(), memory.atStart(), rpma);
        }
        return failure;
    }

    /**
     * The endpoint's peer: the address's shared one, or with {@link RpmaEndpointSettings#peer()} one of
     * its own (another {@code rpma_peer_new} on the same device, so another protection domain).
     */
    private static RpmaPeer peer(Rpma rpma, RpmaEndpointSettings settings, Map<String, RpmaPeer> peers) {
        RpmaPeer peer = peers.get(settings.peerKey());
        if (peer == null) {
            try {
                peer = rpma.openPeer(settings.address(), PeerRole.SERVER);
            }
            catch (RpmaException ex) {
                throw new RpmaListenException(settings.name(), settings.address(), settings.port(), ex);
            }
            peers.put(settings.peerKey(), peer);
        }
        return peer;
    }


    /** The endpoints by name, in configuration order; empty until the server listens. */
    public Map<String, RpmaServedEndpoint> endpoints() {
        return this.listening ? this.endpoints : Map.of();
    }

    /** An endpoint, or {@code null} when there is none of that name or the server does not listen yet. */
    public @Nullable RpmaServedEndpoint endpoint(String name) {
        return this.listening ? this.endpoints.get(name) : null;
    }

    /** Whether {@link #listen()} succeeded. */
    public boolean isListening() {
        return this.listening;
    }

    /** The exposed memory regions: their memory from the start, registered once the server listens. */
    public RpmaRegions regions() {
        return this.regions;
    }

    /** The data-path event loops. */
    public List<RpmaEventLoop> eventLoops() {
        return this.loops.loops();
    }

    public RpmaServerSettings settings() {
        return this.settings;
    }

    /** Starts the loops and accepting on every endpoint (listening first if it did not); once. */
    public void start() {
        if (!this.listening) {
            listen();
        }
        synchronized (this.lifecycle) {
            if (this.keepAlive != null || this.stopping) {
                return;
            }
            // non-daemon: a server whose only work is RDMA keeps the JVM alive until it stopped
            Thread thread = new Thread(this::awaitStopped, "rpma-server");
            thread.setDaemon(false);
            thread.start();
            this.keepAlive = thread;
        }
        this.loops.start();
        this.endpoints.values().forEach(RpmaServedEndpoint::start);
    }

    private void awaitStopped() {
        try {
            this.stopped.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Stops gracefully (see the class description) on a thread of its own and runs {@code callback}
     * once everything native is released, or once the stop gave up on what was left. At once for a
     * server that never started. Idempotent: a later call's callback runs when the stop ends.
     */
    public void stop(Runnable callback) {
        synchronized (this.lifecycle) {
            if (this.stopped.getCount() == 0) {
                callback.run();
                return;
            }
            this.stopCallbacks.add(callback);
            if (this.stopping) {
                return;
            }
            this.stopping = true;
            if (this.keepAlive == null) {
                releaseUnstarted();
                return;
            }
            // stopping: callbacks of later stop calls run when this stop ends
        }
        // at once, so that health and requests see the stop from this call on; the rest waits
        for (RpmaServedEndpoint endpoint : this.endpoints.values()) {
            endpoint.stopAccepting();
        }
        Thread stopper = new Thread(this::stopNow, "rpma-server-stop");
        stopper.setDaemon(true);
        stopper.start();
    }

    /** Stops like {@link #stop(Runnable)} and waits until the stop ended; for bean destruction. */
    public void close() {
        CountDownLatch done = new CountDownLatch(1);
        stop(done::countDown);
        try {
            done.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private void releaseUnstarted() {
        this.endpoints.values().forEach(RpmaServedEndpoint::closeUnstarted);
        this.regions.deregister();
        this.loops.shutdown();
        closePeers(this.peers);
        finished();
    }

    private void stopNow() {
        boolean released = false;
        try {
            awaitRecoveries();
            released = stopEndpoints();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            logger.warn("Stopping the RDMA server was interrupted; what it still holds is left to the process's exit");
        }
        catch (RuntimeException ex) {
            logger.error("Stopping the RDMA server failed; what it still holds is left to the process's exit", ex);
        }
        finally {
            if (!released) {
                this.loops.shutdown();
            }
            finished();
        }
    }

    /**
     * Ends the threads of lost devices first, so that the stop alone releases what is left: one that
     * looks for its device stops at once, one that releases the device's objects within the shutdown
     * timeout (it waits no longer for anything); each is given twice that.
     */
    private void awaitRecoveries() throws InterruptedException {
        List<Thread> threads;
        synchronized (this.lifecycle) {
            threads = new ArrayList<>(this.recoveries.values());
        }
        long deadline = System.nanoTime() + 2 * this.settings.shutdownTimeout().toNanos();
        for (Thread thread : threads) {
            thread.interrupt();
            TimeUnit.NANOSECONDS.timedJoin(thread, Math.max(1, deadline - System.nanoTime()));
            if (thread.isAlive()) {
                logger.warn("RDMA server: {} did not end within twice the shutdown timeout; the stop goes on",
                        thread.getName());
            }
        }
    }

    /**
     * The stop's phases; {@code true} when everything native was released. The grace period counts
     * from the stop's start; every wait after it shares one deadline, the shutdown timeout later, so
     * that a thread stuck in a native call or in application code costs the stop that much at most.
     */
    private boolean stopEndpoints() throws InterruptedException {
        Duration grace = this.settings.gracePeriod();
        long begun = System.nanoTime();
        boolean ended = awaitSessionsEnded(grace.isNegative() ? Long.MAX_VALUE : begun + grace.toNanos());
        if (!ended) {
            logger.info("RDMA server: grace period {} over with {} session(s) open; disconnecting them", grace,
                    openSessions());
        }
        // also when none is open: a session the acceptor still connects from now on ends at once
        RpmaSessionEnd shutdown = RpmaSessionEnd.of(RpmaSessionEnd.Reason.SHUTDOWN,
                "the server stopped after its grace period");
        this.endpoints.values().forEach((endpoint) -> endpoint.registry().endAll(shutdown));
        long deadline = System.nanoTime() + this.settings.shutdownTimeout().toNanos();
        boolean acceptorsEnded = true;
        for (RpmaServedEndpoint endpoint : this.endpoints.values()) {
            acceptorsEnded &= endpoint.awaitAcceptingStopped(deadline);
        }
        boolean gone = awaitSessionsEnded(deadline);
        for (RpmaServedEndpoint endpoint : this.endpoints.values()) {
            endpoint.release(gone);
        }
        if (!gone) {
            logger.error("RDMA server: {} session(s) were not deleted within the shutdown timeout {} after the grace"
                    + " period (an event loop blocked in a message handler or a native call?); their connections,"
                    + " memory and peers are left to the process's exit: {}", openSessions(),
                    this.settings.shutdownTimeout(), describeOpenSessions());
            return false;
        }
        if (!acceptorsEnded) {
            // an endpoint left open holds its peer
            return false;
        }
        this.regions.deregister();
        this.loops.shutdown();
        if (!this.loops.awaitTermination(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
            logger.error("RDMA server: an event loop did not end within the shutdown timeout {}; the peers and the shared"
                    + " receive queues are left to the process's exit", this.settings.shutdownTimeout());
            return false;
        }
        // once their loops ended: nothing takes their completions or posts their slots any more
        this.endpoints.values().forEach(RpmaServedEndpoint::releaseSharedReceives);
        closePeers(this.peers);
        return true;
    }

    // ---------------------------------------------------------------- a lost device

    /**
     * An endpoint found its device gone: a thread of its own releases what the server opened on the
     * peer's device and, with device recovery on, listens anew once the device is back (see
     * {@link DeviceRecovery}). Once per peer; nothing while the server stops, as the stop releases all.
     */
    private void deviceLost(RpmaServedEndpoint endpoint) {
        String peerKey = endpoint.settings().peerKey();
        synchronized (this.lifecycle) {
            if (this.stopping || this.recoveries.containsKey(peerKey)) {
                return;
            }
            // told by its acceptor once it failed with the loss
            RpmaDeviceLostException loss = (RpmaDeviceLostException) endpoint.failure();
            Thread thread = new Thread(new DeviceRecovery(this, peerKey, loss), "rpma-device-" + loss.address());
            thread.setDaemon(true);
            this.recoveries.put(peerKey, thread);
            thread.start();
        }
    }

    /** The endpoints on the peer of {@code peerKey} now. */
    List<RpmaServedEndpoint> endpointsOn(String peerKey) {
        return this.endpoints.values().stream().filter((endpoint) -> endpoint.settings().peerKey().equals(peerKey))
            .toList();
    }

    Rpma rpma() {
        return this.rpma;
    }

    boolean isStopping() {
        synchronized (this.lifecycle) {
            return this.stopping;
        }
    }

    /**
     * Deregisters the regions on the peer of {@code peerKey} and deletes the peer, once its endpoints
     * released all they had on it, then lets librdmacm forget the removed device: after that the kernel
     * can finish the removal.
     */
    void releaseLostPeer(String peerKey) {
        this.regions.deregisterOn(peerKey);
        RpmaPeer peer;
        synchronized (this.lifecycle) {
            peer = this.peers.remove(peerKey);
        }
        if (peer != null) {
            peer.close();
        }
        this.rpma.forgetRemovedDevices();
    }

    /**
     * Listens anew on the endpoints {@code lost} (all of the peer of {@code peerKey}) when the device of
     * {@code address} is back: a new peer, the regions registered on it, the endpoints created with their
     * counters and started. {@code false} while the device is still gone.
     *
     * @throws RuntimeException when the device is back but listening failed; nothing is left open then
     */
    boolean relisten(String peerKey, String address, List<RpmaServedEndpoint> lost) {
        RpmaPeer peer;
        try {
            peer = this.rpma.openPeer(address, PeerRole.SERVER);
        }
        catch (RpmaException ex) {
            if (RpmaFailureKind.classify(ex) == RpmaFailureKind.NO_DEVICE) {
                return false;
            }
            throw ex;
        }
        List<RpmaServedEndpoint> created = new ArrayList<>();
        try {
            this.regions.registerOn(peerKey, peer);
            for (RpmaServedEndpoint old : lost) {
                created.add(this.endpointFactory.create(old.settings(), peer, old.statistics()));
            }
            synchronized (this.lifecycle) {
                if (!this.stopping) {
                    this.peers.put(peerKey, peer);
                    Map<String, RpmaServedEndpoint> replaced = new LinkedHashMap<>(this.endpoints);
                    created.forEach((endpoint) -> replaced.put(endpoint.name(), endpoint));
                    this.endpoints = Collections.unmodifiableMap(replaced);
                    // from here on a loss of the device is a new one, with a recovery of its own
                    this.recoveries.remove(peerKey, Thread.currentThread());
                    for (RpmaServedEndpoint endpoint : created) {
                        this.components.observer().endpointCreated(endpoint);
                        endpoint.statistics().recordRecovery();
                        endpoint.start();
                    }
                    return true;
                }
            }
            // the server stops meanwhile: what was made for it is released here, as the stop does not know it
            throw new IllegalStateException("the server stops");
        }
        catch (RuntimeException ex) {
            created.forEach(RpmaServedEndpoint::closeUnstarted);
            this.regions.deregisterOn(peerKey);
            peer.close();
            throw ex;
        }
    }

    /** The recovery of {@code peerKey} on this thread ended. */
    void recoveryEnded(String peerKey) {
        synchronized (this.lifecycle) {
            this.recoveries.remove(peerKey, Thread.currentThread());
        }
    }

    /** Waits until every endpoint's registry is empty or {@code deadline} ({@link System#nanoTime()}) passed. */
    private boolean awaitSessionsEnded(long deadline) throws InterruptedException {
        for (RpmaServedEndpoint endpoint : this.endpoints.values()) {
            long left = (deadline == Long.MAX_VALUE) ? Long.MAX_VALUE : Math.max(0, deadline - System.nanoTime());
            if (!endpoint.registry().awaitEmpty(left)) {
                return false;
            }
        }
        return true;
    }

    /** The sessions still open, by endpoint, with their states: what a stop that gives up leaves. */
    private String describeOpenSessions() {
        StringBuilder open = new StringBuilder();
        for (RpmaServedEndpoint endpoint : this.endpoints.values()) {
            List<ServerSession> sessions = endpoint.registry().sessions();
            int requests = endpoint.registry().reserved() - sessions.size();
            if (sessions.isEmpty() && requests <= 0) {
                continue;
            }
            open.append((open.length() > 0) ? "; " : "").append("endpoint '").append(endpoint.name()).append("': ")
                .append(sessions.stream().limit(20).map(ServerSession::toString).toList());
            if (requests > 0) {
                open.append(" and ").append(requests).append(" request(s) being decided");
            }
        }
        return open.toString();
    }

    private int openSessions() {
        return this.endpoints.values().stream().mapToInt((endpoint) -> endpoint.registry().reserved()).sum();
    }

    private void finished() {
        List<Runnable> callbacks;
        synchronized (this.lifecycle) {
            this.stopped.countDown();
            callbacks = new ArrayList<>(this.stopCallbacks);
            this.stopCallbacks.clear();
        }
        for (Runnable callback : callbacks) {
            try {
                callback.run();
            }
            catch (RuntimeException ex) {
                logger.warn("A stop callback failed", ex);
            }
        }
    }

    /** Waits until a stop ended; {@code false} on timeout. */
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        return this.stopped.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private static void closePeers(Map<String, RpmaPeer> peers) {
        for (RpmaPeer peer : peers.values()) {
            try {
                peer.close();
            }
            catch (RuntimeException ex) {
                logger.warn("Closing the RDMA peer of {} failed: {}", peer.address(), ex.getMessage());
            }
        }
        peers.clear();
    }
}
