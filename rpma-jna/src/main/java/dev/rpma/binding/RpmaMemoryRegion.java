package dev.rpma.binding;

import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A registered local memory region ({@code struct rpma_mr_local}), created by
 * {@link RpmaPeer#register}. Its {@link #descriptor()} lets the other side address it.
 *
 * <p>The registration never outlives the buffer it was made from: the buffer stays reachable, so
 * its memory allocated, until the region is deregistered, by {@link #close()} or, for a region that
 * became unreachable without it, by a {@link Cleaner} that deregisters it first (with a warning: the
 * owner leaked it) and only then lets the buffer go. Without that guard a dropped region would leave
 * the device able to read and write memory the JVM had freed and handed to someone else.
 *
 * <p>Thread-safe; {@link #close()} ({@code rpma_mr_dereg}, not thread-safe in librpma) is serialized
 * with the peer's other registrations and waits for operations that are being posted with it.
 */
public final class RpmaMemoryRegion extends NativeHandle implements AutoCloseable {

    /** Size of a memory region descriptor: u64 address, u64 length, u32 rkey, u8 usage. */
    public static final int DESCRIPTOR_SIZE = 21;

    private static final Logger logger = LoggerFactory.getLogger(RpmaMemoryRegion.class);

    private static final Cleaner CLEANER = Cleaner.create((task) -> {
        Thread thread = new Thread(task, "rpma-region-cleaner");
        thread.setDaemon(true);
        return thread;
    });

    private final long address;

    private final long size;

    private final Registration registration;

    /** Runs {@link #registration} once, from {@link #close()} or the cleaner. */
    private final Cleaner.Cleanable cleanable;

    RpmaMemoryRegion(RpmaPeer peer, long pointer, long address, long size, @Nullable ByteBuffer buffer) {
        super(peer.rpma, pointer);
        this.address = address;
        this.size = size;
        this.registration = new Registration(peer, pointer, size, buffer);
        this.cleanable = CLEANER.register(this, this.registration);
    }

    /**
     * What deregistering needs, without the region itself (which it would keep reachable): the peer,
     * the pointer, and the buffer, held here so that it outlives the registration.
     */
    private static final class Registration implements Runnable {

        private final RpmaPeer peer;

        private final long pointer;

        private final long size;

        @SuppressWarnings("unused") // never read: held so that the memory outlives the registration
        private @Nullable ByteBuffer buffer;

        /** Whether {@link RpmaMemoryRegion#close()} runs it, rather than the cleaner. */
        private volatile boolean closing;

        Registration(RpmaPeer peer, long pointer, long size, @Nullable ByteBuffer buffer) {
            this.peer = peer;
            this.pointer = pointer;
            this.size = size;
            this.buffer = buffer;
        }

        @Override
        public void run() {
            if (!this.closing) {
                logger.warn("A memory region of {} bytes on the RDMA peer of {} became unreachable without close();"
                        + " it is deregistered now, before its memory is freed", this.size, this.peer.address());
            }
            this.peer.notThreadSafe.lock();
            try {
                this.peer.rpma.check(this.peer.rpma.lib().rpma_mr_dereg(Scratch.get().pointerSlot(this.pointer)),
                        "rpma_mr_dereg");
            }
            finally {
                this.peer.notThreadSafe.unlock();
                this.peer.childClosed();
                // only now may the memory go: the device can no longer reach it
                this.buffer = null;
            }
        }
    }

    @Override
    String kind() {
        return "memory region";
    }

    /** Address of the registered memory. */
    public long address() {
        return this.address;
    }

    /** Registered size in bytes. */
    public long size() {
        return this.size;
    }

    /** The descriptor to send to the other side ({@code rpma_mr_get_descriptor}). */
    public byte[] descriptor() {
        Scratch scratch = Scratch.get();
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_get_descriptor_size(mr, scratch.at(Scratch.OUT)),
                    "rpma_mr_get_descriptor_size");
            int length = (int) scratch.buffer.getLong(Scratch.OUT);
            this.rpma.check(this.rpma.lib().rpma_mr_get_descriptor(mr, scratch.at(Scratch.BYTES)), "rpma_mr_get_descriptor");
            byte[] descriptor = new byte[length];
            scratch.buffer.get(Scratch.BYTES, descriptor);
            return descriptor;
        }
        finally {
            release();
        }
    }

    /** Advises the provider about use of a range ({@code rpma_mr_advise}, {@code ibv_advise_mr}). */
    public void advise(long offset, long length, int advice, int flags) {
        long mr = acquire();
        try {
            this.rpma.check(this.rpma.lib().rpma_mr_advise(mr, offset, length, advice, flags), "rpma_mr_advise");
        }
        finally {
            release();
        }
    }

    /** Deregisters the memory ({@code rpma_mr_dereg}) and lets its buffer go; idempotent. */
    @Override
    public void close() {
        if (beginClose() != 0) {
            this.registration.closing = true;
            this.cleanable.clean();
        }
    }
}
