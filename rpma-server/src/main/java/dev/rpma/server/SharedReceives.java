package dev.rpma.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaSharedReceiveQueue;
import dev.rpma.binding.RpmaSrqConfig;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The shared receive queue of one endpoint on one event loop ({@code messages.shared-receive-slots}):
 * the receives of all the endpoint's sessions on that loop, posted from one registered block of
 * slots, and the queue's receive completion queue, on which one look finds the messages of every
 * session. One per loop, so that the queue's completions, like a session's, are taken by one thread.
 *
 * <p>A completion names its session by queue pair number ({@link QueuePairTable}). A session is
 * bound when its data path starts (ESTABLISHED) and unbound when its connection is deleted; the
 * completions of a number not bound (a client that sent before the server read its ESTABLISHED) wait
 * until it is, and go back to the queue after {@link #UNCLAIMED_TIMEOUT}. A slot belongs to the queue:
 * the session that got a message posts it again once handled, even after the session ended. Before a
 * session's connection is deleted the queue is drained ({@link #drain()}), so no completion of a
 * deleted queue pair is left for a later connection that gets its number.
 *
 * <p>Created on the thread that listens, before the loops run (its receives are posted then); from
 * {@link #attach()} on its loop owns it; {@link #close()} once the loop ended (or never ran) and
 * the endpoint's sessions are deleted: the queue, then its slots' registration.
 */
final class SharedReceives implements RpmaEventLoop.IoHandler, RpmaEventLoop.BusyPoller {

    /** How long completions wait for their queue pair to be bound before their slots go back. */
    static final Duration UNCLAIMED_TIMEOUT = Duration.ofSeconds(5);

    private static final VarHandle POSTED;

    static {
        try {
            POSTED = MethodHandles.lookup().findVarHandle(SharedReceives.class, "posted", int.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final EndpointContext endpoint;

    private final RpmaEventLoop loop;

    private final RpmaSharedReceiveQueue srq;

    private final RpmaCompletionQueue rcq;

    private final BufferPool slots;

    private final BufferPool.Block block;

    private final int receiveLength;

    private final RpmaCompletions batch = new RpmaCompletions(RpmaServer.COMPLETION_BATCH);

    private final QueuePairTable<SessionDataPath> sessions = new QueuePairTable<>();

    /** Completions of queue pairs not bound: qp, slot, status, length, and when it came. */
    private final ArrayDeque<long[]> unclaimed = new ArrayDeque<>();

    private final Runnable drainLeft = this::drainLeft;

    private boolean attached;

    private long registration;

    private boolean inBatch;

    private boolean closed;

    private boolean sweepScheduled;

    @SuppressWarnings("unused") // through POSTED: written by the loop, read by meters
    private int posted;

    private SharedReceives(EndpointContext endpoint, RpmaEventLoop loop, RpmaSharedReceiveQueue srq,
            BufferPool slots) {
        this.endpoint = endpoint;
        this.loop = loop;
        this.srq = srq;
        this.rcq = srq.receiveCompletionQueue();
        this.slots = slots;
        this.block = slots.take();
        this.receiveLength = this.block.receiveLength();
    }

    /**
     * A queue of {@code count} slots of {@code slotSize} bytes with every receive posted, named in
     * {@code config} for the requests of this loop; nothing is left if it fails.
     */
    static SharedReceives create(EndpointContext endpoint, RpmaEventLoop loop, Rpma rpma, RpmaPeer peer,
            RpmaConnectionConfig config, int count, int slotSize) {
        RpmaSharedReceiveQueue srq;
        try (RpmaSrqConfig cfg = rpma.newSrqConfig().rqSize(count).rcqSize(count)) {
            srq = peer.newSharedReceiveQueue(cfg);
        }
        catch (RpmaException ex) {
            throw new IllegalStateException("Endpoint '" + endpoint.name() + "' cannot have a shared receive queue of "
                    + count + " slots (" + ex.getMessage() + "): lower messages.shared-receive-slots to what the device"
                    + " takes (its max_srq_wr), or set it to 0", ex);
        }
        BufferPool slots = new BufferPool(peer, slotSize, 0, count, 0, 1);
        try {
            SharedReceives shared = new SharedReceives(endpoint, loop, srq, slots);
            for (int i = 0; i < count; i++) {
                shared.post(i);
            }
            config.sharedReceiveQueue(srq);
            return shared;
        }
        catch (RuntimeException ex) {
            srq.close();
            slots.close();
            throw ex;
        }
    }

    /** Starts taking its completions; on its loop. */
    void attach() {
        int fd = this.rcq.fd();
        FileDescriptors.setBlocking(fd, false);
        // registered for the loop's life: deleted only after the loop ended
        this.registration = this.loop.registerBusyPolled(fd, this, 0);
        this.loop.addBusyPoller(this);
        this.attached = true;
        drain();
    }

    RpmaEventLoop loop() {
        return this.loop;
    }

    ByteBuffer frame(int slot) {
        return this.block.receiveFrames[slot];
    }

    ByteBuffer payload(int slot) {
        return this.block.receivePayloads[slot];
    }

    int receiveLength() {
        return this.receiveLength;
    }

    long registeredBytes() {
        return this.slots.registeredBytes();
    }

    // ---------------------------------------------------------------- sessions, on the loop

    /** The session of queue pair {@code qp} takes its messages from now on, those waiting first. */
    void bind(int qp, SessionDataPath session) {
        this.sessions.put(qp, session);
        for (Iterator<long[]> it = this.unclaimed.iterator(); it.hasNext();) {
            long[] waiting = it.next();
            if ((int) waiting[0] == qp) {
                it.remove();
                session.receivedShared((int) waiting[1], (int) waiting[2], (int) waiting[3]);
            }
        }
    }

    /** Once the session's connection is deleted. */
    void unbind(int qp, SessionDataPath session) {
        this.sessions.remove(qp, session);
    }

    /** Whether a batch is being handled: a session ending in it must not drain. */
    boolean inBatch() {
        return this.inBatch;
    }

    /** Posts slot {@code slot} again; a slot that cannot be posted is lost to the queue, with a log line. */
    void repost(int slot) {
        try {
            post(slot);
        }
        catch (RpmaException ex) {
            this.endpoint.statistics.recordError(ex);
            this.endpoint.warnings.warn("shared-receive-queue", "Endpoint '" + this.endpoint.name() + "' could not post"
                    + " a receive of its shared receive queue again (rpma_srq_recv); the queue has one slot less", ex);
        }
    }

    private void post(int slot) {
        this.srq.receive(this.block.receiveRegion, this.block.receiveOffset(slot), this.receiveLength, slot);
        POSTED.setOpaque(this, (int) POSTED.getOpaque(this) + 1);
    }

    /**
     * Receives posted and not yet filled: what the clients can still send before one waits
     * (receiver not ready). Any thread; a meter's reading.
     */
    int postedReceives() {
        return (int) POSTED.getOpaque(this);
    }

    // ---------------------------------------------------------------- completions, on the loop

    @Override
    public void onReadable(int kind) {
        if (!this.attached) {
            return;
        }
        try {
            this.rcq.await();
        }
        catch (RpmaException ex) {
            failed(ex, "rpma_cq_wait");
            return;
        }
        drain();
    }

    @Override
    public boolean pollOnce() {
        return this.attached && takeBatch() > 0;
    }

    /** Takes what is there, up to one pass over the queue's slots, unless a batch is being handled. */
    void drain() {
        if (!this.attached || this.inBatch) {
            return;
        }
        int most = this.block.receiveFrames.length / this.batch.capacity() + 1;
        for (int i = 0; i < most; i++) {
            if (takeBatch() < this.batch.capacity()) {
                return;
            }
        }
        this.loop.runSoon(this.drainLeft);
    }

    private void drainLeft() {
        drain();
    }

    private int takeBatch() {
        int count;
        this.inBatch = true;
        try {
            try {
                count = this.rcq.poll(this.batch);
            }
            catch (RpmaException ex) {
                failed(ex, "rpma_cq_get_wc");
                return 0;
            }
            if (count > 0) {
                POSTED.setOpaque(this, (int) POSTED.getOpaque(this) - count);
            }
            for (int i = 0; i < count; i++) {
                int qp = this.batch.qpNumber(i);
                int slot = (int) this.batch.context(i);
                int status = this.batch.status(i);
                int length = this.batch.byteLength(i);
                SessionDataPath session = this.sessions.get(qp);
                if (session != null) {
                    session.receivedShared(slot, status, length);
                }
                else {
                    unclaimed(qp, slot, status, length);
                }
            }
        }
        finally {
            this.inBatch = false;
        }
        return count;
    }

    private void unclaimed(int qp, int slot, int status, int length) {
        this.unclaimed.add(new long[] { qp, slot, status, length, System.nanoTime() });
        if (!this.sweepScheduled) {
            this.sweepScheduled = true;
            this.loop.schedule(this::sweep, UNCLAIMED_TIMEOUT);
        }
    }

    /** Completions no session claimed in time go back to the queue: their connection is gone. */
    private void sweep() {
        this.sweepScheduled = false;
        long now = System.nanoTime();
        long[] oldest;
        while ((oldest = this.unclaimed.peek()) != null && now - oldest[4] >= UNCLAIMED_TIMEOUT.toNanos()) {
            this.unclaimed.poll();
            repost((int) oldest[1]);
        }
        if (!this.unclaimed.isEmpty()) {
            this.sweepScheduled = true;
            this.loop.schedule(this::sweep, UNCLAIMED_TIMEOUT);
        }
    }

    private void failed(RpmaException ex, String function) {
        this.endpoint.statistics.recordError(ex);
        this.endpoint.warnings.warn("shared-receive-queue", "Endpoint '" + this.endpoint.name() + "': " + function
                + " failed on its shared receive queue's completion queue", ex);
    }

    // ---------------------------------------------------------------- release

    /**
     * Stops taking its completions and deletes it, while its loop goes on serving other endpoints: after
     * its device was lost, once no connection made with it is left. On its loop.
     */
    void detachAndClose() {
        if (this.attached) {
            this.loop.unregister(this.rcq.fd(), this.registration);
            this.loop.removeBusyPoller(this);
        }
        close();
    }

    /**
     * Deletes the queue and deregisters its slots, once no connection made with it is left and its
     * loop ended or never ran (the loop's epoll instance is closed with it: nothing to unregister).
     * Idempotent.
     */
    void close() {
        if (this.closed) {
            return;
        }
        this.closed = true;
        this.attached = false;
        this.unclaimed.clear();
        try {
            this.srq.close();
        }
        finally {
            this.slots.close();
        }
    }

    @Override
    public String toString() {
        return "SharedReceives[" + this.endpoint.name() + " on " + this.loop.name() + ", " + this.sessions.size()
                + " sessions]";
    }
}
