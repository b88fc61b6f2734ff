package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The data path of one session, on its event loop: its completion queue, its block of receive and
 * send slots, its wire format, its send queue, and the invocation of the endpoint's message handlers.
 *
 * <p>Receives: every receive slot is posted before the accept (by the acceptor) and posted again
 * after its message was handled, so at most the endpoint's receive slots are in flight towards the
 * server. Completions are taken in batches into the loop's pre-allocated {@link RpmaCompletions}:
 * after the completion channel reports an event (which re-arms the queue, so the queue is drained
 * then: a completion that came before the re-arm raises no event of its own), and in the loop's busy
 * poll. A receive's {@code wr_id} is its slot index, a send's its slot index with bit 32 set, a
 * read's ({@link SessionReads}) its index with bit 33 set, since the opcode of a failed completion is
 * undefined; the reads' completions are handed to the session's reads.
 *
 * <p>Sends: a message is copied into a free send slot (or built there, {@link RpmaSession#newMessage()})
 * and posted signaled, so its completion frees the slot; with no slot free, or in framed mode no
 * credit, it waits in the send queue, copied to the heap, until one is. Replies are copied out of
 * the receive slot before that slot is posted again (a reply may be the message itself), and posted
 * after it, so the reply's framing header grants that receive back at once.
 *
 * <p>With a shared receive queue ({@link SharedReceives}) the receives are the queue's: its completions
 * reach {@link #receivedShared} once the session is bound (when the data path starts), a handled
 * message's slot goes back to the queue even after the session ended, and the session's own
 * completion queue holds only its sends and reads, so the busy poll skips it while none is in flight.
 *
 * <p>Nothing is allocated per message on the loop: the views of the slots belong to the block, the
 * completions to the loop; only a send that has to wait, a {@code byte[]} parameter and the pool
 * dispatch allocate.
 *
 * <p>Longer than the other types here: receiving, handling, sending and the pool dispatch share one
 * session's slot bookkeeping (free and claimed send slots, reposts, credits), which must change in
 * one place on the loop; split into several types, each would reach into the others' state.
 */
final class SessionDataPath implements RpmaEventLoop.BusyPoller {

    static final long SEND = 1L << 32;

    /** Batches one readiness drains at most before the loop serves others; the rest in its next round. */
    private static final int BATCHES_PER_TURN = 4;

    private final ServerSession session;

    private final EndpointContext endpoint;

    private final RpmaConnection connection;

    private final RpmaCompletionQueue cq;

    private final BufferPool.Block block;

    /** The loop's shared receive queue, or {@code null}: the receives are the block's. */
    private final @Nullable SharedReceives shared;

    /** Bits of every send slot: all free. */
    private final long allSends;

    /** The queue pair number, once bound to {@link #shared}; -1 before. */
    private int queuePair = -1;

    private final WireFormat wire;

    private final RpmaCompletions batch;

    private final RpmaEventLoop loop;

    private final int receiveSlots;

    private final int sendSlots;

    /** Bytes each receive is posted for: the largest message the endpoint takes, header included. */
    private final int receiveLength;

    private final int maxPayload;

    private final int headerSize;

    private final boolean pooled;

    private final Runnable drainLeft = this::drainLeft;

    /** A bit per send slot: free. */
    private long freeSends;

    /** A bit per send slot: handed out by {@link #newMessage()} and not yet sent. */
    private long claimed;

    private final ArrayDeque<Queued> queued = new ArrayDeque<>();

    private int cqFd = -1;

    private long cqRegistration;

    private boolean attached;

    private boolean stopped;

    /** Whether a batch is being handled: the loop's completion batch must not be polled into again. */
    private boolean inBatch;

    /** {@link RpmaMessageDispatch#POOL}: a handler of this session runs on the pool (one at a time). */
    private boolean inPool;

    /** Receive slots waiting for the pool, in order. */
    private final ArrayDeque<WaitingForPool> waitingForPool = new ArrayDeque<>();

    /** A message waiting for the pool: its receive slot, route and request id (-1: none), its trace context. */
    private record WaitingForPool(int slot, int route, int reply, @Nullable String traceParent) {
    }

    private boolean releaseWhenPoolReturns;

    /** Messages until the next timed one: the first of each session, then one in HANDLER_TIMING_SAMPLE. */
    private int sampleCountdown = 1;

    /** A message waiting for a send slot or credits. */
    private record Queued(byte[] payload, int reply, boolean failed) {
    }

    SessionDataPath(ServerSession session, EndpointContext endpoint, RpmaConnection connection, BufferPool.Block block,
            @Nullable SharedReceives shared, RpmaEventLoop loop, RpmaCompletions batch) {
        this.session = session;
        this.endpoint = endpoint;
        this.connection = connection;
        this.cq = connection.completionQueue();
        this.block = block;
        this.shared = shared;
        this.loop = loop;
        this.batch = batch;
        this.wire = endpoint.newWire();
        RpmaEndpointSettings.Messages messages = endpoint.settings.messages();
        this.receiveSlots = messages.receiveSlots();
        this.sendSlots = messages.sendSlots();
        this.receiveLength = (shared != null) ? shared.receiveLength() : block.receiveLength();
        this.maxPayload = messages.maxMessageSize();
        this.headerSize = this.wire.headerSize();
        this.pooled = messages.dispatch() == RpmaMessageDispatch.POOL;
        this.allSends = (this.sendSlots == 64) ? -1L : (1L << this.sendSlots) - 1;
        this.freeSends = this.allSends;
    }

    // ---------------------------------------------------------------- lifecycle, on the loop

    /**
     * Starts taking completions, once the connection is established: messages that arrived before
     * wait in the queue meanwhile, and the framing's first frame goes out now.
     */
    void attach() {
        this.cqFd = this.cq.fd();
        FileDescriptors.setBlocking(this.cqFd, false);
        this.cqRegistration = this.loop.registerBusyPolled(this.cqFd, this.session, ServerSession.KIND_COMPLETIONS);
        this.attached = true;
        this.loop.addBusyPoller(this);
        sendControlFrame();
        drain();
        if (this.shared != null) {
            this.queuePair = this.connection.qpNumber();
            this.shared.bind(this.queuePair, this);
        }
    }

    /**
     * Stops taking completions and drops the messages waiting to be sent: the session ends. Before
     * its connection is deleted, which closes the completion channel's fd.
     */
    void stop() {
        if (this.stopped) {
            return;
        }
        this.stopped = true;
        if (this.attached) {
            this.attached = false;
            this.loop.removeBusyPoller(this);
            this.loop.unregister(this.cqFd, this.cqRegistration);
        }
        if (!this.queued.isEmpty()) {
            this.endpoint.statistics.recordQueuedSendsLeft(this.queued.size());
            this.queued.clear();
        }
        if (this.shared != null) {
            WaitingForPool waiting;
            while ((waiting = this.waitingForPool.poll()) != null) {
                this.shared.repost(waiting.slot());
            }
        }
    }

    /**
     * Just before the connection is deleted: what the shared receive queue holds is taken first, so
     * that none of it is left for a later connection that gets this queue pair's number.
     */
    void beforeDelete() {
        if (this.shared != null && this.queuePair >= 0) {
            this.shared.drain();
        }
    }

    /**
     * Gives the slots back to the pool: the connection is deleted, so the device writes no more into
     * them; a handler still running on the pool gives them back when it returns.
     */
    void release() {
        if (this.shared != null && this.queuePair >= 0) {
            SharedReceives queue = this.shared;
            int qp = this.queuePair;
            if (queue.inBatch()) {
                // the batch may hold more of this queue pair's completions: they find it, stopped, and go back
                this.loop.runSoon(() -> {
                    queue.drain();
                    queue.unbind(qp, this);
                });
            }
            else {
                queue.unbind(qp, this);
            }
        }
        if (this.inPool) {
            this.releaseWhenPoolReturns = true;
            return;
        }
        this.block.pool().give(this.block);
    }

    // ---------------------------------------------------------------- completions

    /** The completion channel reported an event: take it (which re-arms the queue), then drain. */
    void onCompletionEvent() {
        if (this.stopped) {
            return;
        }
        try {
            this.cq.await();
        }
        catch (RpmaException ex) {
            fail(ex, "rpma_cq_wait");
            return;
        }
        drain();
    }

    /** One look in the busy poll: one batch. */
    @Override
    public boolean pollOnce() {
        if (this.stopped || (this.shared != null && this.freeSends == this.allSends
                && !this.session.reads().hasInFlight())) {
            return false;
        }
        return takeBatch() > 0;
    }

    private void drain() {
        for (int i = 0; i < BATCHES_PER_TURN; i++) {
            if (this.stopped || takeBatch() < this.batch.capacity()) {
                return;
            }
        }
        // a full last batch: more may wait, and no event will say so
        this.loop.runSoon(this.drainLeft);
    }

    private void drainLeft() {
        if (!this.stopped) {
            drain();
        }
    }

    /**
     * Before the session ends on the client's CLOSED or a LOST: the messages that completed before it
     * are handled, whichever of the two fds the loop happened to look at first. Not from within a
     * batch (a flushed completion reads the event there), which handles the rest itself.
     */
    void drainBeforeEnd() {
        if (!this.attached || this.stopped || this.inBatch) {
            return;
        }
        if (this.shared != null) {
            this.shared.drain();
        }
        int most = (this.receiveSlots + this.sendSlots + this.endpoint.readsInFlight) / this.batch.capacity() + 2;
        for (int i = 0; i < most && !this.stopped; i++) {
            if (takeBatch() < this.batch.capacity()) {
                return;
            }
        }
    }

    /** Takes and handles one batch; how many completions it had. */
    private int takeBatch() {
        this.inBatch = true;
        try {
            return handleBatch();
        }
        finally {
            this.inBatch = false;
        }
    }

    private int handleBatch() {
        int count;
        try {
            count = this.cq.poll(this.batch);
        }
        catch (RpmaException ex) {
            fail(ex, "rpma_cq_get_wc");
            return 0;
        }
        for (int i = 0; i < count && !this.stopped; i++) {
            long context = this.batch.context(i);
            int status = this.batch.status(i);
            int slot = (int) context;
            if ((context & SessionReads.ONE_SIDED) != 0) {
                this.session.reads().completed(slot, status);
            }
            else if ((context & SEND) != 0) {
                if (status != CompletionStatus.SUCCESS) {
                    failedCompletion(RpmaEndpointStatistics.WorkRequest.SEND, "the send in slot " + slot, status);
                }
                else {
                    sent(slot);
                }
            }
            else {
                receiveCompleted(slot, status, this.batch.byteLength(i));
            }
        }
        if (count > 0 && !this.stopped) {
            sendControlFrame();
            sendQueued();
        }
        return count;
    }

    /** A completion of the shared receive queue for this session; in the queue's batch, on the loop. */
    void receivedShared(int slot, int status, int length) {
        if (this.stopped) {
            giveBack(slot);
            return;
        }
        receiveCompleted(slot, status, length);
        if (!this.stopped) {
            sendQueued();
        }
    }

    private void receiveCompleted(int slot, int status, int length) {
        if (status == CompletionStatus.SUCCESS) {
            received(slot, length);
            return;
        }
        String what = ((this.shared != null) ? "the receive in slot " + slot + " of the shared receive queue"
                : "the receive in slot " + slot);
        // soft-RoCE reports a message longer than the receive as LOC_QP_OP_ERR
        if (status == CompletionStatus.LOC_LEN_ERR || status == CompletionStatus.LOC_QP_OP_ERR) {
            bad(RpmaEndpointStatistics.BadMessage.OVERSIZED, what + " failed with "
                    + CompletionStatus.describe(status) + ": a message larger than the " + this.receiveLength
                    + " bytes a receive takes (max-message-size " + this.maxPayload + ")");
        }
        else {
            failedCompletion(RpmaEndpointStatistics.WorkRequest.RECEIVE, what, status);
        }
        giveBack(slot);
    }

    /**
     * A completion of the work request {@code what} failed: named by the {@code wr_id} it was posted
     * with, since verbs leaves the opcode of a failed completion undefined. A flush is the queue pair
     * breaking (the connection's event says why); anything else is counted and logged.
     */
    private void failedCompletion(RpmaEndpointStatistics.WorkRequest request, String what, int status) {
        if (status == CompletionStatus.WR_FLUSH_ERR) {
            this.session.queuePairFlushed(what);
            return;
        }
        String detail = what + " completed with " + CompletionStatus.describe(status);
        this.endpoint.statistics.recordFailedCompletion(request);
        this.endpoint.warnings.warn("failed-completion", "Session " + this.session.id() + " of endpoint '"
                + this.endpoint.name() + "' ends: " + detail);
        this.session.end(RpmaSessionEnd.Reason.ERROR, detail, null);
    }

    private void fail(RpmaException ex, String function) {
        this.endpoint.statistics.recordError(ex);
        this.session.end(RpmaSessionEnd.Reason.ERROR, function + " failed: " + ex.getMessage(), ex);
    }

    /** The handler's reason, escaped: it is asked not to quote the peer's bytes, but may. */
    private static String outOfProtocol(RpmaProtocolException ex) {
        return RpmaEscaping.escape(String.valueOf(ex.getMessage()), 256);
    }

    /** A message (a bad one included) of {@code bytes} of payload: counted as the sent ones are. */
    private void receivedMessage(int bytes) {
        this.endpoint.statistics.recordReceived(bytes);
        this.session.receivedOne(true);
    }

    private void bad(RpmaEndpointStatistics.BadMessage kind, String detail) {
        this.endpoint.statistics.recordBadMessage(kind);
        this.endpoint.warnings.warn("bad-message", "Session " + this.session.id() + " of endpoint '"
                + this.endpoint.name() + "' ends: " + detail);
        this.session.end(RpmaSessionEnd.Reason.ERROR, detail, null);
    }

    // ---------------------------------------------------------------- receiving

    private void received(int slot, int length) {
        if (length == 0) {
            receivedMessage(0);
            bad(RpmaEndpointStatistics.BadMessage.EMPTY, "an empty message (0 bytes)");
            giveBack(slot);
            return;
        }
        ByteBuffer frame = (this.shared != null) ? this.shared.frame(slot) : this.block.receiveFrames[slot];
        frame.clear();
        WireFormat.Kind kind;
        try {
            kind = this.wire.read(frame, length);
        }
        catch (RpmaProtocolException ex) {
            receivedMessage(length);
            bad(RpmaEndpointStatistics.BadMessage.MALFORMED, "a malformed message: " + ex.getMessage());
            giveBack(slot);
            return;
        }
        if (kind == WireFormat.Kind.CONTROL) {
            // the framing's own (HELLO, CREDIT): activity, not a message, as the server's own are not counted sent
            this.session.receivedOne(false);
            repost(slot);
            return;
        }
        int payloadLength = frame.remaining();
        receivedMessage(payloadLength);
        ByteBuffer payload = payload(slot);
        payload.order(ByteOrder.LITTLE_ENDIAN).limit(payloadLength).position(0);
        int route = this.wire.route();
        int reply = (kind == WireFormat.Kind.REQUEST) ? this.wire.requestId() : -1;
        if (route < 0) {
            noRoute(slot, frame, length, reply);
            return;
        }
        RpmaMessageListener handler = this.endpoint.handlers[route];
        String traceParent = this.wire.traceParent();
        if (this.pooled) {
            toPool(slot, route, reply, traceParent);
            return;
        }
        Object result = null;
        Throwable failure = null;
        boolean timed = --this.sampleCountdown == 0;
        long start = timed ? System.nanoTime() : 0;
        try {
            result = invoke(handler, payload, traceParent);
        }
        catch (RpmaProtocolException ex) {
            this.claimed = 0;
            bad(RpmaEndpointStatistics.BadMessage.MALFORMED, "out of protocol: " + outOfProtocol(ex));
            giveBack(slot);
            return;
        }
        catch (Throwable ex) {
            failure = ex;
        }
        if (timed) {
            this.sampleCountdown = RpmaServer.HANDLER_TIMING_SAMPLE;
            this.endpoint.observer.messageHandled(this.endpoint.name(), handler.name(), System.nanoTime() - start,
                    failure != null);
        }
        handled(slot, handler, reply, result, failure);
    }

    /**
     * Runs the handler; a message that carried a trace context goes through the observer, which may
     * make its invocation the child of the client's span. Others go straight to the handler.
     */
    private @Nullable Object invoke(RpmaMessageListener handler, ByteBuffer payload, @Nullable String traceParent)
            throws Exception {
        if (traceParent == null) {
            return handler.onMessage(payload, this.session);
        }
        return this.endpoint.observer.handleTraced(this.endpoint.name(), handler, traceParent, payload, this.session);
    }

    /** After a handler returned: its reply out of the slot, the slot posted again, the reply sent. */
    private void handled(int slot, RpmaMessageListener handler, int reply, @Nullable Object result,
            @Nullable Throwable failure) {
        if (failure != null) {
            this.endpoint.statistics.recordHandlerFailure();
            this.endpoint.warnings.warn("message-handler", "Message handler " + handler.name() + " failed on session "
                    + this.session.id() + " of endpoint '" + this.endpoint.name() + "'", failure);
        }
        if (this.stopped) {
            this.claimed = 0;
            giveBack(slot);
            return;
        }
        int sendSlot = -1;
        int length = 0;
        byte[] waiting = null;
        if (failure == null && (result != null || reply >= 0)) {
            try {
                ByteBuffer message = toBuffer(result);
                length = message.remaining();
                checkLength(length, reply >= 0);
                sendSlot = stage(message);
                if (sendSlot < 0) {
                    waiting = copy(message);
                }
            }
            catch (IllegalArgumentException | IllegalStateException ex) {
                failure = ex;
                this.endpoint.statistics.recordHandlerFailure();
                this.endpoint.warnings.warn("reply", "The reply of message handler " + handler.name() + " on session "
                        + this.session.id() + " of endpoint '" + this.endpoint.name() + "' cannot be sent", ex);
            }
        }
        if (failure != null && reply >= 0) {
            waiting = ("handler failed: " + failure.getClass().getSimpleName()).getBytes(StandardCharsets.UTF_8);
        }
        this.claimed = 0;
        repost(slot);
        if (sendSlot >= 0) {
            post(sendSlot, length, reply, false);
        }
        else if (waiting != null) {
            enqueue(waiting, reply, failure != null);
        }
    }

    private void noRoute(int slot, ByteBuffer frame, int length, int reply) {
        String route = RpmaEscaping.escape(FramedWire.routeText(frame, length), FramedWire.MAX_ROUTE_LENGTH);
        this.endpoint.warnings.warn("no-route", "Session " + this.session.id() + " of endpoint '"
                + this.endpoint.name() + "' sent a message to route \"" + route + "\", which has no handler; the"
                + " routes are " + this.endpoint.routes);
        repost(slot);
        if (reply >= 0) {
            enqueueOrSend(("no handler for route \"" + route + "\"").getBytes(StandardCharsets.UTF_8), reply, true);
        }
    }

    private void repost(int slot) {
        if (this.shared != null) {
            this.shared.repost(slot);
            return;
        }
        if (this.stopped) {
            return;
        }
        try {
            this.connection.receive(this.block.receiveRegion, this.block.receiveOffset(slot), this.receiveLength, slot);
        }
        catch (RpmaException ex) {
            fail(ex, "rpma_recv");
            return;
        }
        this.wire.receiveReposted();
    }

    /** A slot the session ends with: the shared queue's goes back to it; a block's stays with the block. */
    private void giveBack(int slot) {
        if (this.shared != null) {
            this.shared.repost(slot);
        }
    }

    private ByteBuffer payload(int slot) {
        return (this.shared != null) ? this.shared.payload(slot) : this.block.receivePayloads[slot];
    }

    // ---------------------------------------------------------------- the pool

    private void toPool(int slot, int route, int reply, @Nullable String traceParent) {
        if (this.inPool) {
            if (this.shared != null && this.waitingForPool.size() >= this.receiveSlots) {
                // slots of the shared queue: one session must not hold them all while its handler is slow
                this.session.end(RpmaSessionEnd.Reason.CAPACITY, "more than " + this.receiveSlots + " messages waited"
                        + " for the message pool (receive-slots): the client sends faster than its handler takes them",
                        null);
                giveBack(slot);
                return;
            }
            this.waitingForPool.add(new WaitingForPool(slot, route, reply, traceParent));
            return;
        }
        submit(slot, route, reply, traceParent);
    }

    private void submit(int slot, int route, int reply, @Nullable String traceParent) {
        RpmaMessageListener handler = this.endpoint.handlers[route];
        ByteBuffer payload = payload(slot);
        this.inPool = true;
        boolean timed = --this.sampleCountdown == 0;
        if (timed) {
            this.sampleCountdown = RpmaServer.HANDLER_TIMING_SAMPLE;
        }
        boolean offered = this.endpoint.messagePool.offer(() -> {
            Object result = null;
            Throwable failure = null;
            long start = timed ? System.nanoTime() : 0;
            try {
                result = invoke(handler, payload, traceParent);
            }
            catch (Throwable ex) {
                failure = ex;
            }
            if (timed) {
                this.endpoint.observer.messageHandled(this.endpoint.name(), handler.name(), System.nanoTime() - start,
                        failure != null);
            }
            // the reply leaves the slot before the loop posts it again
            byte[] bytes = null;
            if (failure == null && result != null) {
                try {
                    bytes = copy(toBuffer(result));
                }
                catch (RuntimeException ex) {
                    failure = ex;
                }
            }
            Throwable failed = failure;
            byte[] replyBytes = bytes;
            if (!this.loop.tryExecute(() -> poolReturned(slot, handler, reply, replyBytes, failed))) {
                // the loop stopped: nothing of this session is served any more
                this.inPool = false;
            }
        });
        if (!offered) {
            this.inPool = false;
            this.session.end(RpmaSessionEnd.Reason.CAPACITY, "the endpoint's message pool is full", null);
            giveBack(slot);
        }
    }

    private void poolReturned(int slot, RpmaMessageListener handler, int reply, byte @Nullable [] bytes,
            @Nullable Throwable failure) {
        this.inPool = false;
        if (this.releaseWhenPoolReturns) {
            giveBack(slot);
            this.waitingForPool.clear();
            this.block.pool().give(this.block);
            return;
        }
        if (failure instanceof RpmaProtocolException protocol) {
            bad(RpmaEndpointStatistics.BadMessage.MALFORMED, "out of protocol: " + outOfProtocol(protocol));
            giveBack(slot);
            return;
        }
        handled(slot, handler, reply, bytes, failure);
        WaitingForPool next = this.waitingForPool.poll();
        if (next != null && !this.stopped) {
            submit(next.slot(), next.route(), next.reply(), next.traceParent());
        }
    }

    // ---------------------------------------------------------------- sending

    /** {@link RpmaSession#newMessage()} on the loop: a free send slot's payload view, or a heap buffer. */
    ByteBuffer newMessage() {
        long available = this.freeSends & ~this.claimed;
        if (available == 0 && this.shared != null && !this.inBatch && !this.stopped) {
            takeSendCompletions();
            available = this.freeSends & ~this.claimed;
        }
        if (available == 0 || this.stopped) {
            return ByteBuffer.allocate(this.maxPayload).order(ByteOrder.LITTLE_ENDIAN);
        }
        int slot = Long.numberOfTrailingZeros(available);
        this.claimed |= 1L << slot;
        ByteBuffer view = this.block.sendPayloads[slot];
        view.order(ByteOrder.LITTLE_ENDIAN).clear().limit(this.maxPayload);
        return view;
    }

    /** {@link RpmaSession#send} on the loop: a one-way message. */
    void send(ByteBuffer message) {
        int length = message.remaining();
        checkLength(length, false);
        if (this.stopped) {
            throw new IllegalStateException("Session " + this.session.id() + " has ended; nothing more is sent on it");
        }
        int slot = stage(message);
        if (slot >= 0) {
            post(slot, length, -1, false);
        }
        else {
            enqueue(copy(message), -1, false);
        }
    }

    /** A message copied on another thread, sent on the loop. */
    void sendCopied(byte[] message) {
        if (!this.stopped) {
            enqueueOrSend(message, -1, false);
        }
    }

    private void enqueueOrSend(byte[] payload, int reply, boolean failed) {
        if (this.queued.isEmpty() && this.wire.maySend() && freeSlot() >= 0) {
            int slot = freeSlot();
            this.block.sendPayloads[slot].clear().put(0, payload);
            post(slot, payload.length, reply, failed);
        }
        else {
            enqueue(payload, reply, failed);
        }
    }

    /** Whether a message of {@code length} bytes can be sent; reads only the settings, so any thread. */
    void checkLength(int length, boolean mayBeEmpty) {
        if (length > this.maxPayload) {
            throw new IllegalArgumentException("A message of " + length + " bytes is larger than the endpoint's"
                    + " max-message-size of " + this.maxPayload + " bytes");
        }
        if (length == 0 && !mayBeEmpty && this.headerSize == 0) {
            throw new IllegalArgumentException("An empty message cannot be sent in raw mode: the other side would see"
                    + " a receive of 0 bytes");
        }
    }

    /**
     * Puts {@code message} into a send slot without posting it; -1 when it has to wait (no slot, no
     * credits, or messages before it waiting). A claimed slot's own view is used in place.
     */
    private int stage(ByteBuffer message) {
        if (!this.queued.isEmpty() || !this.wire.maySend()) {
            return -1;
        }
        for (long bits = this.claimed; bits != 0; bits &= bits - 1) {
            int slot = Long.numberOfTrailingZeros(bits);
            ByteBuffer view = this.block.sendPayloads[slot];
            if (message == view) {
                this.claimed &= ~(1L << slot);
                if (view.position() != 0) {
                    // built after an offset: moved to the slot's start, where the header expects the payload
                    view.compact().flip();
                }
                return slot;
            }
        }
        int slot = freeSlot();
        if (slot < 0 && this.shared != null && !this.inBatch) {
            takeSendCompletions();
            slot = freeSlot();
        }
        if (slot < 0) {
            return -1;
        }
        this.block.sendPayloads[slot].clear().put(0, message, message.position(), message.remaining());
        return slot;
    }

    /**
     * With a shared receive queue, the sends' completions are on this session's queue, not in the
     * shared queue's batch that is being handled: taken when a send slot is wanted, rather than a
     * message copied to the heap to wait for one.
     */
    private void takeSendCompletions() {
        takeBatch();
    }

    /** A free, unclaimed send slot, or -1. */
    private int freeSlot() {
        long available = this.freeSends & ~this.claimed;
        return (available == 0) ? -1 : Long.numberOfTrailingZeros(available);
    }

    private void post(int slot, int payloadLength, int reply, boolean failed) {
        this.wire.writeHeader(this.block.sendFrames[slot], payloadLength, reply, failed);
        if (postFrame(slot, this.headerSize + payloadLength)) {
            this.endpoint.statistics.recordSent(payloadLength);
            this.session.sentOne();
        }
    }

    /** Posts the frame in send slot {@code slot}, signaled, so its completion frees the slot. */
    private boolean postFrame(int slot, int length) {
        this.freeSends &= ~(1L << slot);
        try {
            this.connection.send(this.block.sendRegion, this.block.sendOffset(slot), length, CompletionMode.ALWAYS,
                    SEND | slot);
            return true;
        }
        catch (RpmaException ex) {
            fail(ex, "rpma_send");
            return false;
        }
    }

    private void sent(int slot) {
        this.freeSends |= 1L << slot;
    }

    private void enqueue(byte[] payload, int reply, boolean failed) {
        int limit = this.endpoint.settings.messages().sendQueueLimit();
        if (this.queued.size() >= limit) {
            this.session.end(RpmaSessionEnd.Reason.CAPACITY, "more than " + limit + " messages waited to be sent: the"
                    + " client does not take them as fast as they come (send-queue-limit)", null);
            return;
        }
        this.queued.add(new Queued(payload, reply, failed));
        this.endpoint.statistics.recordSendQueued();
    }

    /** Sends what waits, while slots and credits allow. */
    private void sendQueued() {
        int sent = 0;
        while (!this.queued.isEmpty() && !this.stopped && this.wire.maySend()) {
            int slot = freeSlot();
            if (slot < 0) {
                break;
            }
            Queued next = this.queued.poll();
            this.block.sendPayloads[slot].clear().put(0, next.payload());
            sent++;
            post(slot, next.payload().length, next.reply(), next.failed());
        }
        if (sent > 0) {
            this.endpoint.statistics.recordQueuedSendsLeft(sent);
        }
    }

    /** A control frame of the wire format (framed: HELLO, CREDIT), when one is due and a slot is free. */
    private void sendControlFrame() {
        if (this.headerSize == 0 || this.stopped) {
            return;
        }
        int slot = freeSlot();
        if (slot < 0) {
            return;
        }
        int length = this.wire.controlFrame(this.block.sendFrames[slot], true);
        if (length > 0) {
            postFrame(slot, length);
        }
    }

    private static ByteBuffer toBuffer(@Nullable Object result) {
        if (result == null) {
            return ByteBuffer.allocate(0);
        }
        if (result instanceof ByteBuffer buffer) {
            return buffer;
        }
        if (result instanceof byte[] bytes) {
            return ByteBuffer.wrap(bytes);
        }
        throw new IllegalStateException("A message handler returned a " + result.getClass().getName()
                + "; return a ByteBuffer, a byte[] or null (or let a codec encode it)");
    }

    private static byte[] copy(ByteBuffer message) {
        byte[] bytes = new byte[message.remaining()];
        message.get(message.position(), bytes);
        return bytes;
    }

    /** Slots handed out by {@link #newMessage()} and not sent go back: the code that took them returned. */
    void releaseClaims() {
        this.claimed = 0;
    }

    /** Sends waiting now, for the actuator. */
    int queuedSends() {
        return this.queued.size();
    }

    WireFormat wire() {
        return this.wire;
    }
}
