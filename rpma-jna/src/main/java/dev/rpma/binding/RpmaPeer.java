package dev.rpma.binding;

import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.internal.NativeMemory;

/**
 * A peer: the RDMA device context ({@code struct rpma_peer}) every endpoint, connection, memory
 * region and shared receive queue is created on. It is deleted last: {@link #close()} refuses while
 * any of them is open.
 *
 * <p>Thread-safe. librpma's calls that are not thread-safe on a peer ({@code rpma_mr_reg},
 * {@code rpma_mr_dereg}, {@code rpma_srq_new}, {@code rpma_srq_delete}, {@code rpma_conn_req_new})
 * are serialized here.
 */
public final class RpmaPeer extends NativeHandle implements AutoCloseable {

    private static final Object DEVICE_LOOKUPS = new Object();

    private final String address;

    private final PeerRole role;

    private final long ibvContext;

    /** Serializes the calls librpma's THREAD_SAFETY rules mark not thread-safe. */
    final ReentrantLock notThreadSafe = new ReentrantLock();

    private final Object children = new Object();

    private int openChildren;

    private RpmaPeer(Rpma rpma, long pointer, String address, PeerRole role, long ibvContext) {
        super(rpma, pointer);
        this.address = address;
        this.role = role;
        this.ibvContext = ibvContext;
    }

    /** The device context the peer was opened on. */
    long ibvContext() {
        return this.ibvContext;
    }

    /** The peer's pointer, for comparisons with what librpma stores of it; the peer is open. */
    long pointerWhileOpen() {
        long pointer = acquire();
        release();
        return pointer;
    }

    static RpmaPeer open(Rpma rpma, String address, PeerRole role) {
        if (address == null || address.isBlank()) {
            throw new IllegalArgumentException("An RDMA peer needs the IP address of an RDMA-capable interface");
        }
        Scratch scratch = Scratch.get();
        int rc = deviceContext(rpma, address, role, scratch);
        if (rc != 0) {
            throw rpma.failure(rc, RpmaFailureKind.DEVICE_LOOKUP, address, 0);
        }
        long ibvContext = scratch.outPointer();
        rpma.check(rpma.lib().rpma_peer_new(ibvContext, scratch.at(Scratch.OUT)), "rpma_peer_new");
        return new RpmaPeer(rpma, scratch.outPointer(), address, role, ibvContext);
    }

    /**
     * {@code rpma_utils_get_ibv_context}, which librpma marks not thread-safe: one call in the process at
     * a time (endpoints on several addresses may look up their devices at once).
     */
    private static int deviceContext(Rpma rpma, String address, PeerRole role, Scratch scratch) {
        synchronized (DEVICE_LOOKUPS) {
            return rpma.lib().rpma_utils_get_ibv_context(address, role.code(), scratch.at(Scratch.OUT));
        }
    }

    /**
     * Whether the device this peer was opened on still serves its address. {@code false} once it is
     * gone: its address has no device ({@code rpma_utils_get_ibv_context} fails with {@code ENODEV}) or
     * another one (a device removed and added again is a new device context). A peer whose device is gone
     * is of no further use: close what was opened on it, the peer itself, then call
     * {@link Rpma#forgetRemovedDevices()}. librpma reports a device removal on an endpoint only as an
     * unexpected event ({@code RPMA_E_INVAL} from {@code rpma_ep_next_conn_req}), hence this question.
     *
     * @throws RpmaException when the lookup fails otherwise, and the answer is unknown
     */
    public boolean isDevicePresent() {
        Scratch scratch = Scratch.get();
        int rc = deviceContext(this.rpma, this.address, this.role, scratch);
        if (rc == 0) {
            return scratch.outPointer() == this.ibvContext;
        }
        RpmaException failure = this.rpma.failure(rc, RpmaFailureKind.DEVICE_LOOKUP, this.address, 0);
        if (failure.errno() == Errno.ENODEV) {
            return false;
        }
        throw failure;
    }

    @Override
    String kind() {
        return "peer";
    }

    /** The address this peer was opened for. */
    public String address() {
        return this.address;
    }

    public PeerRole role() {
        return this.role;
    }

    /**
     * Whether {@code other} is a peer of the same RDMA device (the same {@code struct ibv_context}): a
     * connection request is made on a peer of the device that routes to its address, since librdmacm
     * refuses a queue pair whose protection domain is of another device.
     */
    public boolean sameDevice(RpmaPeer other) {
        return this.ibvContext == other.ibvContext;
    }

    /** Whether the device supports On-Demand Paging ({@code rpma_utils_ibv_context_is_odp_capable}). */
    public boolean isOdpCapable() {
        Scratch scratch = Scratch.get();
        acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_utils_ibv_context_is_odp_capable(this.ibvContext, scratch.at(Scratch.OUT)),
                    "rpma_utils_ibv_context_is_odp_capable");
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT) != 0;
    }

    /**
     * Listens on {@code address:port} ({@code rpma_ep_listen}). The calling thread owns the endpoint:
     * see {@link RpmaEndpoint}.
     */
    public RpmaEndpoint listen(String address, int port) {
        checkPort(port);
        return withChild(peer -> RpmaEndpoint.listen(this, peer, address, port));
    }

    /**
     * Creates a client's connection request to {@code address:port} ({@code rpma_conn_req_new});
     * {@code config} may be {@code null} for librpma's defaults. Connect or reject it on the calling
     * thread.
     */
    public RpmaConnectionRequest newConnectionRequest(String address, int port, @Nullable RpmaConnectionConfig config) {
        checkPort(port);
        return withChild(peer -> {
            long cfg = (config != null) ? config.acquire() : 0;
            this.notThreadSafe.lock();
            try {
                Scratch scratch = Scratch.get();
                this.rpma.check(this.rpma.lib().rpma_conn_req_new(peer, address, Integer.toString(port), cfg,
                        scratch.at(Scratch.OUT)), "rpma_conn_req_new");
                return RpmaConnectionRequest.obtained(this, scratch.outPointer(), Thread.currentThread(), false);
            }
            finally {
                this.notThreadSafe.unlock();
                if (config != null) {
                    config.release();
                }
            }
        });
    }

    /**
     * Registers a direct buffer's memory, from index 0 to its capacity ({@code rpma_mr_reg}). The
     * region keeps the buffer reachable until it is deregistered. Past the memory-lock limit
     * ({@link Rpma#memoryLockLimit()}) this fails with {@code ENOMEM}, classified as
     * {@link RpmaFailureKind#MEMORY_LOCK_LIMIT}, and the exception says how to raise the limit.
     */
    public RpmaMemoryRegion register(ByteBuffer direct, MemoryUsage... usages) {
        return register(NativeMemory.address(direct), direct.capacity(), direct, usages);
    }

    /**
     * Registers {@code size} bytes of native memory at {@code address} ({@code rpma_mr_reg}); the
     * caller keeps that memory allocated until the region is closed.
     */
    public RpmaMemoryRegion register(long address, long size, MemoryUsage... usages) {
        return register(address, size, null, usages);
    }

    private RpmaMemoryRegion register(long address, long size, @Nullable ByteBuffer keepAlive, MemoryUsage... usages) {
        if (size <= 0) {
            throw new IllegalArgumentException("A memory region needs at least one byte, got " + size);
        }
        int usage = MemoryUsage.mask(usages);
        return withChild(peer -> {
            this.notThreadSafe.lock();
            try {
                Scratch scratch = Scratch.get();
                int rc = this.rpma.lib().rpma_mr_reg(peer, address, size, usage, scratch.at(Scratch.OUT));
                if (rc != 0) {
                    // with the memory-lock limit's advice when that is what ENOMEM means
                    throw this.rpma.failure(rc, "rpma_mr_reg", this.address, 0);
                }
                return new RpmaMemoryRegion(this, scratch.outPointer(), address, size, keepAlive);
            }
            finally {
                this.notThreadSafe.unlock();
            }
        });
    }

    /** Creates a shared receive queue ({@code rpma_srq_new}); {@code config} may be {@code null}. */
    public RpmaSharedReceiveQueue newSharedReceiveQueue(@Nullable RpmaSrqConfig config) {
        return withChild(peer -> {
            long cfg = (config != null) ? config.acquire() : 0;
            this.notThreadSafe.lock();
            try {
                Scratch scratch = Scratch.get();
                this.rpma.check(this.rpma.lib().rpma_srq_new(peer, cfg, scratch.at(Scratch.OUT)), "rpma_srq_new");
                return RpmaSharedReceiveQueue.created(this, scratch.outPointer());
            }
            finally {
                this.notThreadSafe.unlock();
                if (config != null) {
                    config.release();
                }
            }
        });
    }

    /** Number of endpoints, requests, connections, memory regions and queues still open on this peer. */
    public int openChildren() {
        synchronized (this.children) {
            return this.openChildren;
        }
    }

    /**
     * Deletes the peer ({@code rpma_peer_delete}); idempotent. Fails while anything created on it is
     * still open, since librpma requires the peer to go last.
     */
    @Override
    public void close() {
        long peer;
        synchronized (this.children) {
            if (this.openChildren > 0 && !isClosed()) {
                throw new IllegalStateException("Close this peer's " + this.openChildren
                        + " open endpoint(s), connection request(s), connection(s), memory region(s) and shared"
                        + " receive queue(s) first: librpma deletes the peer last");
            }
            peer = beginClose();
        }
        if (peer != 0) {
            this.rpma.check(this.rpma.lib().rpma_peer_delete(Scratch.get().pointerSlot(peer)), "rpma_peer_delete");
        }
    }

    /** Creates a child while the peer cannot be closed, and counts it until {@link #childClosed()}. */
    private <T> T withChild(ChildFactory<T> factory) {
        long peer;
        synchronized (this.children) {
            peer = acquire();
            this.openChildren++;
        }
        boolean created = false;
        try {
            T child = factory.create(peer);
            created = true;
            return child;
        }
        finally {
            if (!created) {
                childClosed();
            }
            release();
        }
    }

    /** Counts a child librpma created from another child (a request obtained on an endpoint). */
    void childAdopted() {
        synchronized (this.children) {
            this.openChildren++;
        }
    }

    void childClosed() {
        synchronized (this.children) {
            this.openChildren--;
        }
    }

    static void checkPort(int port) {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
        }
    }

    @FunctionalInterface
    private interface ChildFactory<T> {
        T create(long peer);
    }
}
