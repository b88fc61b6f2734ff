package dev.rpma.benchmarks.datapath;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.ForwardingLibRpma;

/**
 * The scripted fake with the data path of ONE connection replaced by a stand-in that allocates
 * nothing: receives and sends are slots in preallocated rings, completions are written as
 * {@code struct ibv_wc} into the caller's memory, the completion channel is an eventfd that is
 * written only while the queue is armed (as {@code ibv_req_notify_cq} arms it). Everything else
 * (peer, endpoint, request, connect, memory registration) is the fake's, so the server sets up as
 * it always does; the per-message calls then cost what a device's library call costs at least (a
 * few stores), and what the loop thread allocates is the starter's alone.
 *
 * <p>The other side ({@link #deliver}, {@link #replies}) is the benchmark's driver thread: it puts
 * a message into the oldest posted receive and completes it; each {@code rpma_send} of the server
 * completes at once, and its 8-byte payload is the reply. With a shared receive queue the receives
 * are the queue's ({@code rpma_srq_recv}) and complete on its receive completion queue, with the
 * connection's queue pair number, as a device's do.
 */
final class DataPathStub extends ForwardingLibRpma {

    private static final int IBV_WC_SEND = 0;

    private static final int IBV_WC_RECV = 128;

    private static final int RING = 1024;

    private static final int MAX_REGIONS = 64;

    private final Object lock = new Object();

    // posted receives, oldest first: context, address
    private final long[] receiveContexts = new long[RING];

    private final long[] receiveAddresses = new long[RING];

    private long receivesPosted;

    private long receivesTaken;

    // by queue (0: the connection's, 1: the shared receive queue's), completions not yet taken:
    // wr_id, opcode, byte_len
    private final long[][] completionIds = new long[2][RING];

    private final int[][] completionOpcodes = new int[2][RING];

    private final int[][] completionLengths = new int[2][RING];

    private final long[] completionsAdded = new long[2];

    private final long[] completionsTaken = new long[2];

    private final boolean[] armed = { true, true };

    // registered regions: handle, address, size
    private final long[] regionHandles = new long[MAX_REGIONS];

    private final long[] regionAddresses = new long[MAX_REGIONS];

    private int regions;

    /** Two eventfd counters (what the loop reads into, and the 1 the other side writes), and a queue pair number. */
    private final ByteBuffer scratch = NativeMemory.allocate(24).order(ByteOrder.nativeOrder()).putLong(8, 1);

    private final long scratchAddress = NativeMemory.address(this.scratch);

    /** The completion channels of the two queues. */
    private final int[] eventFds = new int[2];

    private volatile long connection;

    private volatile int queuePair;

    private volatile long completionQueue;

    private volatile long sharedReceiveQueue;

    private volatile long sharedCompletionQueue;

    private volatile long replies;

    private volatile long lastReply;

    DataPathStub(LibRpma fake) {
        super(fake);
        for (int q = 0; q < 2; q++) {
            this.eventFds[q] = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);
            if (this.eventFds[q] < 0) {
                throw new IllegalStateException("eventfd() failed");
            }
        }
    }

    // ---------------------------------------------------------------- setup: the fake's, recorded

    @Override
    public int rpma_mr_reg(long peer, long ptr, long size, int usage, long mrPtr) {
        int result = super.rpma_mr_reg(peer, ptr, size, usage, mrPtr);
        if (result == 0) {
            synchronized (this.lock) {
                this.regionHandles[this.regions] = read(mrPtr);
                this.regionAddresses[this.regions] = ptr;
                this.regions++;
            }
        }
        return result;
    }

    @Override
    public int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext) {
        int result = super.rpma_conn_req_recv(req, dst, offset, len, opContext);
        if (result == 0) {
            posted(dst, offset, opContext);
        }
        return result;
    }

    @Override
    public int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr) {
        int result = super.rpma_conn_req_connect(reqPtr, pdata, connPtr);
        if (result == 0) {
            long conn = read(connPtr);
            if (super.rpma_conn_get_qp_num(conn, this.scratchAddress + 16) != 0) {
                throw new IllegalStateException("rpma_conn_get_qp_num failed");
            }
            this.queuePair = UNSAFE_ACCESS.getInt(this.scratchAddress + 16);
            this.connection = conn;
        }
        return result;
    }

    @Override
    public int rpma_srq_new(long peer, long cfg, long srqPtr) {
        int result = super.rpma_srq_new(peer, cfg, srqPtr);
        if (result == 0) {
            this.sharedReceiveQueue = read(srqPtr);
        }
        return result;
    }

    @Override
    public int rpma_srq_get_rcq(long srq, long rcqPtr) {
        int result = super.rpma_srq_get_rcq(srq, rcqPtr);
        if (result == 0 && srq == this.sharedReceiveQueue) {
            this.sharedCompletionQueue = read(rcqPtr);
        }
        return result;
    }

    @Override
    public int rpma_conn_get_cq(long conn, long cqPtr) {
        int result = super.rpma_conn_get_cq(conn, cqPtr);
        if (result == 0 && conn == this.connection) {
            this.completionQueue = read(cqPtr);
        }
        return result;
    }

    @Override
    public int rpma_cq_get_fd(long cq, long fd) {
        int q = queue(cq);
        if (q < 0) {
            return super.rpma_cq_get_fd(cq, fd);
        }
        write32(fd, this.eventFds[q]);
        return 0;
    }

    /** 0: the connection's completion queue, 1: the shared receive queue's, -1: the fake's. */
    private int queue(long cq) {
        if (cq == 0) {
            return -1;
        }
        return (cq == this.completionQueue) ? 0 : (cq == this.sharedCompletionQueue) ? 1 : -1;
    }

    // ---------------------------------------------------------------- the data path: allocation-free

    @Override
    public int rpma_recv(long conn, long dst, long offset, long len, long opContext) {
        if (conn != this.connection) {
            return super.rpma_recv(conn, dst, offset, len, opContext);
        }
        posted(dst, offset, opContext);
        return 0;
    }

    @Override
    public int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext) {
        if (srq != this.sharedReceiveQueue) {
            return super.rpma_srq_recv(srq, dst, offset, len, opContext);
        }
        posted(dst, offset, opContext);
        return 0;
    }

    @Override
    public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
        if (conn != this.connection) {
            return super.rpma_send(conn, src, offset, len, flags, opContext);
        }
        long address = regionAddress(src) + offset;
        complete(0, opContext, IBV_WC_SEND, 0);
        this.lastReply = read(address);
        this.replies++;
        return 0;
    }

    @Override
    public int rpma_cq_wait(long cq) {
        int q = queue(cq);
        if (q < 0) {
            return super.rpma_cq_wait(cq);
        }
        if (LibC.read(this.eventFds[q], this.scratchAddress, 8) != 8) {
            return RpmaError.NO_COMPLETION.code();
        }
        synchronized (this.lock) {
            this.armed[q] = true;
        }
        return 0;
    }

    @Override
    public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
        int q = queue(cq);
        if (q < 0) {
            return super.rpma_cq_get_wc(cq, numEntries, wc, numEntriesGot);
        }
        int got = 0;
        synchronized (this.lock) {
            while (got < numEntries && this.completionsTaken[q] < this.completionsAdded[q]) {
                int i = (int) (this.completionsTaken[q]++ % RING);
                long base = wc + got * 48L;
                UNSAFE_ACCESS.setMemory(base, 48, (byte) 0);
                write64(base, this.completionIds[q][i]);
                write32(base + 12, this.completionOpcodes[q][i]);
                write32(base + 20, this.completionLengths[q][i]);
                write32(base + 28, this.queuePair);
                got++;
            }
        }
        if (got == 0) {
            return RpmaError.NO_COMPLETION.code();
        }
        if (numEntriesGot != 0) {
            write32(numEntriesGot, got);
        }
        return 0;
    }

    // ---------------------------------------------------------------- the other side: the driver thread

    /** Puts {@code value} into the oldest posted receive and completes it; {@code false} when none is posted. */
    boolean deliver(long value) {
        long context;
        long address;
        synchronized (this.lock) {
            if (this.receivesTaken == this.receivesPosted) {
                return false;
            }
            int i = (int) (this.receivesTaken++ % RING);
            context = this.receiveContexts[i];
            address = this.receiveAddresses[i];
        }
        write64(address, value);
        complete((this.sharedCompletionQueue != 0) ? 1 : 0, context, IBV_WC_RECV, 8);
        return true;
    }

    /** Replies sent so far. */
    long replies() {
        return this.replies;
    }

    long lastReply() {
        return this.lastReply;
    }

    boolean established() {
        return this.completionQueue != 0;
    }

    void close() {
        LibC.close(this.eventFds[0]);
        LibC.close(this.eventFds[1]);
    }

    private void posted(long dst, long offset, long context) {
        long address = regionAddress(dst) + offset;
        synchronized (this.lock) {
            if (this.receivesPosted - this.receivesTaken == RING) {
                throw new IllegalStateException("more receives posted than the stub holds");
            }
            int i = (int) (this.receivesPosted++ % RING);
            this.receiveContexts[i] = context;
            this.receiveAddresses[i] = address;
        }
    }

    private void complete(int q, long context, int opcode, int length) {
        boolean signal;
        synchronized (this.lock) {
            int i = (int) (this.completionsAdded[q]++ % RING);
            this.completionIds[q][i] = context;
            this.completionOpcodes[q][i] = opcode;
            this.completionLengths[q][i] = length;
            signal = this.armed[q];
            this.armed[q] = false;
        }
        if (signal) {
            LibC.write(this.eventFds[q], this.scratchAddress + 8, 8);
        }
    }

    private long regionAddress(long region) {
        synchronized (this.lock) {
            for (int i = 0; i < this.regions; i++) {
                if (this.regionHandles[i] == region) {
                    return this.regionAddresses[i];
                }
            }
        }
        throw new IllegalStateException("not a registered region: " + region);
    }

    private static long read(long address) {
        return UNSAFE_ACCESS.getLong(address);
    }

    private static void write64(long address, long value) {
        UNSAFE_ACCESS.putLong(address, value);
    }

    private static void write32(long address, int value) {
        UNSAFE_ACCESS.putInt(address, value);
    }

    /** Raw loads and stores at native addresses, without a view object per access. */
    private static final sun.misc.Unsafe UNSAFE_ACCESS = unsafe();

    private static sun.misc.Unsafe unsafe() {
        try {
            java.lang.reflect.Field field = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            field.setAccessible(true);
            return (sun.misc.Unsafe) field.get(null);
        }
        catch (ReflectiveOperationException ex) {
            throw new IllegalStateException("sun.misc.Unsafe is not available", ex);
        }
    }
}
