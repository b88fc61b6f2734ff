package dev.rpma.client;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.RpmaEscaping;
import dev.rpma.server.RpmaFraming;
import dev.rpma.server.RpmaProtocolException;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * The data path of one connection of a pooled {@link ClientConnection}, on its event loop: receives
 * (all posted on the request, before the connect, as the framing requires), sends from registered
 * slots, the framing's credits, the requests waiting to be sent and those waiting for their reply
 * (by request id), raw exchanges (answered in order), and one-sided operations.
 *
 * <p>A receive's work request id is its slot; a send's its slot with {@link #SEND} set; a one-sided
 * operation's its index with {@link #ONE_SIDED} set: the opcode of a failed completion is undefined.
 * A reply's payload is copied out of its receive and delivered before the receive is posted again.
 * A request that finds nothing waiting before it and a slot, a credit and the raw window free is
 * posted in the call that submits it (also when it comes from a callback of a post, inside a pump in
 * progress); otherwise it waits, and the queue is pumped as completions free what it waits for.
 *
 * <p>Past 400 lines because sends, receives, credits, exchanges and one-sided operations share one
 * completion queue, its dispatch by work request id and the slot bookkeeping, which change together
 * on the loop; split apart, each part would reach into the others' state.
 */
final class ClientDataPath implements RpmaEventLoop.BusyPoller, RpmaEventLoop.IoHandler {

    static final long SEND = 1L << 32;

    static final long ONE_SIDED = 1L << 33;

    private static final int BATCHES_PER_TURN = 4;

    /** What a one-way message's future completes with: {@code send} turns it into {@code null}, so one serves all. */
    private static final byte[] POSTED = new byte[0];

    /** What was left when the path stopped: handed back to the pool to retry or fail. */
    record Leftovers(List<PendingRequest> unsent, List<PendingRequest> sent, List<OneSidedOperation> operations) {
    }

    private final ClientConnection owner;

    private final RpmaClientSettings settings;

    private final ClientSlots slots;

    private final RpmaEventLoop loop;

    private final @Nullable RpmaFraming framing;

    private final RpmaCompletions batch = new RpmaCompletions(16);

    private final ArrayDeque<PendingRequest> waiting = new ArrayDeque<>();

    /** Framed: requests sent and not answered, by request id. */
    private final InFlightRequests inFlight = new InFlightRequests();

    /** Raw: exchanges sent, answered in order. */
    private final ArrayDeque<PendingRequest> exchanges = new ArrayDeque<>();

    private final OneSidedOperation[] operations;

    private final ArrayDeque<OneSidedOperation> waitingOperations = new ArrayDeque<>();

    private final long allSends;

    private long freeSends;

    private long freeOperations;

    private int nextRequestId;

    private @Nullable RpmaConnection connection;

    private @Nullable RpmaCompletionQueue cq;

    private int cqFd = -1;

    private long cqRegistration;

    private boolean attached;

    private boolean stopped;

    ClientDataPath(ClientConnection owner, RpmaClientSettings settings, ClientSlots slots, RpmaEventLoop loop) {
        this.owner = owner;
        this.settings = settings;
        this.slots = slots;
        this.loop = loop;
        this.framing = settings.framed() ? new RpmaFraming(settings.maxMessageSize(), settings.receiveSlots(), false) : null;
        this.allSends = (settings.sendSlots() == 64) ? -1L : (1L << settings.sendSlots()) - 1;
        this.freeSends = this.allSends;
        this.operations = new OneSidedOperation[settings.oneSidedDepth()];
        this.freeOperations = (settings.oneSidedDepth() >= 64) ? -1L : (1L << settings.oneSidedDepth()) - 1;
    }

    /** Posts every receive on the request, so that the server's first frame has one. */
    void postReceives(RpmaConnectionRequest request) {
        for (int i = 0; i < this.slots.receives.length; i++) {
            request.receive(this.slots.receiveRegion, this.slots.offset(i), this.slots.receiveLength, i);
        }
    }

    /** Established: completions are taken from now on, and the framing's HELLO goes out. */
    void attach(RpmaConnection connection) {
        this.connection = connection;
        RpmaCompletionQueue queue = connection.completionQueue();
        this.cq = queue;
        this.cqFd = queue.fd();
        FileDescriptors.setBlocking(this.cqFd, false);
        this.cqRegistration = this.loop.registerBusyPolled(this.cqFd, this, 0);
        this.loop.addBusyPoller(this);
        this.attached = true;
        sendControlFrame();
        pump();
    }

    boolean isAttached() {
        return this.attached && !this.stopped;
    }

    // ---------------------------------------------------------------- requests

    /** Takes a request to send; {@code false} once stopped (the caller gives it to another connection). */
    boolean submit(PendingRequest request) {
        if (this.stopped) {
            return false;
        }
        if (this.waiting.isEmpty() && mayPost(request)) {
            send(request);
        }
        else {
            this.waiting.add(request);
            pump();
        }
        return true;
    }

    /**
     * Adds to {@code into} the requests it holds whose deadline passed by {@code timer}'s sweep, taken out
     * of where they are, so that a late reply finds nothing: those waiting and the framed requests sent.
     * A raw exchange sent keeps its place, ended: the server answers in order, and its answer, when it
     * comes, is dropped instead of being taken for the next exchange's.
     */
    void takeDue(RequestTimer timer, List<PendingRequest> into) {
        timer.takeDue(this.waiting, into);
        for (PendingRequest exchange : this.exchanges) {
            if (!exchange.finished && timer.due(exchange)) {
                into.add(exchange);
            }
        }
        this.inFlight.takeDue(timer, into);
    }

    /** Sends what waits, while slots, credits and the raw window allow. */
    private void pump() {
        if (!this.attached || this.stopped) {
            return;
        }
        PendingRequest next;
        while ((next = this.waiting.peek()) != null) {
            if (!isCancelled(next) && !mayPost(next)) {
                return;
            }
            this.waiting.poll();
            if (!send(next)) {
                return;
            }
        }
    }

    /** Whether a slot, a credit and the raw window let {@code request} go now. */
    private boolean mayPost(PendingRequest request) {
        return this.attached && !this.stopped && this.freeSends != 0 && (this.framing == null || this.framing.maySend())
                && (request.kind != PendingRequest.Kind.RAW_EXCHANGE || this.exchanges.size() < this.settings.rawWindow());
    }

    /** Its caller cancelled its future before it was sent. */
    private static boolean isCancelled(PendingRequest request) {
        return request.finished || request.isDone();
    }

    /**
     * Posts {@code request} into a free slot, or ends it when it was cancelled; {@code false} when the post
     * failed: the request went nowhere, so it waits here again, or, when the failure stopped this path,
     * goes back to its connection, which gives it to another.
     */
    private boolean send(PendingRequest request) {
        if (isCancelled(request)) {
            this.owner.finishCancelled(request);
            return true;
        }
        if (post(Long.numberOfTrailingZeros(this.freeSends), request)) {
            return true;
        }
        request.requestId = -1;
        if (this.stopped) {
            this.owner.notSent(request);
        }
        else {
            this.waiting.addFirst(request);
        }
        return false;
    }

    private boolean post(int slot, PendingRequest request) {
        ByteBuffer frame = this.slots.sends[slot];
        int length;
        if (this.framing != null) {
            int type = (request.kind == PendingRequest.Kind.REQUEST) ? RpmaFraming.REQUEST : RpmaFraming.MESSAGE;
            int id = 0;
            if (type == RpmaFraming.REQUEST) {
                id = this.nextRequestId;
                this.nextRequestId = (id == RpmaFraming.MAX_REQUEST_ID) ? 0 : id + 1;
                request.requestId = id;
            }
            ClientSlots.write(frame, RpmaFraming.HEADER_SIZE, request.payload);
            ClientSlots.write(frame, RpmaFraming.HEADER_SIZE + request.payload.length, request.route);
            length = RpmaFraming.HEADER_SIZE + request.payload.length + request.route.length;
            // only to a server that said it takes one; an unobserved request asks nothing
            byte[] traceParent = (request.observed != null && this.framing.peerTakesTraceContext())
                    ? request.observed.traceParent() : null;
            if (traceParent != null) {
                frame.put(length, traceParent);
                length += traceParent.length;
            }
            this.framing.writeHeader(frame, type, request.payload.length, id, request.route.length, traceParent != null);
        }
        else {
            ClientSlots.write(frame, 0, request.payload);
            length = request.payload.length;
        }
        if (!postFrame(slot, length)) {
            return false;
        }
        // recorded once it went out: one whose post failed is in no table, and can go to another connection
        request.posted = true;
        switch (request.kind) {
            case REQUEST -> this.inFlight.put(request);
            case RAW_EXCHANGE -> this.exchanges.add(request);
            case MESSAGE, RAW_SEND -> this.owner.succeed(request, POSTED);
        }
        return true;
    }

    private boolean postFrame(int slot, int length) {
        this.freeSends &= ~(1L << slot);
        try {
            connection().send(this.slots.sendRegion, this.slots.offset(slot), length, CompletionMode.ALWAYS, SEND | slot);
            return true;
        }
        catch (RpmaException ex) {
            this.freeSends |= 1L << slot;
            this.owner.dataPathFailed("rpma_send failed: " + ex.getMessage(), ex);
            return false;
        }
    }

    private void sendControlFrame() {
        if (this.framing == null || this.stopped || this.freeSends == 0) {
            return;
        }
        int slot = Long.numberOfTrailingZeros(this.freeSends);
        int length = this.framing.controlFrame(this.slots.sends[slot], true);
        if (length > 0) {
            postFrame(slot, length);
        }
    }

    // ---------------------------------------------------------------- one-sided

    /** Posts the operation, or lets it wait for a free place in the send queue. */
    void submit(OneSidedOperation operation, RpmaRemoteMemoryRegion remote) {
        this.waitingOperations.add(operation);
        postOperations(remote);
    }

    private void postOperations(@Nullable RpmaRemoteMemoryRegion remote) {
        OneSidedOperation next;
        while (remote != null && !this.stopped && this.freeOperations != 0
                && (next = this.waitingOperations.poll()) != null) {
            int index = Long.numberOfTrailingZeros(this.freeOperations);
            try {
                next.post(connection(), remote, ONE_SIDED | index);
            }
            catch (RpmaException | IllegalArgumentException ex) {
                this.owner.operationDone(next, new RpmaClientException(this.settings.server(), next.kind.function
                        + " failed: " + ex.getMessage(), ex));
                continue;
            }
            this.freeOperations &= ~(1L << index);
            this.operations[index] = next;
        }
    }

    // ---------------------------------------------------------------- completions

    @Override
    public void onReadable(int kind) {
        if (this.stopped) {
            return;
        }
        try {
            cq().await();
        }
        catch (RpmaException ex) {
            this.owner.dataPathFailed("rpma_cq_wait failed: " + ex.getMessage(), ex);
            return;
        }
        for (int i = 0; i < BATCHES_PER_TURN; i++) {
            if (this.stopped || takeBatch() < this.batch.capacity()) {
                return;
            }
        }
        this.loop.runSoon(() -> onReadableLeft());
    }

    private void onReadableLeft() {
        if (!this.stopped) {
            takeBatch();
        }
    }

    @Override
    public boolean pollOnce() {
        return !this.stopped && takeBatch() > 0;
    }

    /** Takes what completed before the connection's CLOSED or LOST, so that replies that came are not lost. */
    void drainBeforeEnd() {
        for (int i = 0; i < 16 && this.attached && !this.stopped; i++) {
            if (takeBatch() < this.batch.capacity()) {
                return;
            }
        }
    }

    private int takeBatch() {
        int count;
        try {
            count = cq().poll(this.batch);
        }
        catch (RpmaException ex) {
            this.owner.dataPathFailed("rpma_cq_get_wc failed: " + ex.getMessage(), ex);
            return 0;
        }
        for (int i = 0; i < count && !this.stopped; i++) {
            long context = this.batch.context(i);
            int status = this.batch.status(i);
            int slot = (int) context;
            if ((context & ONE_SIDED) != 0) {
                operationCompleted(slot, status);
            }
            else if ((context & SEND) != 0) {
                if (status != 0) {
                    failed("a send", status);
                }
                else {
                    this.freeSends |= 1L << slot;
                }
            }
            else if (status != 0) {
                failed("a receive", status);
            }
            else {
                received(slot, this.batch.byteLength(i));
            }
        }
        if (count > 0 && !this.stopped) {
            sendControlFrame();
            pump();
            postOperations(this.owner.remoteRegion());
        }
        return count;
    }

    private void failed(String what, int status) {
        String why = (status == CompletionStatus.WR_FLUSH_ERR) ? what + " was flushed (IBV_WC_WR_FLUSH_ERR): the queue pair failed"
                : what + " completed with " + CompletionStatus.describe(status);
        this.owner.dataPathFailed(why, null);
    }

    private void operationCompleted(int index, int status) {
        OneSidedOperation operation = this.operations[index];
        this.operations[index] = null;
        this.freeOperations |= 1L << index;
        if (operation == null) {
            return;
        }
        if (status == 0) {
            this.owner.operationDone(operation, null);
            return;
        }
        RpmaClientException failure = new RpmaConnectionLostException(this.settings.server(), operation.kind.function
                + " completed with " + CompletionStatus.describe(status) + whyItFailed(status), null);
        this.owner.operationDone(operation, failure);
        if (status == CompletionStatus.WR_FLUSH_ERR) {
            this.owner.dataPathFailed(operation.kind.function + " was flushed (IBV_WC_WR_FLUSH_ERR)", null);
        }
    }

    /** What a one-sided operation's error status says of the operation; the queue pair is in error after any. */
    private static String whyItFailed(int status) {
        return switch (status) {
            case CompletionStatus.REM_ACCESS_ERR -> ": the server's region does not allow this operation (its usage"
                    + " lacks it) or the range lies outside the region";
            case CompletionStatus.LOC_PROT_ERR -> ": the local region is not registered with the client's peer for"
                    + " this operation";
            case CompletionStatus.RETRY_EXC_ERR -> ": the server did not answer (it or its link is gone)";
            default -> "";
        };
    }

    private void received(int slot, int length) {
        ByteBuffer frame = this.slots.receives[slot];
        if (this.framing == null) {
            byte[] message = new byte[length];
            ClientSlots.read(frame, 0, message);
            PendingRequest exchange = this.exchanges.poll();
            if (exchange == null) {
                this.owner.unsolicited(message);
            }
            else if (exchange.finished) {
                // the answer to an exchange that timed out
                this.owner.lateReply();
            }
            else {
                this.owner.succeed(exchange, message);
            }
            repostAfterDelivery(slot);
            return;
        }
        int type;
        try {
            type = this.framing.read(frame, length);
        }
        catch (RpmaProtocolException ex) {
            this.owner.dataPathFailed("the server sent a frame out of protocol: " + ex.getMessage(), ex);
            return;
        }
        switch (type) {
            case RpmaFraming.HELLO, RpmaFraming.CREDIT -> repost(slot);
            case RpmaFraming.REPLY, RpmaFraming.ERROR -> answered(slot, frame, type == RpmaFraming.ERROR);
            case RpmaFraming.MESSAGE -> {
                byte[] message = payload(frame);
                this.owner.unsolicited(message);
                repostAfterDelivery(slot);
            }
            default -> this.owner.dataPathFailed("the server sent a frame of type " + type
                    + ", which a server does not send", null);
        }
    }

    private void answered(int slot, ByteBuffer frame, boolean error) {
        int id = RpmaFraming.requestId(frame);
        PendingRequest request = this.inFlight.remove(id);
        if (request == null) {
            this.owner.lateReply();
        }
        else if (error) {
            this.owner.remoteError(request, RpmaEscaping.escape(payload(frame), 200));
        }
        else {
            this.owner.succeed(request, payload(frame));
        }
        repostAfterDelivery(slot);
    }

    /**
     * Posts a receive again once its message was copied out and delivered: the repost, a native call,
     * is not on the way from a reply to its future's callbacks, nor between a callback's request and
     * its send. Such a request is posted within the callback only where the other receives can take
     * its answer ({@link ClientConnection#takeOnLoop}); otherwise from the loop's tasks, after this.
     */
    private void repostAfterDelivery(int slot) {
        if (!this.stopped) {
            repost(slot);
        }
    }

    private static byte[] payload(ByteBuffer frame) {
        byte[] payload = new byte[RpmaFraming.payloadLength(frame)];
        ClientSlots.read(frame, RpmaFraming.HEADER_SIZE, payload);
        return payload;
    }

    private boolean repost(int slot) {
        try {
            connection().receive(this.slots.receiveRegion, this.slots.offset(slot), this.slots.receiveLength, slot);
        }
        catch (RpmaException ex) {
            this.owner.dataPathFailed("rpma_recv failed: " + ex.getMessage(), ex);
            return false;
        }
        if (this.framing != null) {
            this.framing.receiveReposted();
        }
        return true;
    }

    // ---------------------------------------------------------------- the end

    /**
     * Stops taking completions (before the connection is deleted, which closes the channel's fd) and
     * hands back what was waiting or in flight.
     */
    Leftovers stop() {
        this.stopped = true;
        if (this.attached) {
            this.attached = false;
            this.loop.removeBusyPoller(this);
            this.loop.unregister(this.cqFd, this.cqRegistration);
        }
        List<PendingRequest> unsent = new ArrayList<>(this.waiting);
        this.waiting.clear();
        List<PendingRequest> sent = new ArrayList<>();
        this.inFlight.drainTo(sent);
        sent.addAll(this.exchanges);
        this.exchanges.clear();
        List<OneSidedOperation> operations = new ArrayList<>(this.waitingOperations);
        this.waitingOperations.clear();
        for (int i = 0; i < this.operations.length; i++) {
            if (this.operations[i] != null) {
                operations.add(this.operations[i]);
                this.operations[i] = null;
            }
        }
        return new Leftovers(unsent, sent, operations);
    }

    private RpmaConnection connection() {
        RpmaConnection current = this.connection;
        if (current == null) {
            throw new IllegalStateException("The data path is not attached");
        }
        return current;
    }

    private RpmaCompletionQueue cq() {
        RpmaCompletionQueue current = this.cq;
        if (current == null) {
            throw new IllegalStateException("The data path is not attached");
        }
        return current;
    }
}
