package dev.rpma.binding;

/**
 * A completion queue ({@code struct rpma_cq}) of a connection or shared receive queue, which owns
 * it: it is valid while its owner is open. Thread-safe.
 */
public final class RpmaCompletionQueue {

    private final NativeHandle owner;

    private final long cq;

    RpmaCompletionQueue(NativeHandle owner, long cq) {
        this.owner = owner;
        this.cq = cq;
    }

    /** The completion channel's fd ({@code rpma_cq_get_fd}). */
    public int fd() {
        Scratch scratch = Scratch.get();
        this.owner.acquire();
        try {
            this.owner.rpma.check(this.owner.rpma.lib().rpma_cq_get_fd(this.cq, scratch.at(Scratch.OUT)), "rpma_cq_get_fd");
        }
        finally {
            this.owner.release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }

    /**
     * Waits for the next completion event ({@code rpma_cq_wait}) and re-arms the queue.
     *
     * @return {@code false} for {@code RPMA_E_NO_COMPLETION}
     * @throws RpmaException {@code RPMA_E_SHARED_CHANNEL} when the channel is shared (use
     *     {@link RpmaConnection#awaitCompletion()}), or a provider error
     */
    public boolean await() {
        this.owner.acquire();
        try {
            int rc = this.owner.rpma.lib().rpma_cq_wait(this.cq);
            if (rc == RpmaError.NO_COMPLETION.code()) {
                return false;
            }
            if (rc != 0) {
                throw this.owner.rpma.failure(rc, "rpma_cq_wait", null);
            }
            return true;
        }
        finally {
            this.owner.release();
        }
    }

    /**
     * Moves up to {@link RpmaCompletions#capacity()} completions into {@code into}
     * ({@code rpma_cq_get_wc}); allocates nothing.
     *
     * @return how many arrived, 0 for {@code RPMA_E_NO_COMPLETION}
     */
    public int poll(RpmaCompletions into) {
        this.owner.acquire();
        try {
            int rc = this.owner.rpma.lib().rpma_cq_get_wc(this.cq, into.capacity(), into.address, into.countAddress);
            if (rc == 0) {
                return into.filled();
            }
            into.clear();
            if (rc == RpmaError.NO_COMPLETION.code()) {
                return 0;
            }
            throw this.owner.rpma.failure(rc, "rpma_cq_get_wc", null);
        }
        finally {
            this.owner.release();
        }
    }
}
