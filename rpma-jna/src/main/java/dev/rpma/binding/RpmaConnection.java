package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.binding.internal.LibRpma;

/**
 * A connection ({@code struct rpma_conn}): its events, private data, completion queues and the
 * data path.
 *
 * <p>Thread-safe: librpma's connection, completion-queue and data-path calls are. Every call holds
 * the connection open while it runs, so {@link #close()} waits for calls in flight and no call
 * reaches a deleted connection; a call blocked in {@link #awaitCompletion()} or a blocking
 * {@link #nextEvent()} keeps {@link #close()} waiting until it returns, while
 * {@link #closeIfIdle()} does not wait.
 *
 * <p>Teardown, as librpma requires: a server waits for {@link RpmaConnectionEvent#CLOSED} (which
 * may come twice), then {@link #disconnect()}, then {@link #close()}; a client disconnects, waits for
 * CLOSED and closes. The data-path methods allocate nothing.
 */
public final class RpmaConnection extends NativeHandle implements AutoCloseable {

    private final RpmaPeer peer;

    private final RpmaCompletionQueue cq;

    private final @Nullable RpmaCompletionQueue rcq;

    private RpmaConnection(RpmaPeer peer, long pointer, long cq, long rcq) {
        super(peer.rpma, pointer);
        this.peer = peer;
        this.cq = new RpmaCompletionQueue(this, cq);
        this.rcq = (rcq != 0) ? new RpmaCompletionQueue(this, rcq) : null;
    }

    static RpmaConnection connected(RpmaPeer peer, long pointer) {
        Rpma rpma = peer.rpma;
        LibRpma lib = rpma.lib();
        Scratch scratch = Scratch.get();
        try {
            rpma.check(lib.rpma_conn_get_cq(pointer, scratch.at(Scratch.OUT)), "rpma_conn_get_cq");
            long cq = scratch.outPointer();
            rpma.check(lib.rpma_conn_get_rcq(pointer, scratch.at(Scratch.OUT)), "rpma_conn_get_rcq");
            return new RpmaConnection(peer, pointer, cq, scratch.outPointer());
        }
        catch (RuntimeException ex) {
            lib.rpma_conn_disconnect(pointer);
            lib.rpma_conn_delete(scratch.pointerSlot(pointer));
            peer.childClosed();
            throw ex;
        }
    }

    @Override
    String kind() {
        return "connection";
    }

    public RpmaPeer peer() {
        return this.peer;
    }

    /**
     * The next connection event ({@code rpma_conn_next_event}): blocks on a blocking event fd
     * (librpma's default).
     *
     * @return the event, or {@code null} when none is available ({@code RPMA_E_NO_EVENT}, or
     *     {@code EAGAIN} on a non-blocking event fd)
     * @throws RpmaException {@code RPMA_E_UNKNOWN} for an event librpma does not map, or a provider error
     */
    public @Nullable RpmaConnectionEvent nextEvent() {
        Scratch scratch = Scratch.get();
        long conn = acquire();
        try {
            int rc = this.rpma.lib().rpma_conn_next_event(conn, scratch.at(Scratch.OUT));
            if (rc == 0) {
                return RpmaConnectionEvent.of(scratch.buffer.getInt(Scratch.OUT));
            }
            if (rc == RpmaError.NO_EVENT.code()
                    || (rc == RpmaError.PROVIDER.code() && this.rpma.lib().lastErrno() == Errno.EAGAIN)) {
                return null;
            }
            throw this.rpma.failure(rc, "rpma_conn_next_event", null);
        }
        finally {
            release();
        }
    }

    /** The connection's own event file descriptor ({@code rpma_conn_get_event_fd}). */
    public int eventFd() {
        return getInt(LibRpma::rpma_conn_get_event_fd, "rpma_conn_get_event_fd");
    }

    /** Sets whether {@link #nextEvent()} blocks (librpma's default) or returns {@code null} at once. */
    public void configureEventsBlocking(boolean blocking) {
        FileDescriptors.setBlocking(eventFd(), blocking);
    }

    /**
     * The private data of the other side ({@code rpma_conn_get_private_data}), copied: on a server
     * the request's, on a client the accept's (available once established).
     */
    public byte[] privateData() {
        Scratch scratch = Scratch.get();
        long conn = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_get_private_data(conn, scratch.at(Scratch.PDATA_STRUCT)),
                    "rpma_conn_get_private_data");
            return RpmaConnectionRequest.copyPrivateData(scratch);
        }
        finally {
            release();
        }
    }

    /** The queue pair number ({@code rpma_conn_get_qp_num}). */
    public int qpNumber() {
        return getInt(LibRpma::rpma_conn_get_qp_num, "rpma_conn_get_qp_num");
    }

    /** The main completion queue ({@code rpma_conn_get_cq}); valid while the connection is open. */
    public RpmaCompletionQueue completionQueue() {
        return this.cq;
    }

    /**
     * The receive completion queue ({@code rpma_conn_get_rcq}), or {@code null} when the
     * configuration's rcq size was 0 and receives complete on {@link #completionQueue()}.
     */
    public @Nullable RpmaCompletionQueue receiveCompletionQueue() {
        return this.rcq;
    }

    /** The shared completion channel's fd ({@code rpma_conn_get_compl_fd}); needs a shared channel. */
    public int completionFd() {
        return getInt(LibRpma::rpma_conn_get_compl_fd, "rpma_conn_get_compl_fd");
    }

    /**
     * Waits for a completion on the shared completion channel ({@code rpma_conn_wait}).
     *
     * @return the queue that has completions, or {@code null} for {@code RPMA_E_NO_COMPLETION}
     */
    public @Nullable RpmaCompletionQueue awaitCompletion() {
        Scratch scratch = Scratch.get();
        scratch.buffer.put(Scratch.OUT2, (byte) 0);
        long conn = acquire();
        try {
            int rc = this.rpma.lib().rpma_conn_wait(conn, 0, scratch.at(Scratch.OUT), scratch.at(Scratch.OUT2));
            if (rc == RpmaError.NO_COMPLETION.code()) {
                return null;
            }
            this.rpma.check(rc, "rpma_conn_wait");
            return (scratch.buffer.get(Scratch.OUT2) != 0 && this.rcq != null) ? this.rcq : this.cq;
        }
        finally {
            release();
        }
    }

    /** Applies the other side's peer configuration ({@code rpma_conn_apply_remote_peer_cfg}). */
    public void applyRemotePeerConfig(RpmaPeerConfig config) {
        long conn = acquire();
        try {
            long cfg = config.acquire();
            try {
                this.rpma.check(this.rpma.lib().rpma_conn_apply_remote_peer_cfg(conn, cfg), "rpma_conn_apply_remote_peer_cfg");
            }
            finally {
                config.release();
            }
        }
        finally {
            release();
        }
    }

    /** Reads {@code length} bytes of the other side's memory into local memory ({@code rpma_read}). */
    public void read(RpmaMemoryRegion destination, long destinationOffset, RpmaRemoteMemoryRegion source,
            long sourceOffset, long length, CompletionMode completion, long context) {
        transfer("rpma_read", READ, destination, destinationOffset, source, sourceOffset, length, completion, 0,
                context);
    }

    /** Writes local memory to the other side ({@code rpma_write}). */
    public void write(RpmaRemoteMemoryRegion destination, long destinationOffset, RpmaMemoryRegion source,
            long sourceOffset, long length, CompletionMode completion, long context) {
        transfer("rpma_write", WRITE, destination, destinationOffset, source, sourceOffset, length, completion, 0,
                context);
    }

    /** Writes with a 32-bit immediate value the other side receives ({@code rpma_write_with_imm}). */
    public void writeWithImmediate(RpmaRemoteMemoryRegion destination, long destinationOffset, RpmaMemoryRegion source,
            long sourceOffset, long length, CompletionMode completion, int immediate, long context) {
        transfer("rpma_write_with_imm", WRITE_WITH_IMMEDIATE, destination, destinationOffset, source, sourceOffset,
                length, completion, immediate, context);
    }

    /** One of librpma's two-region transfers, called with every argument (so its lambda captures nothing). */
    @FunctionalInterface
    private interface Transfer {

        int call(LibRpma lib, long conn, long dst, long dstOffset, long src, long srcOffset, long length, int flags,
                int immediate, long context);
    }

    private static final Transfer READ = (lib, conn, dst, dstOffset, src, srcOffset, length, flags, immediate,
            context) -> lib.rpma_read(conn, dst, dstOffset, src, srcOffset, length, flags, context);

    private static final Transfer WRITE = (lib, conn, dst, dstOffset, src, srcOffset, length, flags, immediate,
            context) -> lib.rpma_write(conn, dst, dstOffset, src, srcOffset, length, flags, context);

    private static final Transfer WRITE_WITH_IMMEDIATE = (lib, conn, dst, dstOffset, src, srcOffset, length, flags,
            immediate, context) -> lib.rpma_write_with_imm(conn, dst, dstOffset, src, srcOffset, length, flags,
                    immediate, context);

    /** Calls {@code transfer} with the three handles held, so none can be freed during the call. */
    private void transfer(String function, Transfer transfer, NativeHandle destination, long destinationOffset,
            NativeHandle source, long sourceOffset, long length, CompletionMode completion, int immediate,
            long context) {
        long conn = acquire();
        try {
            long dst = destination.acquire();
            try {
                long src = source.acquire();
                try {
                    int rc = transfer.call(this.rpma.lib(), conn, dst, destinationOffset, src, sourceOffset, length,
                            completion.flags, immediate, context);
                    if (rc != 0) {
                        throw this.rpma.failure(rc, function, null);
                    }
                }
                finally {
                    source.release();
                }
            }
            finally {
                destination.release();
            }
        }
        finally {
            release();
        }
    }

    /** Writes 8 bytes atomically ({@code rpma_atomic_write}); {@code value} is stored little-endian. */
    public void atomicWrite(RpmaRemoteMemoryRegion destination, long destinationOffset, long value,
            CompletionMode completion, long context) {
        Scratch scratch = Scratch.get();
        scratch.buffer.putLong(Scratch.BYTES, value);
        long conn = acquire();
        try {
            long dst = destination.acquire();
            try {
                int rc = this.rpma.lib().rpma_atomic_write(conn, dst, destinationOffset, scratch.at(Scratch.BYTES),
                        completion.flags, context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_atomic_write", null);
                }
            }
            finally {
                destination.release();
            }
        }
        finally {
            release();
        }
    }

    /** Flushes earlier writes to visibility or persistence ({@code rpma_flush}). */
    public void flush(RpmaRemoteMemoryRegion destination, long destinationOffset, long length, FlushType type,
            CompletionMode completion, long context) {
        long conn = acquire();
        try {
            long dst = destination.acquire();
            try {
                int rc = this.rpma.lib().rpma_flush(conn, dst, destinationOffset, length, type.code, completion.flags,
                        context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_flush", null);
                }
            }
            finally {
                destination.release();
            }
        }
        finally {
            release();
        }
    }

    /** Sends a message ({@code rpma_send}); the other side needs a posted receive. */
    public void send(RpmaMemoryRegion source, long offset, long length, CompletionMode completion, long context) {
        long conn = acquire();
        try {
            long src = source.acquire();
            try {
                int rc = this.rpma.lib().rpma_send(conn, src, offset, length, completion.flags, context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_send", null);
                }
            }
            finally {
                source.release();
            }
        }
        finally {
            release();
        }
    }

    /** Sends a message with a 32-bit immediate value ({@code rpma_send_with_imm}). */
    public void sendWithImmediate(RpmaMemoryRegion source, long offset, long length, CompletionMode completion,
            int immediate, long context) {
        long conn = acquire();
        try {
            long src = source.acquire();
            try {
                int rc = this.rpma.lib().rpma_send_with_imm(conn, src, offset, length, completion.flags, immediate,
                        context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_send_with_imm", null);
                }
            }
            finally {
                source.release();
            }
        }
        finally {
            release();
        }
    }

    /** Posts a receive buffer for the next message ({@code rpma_recv}). */
    public void receive(RpmaMemoryRegion destination, long offset, long length, long context) {
        long conn = acquire();
        try {
            long dst = destination.acquire();
            try {
                int rc = this.rpma.lib().rpma_recv(conn, dst, offset, length, context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_recv", null);
                }
            }
            finally {
                destination.release();
            }
        }
        finally {
            release();
        }
    }

    /** Starts disconnecting ({@code rpma_conn_disconnect}); the other side sees CLOSED. */
    public void disconnect() {
        long conn = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_disconnect(conn), "rpma_conn_disconnect");
        }
        finally {
            release();
        }
    }

    /** Deletes the connection ({@code rpma_conn_delete}) after calls in flight return; idempotent. */
    @Override
    public void close() {
        delete(beginClose());
    }

    /**
     * Deletes the connection ({@code rpma_conn_delete}) unless a call on it is in flight, without
     * waiting: for an owner that must not wait for another thread, which may be blocked in a native
     * wait on the connection ({@link #awaitCompletion()}, a blocking {@link #nextEvent()},
     * {@link RpmaCompletionQueue#await()}) for as long as no event comes. Either way no new call
     * starts; while one is in flight, call it again later.
     *
     * @return whether the connection is deleted (now or before)
     * @throws RpmaException when {@code rpma_conn_delete} fails (the connection is freed all the same)
     */
    public boolean closeIfIdle() {
        delete(beginCloseIfIdle());
        return isFreed();
    }

    private void delete(long conn) {
        if (conn != 0) {
            try {
                this.rpma.check(this.rpma.lib().rpma_conn_delete(Scratch.get().pointerSlot(conn)), "rpma_conn_delete");
            }
            finally {
                this.peer.childClosed();
            }
        }
    }

    private int getInt(RpmaConnectionConfig.IntGetter getter, String function) {
        Scratch scratch = Scratch.get();
        long conn = acquire();
        try {
            this.rpma.check(getter.get(this.rpma.lib(), conn, scratch.at(Scratch.OUT)), function);
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }
}
