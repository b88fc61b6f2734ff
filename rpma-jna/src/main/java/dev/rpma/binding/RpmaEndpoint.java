package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.io.FileDescriptors;

/**
 * librpma's listening endpoint ({@code struct rpma_ep}): an address and port that connection
 * requests arrive on. The server core serves one per configured endpoint
 * ({@code dev.rpma.server.RpmaServedEndpoint}, which owns it); Spring's actuator endpoint
 * {@code rpma} is unrelated.
 *
 * <p>Thread ownership: librpma's {@code rpma_ep_next_conn_req}, {@code rpma_ep_shutdown} and
 * {@code rpma_conn_req_delete} are not thread-safe, and a thread blocked in
 * {@code rpma_ep_next_conn_req} cannot be woken. So the endpoint has one owner thread, the one that
 * created it, which may {@link #handOffTo(Thread) hand it off} once to another (e.g. an acceptor);
 * {@link #nextConnectionRequest}, {@link #configureBlocking}, {@link #close()} and the requests'
 * {@link RpmaConnectionRequest#reject()} fail with {@link IllegalStateException} on any other thread.
 * {@link #fd()} and the accessors are thread-safe.
 */
public final class RpmaEndpoint extends NativeHandle implements AutoCloseable {

    private final RpmaPeer peer;

    private final String address;

    private final int port;

    private volatile Thread owner;

    private RpmaEndpoint(RpmaPeer peer, long pointer, String address, int port) {
        super(peer.rpma, pointer);
        this.peer = peer;
        this.address = address;
        this.port = port;
        this.owner = Thread.currentThread();
    }

    static RpmaEndpoint listen(RpmaPeer peer, long peerPointer, String address, int port) {
        Rpma rpma = peer.rpma;
        Scratch scratch = Scratch.get();
        int rc = rpma.lib().rpma_ep_listen(peerPointer, address, Integer.toString(port), scratch.at(Scratch.OUT));
        if (rc != 0) {
            throw rpma.failure(rc, "rpma_ep_listen", address, port);
        }
        return new RpmaEndpoint(peer, scratch.outPointer(), address, port);
    }

    @Override
    String kind() {
        return "endpoint";
    }

    public RpmaPeer peer() {
        return this.peer;
    }

    public String address() {
        return this.address;
    }

    public int port() {
        return this.port;
    }

    /** The thread that may call the endpoint's not-thread-safe methods. */
    public Thread owner() {
        return this.owner;
    }

    /** Whether the calling thread owns the endpoint. */
    public boolean isOwnedByCurrentThread() {
        return this.owner == Thread.currentThread();
    }

    /**
     * Makes {@code newOwner} the only thread allowed to call the not-thread-safe methods from now on.
     * Called by the current owner, before the new owner starts using the endpoint (e.g. before
     * {@link Thread#start()}, which orders the two threads' views of it).
     */
    public void handOffTo(Thread newOwner) {
        checkOwner("handOffTo");
        this.owner = newOwner;
    }

    /** The endpoint's event file descriptor ({@code rpma_ep_get_fd}); readable when a request may be waiting. */
    public int fd() {
        Scratch scratch = Scratch.get();
        long ep = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_ep_get_fd(ep, scratch.at(Scratch.OUT)), "rpma_ep_get_fd");
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }

    /**
     * Sets whether {@link #nextConnectionRequest} blocks until a request arrives (librpma's default)
     * or returns {@code null} at once when none is waiting. An acceptor that must be stoppable polls
     * the non-blocking {@link #fd()}.
     */
    public void configureBlocking(boolean blocking) {
        checkOwner("configureBlocking");
        FileDescriptors.setBlocking(fd(), blocking);
    }

    /** The next connection request with librpma's default configuration. */
    public @Nullable RpmaConnectionRequest nextConnectionRequest() {
        return nextConnectionRequest(null);
    }

    /**
     * The next connection request ({@code rpma_ep_next_conn_req}); {@code config} (may be
     * {@code null}) sizes its queues. Owner thread only.
     *
     * @return the request, or {@code null} when none is available: {@code RPMA_E_NO_EVENT}, or
     *     {@code RPMA_E_PROVIDER} with errno {@code EAGAIN} on a non-blocking endpoint
     * @throws RpmaException {@code RPMA_E_INVAL} when the event was not a connection request (the
     *     event is dropped and the endpoint stays usable); {@code RPMA_E_PROVIDER} (see
     *     {@link RpmaException#errno()}: {@code EINTR} is transient, others leave the endpoint unusable);
     *     {@code RPMA_E_NOMEM}
     */
    public @Nullable RpmaConnectionRequest nextConnectionRequest(@Nullable RpmaConnectionConfig config) {
        checkOwner("nextConnectionRequest");
        Scratch scratch = Scratch.get();
        long ep = acquire();
        long cfg = 0;
        try {
            cfg = (config != null) ? config.acquire() : 0;
            int rc = this.rpma.lib().rpma_ep_next_conn_req(ep, cfg, scratch.at(Scratch.OUT));
            if (rc == 0) {
                return RpmaConnectionRequest.obtainedOnEndpoint(this.peer, scratch.outPointer(), this);
            }
            // On failure *req_ptr is left as it was (or NULLed): it is never read.
            if (rc == RpmaError.NO_EVENT.code()) {
                return null;
            }
            if (rc == RpmaError.PROVIDER.code() && this.rpma.lib().lastErrno() == Errno.EAGAIN) {
                return null;
            }
            throw this.rpma.failure(rc, "rpma_ep_next_conn_req", null);
        }
        finally {
            if (config != null && cfg != 0) {
                config.release();
            }
            release();
        }
    }

    /**
     * Shuts the endpoint down ({@code rpma_ep_shutdown}); owner thread only; idempotent. Requests
     * and connections already obtained stay valid.
     */
    @Override
    public void close() {
        if (isClosed()) {
            return;
        }
        checkOwner("close");
        long ep = beginClose();
        if (ep != 0) {
            try {
                this.rpma.check(this.rpma.lib().rpma_ep_shutdown(Scratch.get().pointerSlot(ep)), "rpma_ep_shutdown");
            }
            finally {
                this.peer.childClosed();
            }
        }
    }

    void checkOwner(String method) {
        checkOwner("RpmaEndpoint", method);
    }

    /** Fails unless the calling thread owns the endpoint; the message is built only then. */
    void checkOwner(String type, String method) {
        Thread current = Thread.currentThread();
        if (this.owner != current) {
            throw new IllegalStateException(type + "." + method + "() must be called on the endpoint's owner thread '"
                    + this.owner.getName() + "', not on '" + current.getName()
                    + "': librpma's endpoint calls are not thread-safe (hand the call to the owner thread)");
        }
    }

    @Override
    public String toString() {
        return "RpmaEndpoint[" + this.address + ":" + this.port + (isClosed() ? ", closed]" : "]");
    }
}
