package dev.rpma.binding.testing;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.PassiveCmIds;
import dev.rpma.binding.internal.RdmaDevices;

/**
 * A scripted, checking fake of librpma's raw layer, for tests that drive the typed API (or anything
 * built on it) without an RDMA device. Pass it to {@code Rpma.using(fake)}.
 *
 * <h2>What it pretends</h2>
 * Every object is a distinct fake address per kind ({@link Kind}); out-parameters are written into
 * the caller's native memory, exactly where librpma writes them. {@code rpma_utils_get_ibv_context}
 * and {@code rpma_peer_new} succeed for any address (one device context per device, see {@link #sameDevice})
 * until its device is removed, so {@code Rpma.using(fake).openPeer("198.18.0.1", PeerRole.SERVER)} gives a
 * peer. Configurations keep their values (librpma's defaults), memory regions and descriptors round-trip,
 * {@code rpma_err_2str} and {@code rpma_utils_conn_event_2str} return the real library's texts
 * ({@link RpmaTexts}). Deletes free the object and NULL the pointer even when they fail, as librpma's do.
 *
 * <h2>How to script it</h2>
 * <ul>
 * <li>Endpoints: {@link #endpointAt(String, int)} (before or after the listen) or
 * {@link #awaitEndpoint(Duration)} gives a {@link FakeEndpoint}; queue what
 * {@code rpma_ep_next_conn_req} returns with {@link FakeEndpoint#queueRequest(byte[])},
 * {@link FakeEndpoint#queueNoEvent()}, {@link FakeEndpoint#queueProviderError(int)} (EAGAIN, EINTR,
 * EBADF...), {@link FakeEndpoint#queueUnexpectedEvent()} (INVAL), {@link FakeEndpoint#queueOutOfMemory()},
 * or make every look fail until told otherwise ({@link FakeEndpoint#failEveryLook}).
 * With nothing queued it returns {@code RPMA_E_PROVIDER} + {@code EAGAIN}. The endpoint's fd is a
 * real eventfd, readable while results are queued, so a real {@code poll()} works.</li>
 * <li>Requests: the {@link FakeRequest} returned by {@code queueRequest} scripts its connect
 * ({@link FakeRequest#failConnect}) and the connection's first events
 * ({@link FakeRequest#thenEvents}); it records the accept's private data, receives, and its state.</li>
 * <li>Connections: {@link FakeRequest#connection()} / {@link #lastConnection()} give a
 * {@link FakeConnection}: queue events ({@code ESTABLISHED} is queued on connect by default), set its
 * private data, queue completions on its {@link FakeCompletionQueue}s, read what was posted.</li>
 * <li>Any function: {@link #failNext(String, int, int)} makes its next call fail once (queue several
 * for several calls).</li>
 * <li>Any function: {@link #stallNext(String)} holds its next call inside the fake until the returned
 * {@link FakeStall} is released: a native call that blocks.</li>
 * <li>Devices: {@link #removeDevice(String)} takes an address's device away as {@code rdma link delete}
 * does, with what librpma then reports on its endpoints, connections and lookups;
 * {@link #restoreDevice(String)} adds it back as a new device context. As {@link RdmaDevices}, the fake
 * tells whether the process let go of a removed device ({@link #isRemovedDeviceReleased(String)},
 * {@link #aliveOnRemovedDevice(String)}).</li>
 * </ul>
 *
 * <h2>What it checks</h2>
 * A call with a NULL, unknown, freed, wrong-kind or poisoned handle, a double free, a peer deleted
 * before its children, a not-thread-safe call ({@code rpma_ep_next_conn_req}, {@code rpma_ep_shutdown},
 * {@code rpma_conn_req_delete}) on another thread than the endpoint's owner ({@link FakeEndpoint#owner()}),
 * two threads inside not-thread-safe calls on the same endpoint or peer at once, or
 * {@code rpma_ep_next_conn_req} and {@code rpma_conn_req_connect} of a request from the same endpoint
 * overlapping (the accept-to-migrate window, see {@link #rpma_conn_req_connect}), is a violation: it
 * is recorded and thrown as an {@link AssertionError} (which a librpma thread may swallow, so end each
 * test with {@link #assertNoViolations()} and {@link #assertAllFreed()}). When a call that returns an
 * object fails, the fake writes {@link #POISON} into the out-parameter (librpma leaves it untouched),
 * so a caller that reads it anyway is caught at its next call. Every call is counted per function
 * ({@link #calls(String)}, {@link #totalCalls()}) and logged with its thread ({@link #callLog()}).
 *
 * <h2>Loopback</h2>
 * {@link #loopback()} makes a fake whose clients dial its endpoints: requests, events, messages and
 * one-sided operations move between the two sides as {@link Loopback} describes, with every check
 * above. Faults: {@link #rejectNext(int)}, {@link #unreachableNext(int)}, and on a connection
 * {@link FakeConnection#lose()}, {@link FakeConnection#failNextCompletion(int)},
 * {@link FakeConnection#delay(Duration)}.
 *
 * <p>Thread-safe: every call runs under one lock, and the script objects share it. Close the fake
 * at the end of a test to close its eventfds and free its native memory.
 *
 * <p>One class of librpma's whole raw layer (some 2,500 lines): every function's checks share the lock,
 * the handle table and the violation log, and librpma's functions are listed once, in {@link LibRpma}.
 * The state of each object lives in its {@code Fake*} class, the loopback's wiring in {@link Loopback}.
 */
public final class FakeLibRpma implements LibRpma, PassiveCmIds, RdmaDevices, AutoCloseable {

    /** What the fake writes into an object out-parameter when the call fails. */
    public static final long POISON = 0xDEADBEEFL;

    /** The kinds of librpma objects. */
    public enum Kind {
        IBV_CONTEXT, PEER, PEER_CFG, EP, CONN_REQ, CONN, CONN_CFG, SRQ_CFG, SRQ, MR_LOCAL, MR_REMOTE, CQ
    }

    /** One fake object: its address, kind, where it came from and whether it is still live. */
    public static final class Handle {

        private final long address;

        private final Kind kind;

        final Handle parent;

        private final String createdBy;

        private final String createdOn;

        final Object state;

        final List<Handle> owned = new ArrayList<>();

        private final long sequence;

        boolean live = true;

        String freedBy;

        String freedOn;

        Handle(long address, Kind kind, Handle parent, String createdBy, String createdOn, Object state,
                long sequence) {
            this.sequence = sequence;
            this.address = address;
            this.kind = kind;
            this.parent = parent;
            this.createdBy = createdBy;
            this.createdOn = createdOn;
            this.state = state;
        }

        public long address() {
            return this.address;
        }

        /** Creation order: 1 for the fake's first object. */
        public long sequence() {
            return this.sequence;
        }

        public Kind kind() {
            return this.kind;
        }

        public boolean isLive() {
            return this.live;
        }

        /** The function that created it. */
        public String createdBy() {
            return this.createdBy;
        }

        /** The function that freed it, {@code null} while live. */
        public String freedBy() {
            return this.freedBy;
        }

        @Override
        public String toString() {
            return this.kind + "@0x" + Long.toHexString(this.address) + " (" + this.createdBy + " on '" + this.createdOn
                    + "'" + (this.live ? "" : ", freed by " + this.freedBy + " on '" + this.freedOn + "'") + ")";
        }
    }

    /** A scripted failure: a return code and the errno left for {@code lastErrno()}. */
    record Failure(int returnCode, int errno) {
    }

    /** A call {@link #failAfter} lets through; compared by identity. */
    private static final Failure PASS = new Failure(0, 0);

    /**
     * A device context whose device was removed; {@code released} once nothing was left on it when
     * {@link #forgetRemoved()} ran, as the kernel's removal then completes.
     */
    private static final class RemovedContext {
        final Handle context;
        boolean released;

        RemovedContext(Handle context) {
            this.context = context;
        }
    }

    /** Values of a {@code struct rpma_conn_cfg}. */
    public record ConnectionConfigValues(int timeoutMs, int cqSize, int rcqSize, int sqSize, int rqSize,
            boolean sharedCompletionChannel, long srq) {
    }

    /** A {@code struct rpma_conn_cfg}, with librpma's defaults. */
    static final class ConnCfg {
        int timeout = 1000;
        int cq = 10;
        int rcq = 0;
        int sq = 10;
        int rq = 10;
        boolean shared;
        long srq;

        ConnCfg copy() {
            ConnCfg copy = new ConnCfg();
            copy.timeout = this.timeout;
            copy.cq = this.cq;
            copy.rcq = this.rcq;
            copy.sq = this.sq;
            copy.rq = this.rq;
            copy.shared = this.shared;
            copy.srq = this.srq;
            return copy;
        }

        ConnectionConfigValues values() {
            return new ConnectionConfigValues(this.timeout, this.cq, this.rcq, this.sq, this.rq, this.shared, this.srq);
        }
    }

    private static final class PeerCfg {
        boolean directWrite;
    }

    private static final class SrqCfg {
        int rq = 20;
        int rcq = 20;
    }

    record Mr(long ptr, long size, int usage, int rkey) {
    }

    record MrRemote(long address, long size, int rkey, int usage) {
    }

    /** Per-call context; lives under the lock. */
    private static final class Call {
        final String function;
        final Thread thread;
        final long[] args;
        int errno;

        Call(String function, Thread thread, long[] args) {
            this.function = function;
            this.thread = thread;
            this.args = args;
        }

        int ok() {
            this.errno = 0;
            return 0;
        }

        int fail(int rc, int errno) {
            this.errno = errno;
            return rc;
        }

        int fail(Failure failure) {
            return fail(failure.returnCode, failure.errno);
        }
    }

    @FunctionalInterface
    private interface Body {
        int run(Call call);
    }

    private static final Set<String> FUNCTIONS = Arrays.stream(LibRpma.class.getMethods()).map(m -> m.getName())
            .filter(name -> name.startsWith("rpma_")).collect(Collectors.toUnmodifiableSet());

    private static final int RPMA_E_INVAL = RpmaError.INVAL.code();

    private static final int RPMA_E_PROVIDER = RpmaError.PROVIDER.code();

    private static final int RPMA_E_NOSUPP = RpmaError.NOSUPP.code();

    private static final int FLUSH_TYPE_PERSISTENT = 0;

    private static final int USAGE_FLUSH_VISIBILITY = 16;

    private static final int USAGE_FLUSH_PERSISTENT = 32;

    private static final int USAGE_SEND = 64;

    private static final int USAGE_RECV = 128;

    private static final int COMPLETION_ALWAYS = 3;

    /** The lock of every call and every script object. */
    final Object lock = new Object();

    private final AtomicLong sequence = new AtomicLong();

    private final AtomicLong callSequence = new AtomicLong();

    private final Map<Long, Handle> handles = new HashMap<>();

    private final Map<String, AtomicInteger> counters = new ConcurrentHashMap<>();

    private final ArrayDeque<FakeCall> callLog = new ArrayDeque<>();

    private final List<AssertionError> violations = Collections.synchronizedList(new ArrayList<>());

    private final Map<String, ArrayDeque<Failure>> injected = new HashMap<>();

    /** Stalls by function, taken by the next calls; read without the lock, since a held call must not hold it. */
    private final Map<String, ConcurrentLinkedQueue<FakeStall>> stalls = new ConcurrentHashMap<>();

    private final List<FakeStall> allStalls = Collections.synchronizedList(new ArrayList<>());

    private final ThreadLocal<Integer> errno = ThreadLocal.withInitial(() -> 0);

    /** The device context of each address looked up, by the address that names the device. */
    private final Map<String, Handle> ibvContexts = new HashMap<>();

    /** Addresses served by the device of another address ({@link #sameDevice}); any other has a device of its own. */
    private final Map<String, String> sharedDevices = new HashMap<>();

    /** The devices gone now ({@link #removeDevice}), by the address that names the device. */
    private final Set<String> absentDevices = new HashSet<>();

    /** Every device context whose device was removed, in order, with whether the process released it. */
    private final List<RemovedContext> removedContexts = new ArrayList<>();

    private int forgetRemovedCalls;

    /** The live local regions by rkey: what a remote region's descriptor names. */
    private final Map<Integer, Handle> regionsByKey = new HashMap<>();

    private final Map<String, FakeEndpoint> endpointsByAddress = new LinkedHashMap<>();

    private final List<FakeEndpoint> endpoints = new ArrayList<>();

    private final List<FakeRequest> requests = new ArrayList<>();

    private final List<FakeConnection> connections = new ArrayList<>();

    private final List<FakeSharedReceiveQueue> sharedReceiveQueues = new ArrayList<>();

    private final Map<Object, Object> quarantine = new IdentityHashMap<>();

    private final Map<Long, Thread> inside = new ConcurrentHashMap<>();

    /** {@link #endpoints} as an array, replaced on each listen: read without the lock. */
    private volatile FakeEndpoint[] listening = new FakeEndpoint[0];

    private final int[] thresholds = { 2, -1 };

    private int callLogLimit = 100_000;

    private long logFunction = 0;

    private int poisonWrites;

    private int nextQpNumber = 0x100;

    private boolean establishOnConnect = true;

    private boolean closedOnDisconnect = true;

    private boolean requireNonBlockingEndpointFd;

    private boolean requireNonBlockingConnectionEventFds;

    private boolean odpCapable;

    private volatile long notThreadSafeDwellNanos;

    private volatile boolean librpmaLayout = true;

    private boolean closed;

    /** A loopback ({@link #loopback()}): clients dial this fake's endpoints and bytes move between them. */
    private final boolean loopback;

    /** What a loopback does to the next connection requests by port ({@link Loopback}). */
    final Map<Integer, ArrayDeque<Integer>> dialFaults = new HashMap<>();

    /** Runs the sends of slowed connections when their time comes; created on first use. */
    private java.util.concurrent.ScheduledExecutorService timer;

    /** A scripted fake: endpoints get only the requests a test queues. */
    public FakeLibRpma() {
        this(false);
    }

    private FakeLibRpma(boolean loopback) {
        this.loopback = loopback;
    }

    /**
     * A fake that is also a loopback network: a client's {@code rpma_conn_req_new} and
     * {@code rpma_conn_req_connect} reach the endpoint listening on that port in this fake, and the two
     * connections move real bytes (see {@link Loopback}). It keeps every check of the scripted fake.
     */
    public static FakeLibRpma loopback() {
        return new FakeLibRpma(true);
    }

    /** Whether this fake is a loopback ({@link #loopback()}). */
    public boolean isLoopback() {
        return this.loopback;
    }

    // ---------------------------------------------------------------- configuration and scripting

    /** Whether a successful connect queues {@code ESTABLISHED} on the new connection (default true). */
    public FakeLibRpma establishOnConnect(boolean establish) {
        synchronized (this.lock) {
            this.establishOnConnect = establish;
        }
        return this;
    }

    /** Whether the first {@code rpma_conn_disconnect} queues {@code CLOSED} (default true). */
    public FakeLibRpma closedOnDisconnect(boolean closed) {
        synchronized (this.lock) {
            this.closedOnDisconnect = closed;
        }
        return this;
    }

    /**
     * Whether {@code rpma_ep_next_conn_req} on an endpoint whose fd is still blocking is a violation
     * (default false). librpma would block in it, and librdmacm can swallow an event after
     * {@code POLLIN}, so an acceptor keeps the fd non-blocking.
     */
    public FakeLibRpma requireNonBlockingEndpointFd(boolean required) {
        synchronized (this.lock) {
            this.requireNonBlockingEndpointFd = required;
        }
        return this;
    }

    /**
     * Whether {@code rpma_conn_next_event} finding no event on a connection whose event fd is still
     * blocking is a violation (default false: a test of the binding may call it so on purpose). librpma
     * would block in {@code rdma_get_cm_event} until the next event, so an event loop keeps the fd
     * non-blocking and takes "no event" as EAGAIN.
     */
    public FakeLibRpma requireNonBlockingConnectionEventFds(boolean required) {
        synchronized (this.lock) {
            this.requireNonBlockingConnectionEventFds = required;
        }
        return this;
    }

    /**
     * Makes {@code rpma_utils_get_ibv_context} answer for {@code address} the device of {@code deviceOf},
     * as for two addresses of one RDMA interface; by default every address has a device of its own.
     */
    public FakeLibRpma sameDevice(String address, String deviceOf) {
        synchronized (this.lock) {
            this.sharedDevices.put(address, deviceOf);
        }
        return this;
    }

    /**
     * Removes the RDMA device that serves {@code address} (and the addresses {@link #sameDevice} gives it),
     * as {@code rdma link delete} does, until {@link #restoreDevice}. What librpma then reports:
     * <ul>
     * <li>{@code rpma_utils_get_ibv_context} for its addresses fails with {@code RPMA_E_PROVIDER} and
     * {@code ENODEV};</li>
     * <li>each endpoint listening on a peer of the device drops the requests not yet handed out and turns
     * readable; its next {@code rpma_ep_next_conn_req} returns {@code RPMA_E_INVAL} (errno 0), which is how
     * librpma answers {@code RDMA_CM_EVENT_DEVICE_REMOVAL} on a listening endpoint, and later looks find
     * nothing ({@code EAGAIN}). A {@link FakeEndpoint#failEveryLook} ends; queueing on it is refused. In a
     * loopback, the clients of the dropped requests get {@code REJECTED} and later ones find no endpoint;</li>
     * <li>each connection on the device gets {@code LOST} on its own event channel and its queue pair fails
     * (posted work is flushed); in a loopback, the other side gets {@code LOST} too;</li>
     * <li>what would create an object on the device fails with {@code RPMA_E_PROVIDER} and {@code ENODEV}:
     * {@code rpma_peer_new} on its context; {@code rpma_mr_reg}, {@code rpma_ep_listen}, {@code rpma_srq_new}
     * and {@code rpma_conn_req_new} on its peers; {@code rpma_conn_req_connect} of their requests (which
     * consumes the request, as a failed connect does). Deletes keep working: they are how a process lets go.</li>
     * </ul>
     * {@link #isRemovedDeviceReleased} tells when the kernel's removal would complete. Removing a device
     * that is gone already does nothing.
     */
    public FakeLibRpma removeDevice(String address) {
        synchronized (this.lock) {
            String device = deviceOf(address);
            if (!this.absentDevices.add(device)) {
                return this;
            }
            Handle context = this.ibvContexts.remove(device);
            if (context != null) {
                this.removedContexts.add(new RemovedContext(context));
                for (FakeEndpoint endpoint : this.endpoints) {
                    Handle ep = this.handles.get(endpoint.handle);
                    if (ep != null && ep.live && contextOf(ep) == context) {
                        endpoint.deviceRemoved();
                    }
                }
                List<FakeConnection> lost = this.connections.stream()
                        .filter(connection -> connection.deletedOn == null
                                && contextOf(this.handles.get(connection.handle)) == context)
                        .toList();
                Loopback.deviceRemoved(lost);
            }
            this.lock.notifyAll();
        }
        return this;
    }

    /**
     * The device of {@code address} is back ({@code rdma link add}): {@code rpma_utils_get_ibv_context}
     * answers its addresses with a new device context, so the peers opened before the removal stay on the
     * removed one (and {@code RpmaPeer.isDevicePresent()} says {@code false} for them) while new peers work
     * as before.
     *
     * @throws IllegalStateException when the device is not removed
     */
    public FakeLibRpma restoreDevice(String address) {
        synchronized (this.lock) {
            String device = deviceOf(address);
            if (!this.absentDevices.remove(device)) {
                throw new IllegalStateException("The device of " + address + " is not removed");
            }
        }
        return this;
    }

    /**
     * Whether this process let go of every removed device context of {@code address}'s device, the
     * condition for the kernel to finish {@code rdma link delete}: every object created on it (peers, and
     * their memory regions, endpoints, requests, connections and shared receive queues, whose completion
     * queues go with them) was freed, and {@link #forgetRemoved()} was called after the last of them was
     * freed. Then the context is freed too: a pointer kept to it is dangling. {@code true} when the device
     * was removed before anything looked it up. {@link #aliveOnRemovedDevice} says what holds it.
     *
     * @throws IllegalStateException when the device of {@code address} was never removed
     */
    public boolean isRemovedDeviceReleased(String address) {
        synchronized (this.lock) {
            String device = deviceOf(address);
            List<RemovedContext> removed = removedContextsOf(device);
            if (removed.isEmpty() && !this.absentDevices.contains(device)) {
                throw new IllegalStateException("The device of " + address + " was never removed");
            }
            return removed.stream().allMatch(context -> context.released);
        }
    }

    /**
     * What is still alive on the removed, not yet released, device contexts of {@code address}'s device,
     * oldest first (completion queues, which go with their connection or queue, left out): what keeps
     * {@link #isRemovedDeviceReleased} false before {@link #forgetRemoved()} can release it.
     */
    public List<Handle> aliveOnRemovedDevice(String address) {
        synchronized (this.lock) {
            return removedContextsOf(deviceOf(address)).stream().filter(removed -> !removed.released)
                    .flatMap(removed -> aliveOn(removed.context).stream()).toList();
        }
    }

    /** How many times {@link #forgetRemoved()} was called. */
    public int forgetRemovedCalls() {
        synchronized (this.lock) {
            return this.forgetRemovedCalls;
        }
    }

    /**
     * librdmacm reading its device list: each removed device context with nothing alive on it is
     * released (and freed); one with something alive stays, even when that is freed later, until the
     * next call.
     */
    @Override
    public void forgetRemoved() {
        synchronized (this.lock) {
            this.forgetRemovedCalls++;
            Call call = new Call("forgetRemoved", Thread.currentThread(), new long[0]);
            for (RemovedContext removed : this.removedContexts) {
                if (!removed.released && aliveOn(removed.context).isEmpty()) {
                    removed.released = true;
                    free(call, removed.context);
                }
            }
            this.lock.notifyAll();
        }
    }

    /** What {@code rpma_utils_ibv_context_is_odp_capable} reports (default false). */
    public FakeLibRpma odpCapable(boolean capable) {
        synchronized (this.lock) {
            this.odpCapable = capable;
        }
        return this;
    }

    /**
     * How long each not-thread-safe call lingers, outside the lock, while it is marked as inside its
     * endpoint or peer (default 0). Widens the window in which two threads overlapping is detected.
     */
    public FakeLibRpma notThreadSafeDwell(Duration dwell) {
        this.notThreadSafeDwellNanos = dwell.toNanos();
        return this;
    }

    /** How many calls the log keeps (the oldest are dropped; counters stay exact). Default 100,000. */
    public FakeLibRpma callLogLimit(int limit) {
        synchronized (this.lock) {
            this.callLogLimit = limit;
        }
        return this;
    }

    /**
     * Makes the next call of {@code function} fail with {@code returnCode} and {@code errno}, after its
     * arguments were checked. Calls that create an object write {@link #POISON} into the out-parameter;
     * deletes still free (as librpma's do); {@code rpma_conn_req_connect} still consumes the request.
     * Call it several times to fail several calls.
     */
    public FakeLibRpma failNext(String function, int returnCode, int errno) {
        if (!FUNCTIONS.contains(function)) {
            throw new IllegalArgumentException("Not a librpma function of LibRpma: " + function);
        }
        if (returnCode == 0) {
            throw new IllegalArgumentException("A failure needs a non-zero return code");
        }
        synchronized (this.lock) {
            this.injected.computeIfAbsent(function, f -> new ArrayDeque<>()).add(new Failure(returnCode, errno));
        }
        return this;
    }

    /**
     * Lets the next {@code passing} calls of {@code function} succeed, then fails one as
     * {@link #failNext(String, int, int)} does: for a failure further into a sequence of like calls.
     */
    public FakeLibRpma failAfter(String function, int passing, int returnCode, int errno) {
        if (passing < 0) {
            throw new IllegalArgumentException("passing must not be negative");
        }
        failNext(function, returnCode, errno);
        synchronized (this.lock) {
            ArrayDeque<Failure> failures = this.injected.get(function);
            Failure failure = failures.pollLast();
            for (int i = 0; i < passing; i++) {
                failures.add(PASS);
            }
            failures.add(failure);
        }
        return this;
    }

    /**
     * Holds the next call of {@code function} inside the fake, outside its lock, until the returned
     * stall is released; then the call runs as usual. Call it several times to hold several calls.
     * {@link #close()} releases every stall.
     */
    public FakeStall stallNext(String function) {
        if (!FUNCTIONS.contains(function)) {
            throw new IllegalArgumentException("Not a librpma function of LibRpma: " + function);
        }
        FakeStall stall = new FakeStall(function);
        this.allStalls.add(stall);
        this.stalls.computeIfAbsent(function, f -> new ConcurrentLinkedQueue<>()).add(stall);
        return stall;
    }

    /** {@link #failNext(String, int, int)} with errno 0, or {@code EIO} for {@code RPMA_E_PROVIDER}. */
    public FakeLibRpma failNext(String function, RpmaError error) {
        return failNext(function, error.code(), (error == RpmaError.PROVIDER) ? Errno.EIO : 0);
    }

    /**
     * The script of the endpoint at {@code address:port}: the one listening there, else one made now
     * that the next {@code rpma_ep_listen} on that address and port takes.
     */
    public FakeEndpoint endpointAt(String address, int port) {
        synchronized (this.lock) {
            return this.endpointsByAddress.computeIfAbsent(address + ":" + port,
                    key -> new FakeEndpoint(this, address, port));
        }
    }

    /** The endpoint listened on last; fails when there is none. */
    public FakeEndpoint lastEndpoint() {
        synchronized (this.lock) {
            if (this.endpoints.isEmpty()) {
                throw new IllegalStateException("Nothing listened on this fake yet");
            }
            return this.endpoints.get(this.endpoints.size() - 1);
        }
    }

    /** Waits until something has listened and returns the endpoint listened on last. */
    public FakeEndpoint awaitEndpoint(Duration timeout) {
        if (!await(timeout, () -> !this.endpoints.isEmpty())) {
            throw new AssertionError("Nothing called rpma_ep_listen within " + timeout);
        }
        return lastEndpoint();
    }

    /** Every endpoint listened on, in order. */
    public List<FakeEndpoint> endpoints() {
        synchronized (this.lock) {
            return List.copyOf(this.endpoints);
        }
    }

    /** Every request handed out (server side) or created (client side), in order. */
    public List<FakeRequest> requests() {
        synchronized (this.lock) {
            return List.copyOf(this.requests);
        }
    }

    /** Every shared receive queue made, in order. */
    public List<FakeSharedReceiveQueue> sharedReceiveQueues() {
        synchronized (this.lock) {
            return List.copyOf(this.sharedReceiveQueues);
        }
    }

    /** Every connection made, in order. */
    public List<FakeConnection> connections() {
        synchronized (this.lock) {
            return List.copyOf(this.connections);
        }
    }

    /** The connection made last; fails when there is none. */
    public FakeConnection lastConnection() {
        synchronized (this.lock) {
            if (this.connections.isEmpty()) {
                throw new IllegalStateException("No connection was made on this fake yet");
            }
            return this.connections.get(this.connections.size() - 1);
        }
    }

    /** The level of {@code rpma_log_set_threshold}'s {@code threshold} (0 primary, 1 aux). */
    public int logThreshold(int threshold) {
        synchronized (this.lock) {
            return this.thresholds[threshold];
        }
    }

    /** The function pointer last given to {@code rpma_log_set_function} (0, NULL: librpma's default). */
    public long logFunction() {
        synchronized (this.lock) {
            return this.logFunction;
        }
    }

    /** Waits until {@code condition}, evaluated under the fake's lock, holds; false on timeout. */
    public boolean await(Duration timeout, BooleanSupplier condition) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (this.lock) {
            while (!condition.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(this.lock, Math.min(left, TimeUnit.MILLISECONDS.toNanos(50)));
                }
                catch (InterruptedException ex) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
            return true;
        }
    }

    // ---------------------------------------------------------------- observation

    /** How many times {@code function} was called (violations included). */
    public int calls(String function) {
        AtomicInteger counter = this.counters.get(function);
        return (counter != null) ? counter.get() : 0;
    }

    /** How many calls of any librpma function were made. */
    public int totalCalls() {
        return this.counters.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    /** Waits until {@code function} was called at least {@code count} times. */
    public boolean awaitCalls(String function, int count, Duration timeout) {
        return await(timeout, () -> calls(function) >= count);
    }

    /** The logged calls, oldest first. */
    public List<FakeCall> callLog() {
        synchronized (this.lock) {
            return List.copyOf(this.callLog);
        }
    }

    /** The logged calls of {@code function}, oldest first. */
    public List<FakeCall> callLog(String function) {
        synchronized (this.lock) {
            return this.callLog.stream().filter(call -> call.function().equals(function)).toList();
        }
    }

    /** Names of the threads that called {@code function}, in order of first call. */
    public Set<String> threadsCalling(String function) {
        synchronized (this.lock) {
            return this.callLog.stream().filter(call -> call.function().equals(function)).map(FakeCall::thread)
                    .collect(Collectors.toCollection(LinkedHashSet::new));
        }
    }

    /** How many times the fake wrote {@link #POISON} into an out-parameter of a failed call. */
    public int poisonWrites() {
        synchronized (this.lock) {
            return this.poisonWrites;
        }
    }

    /** The violations recorded so far. */
    public List<AssertionError> violations() {
        synchronized (this.violations) {
            return List.copyOf(this.violations);
        }
    }

    /** Forgets the violations (for tests that provoke them on purpose). */
    public void clearViolations() {
        this.violations.clear();
    }

    /** Throws an {@link AssertionError} listing every violation, each attached as suppressed. */
    public void assertNoViolations() {
        List<AssertionError> found = violations();
        if (!found.isEmpty()) {
            AssertionError error = new AssertionError(found.size() + " librpma usage violation(s):\n  "
                    + found.stream().map(Throwable::getMessage).collect(Collectors.joining("\n  ")));
            found.forEach(error::addSuppressed);
            throw error;
        }
    }

    /** Live objects a caller must free (device contexts and completion queues, owned by others, left out). */
    public List<Handle> liveHandles() {
        synchronized (this.lock) {
            return this.handles.values().stream().filter(h -> h.live && h.kind != Kind.IBV_CONTEXT && h.kind != Kind.CQ)
                    .sorted((a, b) -> Long.compare(a.sequence(), b.sequence())).toList();
        }
    }

    /** Live objects of one kind. */
    public List<Handle> liveHandles(Kind kind) {
        return liveHandles().stream().filter(h -> h.kind == kind).toList();
    }

    /** Every object ever created, live or freed. */
    public List<Handle> allHandles() {
        synchronized (this.lock) {
            return this.handles.values().stream().sorted((a, b) -> Long.compare(a.sequence(), b.sequence())).toList();
        }
    }

    /** The handle at {@code address}, or {@code null}. */
    public Handle handle(long address) {
        synchronized (this.lock) {
            return this.handles.get(address);
        }
    }

    /**
     * The peer a live local memory region was registered on, found by the key ({@code rkey}) of its
     * descriptor, or 0 when no live region has that key: which protection domain a client holding that
     * descriptor can reach.
     */
    public long peerOfRegion(byte[] descriptor) {
        int rkey = java.nio.ByteBuffer.wrap(descriptor).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt(16);
        synchronized (this.lock) {
            return this.handles.values().stream()
                    .filter(h -> h.live && h.kind == Kind.MR_LOCAL && ((Mr) h.state).rkey == rkey)
                    .mapToLong(h -> h.parent.address)
                    .findFirst().orElse(0);
        }
    }

    /** Throws an {@link AssertionError} naming every object still live. */
    public void assertAllFreed() {
        List<Handle> live = liveHandles();
        if (!live.isEmpty()) {
            throw new AssertionError(live.size() + " librpma object(s) never freed: " + live);
        }
    }

    /**
     * The end of a test over the fake: fails on any usage violation, then on any object left unfreed,
     * and closes the fake whatever they find.
     */
    public void assertCleanAndClose() {
        try {
            assertNoViolations();
            assertAllFreed();
        }
        finally {
            close();
        }
    }

    /** {@link #assertCleanAndClose()} without the check that every object was freed. */
    public void assertNoViolationsAndClose() {
        try {
            assertNoViolations();
        }
        finally {
            close();
        }
    }

    /** Closes every eventfd and frees the native memory the fake handed out. Idempotent. */
    @Override
    public void close() {
        synchronized (this.allStalls) {
            this.allStalls.forEach(FakeStall::release);
        }
        if (this.timer != null) {
            this.timer.shutdownNow();
        }
        synchronized (this.lock) {
            if (this.closed) {
                return;
            }
            this.closed = true;
            for (FakeEndpoint endpoint : this.endpoints) {
                if (endpoint.fd != null) {
                    endpoint.fd.close();
                }
            }
            for (FakeConnection connection : this.connections) {
                closeFds(connection);
            }
            for (Handle handle : this.handles.values()) {
                if (handle.state instanceof FakeSharedReceiveQueue srq && srq.rcq != null && srq.rcq.fd != null) {
                    srq.rcq.fd.close();
                }
            }
            for (FakeRequest request : this.requests) {
                quarantine(request.privateDataMemory);
            }
            for (FakeConnection connection : this.connections) {
                quarantine(connection.privateDataMemory);
            }
            for (Object memory : this.quarantine.keySet()) {
                ((Memory) memory).close();
            }
            this.quarantine.clear();
        }
    }

    // ---------------------------------------------------------------- the raw layer

    @Override
    public int lastErrno() {
        return this.errno.get();
    }

    @Override
    public int rpma_utils_get_ibv_context(String addr, int type, long ibvCtxPtr) {
        return invokeExclusive("rpma_utils_get_ibv_context", () -> -1L, c -> {
            if (addr == null) {
                throw violation(c, "NULL addr");
            }
            out(c, ibvCtxPtr, "ibv_ctx_ptr");
            if (type != 0 && type != 1) {
                return c.fail(RPMA_E_INVAL, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, ibvCtxPtr);
            }
            String device = deviceOf(addr);
            if (this.absentDevices.contains(device)) {
                return failOut(c, new Failure(RPMA_E_PROVIDER, Errno.ENODEV), ibvCtxPtr);
            }
            Handle context = this.ibvContexts.get(device);
            if (context == null) {
                context = create(c, Kind.IBV_CONTEXT, null, device);
                this.ibvContexts.put(device, context);
            }
            putLong(ibvCtxPtr, context.address);
            return c.ok();
        }, type, ibvCtxPtr);
    }

    @Override
    public int rpma_utils_ibv_context_is_odp_capable(long ibvCtx, long isOdpCapable) {
        return invoke("rpma_utils_ibv_context_is_odp_capable", c -> {
            use(c, ibvCtx, Kind.IBV_CONTEXT, "ibv_ctx");
            out(c, isOdpCapable, "is_odp_capable");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putInt(isOdpCapable, this.odpCapable ? 1 : 0);
            return c.ok();
        }, ibvCtx, isOdpCapable);
    }

    @Override
    public int rpma_peer_cfg_new(long pcfgPtr) {
        return createSimple("rpma_peer_cfg_new", pcfgPtr, Kind.PEER_CFG, PeerCfg::new);
    }

    @Override
    public int rpma_peer_cfg_delete(long pcfgPtr) {
        return deleteSimple("rpma_peer_cfg_delete", pcfgPtr, Kind.PEER_CFG);
    }

    @Override
    public int rpma_peer_cfg_set_direct_write_to_pmem(long pcfg, byte supported) {
        return invoke("rpma_peer_cfg_set_direct_write_to_pmem", c -> {
            PeerCfg cfg = (PeerCfg) use(c, pcfg, Kind.PEER_CFG, "pcfg").state;
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            cfg.directWrite = supported != 0;
            return c.ok();
        }, pcfg, supported);
    }

    @Override
    public int rpma_peer_cfg_get_direct_write_to_pmem(long pcfg, long supported) {
        return getValue("rpma_peer_cfg_get_direct_write_to_pmem", pcfg, Kind.PEER_CFG, "pcfg", PeerCfg.class,
                supported, "supported", (cfg, at) -> putByte(at, cfg.directWrite ? 1 : 0));
    }

    @Override
    public int rpma_peer_cfg_get_descriptor(long pcfg, long desc) {
        return getValue("rpma_peer_cfg_get_descriptor", pcfg, Kind.PEER_CFG, "pcfg", PeerCfg.class, desc, "desc",
                (cfg, at) -> putByte(at, cfg.directWrite ? 1 : 0));
    }

    @Override
    public int rpma_peer_cfg_get_descriptor_size(long pcfg, long descSize) {
        return invoke("rpma_peer_cfg_get_descriptor_size", c -> {
            use(c, pcfg, Kind.PEER_CFG, "pcfg");
            out(c, descSize, "desc_size");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putLong(descSize, 1);
            return c.ok();
        }, pcfg, descSize);
    }

    @Override
    public int rpma_peer_cfg_from_descriptor(long desc, long descSize, long pcfgPtr) {
        return invoke("rpma_peer_cfg_from_descriptor", c -> {
            out(c, desc, "desc");
            out(c, pcfgPtr, "pcfg_ptr");
            if (descSize < 1) {
                return failOut(c, new Failure(RPMA_E_INVAL, 0), pcfgPtr);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, pcfgPtr);
            }
            PeerCfg cfg = new PeerCfg();
            cfg.directWrite = new Pointer(desc).getByte(0) != 0;
            putLong(pcfgPtr, create(c, Kind.PEER_CFG, null, cfg).address);
            return c.ok();
        }, desc, descSize, pcfgPtr);
    }

    @Override
    public int rpma_peer_new(long ibvCtx, long peerPtr) {
        return invoke("rpma_peer_new", c -> {
            Handle context = use(c, ibvCtx, Kind.IBV_CONTEXT, "ibv_ctx");
            out(c, peerPtr, "peer_ptr");
            Failure failure = orDeviceGone(injected(c), context);
            if (failure != null) {
                return failOut(c, failure, peerPtr);
            }
            // the context is the peer's parent: what a removed device's release waits for is found through it
            putLong(peerPtr, create(c, Kind.PEER, context, context.state).address);
            return c.ok();
        }, ibvCtx, peerPtr);
    }

    @Override
    public int rpma_peer_delete(long peerPtr) {
        return invoke("rpma_peer_delete", c -> {
            Handle peer = freeing(c, peerPtr, Kind.PEER, "peer_ptr");
            if (peer == null) {
                return c.ok();
            }
            List<Handle> children = this.handles.values().stream().filter(h -> h.live && h.parent == peer).toList();
            if (!children.isEmpty()) {
                throw violation(c, "peer deleted while " + children.size() + " object(s) created on it are live: "
                        + children);
            }
            free(c, peer);
            putLong(peerPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, peerPtr);
    }

    @Override
    public int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr) {
        return invokeExclusive("rpma_mr_reg", () -> peer, c -> {
            Handle p = use(c, peer, Kind.PEER, "peer");
            out(c, mrPtr, "mr_ptr");
            if (ptr == 0 || size == 0 || usage == 0) {
                return failOut(c, new Failure(RPMA_E_INVAL, 0), mrPtr);
            }
            Failure failure = orDeviceGone(injected(c), p);
            if (failure != null) {
                return failOut(c, failure, mrPtr);
            }
            Mr mr = new Mr(ptr, size, usage, (int) (0x1000 + this.sequence.get()));
            Handle registered = create(c, Kind.MR_LOCAL, p, mr);
            this.regionsByKey.put(mr.rkey, registered);
            putLong(mrPtr, registered.address);
            return c.ok();
        }, peer, ptr, size, usage, mrPtr);
    }

    @Override
    public int rpma_mr_dereg(long mrPtr) {
        return invokeExclusive("rpma_mr_dereg", () -> parentOf(derefOrZero(mrPtr)), c -> {
            Handle mr = freeing(c, mrPtr, Kind.MR_LOCAL, "mr_ptr");
            if (mr == null) {
                return c.ok();
            }
            this.regionsByKey.remove(((Mr) mr.state).rkey);
            free(c, mr);
            putLong(mrPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor(long mr, long desc) {
        return invoke("rpma_mr_get_descriptor", c -> {
            Mr m = (Mr) use(c, mr, Kind.MR_LOCAL, "mr").state;
            out(c, desc, "desc");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            Pointer out = new Pointer(desc);
            out.setLong(0, m.ptr);
            out.setLong(8, m.size);
            out.setInt(16, m.rkey);
            out.setByte(20, (byte) m.usage);
            return c.ok();
        }, mr, desc);
    }

    @Override
    public int rpma_mr_remote_from_descriptor(long desc, long descSize, long mrPtr) {
        return invoke("rpma_mr_remote_from_descriptor", c -> {
            out(c, desc, "desc");
            out(c, mrPtr, "mr_ptr");
            if (descSize < 21) {
                return failOut(c, new Failure(RPMA_E_INVAL, 0), mrPtr);
            }
            Pointer in = new Pointer(desc);
            int usage = Byte.toUnsignedInt(in.getByte(20));
            if (usage == 0) {
                return failOut(c, new Failure(RPMA_E_INVAL, 0), mrPtr);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, mrPtr);
            }
            MrRemote remote = new MrRemote(in.getLong(0), in.getLong(8), in.getInt(16), usage);
            putLong(mrPtr, create(c, Kind.MR_REMOTE, null, remote).address);
            return c.ok();
        }, desc, descSize, mrPtr);
    }

    @Override
    public int rpma_mr_get_descriptor_size(long mr, long descSize) {
        return invoke("rpma_mr_get_descriptor_size", c -> {
            use(c, mr, Kind.MR_LOCAL, "mr");
            out(c, descSize, "desc_size");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putLong(descSize, 21);
            return c.ok();
        }, mr, descSize);
    }

    @Override
    public int rpma_mr_get_ptr(long mr, long ptr) {
        return getValue("rpma_mr_get_ptr", mr, Kind.MR_LOCAL, "mr", Mr.class, ptr, "ptr",
                (m, at) -> putLong(at, m.ptr));
    }

    @Override
    public int rpma_mr_get_size(long mr, long size) {
        return getValue("rpma_mr_get_size", mr, Kind.MR_LOCAL, "mr", Mr.class, size, "size",
                (m, at) -> putLong(at, m.size));
    }

    @Override
    public int rpma_mr_remote_get_size(long mr, long size) {
        return getValue("rpma_mr_remote_get_size", mr, Kind.MR_REMOTE, "mr", MrRemote.class, size, "size",
                (m, at) -> putLong(at, m.size));
    }

    @Override
    public int rpma_mr_remote_get_flush_type(long mr, long flushType) {
        return getValue("rpma_mr_remote_get_flush_type", mr, Kind.MR_REMOTE, "mr", MrRemote.class, flushType,
                "flush_type", (m, at) -> putInt(at, m.usage & (16 | 32)));
    }

    @Override
    public int rpma_mr_remote_delete(long mrPtr) {
        return deleteSimple("rpma_mr_remote_delete", mrPtr, Kind.MR_REMOTE);
    }

    @Override
    public int rpma_mr_advise(long mr, long offset, long len, int advice, int flags) {
        return invoke("rpma_mr_advise", c -> {
            use(c, mr, Kind.MR_LOCAL, "mr");
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, mr, offset, len, advice, flags);
    }

    @Override
    public int rpma_conn_cfg_new(long cfgPtr) {
        return createSimple("rpma_conn_cfg_new", cfgPtr, Kind.CONN_CFG, ConnCfg::new);
    }

    @Override
    public int rpma_conn_cfg_delete(long cfgPtr) {
        return deleteSimple("rpma_conn_cfg_delete", cfgPtr, Kind.CONN_CFG);
    }

    @Override
    public int rpma_conn_cfg_set_timeout(long cfg, int timeoutMs) {
        return setConnCfg("rpma_conn_cfg_set_timeout", cfg, timeoutMs, (c, v) -> c.timeout = v);
    }

    @Override
    public int rpma_conn_cfg_get_timeout(long cfg, long timeoutMs) {
        return getConnCfg("rpma_conn_cfg_get_timeout", cfg, timeoutMs, c -> c.timeout);
    }

    @Override
    public int rpma_conn_cfg_set_cq_size(long cfg, int cqSize) {
        return setConnCfg("rpma_conn_cfg_set_cq_size", cfg, cqSize, (c, v) -> c.cq = v);
    }

    @Override
    public int rpma_conn_cfg_get_compl_channel(long cfg, long shared) {
        return getValue("rpma_conn_cfg_get_compl_channel", cfg, Kind.CONN_CFG, "cfg", ConnCfg.class, shared, "shared",
                (values, at) -> putByte(at, values.shared ? 1 : 0));
    }

    @Override
    public int rpma_conn_cfg_set_compl_channel(long cfg, byte shared) {
        return invoke("rpma_conn_cfg_set_compl_channel", c -> {
            ConnCfg values = (ConnCfg) use(c, cfg, Kind.CONN_CFG, "cfg").state;
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            values.shared = shared != 0;
            return c.ok();
        }, cfg, shared);
    }

    @Override
    public int rpma_conn_cfg_get_cq_size(long cfg, long cqSize) {
        return getConnCfg("rpma_conn_cfg_get_cq_size", cfg, cqSize, c -> c.cq);
    }

    @Override
    public int rpma_conn_cfg_set_rcq_size(long cfg, int rcqSize) {
        return setConnCfg("rpma_conn_cfg_set_rcq_size", cfg, rcqSize, (c, v) -> c.rcq = v);
    }

    @Override
    public int rpma_conn_cfg_get_rcq_size(long cfg, long rcqSize) {
        return getConnCfg("rpma_conn_cfg_get_rcq_size", cfg, rcqSize, c -> c.rcq);
    }

    @Override
    public int rpma_conn_cfg_set_sq_size(long cfg, int sqSize) {
        return setConnCfg("rpma_conn_cfg_set_sq_size", cfg, sqSize, (c, v) -> c.sq = v);
    }

    @Override
    public int rpma_conn_cfg_get_sq_size(long cfg, long sqSize) {
        return getConnCfg("rpma_conn_cfg_get_sq_size", cfg, sqSize, c -> c.sq);
    }

    @Override
    public int rpma_conn_cfg_set_rq_size(long cfg, int rqSize) {
        return setConnCfg("rpma_conn_cfg_set_rq_size", cfg, rqSize, (c, v) -> c.rq = v);
    }

    @Override
    public int rpma_conn_cfg_get_rq_size(long cfg, long rqSize) {
        return getConnCfg("rpma_conn_cfg_get_rq_size", cfg, rqSize, c -> c.rq);
    }

    @Override
    public int rpma_conn_cfg_set_srq(long cfg, long srq) {
        return invoke("rpma_conn_cfg_set_srq", c -> {
            ConnCfg values = (ConnCfg) use(c, cfg, Kind.CONN_CFG, "cfg").state;
            if (srq != 0) {
                use(c, srq, Kind.SRQ, "srq");
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            values.srq = srq;
            return c.ok();
        }, cfg, srq);
    }

    @Override
    public int rpma_conn_cfg_get_srq(long cfg, long srqPtr) {
        return getValue("rpma_conn_cfg_get_srq", cfg, Kind.CONN_CFG, "cfg", ConnCfg.class, srqPtr, "srq_ptr",
                (values, at) -> putLong(at, values.srq));
    }

    @Override
    public int rpma_conn_get_event_fd(long conn, long fd) {
        return invoke("rpma_conn_get_event_fd", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, fd, "fd");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putInt(fd, connection.eventFd.fd());
            return c.ok();
        }, conn, fd);
    }

    @Override
    public int rpma_conn_next_event(long conn, long event) {
        return invoke("rpma_conn_next_event", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, event, "event");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            Object next = connection.events.poll();
            connection.signal();
            if (next == null) {
                if (this.requireNonBlockingConnectionEventFds && FileDescriptors.isBlocking(connection.eventFd.fd())) {
                    throw violation(c, "no event on a blocking connection event fd: librpma would block in"
                            + " rdma_get_cm_event until the next event (set the fd O_NONBLOCK)");
                }
                return c.fail(RPMA_E_PROVIDER, Errno.EAGAIN);
            }
            if (next instanceof Failure scripted) {
                return c.fail(scripted);
            }
            putInt(event, (Integer) next);
            return c.ok();
        }, conn, event);
    }

    @Override
    public String rpma_utils_conn_event_2str(int connEvent) {
        count("rpma_utils_conn_event_2str");
        return RpmaTexts.eventText(connEvent);
    }

    @Override
    public int rpma_conn_get_private_data(long conn, long pdata) {
        return invoke("rpma_conn_get_private_data", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, pdata, "pdata");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (connection.privateDataMemory == null && connection.privateData.length > 0) {
                connection.privateDataMemory = nativeCopy(connection.privateData);
            }
            writePrivateData(pdata, connection.privateDataMemory, connection.privateData.length);
            return c.ok();
        }, conn, pdata);
    }

    @Override
    public int rpma_conn_apply_remote_peer_cfg(long conn, long pcfg) {
        return invoke("rpma_conn_apply_remote_peer_cfg", c -> {
            FakeConnection connection = connection(c, conn);
            PeerCfg config = (PeerCfg) use(c, pcfg, Kind.PEER_CFG, "pcfg").state;
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            connection.directWriteToPmem = config.directWrite;
            return c.ok();
        }, conn, pcfg);
    }

    @Override
    public int rpma_conn_get_qp_num(long conn, long qpNum) {
        return invoke("rpma_conn_get_qp_num", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, qpNum, "qp_num");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putInt(qpNum, connection.qpNumber);
            return c.ok();
        }, conn, qpNum);
    }

    @Override
    public int rpma_conn_get_cq(long conn, long cqPtr) {
        return invoke("rpma_conn_get_cq", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, cqPtr, "cq_ptr");
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, cqPtr);
            }
            putLong(cqPtr, connection.cq.handle);
            return c.ok();
        }, conn, cqPtr);
    }

    @Override
    public int rpma_conn_get_rcq(long conn, long rcqPtr) {
        return invoke("rpma_conn_get_rcq", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, rcqPtr, "rcq_ptr");
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, rcqPtr);
            }
            putLong(rcqPtr, (connection.rcq != null) ? connection.rcq.handle : 0);
            return c.ok();
        }, conn, rcqPtr);
    }

    @Override
    public int rpma_conn_disconnect(long conn) {
        return invoke("rpma_conn_disconnect", c -> {
            FakeConnection connection = connection(c, conn);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            connection.disconnects++;
            connection.breakQueuePair();
            if (connection.disconnects == 1 && this.closedOnDisconnect) {
                connection.events.add(RpmaConnectionEvent.CLOSED.code());
                connection.signal();
            }
            Loopback.gone(connection);
            return c.ok();
        }, conn);
    }

    @Override
    public int rpma_conn_delete(long connPtr) {
        return invoke("rpma_conn_delete", c -> {
            Handle conn = freeing(c, connPtr, Kind.CONN, "conn_ptr");
            if (conn == null) {
                return c.ok();
            }
            FakeConnection connection = (FakeConnection) conn.state;
            free(c, conn);
            if (this.loopback) {
                Loopback.deleted(connection);
            }
            connection.deletedOn = c.thread.getName();
            closeFds(connection);
            quarantine(connection.privateDataMemory);
            putLong(connPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, connPtr);
    }

    @Override
    public int rpma_conn_req_new(long peer, String addr, String port, long cfg, long reqPtr) {
        return invokeExclusive("rpma_conn_req_new", () -> peer, c -> {
            Handle p = use(c, peer, Kind.PEER, "peer");
            if (addr == null || port == null) {
                throw violation(c, "NULL addr or port");
            }
            ConnCfg config = (cfg != 0) ? ((ConnCfg) use(c, cfg, Kind.CONN_CFG, "cfg").state).copy() : new ConnCfg();
            out(c, reqPtr, "req_ptr");
            Failure failure = orDeviceGone(injected(c), p);
            if (failure != null) {
                return failOut(c, failure, reqPtr);
            }
            FakeRequest request = new FakeRequest(this, null, new byte[0], addr, port);
            request.peerDevice = (String) p.state;
            request.config = config;
            request.creator = c.thread;
            request.state = FakeRequest.State.PENDING;
            request.handle = create(c, Kind.CONN_REQ, p, request).address;
            this.requests.add(request);
            putLong(reqPtr, request.handle);
            return c.ok();
        }, peer, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_delete(long reqPtr) {
        return invokeExclusive("rpma_conn_req_delete", () -> requestKey(derefOrZero(reqPtr)), c -> {
            Handle req = freeing(c, reqPtr, Kind.CONN_REQ, "req_ptr");
            if (req == null) {
                return c.ok();
            }
            FakeRequest request = (FakeRequest) req.state;
            checkRequestOwner(c, request);
            free(c, req);
            if (request.cmIdState == FakeRequest.CmId.WITH_REQUEST) {
                // librpma's rpma_conn_req_delete rejects the request but never destroys its CM id
                request.cmIdState = FakeRequest.CmId.LEFT_BEHIND;
            }
            request.state = FakeRequest.State.DELETED;
            Loopback.refused(request);
            request.consumedOn = c.thread.getName();
            quarantine(request.privateDataMemory);
            putLong(reqPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, reqPtr);
    }

    /**
     * Marks the accept as in progress on its request's endpoint for the whole call (lingering for
     * {@link #notThreadSafeDwell}), so that an {@code rpma_ep_next_conn_req} on that endpoint meanwhile,
     * or this call while one is inside it, is a violation: librpma moves an accepted request's CM id
     * from the endpoint's event channel to the connection's only inside this call, and a
     * {@code rpma_ep_next_conn_req} in that window can read the connection's ESTABLISHED and drop it.
     */
    @Override
    public int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr) {
        FakeEndpoint endpoint = endpointOfRequestAt(reqPtr);
        if (endpoint == null) {
            return connect(reqPtr, pdata, connPtr);
        }
        endpoint.acceptsInProgress.incrementAndGet();
        try {
            dwell();
            Thread reading = endpoint.nextConnReqThread;
            if (reading != null) {
                throw violationOutsideBody("rpma_conn_req_connect", new long[] { reqPtr, pdata, connPtr },
                        "called while thread '" + reading.getName() + "' is inside rpma_ep_next_conn_req on the"
                        + " request's endpoint: that call can read this connection's ESTABLISHED from the endpoint's"
                        + " channel and drop it");
            }
            return connect(reqPtr, pdata, connPtr);
        }
        finally {
            endpoint.acceptsInProgress.decrementAndGet();
        }
    }

    /** The endpoint listening with handle {@code ep} (the newest, as handles may be reused), or {@code null}. */
    private FakeEndpoint listeningAt(long ep) {
        FakeEndpoint[] listening = this.listening;
        for (int i = listening.length - 1; i >= 0; i--) {
            if (listening[i].handle == ep) {
                return listening[i];
            }
        }
        return null;
    }

    /** The endpoint of the server-side request {@code *reqPtr} names, or {@code null}. */
    private FakeEndpoint endpointOfRequestAt(long reqPtr) {
        synchronized (this.lock) {
            Handle req = this.handles.get(derefOrZero(reqPtr));
            return (req != null && req.state instanceof FakeRequest request) ? request.endpoint() : null;
        }
    }

    private int connect(long reqPtr, long pdata, long connPtr) {
        return invoke("rpma_conn_req_connect", c -> {
            out(c, reqPtr, "req_ptr");
            Handle req = use(c, new Pointer(reqPtr).getLong(0), Kind.CONN_REQ, "*req_ptr");
            FakeRequest request = (FakeRequest) req.state;
            out(c, connPtr, "conn_ptr");
            byte[] sent = null;
            if (pdata != 0) {
                long data = new Pointer(pdata).getLong(0);
                int length = Byte.toUnsignedInt(new Pointer(pdata).getByte(8));
                if (data == 0 || length == 0) {
                    throw violation(c, "pdata with NULL ptr or len 0: librpma rejects it with RPMA_E_INVAL and deletes"
                            + " the request; pass NULL pdata for no private data");
                }
                sent = new Pointer(data).getByteArray(0, length);
            }
            Failure failure = request.connectFailure;
            Failure injectedFailure = orDeviceGone(injected(c), req);
            if (injectedFailure != null) {
                failure = injectedFailure;
            }
            // consumed whatever the outcome
            free(c, req);
            request.connectPrivateData = sent;
            request.consumedOn = c.thread.getName();
            quarantine(request.privateDataMemory);
            putLong(reqPtr, 0);
            if (failure != null) {
                Loopback.refused(request);
                request.state = FakeRequest.State.CONNECT_FAILED;
                if (request.cmIdState == FakeRequest.CmId.WITH_REQUEST) {
                    // librpma frees a request whose accept failed without destroying its CM id
                    request.cmIdState = FakeRequest.CmId.LEFT_BEHIND;
                }
                return failOut(c, failure, connPtr);
            }
            request.state = FakeRequest.State.CONNECTED;
            if (request.cmIdState == FakeRequest.CmId.WITH_REQUEST) {
                request.cmIdState = FakeRequest.CmId.WITH_CONNECTION;
            }
            FakeConnection connection = new FakeConnection(this, request, this.nextQpNumber++);
            connection.config = request.config;
            connection.privateData = request.privateData();
            Handle conn = create(c, Kind.CONN, req.parent, connection);
            connection.handle = conn.address;
            connection.eventFd = new FakeEventFd();
            connection.cq = completionQueue(c, conn, false);
            connection.cq.capacity = request.config.cq;
            connection.cq.owner = connection;
            if (request.config.srq != 0) {
                connection.srq = (FakeSharedReceiveQueue) use(c, request.config.srq, Kind.SRQ, "the request's srq").state;
            }
            // librpma creates no rcq of the connection's own when the SRQ has one
            boolean srqRcq = connection.srq != null && connection.srq.rcq != null;
            connection.rcq = (request.config.rcq > 0 && !srqRcq) ? completionQueue(c, conn, true) : null;
            if (connection.rcq != null) {
                connection.rcq.capacity = request.config.rcq;
            }
            if (request.config.shared) {
                connection.completionFd = new FakeEventFd();
                connection.cq.sharedChannelOf = connection;
                if (connection.rcq != null) {
                    connection.rcq.sharedChannelOf = connection;
                }
            }
            for (FakeConnection.PostedReceive receive : request.dataReceives) {
                connection.receivePosted(receive);
            }
            if (this.loopback && !request.isServerSide()) {
                Loopback.dial(this, request, connection, sent);
            }
            else if (this.establishOnConnect) {
                connection.events.add(RpmaConnectionEvent.ESTABLISHED.code());
            }
            connection.events.addAll(request.eventsAfterConnect);
            connection.signal();
            request.connection = connection;
            this.connections.add(connection);
            if (request.dialer != null) {
                Loopback.accepted(request, connection, sent);
            }
            putLong(connPtr, conn.address);
            return c.ok();
        }, reqPtr, pdata, connPtr);
    }

    @Override
    public int rpma_conn_get_compl_fd(long conn, long fd) {
        return invoke("rpma_conn_get_compl_fd", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, fd, "fd");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (!connection.config.shared) {
                return c.fail(RpmaError.NOT_SHARED_CHNL.code(), 0);
            }
            putInt(fd, connection.completionFd.fd());
            return c.ok();
        }, conn, fd);
    }

    @Override
    public int rpma_conn_wait(long conn, int flags, long cq, long isRcq) {
        return invoke("rpma_conn_wait", c -> {
            FakeConnection connection = connection(c, conn);
            out(c, cq, "cq");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (!connection.config.shared) {
                return c.fail(RpmaError.NOT_SHARED_CHNL.code(), 0);
            }
            FakeCompletionQueue ready = (connection.cq.events > 0) ? connection.cq
                    : (connection.rcq != null && connection.rcq.events > 0) ? connection.rcq : null;
            if (ready == null) {
                if (FileDescriptors.isBlocking(connection.completionFd.fd())) {
                    throw violation(c, "no completion event on a blocking completion channel: librpma would block"
                            + " until the next one");
                }
                return c.fail(RpmaError.NO_COMPLETION.code(), 0);
            }
            ready.takeEventAndRearm();
            putLong(cq, ready.handle);
            if (isRcq != 0) {
                putByte(isRcq, ready.receive ? 1 : 0);
            }
            return c.ok();
        }, conn, flags, cq, isRcq);
    }

    @Override
    public int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext) {
        return invoke("rpma_conn_req_recv", c -> {
            FakeRequest request = (FakeRequest) use(c, req, Kind.CONN_REQ, "req").state;
            Mr mr = receiveRegion(c, dst, offset, len);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (request.config.srq != 0) {
                // the queue pair takes its receives from the SRQ: ibv_post_recv refuses (rxe: EINVAL)
                return c.fail(RPMA_E_PROVIDER, Errno.EINVAL);
            }
            if (request.dataReceives.size() >= request.config.rq) {
                return c.fail(RPMA_E_PROVIDER, Errno.ENOMEM);
            }
            request.dataReceives.add(new FakeConnection.PostedReceive(mr.ptr + offset, len, opContext));
            request.receives.add(new PostedOperation("rpma_conn_req_recv", dst, offset, len, 0, 0, 0, 0, opContext,
                    c.thread.getName()));
            return c.ok();
        }, req, dst, offset, len, opContext);
    }

    @Override
    public int rpma_ep_listen(long peer, String addr, String port, long epPtr) {
        return invokeExclusive("rpma_ep_listen", () -> peer, c -> {
            Handle p = use(c, peer, Kind.PEER, "peer");
            if (addr == null || port == null) {
                throw violation(c, "NULL addr or port");
            }
            out(c, epPtr, "ep_ptr");
            Failure failure = orDeviceGone(injected(c), p);
            if (failure != null) {
                return failOut(c, failure, epPtr);
            }
            if (this.loopback && Loopback.listeningOn(this, Integer.parseInt(port)) != null) {
                return failOut(c, new Failure(RPMA_E_PROVIDER, Errno.EADDRINUSE), epPtr);
            }
            String key = addr + ":" + port;
            FakeEndpoint endpoint = this.endpointsByAddress.get(key);
            if (endpoint == null || endpoint.handle != 0) {
                endpoint = new FakeEndpoint(this, addr, Integer.parseInt(port));
                this.endpointsByAddress.put(key, endpoint);
            }
            Handle ep = create(c, Kind.EP, p, endpoint);
            endpoint.handle = ep.address;
            endpoint.peer = p.address;
            endpoint.listenedOn = c.thread.getName();
            endpoint.fd = new FakeEventFd();
            endpoint.signal();
            this.endpoints.add(endpoint);
            this.listening = this.endpoints.toArray(new FakeEndpoint[0]);
            putLong(epPtr, ep.address);
            return c.ok();
        }, peer, epPtr);
    }

    // ---------------------------------------------------------------- the CM ids librpma leaves behind

    /**
     * Whether requests are laid out as librpma 1.2/1.3 lay them out, so that {@link #cmIdOf} finds
     * their CM ids (default); {@code false} models another librpma, whose ids the binding must leave alone.
     */
    public FakeLibRpma librpmaLayout(boolean holds) {
        this.librpmaLayout = holds;
        return this;
    }

    /** Server-side CM ids left alive by a reject or a failed accept, on endpoints still listening. */
    public int cmIdsLeftBehind() {
        synchronized (this.lock) {
            return (int) this.requests.stream().filter((r) -> r.cmIdState == FakeRequest.CmId.LEFT_BEHIND).count();
        }
    }

    @Override
    public long cmIdOf(long request, long peer, long ibvContext, long privateData, int privateDataLength) {
        synchronized (this.lock) {
            Handle req = this.handles.get(request);
            if (req == null || !(req.state instanceof FakeRequest r) || !r.isServerSide()) {
                throw violationOutsideBody("cmIdOf", new long[] { request }, "not a live server-side request: the"
                        + " binding may read a request's layout only while librpma has not freed it");
            }
            long expectedData = (r.privateDataMemory != null) ? Pointer.nativeValue(r.privateDataMemory) : 0;
            if (peer != r.endpoint().peer || privateData != expectedData || privateDataLength != r.privateData().length) {
                throw violationOutsideBody("cmIdOf", new long[] { request, peer, ibvContext, privateData, privateDataLength },
                        "checked against the wrong peer or private data: the layout check would always fail");
            }
            return this.librpmaLayout ? r.cmId : 0;
        }
    }

    @Override
    public int destroyRejected(long cmId) {
        return destroyLeftBehind("destroyRejected", cmId, FakeRequest.State.DELETED);
    }

    @Override
    public int destroyAfterFailedAccept(long cmId) {
        return destroyLeftBehind("destroyAfterFailedAccept", cmId, FakeRequest.State.CONNECT_FAILED);
    }

    private int destroyLeftBehind(String function, long cmId, FakeRequest.State after) {
        synchronized (this.lock) {
            FakeRequest request = this.requests.stream().filter((r) -> r.cmId == cmId && cmId != 0).findFirst().orElse(null);
            if (request == null || request.cmIdState != FakeRequest.CmId.LEFT_BEHIND || request.state != after) {
                throw violationOutsideBody(function, new long[] { cmId }, "rdma_destroy_id of a CM id that is "
                        + ((request == null) ? "unknown" : request.cmIdState + " (request " + request.state + ")")
                        + ": only an id librpma left behind may be destroyed, once, after librpma is done with it");
            }
            request.cmIdState = FakeRequest.CmId.DESTROYED;
            this.lock.notifyAll();
            return 0;
        }
    }

    @Override
    public int rpma_ep_shutdown(long epPtr) {
        return invokeExclusive("rpma_ep_shutdown", () -> derefOrZero(epPtr), c -> {
            Handle ep = freeing(c, epPtr, Kind.EP, "ep_ptr");
            if (ep == null) {
                return c.ok();
            }
            FakeEndpoint endpoint = (FakeEndpoint) ep.state;
            checkEndpointOwner(c, endpoint, false);
            free(c, ep);
            endpoint.shutDownOn = c.thread.getName();
            endpoint.fd.close();
            Loopback.shutDown(endpoint);
            for (FakeRequest request : endpoint.obtained) {
                if (request.cmIdState == FakeRequest.CmId.LEFT_BEHIND) {
                    request.cmIdState = FakeRequest.CmId.RELEASED_WITH_ENDPOINT;
                }
            }
            putLong(epPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, epPtr);
    }

    @Override
    public int rpma_ep_get_fd(long ep, long fd) {
        return getValue("rpma_ep_get_fd", ep, Kind.EP, "ep", FakeEndpoint.class, fd, "fd",
                (endpoint, at) -> putInt(at, endpoint.fd.fd()));
    }

    /**
     * Marked on its endpoint for the whole call, for {@link #rpma_conn_req_connect}'s check; found
     * without the lock or an allocation, as the dispatch benchmark's bare loop runs through this call.
     */
    @Override
    public int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr) {
        FakeEndpoint endpoint = listeningAt(ep);
        if (endpoint == null) {
            return nextConnReq(ep, cfg, reqPtr);
        }
        endpoint.nextConnReqThread = Thread.currentThread();
        try {
            return nextConnReq(ep, cfg, reqPtr);
        }
        finally {
            endpoint.nextConnReqThread = null;
        }
    }

    private int nextConnReq(long ep, long cfg, long reqPtr) {
        return invokeExclusive("rpma_ep_next_conn_req", () -> ep, c -> {
            Handle e = use(c, ep, Kind.EP, "ep");
            FakeEndpoint endpoint = (FakeEndpoint) e.state;
            checkEndpointOwner(c, endpoint, true);
            if (endpoint.acceptsInProgress.get() > 0) {
                throw violation(c, "called while another thread is inside rpma_conn_req_connect of a request from"
                        + " this endpoint: librpma moves the accepted request's CM id to the connection's event channel"
                        + " only inside that call, so this one can read the connection's ESTABLISHED and drop it");
            }
            ConnCfg config = (cfg != 0) ? ((ConnCfg) use(c, cfg, Kind.CONN_CFG, "cfg").state).copy() : new ConnCfg();
            out(c, reqPtr, "req_ptr");
            if (config.srq != 0) {
                FakeSharedReceiveQueue srq = (FakeSharedReceiveQueue) use(c, config.srq, Kind.SRQ, "cfg's srq").state;
                if (config.shared && srq.rcq != null) {
                    // librpma: "connection shared completion channel cannot be used when the shared RQ has its own RCQ"
                    return failOut(c, new Failure(RPMA_E_INVAL, 0), reqPtr);
                }
            }
            if (this.requireNonBlockingEndpointFd && FileDescriptors.isBlocking(endpoint.fd.fd())) {
                throw violation(c, "the endpoint's fd is blocking: librpma would block in rpma_ep_next_conn_req"
                        + " (set it O_NONBLOCK)");
            }
            Failure failure = injected(c);
            if (failure == null) {
                failure = endpoint.failingEveryLook;
            }
            if (failure != null) {
                return failOut(c, failure, reqPtr);
            }
            Object next = endpoint.script.poll();
            endpoint.signal();
            if (next == null) {
                return failOut(c, new Failure(RPMA_E_PROVIDER, Errno.EAGAIN), reqPtr);
            }
            if (next instanceof Failure scripted) {
                return failOut(c, scripted, reqPtr);
            }
            FakeRequest request = (FakeRequest) next;
            request.config = config;
            request.state = FakeRequest.State.PENDING;
            request.handle = create(c, Kind.CONN_REQ, e.parent, request).address;
            if (request.privateData().length > 0) {
                request.privateDataMemory = nativeCopy(request.privateData());
            }
            request.cmId = 0x7c00_0000_0000L + 0x40L * this.requests.size();
            request.cmIdState = FakeRequest.CmId.WITH_REQUEST;
            endpoint.obtained.add(request);
            this.requests.add(request);
            putLong(reqPtr, request.handle);
            return c.ok();
        }, ep, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_get_private_data(long req, long pdata) {
        return invoke("rpma_conn_req_get_private_data", c -> {
            FakeRequest request = (FakeRequest) use(c, req, Kind.CONN_REQ, "req").state;
            out(c, pdata, "pdata");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            writePrivateData(pdata, request.privateDataMemory, request.privateData().length);
            return c.ok();
        }, req, pdata);
    }

    @Override
    public int rpma_srq_cfg_new(long cfgPtr) {
        return createSimple("rpma_srq_cfg_new", cfgPtr, Kind.SRQ_CFG, SrqCfg::new);
    }

    @Override
    public int rpma_srq_cfg_delete(long cfgPtr) {
        return deleteSimple("rpma_srq_cfg_delete", cfgPtr, Kind.SRQ_CFG);
    }

    @Override
    public int rpma_srq_cfg_set_rq_size(long cfg, int rqSize) {
        return setCfg("rpma_srq_cfg_set_rq_size", cfg, Kind.SRQ_CFG, SrqCfg.class, rqSize, (v, size) -> v.rq = size);
    }

    @Override
    public int rpma_srq_cfg_get_rq_size(long cfg, long rqSize) {
        return getCfg("rpma_srq_cfg_get_rq_size", cfg, Kind.SRQ_CFG, SrqCfg.class, rqSize, "rq_size", v -> v.rq);
    }

    @Override
    public int rpma_srq_cfg_set_rcq_size(long cfg, int rcqSize) {
        return setCfg("rpma_srq_cfg_set_rcq_size", cfg, Kind.SRQ_CFG, SrqCfg.class, rcqSize, (v, size) -> v.rcq = size);
    }

    @Override
    public int rpma_srq_cfg_get_rcq_size(long cfg, long rcqSize) {
        return getCfg("rpma_srq_cfg_get_rcq_size", cfg, Kind.SRQ_CFG, SrqCfg.class, rcqSize, "rcq_size", v -> v.rcq);
    }

    @Override
    public int rpma_srq_new(long peer, long cfg, long srqPtr) {
        return invokeExclusive("rpma_srq_new", () -> peer, c -> {
            Handle p = use(c, peer, Kind.PEER, "peer");
            SrqCfg config = (cfg != 0) ? (SrqCfg) use(c, cfg, Kind.SRQ_CFG, "cfg").state : new SrqCfg();
            out(c, srqPtr, "srq_ptr");
            Failure failure = orDeviceGone(injected(c), p);
            if (failure != null) {
                return failOut(c, failure, srqPtr);
            }
            FakeSharedReceiveQueue srq = new FakeSharedReceiveQueue(this, config.rq);
            Handle handle = create(c, Kind.SRQ, p, srq);
            srq.handle = handle.address;
            srq.rcq = (config.rcq > 0) ? completionQueue(c, handle, true) : null;
            if (srq.rcq != null) {
                srq.rcq.capacity = config.rcq;
            }
            this.sharedReceiveQueues.add(srq);
            putLong(srqPtr, handle.address);
            return c.ok();
        }, peer, cfg, srqPtr);
    }

    @Override
    public int rpma_srq_delete(long srqPtr) {
        return invokeExclusive("rpma_srq_delete", () -> parentOf(derefOrZero(srqPtr)), c -> {
            Handle srq = freeing(c, srqPtr, Kind.SRQ, "srq_ptr");
            if (srq == null) {
                return c.ok();
            }
            FakeSharedReceiveQueue state = (FakeSharedReceiveQueue) srq.state;
            List<Handle> users = liveHandles().stream()
                .filter((h) -> (h.state instanceof FakeRequest r && r.config != null && r.config.srq == srq.address)
                        || (h.state instanceof FakeConnection conn && conn.srq == state))
                .toList();
            if (!users.isEmpty()) {
                throw violation(c, "deleted while " + users.size() + " request(s) or connection(s) made with it are"
                        + " live: ibv_destroy_srq fails with EBUSY and the queue leaks: " + users);
            }
            free(c, srq);
            if (state.rcq != null) {
                state.rcq.fd.close();
            }
            putLong(srqPtr, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, srqPtr);
    }

    @Override
    public int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext) {
        return invoke("rpma_srq_recv", c -> {
            FakeSharedReceiveQueue queue = (FakeSharedReceiveQueue) use(c, srq, Kind.SRQ, "srq").state;
            Mr mr = receiveRegion(c, dst, offset, len);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (queue.receives.size() >= queue.capacity) {
                return c.fail(RPMA_E_PROVIDER, Errno.ENOMEM);
            }
            queue.receivePosted(new FakeConnection.PostedReceive(mr.ptr + offset, len, opContext));
            this.lock.notifyAll();
            return c.ok();
        }, srq, dst, offset, len, opContext);
    }

    @Override
    public int rpma_srq_get_rcq(long srq, long rcqPtr) {
        return invoke("rpma_srq_get_rcq", c -> {
            FakeSharedReceiveQueue state = (FakeSharedReceiveQueue) use(c, srq, Kind.SRQ, "srq").state;
            out(c, rcqPtr, "rcq_ptr");
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, rcqPtr);
            }
            putLong(rcqPtr, (state.rcq != null) ? state.rcq.handle : 0);
            return c.ok();
        }, srq, rcqPtr);
    }

    @Override
    public int rpma_read(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags,
            long opContext) {
        return post("rpma_read", conn, dst, dstOffset, src, srcOffset, len, flags, 0, opContext);
    }

    @Override
    public int rpma_write(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags,
            long opContext) {
        return post("rpma_write", conn, src, srcOffset, dst, dstOffset, len, flags, 0, opContext);
    }

    @Override
    public int rpma_write_with_imm(long conn, long dst, long dstOffset, long src, long srcOffset, long len, int flags,
            int imm, long opContext) {
        return post("rpma_write_with_imm", conn, src, srcOffset, dst, dstOffset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_atomic_write(long conn, long dst, long dstOffset, long srcPtr, int flags, long opContext) {
        return invoke("rpma_atomic_write", c -> {
            FakeConnection connection = connection(c, conn);
            use(c, dst, Kind.MR_REMOTE, "dst");
            out(c, srcPtr, "src");
            if (flags == 0 || dstOffset % 8 != 0) {
                // librpma: RPMA_E_INVAL for no completion flags or dst_offset not a multiple of RPMA_ATOMIC_WRITE_ALIGNMENT
                return c.fail(RPMA_E_INVAL, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (this.loopback) {
                byte[] value = new Pointer(srcPtr).getByteArray(0, 8);
                return loopbackPosted(c, Loopback.oneSided(this, connection, "rpma_atomic_write", null, 0, remoteOf(dst),
                        dstOffset, 8, flags, opContext, value));
            }
            connection.posted.add(new PostedOperation("rpma_atomic_write", 0, 0, 8, dst, dstOffset, flags,
                    new Pointer(srcPtr).getLong(0), opContext, c.thread.getName()));
            return c.ok();
        }, conn, dst, dstOffset, srcPtr, flags, opContext);
    }

    @Override
    public int rpma_flush(long conn, long dst, long dstOffset, long len, int type, int flags, long opContext) {
        return invoke("rpma_flush", c -> {
            FakeConnection connection = connection(c, conn);
            MrRemote target = (MrRemote) use(c, dst, Kind.MR_REMOTE, "dst").state;
            if (flags == 0) {
                return c.fail(RPMA_E_INVAL, 0);
            }
            // librpma's checks, in its order: the connection's peer configuration, then the region's flush types
            if (type == FLUSH_TYPE_PERSISTENT && !connection.directWriteToPmem) {
                return c.fail(RPMA_E_NOSUPP, 0);
            }
            int needs = (type == FLUSH_TYPE_PERSISTENT) ? USAGE_FLUSH_PERSISTENT : USAGE_FLUSH_VISIBILITY;
            if ((target.usage() & needs) == 0) {
                return c.fail(RPMA_E_NOSUPP, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (this.loopback) {
                return loopbackPosted(c, Loopback.oneSided(this, connection, "rpma_flush", null, 0, remoteOf(dst),
                        dstOffset, len, flags, opContext, null));
            }
            connection.posted.add(new PostedOperation("rpma_flush", 0, 0, len, dst, dstOffset, flags, type, opContext,
                    c.thread.getName()));
            return c.ok();
        }, conn, dst, dstOffset, len, type, flags, opContext);
    }

    @Override
    public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
        return send("rpma_send", conn, src, offset, len, flags, 0, opContext);
    }

    @Override
    public int rpma_send_with_imm(long conn, long src, long offset, long len, int flags, int imm, long opContext) {
        return send("rpma_send_with_imm", conn, src, offset, len, flags, imm, opContext);
    }

    /**
     * A send: the bytes are read from the registered memory now and reach the other side's
     * {@link FakeConnection#sent()}. Checks what the device would fault on (a region without SEND usage,
     * a range outside it) as violations, and a full send queue as librpma reports it.
     */
    private int send(String function, long conn, long src, long offset, long len, int flags, int imm, long opContext) {
        return invoke(function, c -> {
            FakeConnection connection = connection(c, conn);
            Mr mr = (Mr) use(c, src, Kind.MR_LOCAL, "src").state;
            if ((mr.usage & USAGE_SEND) == 0) {
                throw violation(c, "the source region was not registered with RPMA_MR_USAGE_SEND");
            }
            checkRange(c, mr, offset, len);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (connection.sendSlotsInUse >= connection.config.sq) {
                return c.fail(RPMA_E_PROVIDER, Errno.ENOMEM);
            }
            if (!this.loopback) {
                connection.posted.add(new PostedOperation(function, src, offset, len, 0, 0, flags,
                        Integer.toUnsignedLong(imm), opContext, c.thread.getName()));
            }
            if (this.loopback && Loopback.failInjected(connection, opContext)) {
                return c.ok();
            }
            byte[] bytes = new Pointer(mr.ptr).getByteArray(offset, (int) len);
            connection.sendPosted(bytes, opContext, (flags & COMPLETION_ALWAYS) == COMPLETION_ALWAYS, imm,
                    function.equals("rpma_send_with_imm"));
            return c.ok();
        }, conn, src, offset, len, flags, imm, opContext);
    }

    @Override
    public int rpma_recv(long conn, long dst, long offset, long len, long opContext) {
        return invoke("rpma_recv", c -> {
            FakeConnection connection = connection(c, conn);
            Mr mr = receiveRegion(c, dst, offset, len);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (connection.srq != null) {
                return c.fail(RPMA_E_PROVIDER, Errno.EINVAL);
            }
            if (connection.receives.size() >= connection.config.rq) {
                return c.fail(RPMA_E_PROVIDER, Errno.ENOMEM);
            }
            if (!this.loopback) {
                connection.posted.add(new PostedOperation("rpma_recv", dst, offset, len, 0, 0, 0, 0, opContext,
                        c.thread.getName()));
            }
            connection.receivePosted(new FakeConnection.PostedReceive(mr.ptr + offset, len, opContext));
            return c.ok();
        }, conn, dst, offset, len, opContext);
    }

    /** The region a receive writes into: registered with RECV usage, the range inside it. */
    private Mr receiveRegion(Call call, long dst, long offset, long len) {
        Mr mr = (Mr) use(call, dst, Kind.MR_LOCAL, "dst").state;
        if ((mr.usage & USAGE_RECV) == 0) {
            throw violation(call, "the destination region was not registered with RPMA_MR_USAGE_RECV");
        }
        checkRange(call, mr, offset, len);
        return mr;
    }

    private void checkRange(Call call, Mr mr, long offset, long len) {
        if (offset < 0 || len < 0 || offset + len > mr.size) {
            throw violation(call, "offset " + offset + " + length " + len + " is outside the region of " + mr.size
                    + " bytes (a local protection error on a device)");
        }
    }

    private int loopbackPosted(Call call, int errno) {
        return (errno == 0) ? call.ok() : call.fail(RPMA_E_PROVIDER, errno);
    }

    /** Under the lock: the connections made so far, deleted ones included. */
    List<FakeConnection> allConnections() {
        return this.connections;
    }

    /**
     * Loopback fault: the next client request for {@code port} is rejected before any endpoint sees it
     * (the client gets {@code REJECTED}); several calls queue several.
     */
    public FakeLibRpma rejectNext(int port) {
        return dialFault(port, Loopback.REJECT);
    }

    /** Loopback fault: the next client request for {@code port} ends in {@code UNREACHABLE}. */
    public FakeLibRpma unreachableNext(int port) {
        return dialFault(port, Loopback.UNREACHABLE);
    }

    private FakeLibRpma dialFault(int port, int fault) {
        if (!this.loopback) {
            throw new IllegalStateException("Only a loopback (FakeLibRpma.loopback()) dials: script the request instead");
        }
        synchronized (this.lock) {
            this.dialFaults.computeIfAbsent(port, p -> new ArrayDeque<>()).add(fault);
        }
        return this;
    }

    /** Under the lock: the remote region a descriptor-made handle names. */
    private MrRemote remoteOf(long remote) {
        return (MrRemote) this.handles.get(remote).state;
    }

    /**
     * Under the lock, in a loopback: the live local region (and its peer's handle) that a remote
     * region's rkey names, or {@code null} once deregistered.
     */
    Handle regionByKey(int rkey) {
        return this.regionsByKey.get(rkey);
    }

    /** Under the lock: the peer a connection belongs to. */
    long peerOf(FakeConnection connection) {
        return parentOf(connection.handle);
    }

    /** Under the lock: the endpoints listening now, newest last. */
    List<FakeEndpoint> listeningEndpoints() {
        return this.endpoints;
    }

    /** Under the lock, in a loopback: a queue pair in the error state takes its peer's with it. */
    void queuePairBroke(FakeConnection connection) {
        if (this.loopback && connection.peer != null) {
            connection.peer.breakQueuePair();
        }
    }

    /** In a loopback: pumps {@code connection}'s sends again after {@code nanos}. */
    void pumpLater(FakeConnection connection, long nanos) {
        if (this.timer == null) {
            this.timer = java.util.concurrent.Executors.newSingleThreadScheduledExecutor(runnable -> {
                Thread thread = new Thread(runnable, "rpma-loopback-timer");
                thread.setDaemon(true);
                return thread;
            });
        }
        this.timer.schedule(() -> {
            synchronized (this.lock) {
                connection.pumpScheduled = false;
                connection.pump();
                this.lock.notifyAll();
            }
        }, nanos, TimeUnit.NANOSECONDS);
    }

    /** Under the lock: more completions than the queue holds; the device would overrun it. */
    void recordOverrun(FakeCompletionQueue queue) {
        this.violations.add(new AssertionError("completion queue overrun: " + queue + " holds at most "
                + queue.capacity + "; size the queues for every operation that completes on them"));
    }

    @Override
    public int rpma_cq_get_fd(long cq, long fd) {
        return invoke("rpma_cq_get_fd", c -> {
            FakeCompletionQueue queue = (FakeCompletionQueue) use(c, cq, Kind.CQ, "cq").state;
            out(c, fd, "fd");
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            // a queue on a shared channel has that channel's fd, as in librpma
            putInt(fd, (queue.sharedChannelOf != null) ? queue.sharedChannelOf.completionFd.fd() : queue.fd.fd());
            return c.ok();
        }, cq, fd);
    }

    @Override
    public int rpma_cq_wait(long cq) {
        return invoke("rpma_cq_wait", c -> {
            FakeCompletionQueue queue = (FakeCompletionQueue) use(c, cq, Kind.CQ, "cq").state;
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (queue.sharedChannelOf != null) {
                return c.fail(RpmaError.SHARED_CHANNEL.code(), 0);
            }
            if (queue.events == 0) {
                if (FileDescriptors.isBlocking(queue.fd.fd())) {
                    throw violation(c, "no completion event on a blocking completion channel: librpma would block"
                            + " until the next completion");
                }
                return c.fail(RpmaError.NO_COMPLETION.code(), 0);
            }
            queue.takeEventAndRearm();
            return c.ok();
        }, cq);
    }

    @Override
    public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
        return invoke("rpma_cq_get_wc", c -> {
            FakeCompletionQueue queue = (FakeCompletionQueue) use(c, cq, Kind.CQ, "cq").state;
            out(c, wc, "wc");
            if (numEntries < 1 || (numEntries > 1 && numEntriesGot == 0)) {
                return c.fail(RPMA_E_INVAL, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (queue.completions.isEmpty()) {
                return c.fail(RpmaError.NO_COMPLETION.code(), 0);
            }
            int got = 0;
            Pointer out = new Pointer(wc);
            while (got < numEntries && !queue.completions.isEmpty()) {
                FakeCompletionQueue.Completion completion = queue.completions.poll();
                long base = (long) got * 48;
                out.setMemory(base, 48, (byte) 0);
                out.setLong(base, completion.wrId());
                out.setInt(base + 8, completion.status());
                out.setInt(base + 12, completion.opcode());
                out.setInt(base + 16, completion.vendorError());
                out.setInt(base + 20, completion.byteLength());
                out.setInt(base + 24, completion.immediateData());
                out.setInt(base + 28, completion.qpNumber());
                out.setInt(base + 32, completion.sourceQp());
                out.setInt(base + 36, completion.flags());
                queue.taken(completion);
                got++;
            }
            if (numEntriesGot != 0) {
                putInt(numEntriesGot, got);
            }
            return c.ok();
        }, cq, numEntries, wc, numEntriesGot);
    }

    @Override
    public String rpma_err_2str(int ret) {
        count("rpma_err_2str");
        return RpmaTexts.errorText(ret);
    }

    @Override
    public int rpma_log_set_threshold(int threshold, int level) {
        return invoke("rpma_log_set_threshold", c -> {
            if (threshold < 0 || threshold > 1 || level < -1 || level > 5) {
                return c.fail(RPMA_E_INVAL, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            this.thresholds[threshold] = level;
            return c.ok();
        }, threshold, level);
    }

    @Override
    public int rpma_log_get_threshold(int threshold, long level) {
        return invoke("rpma_log_get_threshold", c -> {
            out(c, level, "level");
            if (threshold < 0 || threshold > 1) {
                return c.fail(RPMA_E_INVAL, 0);
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            putInt(level, this.thresholds[threshold]);
            return c.ok();
        }, threshold, level);
    }

    @Override
    public int rpma_log_set_function(long logFunction) {
        return invoke("rpma_log_set_function", c -> {
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            this.logFunction = logFunction;
            return c.ok();
        }, logFunction);
    }

    // ---------------------------------------------------------------- plumbing

    private void count(String function) {
        this.counters.computeIfAbsent(function, f -> new AtomicInteger()).incrementAndGet();
    }

    private int invoke(String function, Body body, long... args) {
        return invokeExclusive(function, null, body, args);
    }

    /**
     * Runs one call under the lock. For a not-thread-safe call, {@code key} names the endpoint or
     * peer it works on; the call is marked as inside it from before taking the lock until after
     * releasing it, so another thread entering a not-thread-safe call on the same object meanwhile
     * is caught.
     */
    private int invokeExclusive(String function, LongSupplier key, Body body, long... args) {
        count(function);
        Thread thread = Thread.currentThread();
        long exclusive = 0;
        if (key != null) {
            synchronized (this.lock) {
                exclusive = key.getAsLong();
            }
            if (exclusive != 0) {
                Thread other = this.inside.putIfAbsent(exclusive, thread);
                if (other != null) {
                    long object = exclusive;
                    exclusive = 0;
                    throw violationOutsideBody(function, args, "called while thread '" + other.getName() + "' is"
                            + " inside a not-thread-safe librpma call on the same object (0x" + Long.toHexString(object)
                            + "): librpma's THREAD_SAFETY rules forbid this");
                }
                dwell();
            }
        }
        try {
            ConcurrentLinkedQueue<FakeStall> held = this.stalls.get(function);
            FakeStall stall = (held != null) ? held.poll() : null;
            if (stall != null) {
                stall.hold();
            }
            synchronized (this.lock) {
                Call call = new Call(function, thread, args);
                int rc;
                try {
                    rc = body.run(call);
                }
                catch (AssertionError violation) {
                    log(call, 0, true);
                    this.lock.notifyAll();
                    throw violation;
                }
                this.errno.set(call.errno);
                log(call, rc, false);
                this.lock.notifyAll();
                return rc;
            }
        }
        finally {
            if (exclusive != 0) {
                this.inside.remove(exclusive, thread);
            }
        }
    }

    /** Lingers for {@link #notThreadSafeDwell}, outside the lock, while a call is marked as in progress. */
    private void dwell() {
        long dwell = this.notThreadSafeDwellNanos;
        if (dwell > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(dwell);
        }
    }

    /** A violation found before the call's body ran: recorded and logged as the body's would be. */
    private AssertionError violationOutsideBody(String function, long[] args, String message) {
        synchronized (this.lock) {
            Call call = new Call(function, Thread.currentThread(), args);
            AssertionError error = record(call, message);
            log(call, 0, true);
            return error;
        }
    }

    private void log(Call call, int rc, boolean violation) {
        this.callLog.add(new FakeCall(this.callSequence.incrementAndGet(), call.function, call.thread.getName(),
                call.args, rc, call.errno, violation));
        while (this.callLog.size() > this.callLogLimit) {
            this.callLog.poll();
        }
    }

    private AssertionError record(Call call, String message) {
        AssertionError error = new AssertionError(call.function + "() on thread '" + call.thread.getName() + "': "
                + message);
        this.violations.add(error);
        return error;
    }

    private AssertionError violation(Call call, String message) {
        return record(call, message);
    }

    private Failure injected(Call call) {
        ArrayDeque<Failure> failures = this.injected.get(call.function);
        Failure failure = (failures != null) ? failures.poll() : null;
        return (failure == PASS) ? null : failure;
    }

    private void out(Call call, long address, String name) {
        if (address == 0) {
            throw violation(call, "NULL " + name + " (librpma would return RPMA_E_INVAL)");
        }
    }

    /** Fails a call that returns an object: poisons its out-parameter. */
    private int failOut(Call call, Failure failure, long out) {
        putLong(out, POISON);
        this.poisonWrites++;
        return call.fail(failure);
    }

    private Handle use(Call call, long address, Kind kind, String name) {
        return check(call, address, kind, name, false);
    }

    /** The handle a delete frees ({@code *ptr}), or {@code null} for {@code *ptr == NULL} (a no-op in librpma). */
    private Handle freeing(Call call, long pointer, Kind kind, String name) {
        out(call, pointer, name);
        long address = new Pointer(pointer).getLong(0);
        return (address == 0) ? null : check(call, address, kind, "*" + name, true);
    }

    private Handle check(Call call, long address, Kind kind, String name, boolean freeing) {
        if (address == 0) {
            throw violation(call, "NULL " + name + " (librpma would return RPMA_E_INVAL)");
        }
        if (address == POISON) {
            throw violation(call, name + " is the poison value 0xdeadbeef that the fake wrote into the out-parameter"
                    + " of a failed call: the caller used a pointer librpma never set");
        }
        Handle handle = this.handles.get(address);
        if (handle == null) {
            throw violation(call, name + " 0x" + Long.toHexString(address) + " is no " + kind + " this fake handed out");
        }
        if (handle.kind != kind) {
            throw violation(call, name + " is " + handle + ", not a " + kind);
        }
        if (!handle.live) {
            throw violation(call, (freeing ? "double free of " : "use after free of ") + handle);
        }
        return handle;
    }

    private Handle create(Call call, Kind kind, Handle parent, Object state) {
        long seq = this.sequence.incrementAndGet();
        long address = 0x7f00_0000_0000L + ((long) (kind.ordinal() + 1) << 36) + (seq << 4);
        Handle handle = new Handle(address, kind, parent, call.function, call.thread.getName(), state, seq);
        this.handles.put(address, handle);
        if (parent != null && kind == Kind.CQ) {
            parent.owned.add(handle);
        }
        return handle;
    }

    private void free(Call call, Handle handle) {
        handle.live = false;
        handle.freedBy = call.function;
        handle.freedOn = call.thread.getName();
        for (Handle owned : handle.owned) {
            if (owned.live) {
                free(call, owned);
            }
        }
    }

    private FakeCompletionQueue completionQueue(Call call, Handle owner, boolean receive) {
        FakeCompletionQueue queue = new FakeCompletionQueue(this, receive);
        queue.handle = create(call, Kind.CQ, owner, queue).address;
        queue.fd = new FakeEventFd();
        return queue;
    }

    private FakeConnection connection(Call call, long conn) {
        return (FakeConnection) use(call, conn, Kind.CONN, "conn").state;
    }

    private int createSimple(String function, long out, Kind kind, java.util.function.Supplier<Object> state) {
        return invoke(function, c -> {
            out(c, out, "out-parameter");
            Failure failure = injected(c);
            if (failure != null) {
                return failOut(c, failure, out);
            }
            putLong(out, create(c, kind, null, state.get()).address);
            return c.ok();
        }, out);
    }

    private int deleteSimple(String function, long pointer, Kind kind) {
        return invoke(function, c -> {
            Handle handle = freeing(c, pointer, kind, "ptr");
            if (handle == null) {
                return c.ok();
            }
            free(c, handle);
            putLong(pointer, 0);
            Failure failure = injected(c);
            return (failure != null) ? c.fail(failure) : c.ok();
        }, pointer);
    }

    private int setConnCfg(String function, long cfg, int value, java.util.function.ObjIntConsumer<ConnCfg> setter) {
        return setCfg(function, cfg, Kind.CONN_CFG, ConnCfg.class, value, setter);
    }

    private int getConnCfg(String function, long cfg, long out, java.util.function.ToIntFunction<ConnCfg> getter) {
        return getCfg(function, cfg, Kind.CONN_CFG, ConnCfg.class, out, "out-parameter", getter);
    }

    private <T> int setCfg(String function, long cfg, Kind kind, Class<T> type, int value,
            java.util.function.ObjIntConsumer<T> setter) {
        return invoke(function, c -> {
            T values = type.cast(use(c, cfg, kind, "cfg").state);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            setter.accept(values, value);
            return c.ok();
        }, cfg, value);
    }

    private <T> int getCfg(String function, long cfg, Kind kind, Class<T> type, long out, String outName,
            java.util.function.ToIntFunction<T> getter) {
        return getValue(function, cfg, kind, "cfg", type, out, outName,
                (values, at) -> putInt(at, getter.applyAsInt(values)));
    }

    /** A call that writes one value of {@code object} to its out-parameter, as librpma's getters do. */
    private <T> int getValue(String function, long object, Kind kind, String objectName, Class<T> type, long out,
            String outName, java.util.function.ObjLongConsumer<T> write) {
        return invoke(function, c -> {
            T state = type.cast(use(c, object, kind, objectName).state);
            out(c, out, outName);
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            write.accept(state, out);
            return c.ok();
        }, object, out);
    }

    private int post(String function, long conn, long local, long localOffset, long remote, long remoteOffset,
            long len, int flags, int imm, long opContext) {
        return invoke(function, c -> {
            FakeConnection connection = connection(c, conn);
            use(c, local, Kind.MR_LOCAL, "local memory region");
            if (remote != 0 || function.contains("read") || function.contains("write")) {
                use(c, remote, Kind.MR_REMOTE, "remote memory region");
            }
            Failure failure = injected(c);
            if (failure != null) {
                return c.fail(failure);
            }
            if (this.loopback) {
                if (function.equals("rpma_write_with_imm")) {
                    throw violation(c, "rpma_write_with_imm is not modelled by the loopback");
                }
                return loopbackPosted(c, Loopback.oneSided(this, connection, function, this.handles.get(local),
                        localOffset, remoteOf(remote), remoteOffset, len, flags, opContext, null));
            }
            connection.posted.add(new PostedOperation(function, local, localOffset, len, remote, remoteOffset, flags,
                    Integer.toUnsignedLong(imm), opContext, c.thread.getName()));
            return c.ok();
        }, conn, local, localOffset, remote, remoteOffset, len, flags, imm, opContext);
    }

    private void checkEndpointOwner(Call call, FakeEndpoint endpoint, boolean claim) {
        if (endpoint.owner == null) {
            if (claim) {
                endpoint.owner = call.thread;
            }
            return;
        }
        if (endpoint.owner != call.thread) {
            throw violation(call, "not-thread-safe call on " + endpoint + " owned by thread '" + endpoint.owner.getName()
                    + "'");
        }
    }

    private void checkRequestOwner(Call call, FakeRequest request) {
        if (request.endpoint() != null) {
            checkEndpointOwner(call, request.endpoint(), false);
        }
        else if (request.creator != call.thread) {
            throw violation(call, "client request created on thread '" + request.creator.getName()
                    + "' deleted on another thread");
        }
    }

    /** The address that names the device serving {@code address}. */
    private String deviceOf(String address) {
        return this.sharedDevices.getOrDefault(address, address);
    }

    /** Under the lock: the device context {@code handle} was created on, through its peer; {@code null} for none. */
    private static Handle contextOf(Handle handle) {
        Handle at = handle;
        while (at != null && at.kind != Kind.IBV_CONTEXT) {
            at = at.parent;
        }
        return at;
    }

    /** Under the lock: {@code failure}, else {@code ENODEV} when the device {@code on} was created on is removed. */
    private Failure orDeviceGone(Failure failure, Handle on) {
        if (failure != null) {
            return failure;
        }
        Handle context = contextOf(on);
        boolean removed = this.removedContexts.stream().anyMatch(r -> r.context == context);
        return removed ? new Failure(RPMA_E_PROVIDER, Errno.ENODEV) : null;
    }

    private List<RemovedContext> removedContextsOf(String device) {
        return this.removedContexts.stream().filter(removed -> device.equals(removed.context.state)).toList();
    }

    /** Under the lock: the live objects created on {@code context}, oldest first, completion queues left out. */
    private List<Handle> aliveOn(Handle context) {
        return this.handles.values().stream()
                .filter(h -> h.live && h != context && h.kind != Kind.CQ && contextOf(h) == context)
                .sorted((a, b) -> Long.compare(a.sequence(), b.sequence())).toList();
    }

    private long derefOrZero(long pointer) {
        return (pointer == 0) ? 0 : new Pointer(pointer).getLong(0);
    }

    private long parentOf(long address) {
        Handle handle = this.handles.get(address);
        return (handle != null && handle.parent != null) ? handle.parent.address : 0;
    }

    private long requestKey(long address) {
        Handle handle = this.handles.get(address);
        if (handle == null || !(handle.state instanceof FakeRequest request)) {
            return 0;
        }
        return (request.endpoint() != null) ? request.endpoint().handle : parentOf(address);
    }

    private void writePrivateData(long pdata, Memory memory, int length) {
        putLong(pdata, (memory != null) ? Pointer.nativeValue(memory) : 0);
        putByte(pdata + 8, (memory != null) ? length : 0);
    }

    private static Memory nativeCopy(byte[] bytes) {
        Memory memory = new Memory(bytes.length);
        memory.write(0, bytes, 0, bytes.length);
        return memory;
    }

    /** Scribbles over native memory librpma would free, and keeps it until {@link #close()}. */
    private void quarantine(Memory memory) {
        if (memory != null && !this.quarantine.containsKey(memory)) {
            memory.setMemory(0, memory.size(), (byte) 0xEE);
            this.quarantine.put(memory, memory);
        }
    }

    private static void closeFds(FakeConnection connection) {
        if (connection.eventFd != null) {
            connection.eventFd.close();
        }
        if (connection.completionFd != null) {
            connection.completionFd.close();
        }
        if (connection.cq != null && connection.cq.fd != null) {
            connection.cq.fd.close();
        }
        if (connection.rcq != null && connection.rcq.fd != null) {
            connection.rcq.fd.close();
        }
    }

    private static void putLong(long address, long value) {
        new Pointer(address).setLong(0, value);
    }

    private static void putInt(long address, int value) {
        new Pointer(address).setInt(0, value);
    }

    private static void putByte(long address, int value) {
        new Pointer(address).setByte(0, (byte) value);
    }
}
