package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

/**
 * A shared receive queue ({@code struct rpma_srq}) that several connections receive through (set it
 * on their {@link RpmaConnectionConfig}). Thread-safe; close it after those connections.
 */
public final class RpmaSharedReceiveQueue extends NativeHandle implements AutoCloseable {

    private final RpmaPeer peer;

    private final @Nullable RpmaCompletionQueue rcq;

    private RpmaSharedReceiveQueue(RpmaPeer peer, long pointer, long rcq) {
        super(peer.rpma, pointer);
        this.peer = peer;
        this.rcq = (rcq != 0) ? new RpmaCompletionQueue(this, rcq) : null;
    }

    static RpmaSharedReceiveQueue created(RpmaPeer peer, long pointer) {
        Scratch scratch = Scratch.get();
        int rc = peer.rpma.lib().rpma_srq_get_rcq(pointer, scratch.at(Scratch.OUT));
        if (rc != 0) {
            // the exception first: it reads errno, which the clean-up call would overwrite
            RpmaException failure = peer.rpma.failure(rc, "rpma_srq_get_rcq", null);
            peer.rpma.lib().rpma_srq_delete(scratch.pointerSlot(pointer));
            throw failure;
        }
        return new RpmaSharedReceiveQueue(peer, pointer, scratch.outPointer());
    }

    @Override
    String kind() {
        return "shared receive queue";
    }

    /** The receive completion queue ({@code rpma_srq_get_rcq}), {@code null} when its size is 0. */
    public @Nullable RpmaCompletionQueue receiveCompletionQueue() {
        return this.rcq;
    }

    /** Posts a receive buffer ({@code rpma_srq_recv}). */
    public void receive(RpmaMemoryRegion destination, long offset, long length, long context) {
        long srq = acquire();
        try {
            long dst = destination.acquire();
            try {
                int rc = this.rpma.lib().rpma_srq_recv(srq, dst, offset, length, context);
                if (rc != 0) {
                    throw this.rpma.failure(rc, "rpma_srq_recv", null);
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

    /** Deletes the queue ({@code rpma_srq_delete}); idempotent. */
    @Override
    public void close() {
        long srq = beginClose();
        if (srq != 0) {
            this.peer.notThreadSafe.lock();
            try {
                this.rpma.check(this.rpma.lib().rpma_srq_delete(Scratch.get().pointerSlot(srq)), "rpma_srq_delete");
            }
            finally {
                this.peer.notThreadSafe.unlock();
                this.peer.childClosed();
            }
        }
    }
}
