package dev.rpma.binding;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.internal.LibRpma;

/**
 * A connection configuration ({@code struct rpma_conn_cfg}): queue sizes, timeout, shared
 * completion channel, shared receive queue. Defaults are librpma's: timeout 1000 ms (used by the
 * client side only), cq/sq/rq 10, rcq 0, no shared completion channel, no shared receive queue.
 *
 * <p>Thread-safe: librpma's getters and setters are safe per object; close once nobody uses it
 * (it may be closed as soon as the connection or request it configured exists).
 */
public final class RpmaConnectionConfig extends NativeHandle implements AutoCloseable {

    private RpmaConnectionConfig(Rpma rpma, long pointer) {
        super(rpma, pointer);
    }

    static RpmaConnectionConfig create(Rpma rpma) {
        Scratch scratch = Scratch.get();
        rpma.check(rpma.lib().rpma_conn_cfg_new(scratch.at(Scratch.OUT)), "rpma_conn_cfg_new");
        return new RpmaConnectionConfig(rpma, scratch.outPointer());
    }

    @Override
    String kind() {
        return "connection configuration";
    }

    /** Connection set-up timeout (client side). */
    public Duration timeout() {
        return Duration.ofMillis(getInt(LibRpma::rpma_conn_cfg_get_timeout, "rpma_conn_cfg_get_timeout"));
    }

    public RpmaConnectionConfig timeout(Duration timeout) {
        long millis = timeout.toMillis();
        if (millis < 0 || millis > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("timeout must be between 0 and " + Integer.MAX_VALUE + " ms, got " + timeout);
        }
        return setInt(LibRpma::rpma_conn_cfg_set_timeout, (int) millis, "rpma_conn_cfg_set_timeout");
    }

    /** Completion queue size. */
    public int cqSize() {
        return getInt(LibRpma::rpma_conn_cfg_get_cq_size, "rpma_conn_cfg_get_cq_size");
    }

    public RpmaConnectionConfig cqSize(int size) {
        return setInt(LibRpma::rpma_conn_cfg_set_cq_size, unsigned("cqSize", size), "rpma_conn_cfg_set_cq_size");
    }

    /** Receive completion queue size; 0 means receives complete on the main completion queue. */
    public int rcqSize() {
        return getInt(LibRpma::rpma_conn_cfg_get_rcq_size, "rpma_conn_cfg_get_rcq_size");
    }

    public RpmaConnectionConfig rcqSize(int size) {
        return setInt(LibRpma::rpma_conn_cfg_set_rcq_size, unsigned("rcqSize", size), "rpma_conn_cfg_set_rcq_size");
    }

    /** Send queue size. */
    public int sqSize() {
        return getInt(LibRpma::rpma_conn_cfg_get_sq_size, "rpma_conn_cfg_get_sq_size");
    }

    public RpmaConnectionConfig sqSize(int size) {
        return setInt(LibRpma::rpma_conn_cfg_set_sq_size, unsigned("sqSize", size), "rpma_conn_cfg_set_sq_size");
    }

    /** Receive queue size. */
    public int rqSize() {
        return getInt(LibRpma::rpma_conn_cfg_get_rq_size, "rpma_conn_cfg_get_rq_size");
    }

    public RpmaConnectionConfig rqSize(int size) {
        return setInt(LibRpma::rpma_conn_cfg_set_rq_size, unsigned("rqSize", size), "rpma_conn_cfg_set_rq_size");
    }

    /** Whether the main and receive completion queues share one completion channel. */
    public boolean sharedCompletionChannel() {
        Scratch scratch = Scratch.get();
        scratch.buffer.put(Scratch.OUT, (byte) 0);
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_cfg_get_compl_channel(cfg, scratch.at(Scratch.OUT)),
                    "rpma_conn_cfg_get_compl_channel");
        }
        finally {
            release();
        }
        return scratch.buffer.get(Scratch.OUT) != 0;
    }

    public RpmaConnectionConfig sharedCompletionChannel(boolean shared) {
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_cfg_set_compl_channel(cfg, (byte) (shared ? 1 : 0)),
                    "rpma_conn_cfg_set_compl_channel");
        }
        finally {
            release();
        }
        return this;
    }

    /**
     * Whether a shared receive queue is set; librpma hands back only its pointer, so the queue
     * object itself is whatever was passed to {@link #sharedReceiveQueue(RpmaSharedReceiveQueue)}.
     */
    public boolean hasSharedReceiveQueue() {
        Scratch scratch = Scratch.get();
        long cfg = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_cfg_get_srq(cfg, scratch.at(Scratch.OUT)), "rpma_conn_cfg_get_srq");
        }
        finally {
            release();
        }
        return scratch.outPointer() != 0;
    }

    /** Sets the shared receive queue ({@code null} for none); keep it open while connections use it. */
    public RpmaConnectionConfig sharedReceiveQueue(@Nullable RpmaSharedReceiveQueue srq) {
        long cfg = acquire();
        try {
            // acquired inside the try: a closed queue must not leave this configuration acquired
            long srqPointer = (srq != null) ? srq.acquire() : 0;
            try {
                this.rpma.check(this.rpma.lib().rpma_conn_cfg_set_srq(cfg, srqPointer), "rpma_conn_cfg_set_srq");
            }
            finally {
                if (srq != null) {
                    srq.release();
                }
            }
        }
        finally {
            release();
        }
        return this;
    }

    /** Frees the configuration ({@code rpma_conn_cfg_delete}); idempotent. */
    @Override
    public void close() {
        long cfg = beginClose();
        if (cfg != 0) {
            this.rpma.check(this.rpma.lib().rpma_conn_cfg_delete(Scratch.get().pointerSlot(cfg)), "rpma_conn_cfg_delete");
        }
    }

    private int getInt(IntGetter getter, String function) {
        Scratch scratch = Scratch.get();
        long cfg = acquire();
        try {
            this.rpma.check(getter.get(this.rpma.lib(), cfg, scratch.at(Scratch.OUT)), function);
        }
        finally {
            release();
        }
        return scratch.buffer.getInt(Scratch.OUT);
    }

    private RpmaConnectionConfig setInt(IntSetter setter, int value, String function) {
        long cfg = acquire();
        try {
            this.rpma.check(setter.set(this.rpma.lib(), cfg, value), function);
        }
        finally {
            release();
        }
        return this;
    }

    static int unsigned(String name, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, got " + value);
        }
        return value;
    }

    @FunctionalInterface
    interface IntGetter {
        int get(LibRpma lib, long object, long out);
    }

    @FunctionalInterface
    interface IntSetter {
        int set(LibRpma lib, long object, int value);
    }
}
