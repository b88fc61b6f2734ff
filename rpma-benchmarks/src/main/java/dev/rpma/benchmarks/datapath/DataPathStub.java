package dev.rpma.benchmarks.datapath;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;

import dev.rpma.binding.RpmaError;
import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.ForwardingLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.server.RpmaFraming;

/**
 * The scripted fake with the data path of ONE connection replaced by a stand-in that allocates
 * nothing: receives and sends are slots in preallocated rings, completions are written as
 * {@code struct ibv_wc} into the caller's memory, the completion channel is an eventfd that is
 * written only while the queue is armed (as {@code ibv_req_notify_cq} arms it). Everything else
 * (peer, endpoint, request, connect, memory registration) is the fake's, so the server sets up as
 * it always does; the per-message calls then cost what a device's library call costs at least (a
 * few stores), and what the loop thread allocates is the starter's alone.
 *
 * <p>The other side ({@link Peer}) is either the server benchmark's driver thread ({@link #deliver},
 * {@link #replies}): it puts a message into the oldest posted receive and completes it; each
 * {@code rpma_send} of the server completes at once, and its 8-byte payload is the reply. With a
 * shared receive queue the receives are the queue's ({@code rpma_srq_recv}) and complete on its
 * receive completion queue, with the connection's queue pair number, as a device's do. Or, for the
 * client benchmark, a server that answers each {@code rpma_send} of the client at once, inside the
 * call (on the client's loop thread, allocating nothing): in raw mode with the same bytes, in the
 * starter's framing (docs/wire-protocol.md) with a HELLO to the client's HELLO and a REPLY to each
 * REQUEST that carries its request id and payload, every frame granting back the receives the
 * client's frames took since the last one, as a server that reposts each receive does.
 */
final class DataPathStub extends ForwardingLibRpma {

    /** What the other side of the connection does with each {@code rpma_send}. */
    enum Peer {
        /** The server benchmark's driver: the send's 8-byte payload is the reply; the driver delivers messages. */
        DRIVER,
        /** A raw server: each message is answered at once with the same bytes. */
        RAW_ECHO,
        /** A framed server with {@link #SERVER_RECEIVES} receives: HELLO answers HELLO, REPLY (the same payload) answers REQUEST. */
        FRAMED_ECHO
    }

    /** The framed server's receives, all posted before the connection (its HELLO grants them). */
    static final int SERVER_RECEIVES = 64;

    /** The largest payload the framed server's HELLO says it takes. */
    static final int SERVER_MAX_PAYLOAD = 4096;

    private final Peer peer;

    /** Framed: the receives the client's frames took and the server reposted, not yet granted back. */
    private int owedCredits;

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

    /**
     * Two eventfd counters (what the loop reads into, and the 1 the other side writes), a queue pair
     * number, and the framed server's HELLO payload.
     */
    private final ByteBuffer scratch = NativeMemory.allocate(32).order(ByteOrder.nativeOrder()).putLong(8, 1);

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
        this(fake, Peer.DRIVER);
    }

    DataPathStub(LibRpma fake, Peer peer) {
        super(fake);
        this.peer = peer;
        for (int q = 0; q < 2; q++) {
            this.eventFds[q] = LibC.eventfd(0, LibC.EFD_CLOEXEC | LibC.EFD_NONBLOCK);
            if (this.eventFds[q] < 0) {
                throw new IllegalStateException("eventfd() failed");
            }
        }
    }

    /**
     * Waits until {@code client} (built on this stand-in, one connection, named {@code name}) is
     * established on both sides, and returns its event loop's thread, whose CPU time the client
     * benchmarks measure.
     */
    Thread awaitClient(RpmaClient client, String name) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!established() || client.connections().get(0).state() != RpmaClientConnectionState.ESTABLISHED) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("the benchmark's connection was not established");
            }
            Thread.sleep(1);
        }
        return Thread.getAllStackTraces()
            .keySet()
            .stream()
            .filter((thread) -> thread.getName().equals("rpma-client-" + name + "-0"))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("no event loop thread of client " + name));
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
        switch (this.peer) {
            case DRIVER -> this.lastReply = read(address);
            case RAW_ECHO -> answer(address, (int) len, -1, 0, 0, 0);
            case FRAMED_ECHO -> answerFrame(address);
        }
        this.replies++;
        return 0;
    }

    /** The framed server's answer to the frame at {@code frame}: it took a receive, which is reposted at once. */
    private void answerFrame(long frame) {
        this.owedCredits++;
        int type = UNSAFE_ACCESS.getByte(frame + 2);
        if (type == RpmaFraming.HELLO) {
            // all its receives but the one the client assumed, and the one the client's HELLO took
            int granted = SERVER_RECEIVES - 1 + this.owedCredits;
            this.owedCredits = 0;
            UNSAFE_ACCESS.putInt(this.scratchAddress + 24, SERVER_MAX_PAYLOAD);
            answer(this.scratchAddress + 24, Integer.BYTES, RpmaFraming.HELLO, granted, 0, Integer.BYTES);
        }
        else if (type == RpmaFraming.REQUEST) {
            int granted = this.owedCredits;
            this.owedCredits = 0;
            int length = UNSAFE_ACCESS.getInt(frame + 12);
            answer(frame + RpmaFraming.HEADER_SIZE, length, RpmaFraming.REPLY, granted, UNSAFE_ACCESS.getInt(frame + 8),
                    length);
        }
        // CREDIT and MESSAGE frames are not answered: their receives are granted back with the next answer
    }

    /**
     * Puts {@code length} bytes from {@code source} into the client's oldest posted receive and
     * completes it; with {@code type} 0 or more, after a frame header (little-endian, as x86 stores).
     */
    private void answer(long source, int length, int type, int credits, int requestId, int payloadLength) {
        long context;
        long address;
        synchronized (this.lock) {
            if (this.receivesTaken == this.receivesPosted) {
                throw new IllegalStateException("the client has no receive posted for the answer");
            }
            int i = (int) (this.receivesTaken++ % RING);
            context = this.receiveContexts[i];
            address = this.receiveAddresses[i];
        }
        int header = 0;
        if (type >= 0) {
            header = RpmaFraming.HEADER_SIZE;
            UNSAFE_ACCESS.putByte(address, RpmaFraming.MAGIC);
            UNSAFE_ACCESS.putByte(address + 1, RpmaFraming.VERSION);
            UNSAFE_ACCESS.putByte(address + 2, (byte) type);
            UNSAFE_ACCESS.putByte(address + 3, (byte) 0);
            UNSAFE_ACCESS.putShort(address + 4, (short) credits);
            UNSAFE_ACCESS.putShort(address + 6, (short) 0);
            write32(address + 8, requestId);
            write32(address + 12, payloadLength);
        }
        UNSAFE_ACCESS.copyMemory(source, address + header, length);
        complete(0, context, IBV_WC_RECV, header + length);
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
