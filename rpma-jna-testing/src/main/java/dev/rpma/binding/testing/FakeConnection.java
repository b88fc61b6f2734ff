package dev.rpma.binding.testing;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import dev.rpma.binding.RpmaConnectionEvent;

/**
 * The script of one connection of a {@link FakeLibRpma}: the events {@code rpma_conn_next_event}
 * returns, the private data, its completion queues, its queue pair's data path, and what was done
 * with it. Thread-safe.
 *
 * <p>The event fd ({@code rpma_conn_get_event_fd}, a real eventfd) is readable while events are
 * queued; with none queued, {@code rpma_conn_next_event} returns {@code RPMA_E_PROVIDER} with errno
 * {@code EAGAIN}. The first {@code rpma_conn_disconnect} queues {@link RpmaConnectionEvent#CLOSED}
 * (as RDMA CM reports DISCONNECTED to the side that disconnects), unless
 * {@link FakeLibRpma#closedOnDisconnect(boolean)} turned that off.
 *
 * <h2>The data path, as the other side sees it</h2>
 * Receives posted on the request before connect ({@code rpma_conn_req_recv}) and on the connection
 * ({@code rpma_recv}) wait in the receive queue. {@link #deliver(byte[])} is a message from the other
 * side: it takes the oldest receive, writes the bytes into its registered memory and queues an
 * {@code IBV_WC_RECV} completion (on the receive completion queue when there is one); with no receive
 * posted it waits, as an RC queue pair retries a receiver-not-ready for ever under librpma's
 * {@code rnr_retry_count} 7, until the next {@code rpma_recv}; a message longer than the receive ends
 * that receive with {@code IBV_WC_LOC_LEN_ERR} and breaks the queue pair. Sends
 * ({@code rpma_send}) are read from their registered memory when posted and land in {@link #sent()};
 * when the other side's receives are counted ({@link #peerReceives(int)}) a send waits for one. A send
 * posted with {@code RPMA_F_COMPLETION_ALWAYS} queues {@code IBV_WC_SEND}; an unsignaled one holds its
 * send queue slot until a later signaled send's completion is taken. {@code rpma_conn_disconnect}
 * breaks the queue pair: every posted receive and every waiting send completes with
 * {@code IBV_WC_WR_FLUSH_ERR}, whose opcode is undefined in verbs (the fake writes
 * {@value #FLUSHED_OPCODE}), and later posts complete the same way. A connection made with a shared
 * receive queue in its configuration receives through that queue ({@link FakeSharedReceiveQueue}).
 *
 * <h2>In a loopback</h2>
 * In a {@link FakeLibRpma#loopback() loopback} the other side is a connection of the same fake
 * ({@link #peer()}): a send waits in this side's send queue until the peer has a receive posted (on its
 * own queue or its SRQ), then fills it and completes on both sides; {@link #deliver(byte[])} and
 * {@link #peerReceives(int)} are not used. Sends and one-sided operations are not recorded
 * ({@link #posted()}, {@link #sent()} stay empty) so that a long test does not grow the fake.
 */
public final class FakeConnection extends FakeObject {

    private final FakeRequest request;

    /** Integer event codes and {@link FakeLibRpma.Failure}s. */
    final ArrayDeque<Object> events = new ArrayDeque<>();

    final List<PostedOperation> posted = new ArrayList<>();

    final int qpNumber;

    FakeEventFd eventFd;

    FakeEventFd completionFd;

    byte[] privateData;

    Memory privateDataMemory;

    FakeCompletionQueue cq;

    FakeCompletionQueue rcq;

    FakeLibRpma.ConnCfg config;

    /** The shared receive queue it receives through, or {@code null}: its own receive queue. */
    FakeSharedReceiveQueue srq;

    int disconnects;

    String deletedOn;

    /** What the fake writes as the opcode of an error completion, which verbs leaves undefined. */
    public static final int FLUSHED_OPCODE = 0xFF;

    static final int IBV_WC_SUCCESS = 0;

    static final int IBV_WC_LOC_LEN_ERR = 1;

    static final int IBV_WC_WR_FLUSH_ERR = 5;

    static final int IBV_WC_REM_INV_REQ_ERR = 9;

    static final int IBV_WC_WITH_IMM = 2;

    static final int IBV_WC_SEND = 0;

    static final int IBV_WC_RECV = 128;

    /** A receive waiting for a message: where its bytes go. */
    record PostedReceive(long address, long length, long context) {
    }

    /** A send waiting for the other side to post a receive (and, from a slowed side, for its time). */
    private record WaitingSend(byte[] bytes, long context, boolean signaled, int imm, boolean withImm, long dueNanos) {
    }

    final ArrayDeque<PostedReceive> receives = new ArrayDeque<>();

    private final ArrayDeque<byte[]> undelivered = new ArrayDeque<>();

    private final List<byte[]> sent = new ArrayList<>();

    private final ArrayDeque<WaitingSend> waitingSends = new ArrayDeque<>();

    /** Sends posted whose send queue slot is not free yet. */
    int sendSlotsInUse;

    /** Unsignaled sends since the last signaled one: their slots are freed with its completion. */
    private int unsignaledSends;

    /** Receives the other side has posted for this side's sends; {@link Integer#MAX_VALUE}: not counted. */
    private int peerReceives = Integer.MAX_VALUE;

    /** Whether the queue pair is in the error state. */
    boolean broken;

    /** The other side in a loopback, once the accept linked the two; {@code null} before and in a scripted fake. */
    FakeConnection peer;

    /** The server-side request a loopback client's connect made, until the server decides it. */
    FakeRequest dialed;

    /** Whether the other side's disconnect, delete or loss was already reported here. */
    boolean peerGone;

    /** Loopback fault: how long this side's messages take to reach the other side. */
    long delayNanos;

    /** Whether a timer will pump this side's delayed sends. */
    boolean pumpScheduled;

    /** Loopback fault: the status the next work request posted here completes with (0: none). */
    int failNextStatus;

    /** Whether {@code rpma_conn_apply_remote_peer_cfg} said the other side supports direct write to PMem. */
    boolean directWriteToPmem;

    FakeConnection(FakeLibRpma fake, FakeRequest request, int qpNumber) {
        super(fake);
        this.request = request;
        this.qpNumber = qpNumber;
    }

    /** The request it was made from. */
    public FakeRequest request() {
        return this.request;
    }

    /** The event fd; -1 once deleted. */
    public int eventFd() {
        synchronized (this.fake.lock) {
            return FakeEventFd.numberOf(this.eventFd);
        }
    }

    public int qpNumber() {
        return this.qpNumber;
    }

    /** Queues an event for {@code rpma_conn_next_event}. */
    public FakeConnection queueEvent(RpmaConnectionEvent event) {
        return queueEventCode(event.code());
    }

    /** Queues any {@code enum rpma_conn_event} value, including ones librpma never returns. */
    public FakeConnection queueEventCode(int code) {
        synchronized (this.fake.lock) {
            this.events.add(code);
            signal();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Makes a later {@code rpma_conn_next_event} fail, e.g. {@code RPMA_E_UNKNOWN} for an unmapped event. */
    public FakeConnection queueEventFailure(int returnCode, int errno) {
        synchronized (this.fake.lock) {
            this.events.add(new FakeLibRpma.Failure(returnCode, errno));
            signal();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /**
     * Makes the event fd readable with no event queued, as a readiness that is stale by the time the
     * owner reads it: {@code rpma_conn_next_event} then finds nothing, which on a blocking fd would block
     * in {@code rdma_get_cm_event} (a violation here) and on a non-blocking one fails with EAGAIN.
     */
    public FakeConnection staleEventReadiness() {
        synchronized (this.fake.lock) {
            if (this.eventFd == null) {
                throw new IllegalStateException("nobody asked for the connection's event fd yet");
            }
            this.eventFd.readable(true);
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Events not yet returned. */
    public int pendingEvents() {
        synchronized (this.fake.lock) {
            return this.events.size();
        }
    }

    /** What {@code rpma_conn_get_private_data} returns: the request's private data unless set otherwise. */
    public byte[] privateData() {
        synchronized (this.fake.lock) {
            return this.privateData.clone();
        }
    }

    /** Sets what {@code rpma_conn_get_private_data} returns (a client sees the server's accept data). */
    public FakeConnection privateData(byte[] privateData) {
        synchronized (this.fake.lock) {
            this.privateData = privateData.clone();
            this.privateDataMemory = null;
        }
        return this;
    }

    /** The main completion queue. */
    public FakeCompletionQueue completionQueue() {
        return this.cq;
    }

    /** The receive completion queue, {@code null} when the configuration's rcq size was 0. */
    public FakeCompletionQueue receiveCompletionQueue() {
        return this.rcq;
    }

    /** The configuration values it was made with. */
    public FakeLibRpma.ConnectionConfigValues config() {
        synchronized (this.fake.lock) {
            return this.config.values();
        }
    }

    /** How many times {@code rpma_conn_disconnect} was called. */
    public int disconnects() {
        synchronized (this.fake.lock) {
            return this.disconnects;
        }
    }

    public boolean isDeleted() {
        synchronized (this.fake.lock) {
            return this.deletedOn != null;
        }
    }

    /** Name of the thread that called {@code rpma_conn_delete}, or {@code null}. */
    public String deletedOnThread() {
        synchronized (this.fake.lock) {
            return this.deletedOn;
        }
    }

    /** Operations posted on it ({@code rpma_send}, {@code rpma_recv}, {@code rpma_read}, ...), in order. */
    public List<PostedOperation> posted() {
        synchronized (this.fake.lock) {
            return List.copyOf(this.posted);
        }
    }

    public boolean awaitDeleted(Duration timeout) {
        return this.fake.await(timeout, () -> this.deletedOn != null);
    }

    public boolean awaitDisconnected(Duration timeout) {
        return this.fake.await(timeout, () -> this.disconnects > 0);
    }

    /** Waits until every queued event was returned. */
    public boolean awaitEventsDrained(Duration timeout) {
        return this.fake.await(timeout, this.events::isEmpty);
    }

    void signal() {
        if (this.eventFd != null) {
            this.eventFd.readable(!this.events.isEmpty());
        }
    }

    // ---------------------------------------------------------------- the other side of the data path

    /**
     * A message from the other side: delivered into the oldest posted receive, or waiting for one.
     *
     * @return whether it was delivered now ({@code false}: it waits for a receive, or the queue pair is
     *     broken and it is dropped)
     */
    public boolean deliver(byte[] message) {
        synchronized (this.fake.lock) {
            if (this.broken || this.deletedOn != null) {
                return false;
            }
            if (this.srq != null) {
                boolean now = this.srq.deliver(this, message);
                this.fake.lock.notifyAll();
                return now;
            }
            if (this.receives.isEmpty()) {
                this.undelivered.add(message.clone());
                return false;
            }
            deliverInto(this.receives.poll(), message);
            this.fake.lock.notifyAll();
            return true;
        }
    }

    /** Receives posted and not yet filled by a message. */
    public int postedReceives() {
        synchronized (this.fake.lock) {
            return this.receives.size();
        }
    }

    /** Messages of the other side waiting for a receive. */
    public int undelivered() {
        synchronized (this.fake.lock) {
            return this.undelivered.size();
        }
    }

    /** What this side sent, in order, as the other side received it. */
    public List<byte[]> sent() {
        synchronized (this.fake.lock) {
            return this.sent.stream().map(byte[]::clone).toList();
        }
    }

    /** Waits until this side sent at least {@code count} messages. */
    public boolean awaitSent(int count, Duration timeout) {
        return this.fake.await(timeout, () -> this.sent.size() >= count);
    }

    /**
     * Counts the receives the other side has posted: from now on a send waits until one is there
     * ({@link #grantPeerReceives(int)} posts more).
     */
    public FakeConnection peerReceives(int count) {
        synchronized (this.fake.lock) {
            this.peerReceives = count;
            releaseWaitingSends();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** The other side posts {@code count} more receives; sends waiting for them go now. */
    public FakeConnection grantPeerReceives(int count) {
        synchronized (this.fake.lock) {
            if (this.peerReceives != Integer.MAX_VALUE) {
                this.peerReceives += count;
            }
            releaseWaitingSends();
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /** Sends waiting for a receive of the other side (receiver not ready). */
    public int sendsWaitingForPeer() {
        synchronized (this.fake.lock) {
            return this.waitingSends.size();
        }
    }

    /** The other side disconnects: {@code CLOSED} arrives on this side's event channel. */
    public FakeConnection peerDisconnects() {
        return queueEvent(RpmaConnectionEvent.CLOSED);
    }

    /** In a loopback: the other side's connection, once the server accepted; {@code null} before. */
    public FakeConnection peer() {
        synchronized (this.fake.lock) {
            return this.peer;
        }
    }

    /** Loopback fault: the connection is lost, {@code LOST} on both sides and both queue pairs fail. */
    public FakeConnection lose() {
        requireLoopback();
        synchronized (this.fake.lock) {
            Loopback.lose(this);
            this.fake.lock.notifyAll();
        }
        return this;
    }

    /**
     * Loopback fault: the next send or one-sided operation posted on this side completes with
     * {@code status} ({@code enum ibv_wc_status}, e.g. 12 {@code IBV_WC_RETRY_EXC_ERR}), and the queue
     * pairs fail as a device's would.
     */
    public FakeConnection failNextCompletion(int status) {
        requireLoopback();
        if (status <= 0) {
            throw new IllegalArgumentException("An error status is positive (IBV_WC_SUCCESS is 0), got " + status);
        }
        synchronized (this.fake.lock) {
            this.failNextStatus = status;
        }
        return this;
    }

    /** Loopback fault: this side's messages reach the other side {@code delay} after they are sent (a slow peer). */
    public FakeConnection delay(Duration delay) {
        requireLoopback();
        synchronized (this.fake.lock) {
            this.delayNanos = delay.toNanos();
        }
        return this;
    }

    private void requireLoopback() {
        if (!this.fake.isLoopback()) {
            throw new IllegalStateException("A fault of the loopback: make the fake with FakeLibRpma.loopback()");
        }
    }

    /** Whether the queue pair is in the error state (after a disconnect or a length error). */
    public boolean isBroken() {
        synchronized (this.fake.lock) {
            return this.broken;
        }
    }

    /** Under the fake's lock: {@code rpma_recv}, or a request's receive moved here on connect. */
    void receivePosted(PostedReceive receive) {
        if (this.broken) {
            receiveQueue().add(flushed(receive.context()));
            return;
        }
        byte[] waiting = this.undelivered.poll();
        if (waiting != null) {
            deliverInto(receive, waiting);
        }
        else {
            this.receives.add(receive);
            if (this.peer != null) {
                this.peer.pump();
            }
        }
    }

    /** Under the fake's lock: {@code rpma_send} of {@code bytes}, read from registered memory. */
    void sendPosted(byte[] bytes, long context, boolean signaled, int imm, boolean withImm) {
        this.sendSlotsInUse++;
        if (this.broken) {
            sendCompletion(flushed(context), true);
            return;
        }
        if (this.fake.isLoopback()) {
            long due = (this.delayNanos > 0) ? System.nanoTime() + this.delayNanos : 0;
            this.waitingSends.add(new WaitingSend(bytes, context, signaled, imm, withImm, due));
            pump();
            return;
        }
        if (this.peerReceives == 0 || !this.waitingSends.isEmpty()) {
            this.waitingSends.add(new WaitingSend(bytes, context, signaled, imm, withImm, 0));
            return;
        }
        arrive(bytes, context, signaled);
    }

    /**
     * Under the fake's lock, in a loopback: moves this side's waiting sends into the peer's receives
     * while it has some, in order; a send of a slowed side waits for its time (a timer pumps again).
     */
    void pump() {
        FakeConnection to = this.peer;
        while (to != null && !this.waitingSends.isEmpty() && !this.broken) {
            WaitingSend send = this.waitingSends.peek();
            long wait = send.dueNanos() - System.nanoTime();
            if (send.dueNanos() != 0 && wait > 0) {
                if (!this.pumpScheduled) {
                    this.pumpScheduled = true;
                    this.fake.pumpLater(this, wait);
                }
                return;
            }
            PostedReceive receive = to.takeReceive();
            if (receive == null) {
                return;
            }
            this.waitingSends.poll();
            if (to.fill(receive, send.bytes(), send.imm(), send.withImm())) {
                arrive(send.bytes(), send.context(), send.signaled());
            }
            else {
                // the responder's length error: the requester sees a remote invalid request, both queue pairs fail
                failWorkRequest(send.context(), IBV_WC_REM_INV_REQ_ERR);
            }
        }
    }

    /** Under the fake's lock: the oldest receive a message to this side fills, or {@code null}. */
    private PostedReceive takeReceive() {
        if (this.broken || this.deletedOn != null) {
            return null;
        }
        return (this.srq != null) ? this.srq.receives.poll() : this.receives.poll();
    }

    /** Under the fake's lock: the queue pair goes to the error state; posted work is flushed. */
    void breakQueuePair() {
        if (this.broken) {
            return;
        }
        this.broken = true;
        this.fake.queuePairBroke(this);
        if (this.srq != null) {
            this.srq.dropWaitingOf(this);
        }
        PostedReceive receive;
        while ((receive = this.receives.poll()) != null) {
            receiveQueue().add(flushed(receive.context()));
        }
        WaitingSend send;
        while ((send = this.waitingSends.poll()) != null) {
            sendCompletion(flushed(send.context()), true);
        }
    }

    /** Under the fake's lock: a taken send completion freed {@code slots} send queue slots. */
    void sendSlotsFreed(int slots) {
        this.sendSlotsInUse -= slots;
    }

    /** Under the fake's lock: an event of either queue is what the shared completion channel reports. */
    void signalSharedChannel() {
        if (this.completionFd != null) {
            int events = this.cq.events + ((this.rcq != null) ? this.rcq.events : 0);
            this.completionFd.readable(events > 0);
        }
    }

    private void releaseWaitingSends() {
        while (!this.waitingSends.isEmpty() && this.peerReceives > 0 && !this.broken) {
            WaitingSend send = this.waitingSends.poll();
            arrive(send.bytes(), send.context(), send.signaled());
        }
    }

    private void arrive(byte[] bytes, long context, boolean signaled) {
        if (this.peerReceives != Integer.MAX_VALUE) {
            this.peerReceives--;
        }
        if (!this.fake.isLoopback()) {
            this.sent.add(bytes);
        }
        sendCompletion(new FakeCompletionQueue.Completion(context, IBV_WC_SUCCESS, IBV_WC_SEND, 0, 0, 0, this.qpNumber,
                0, 0), signaled);
    }

    /** A signaled send's completion frees its slot and those of the unsignaled sends before it. */
    void sendCompletion(FakeCompletionQueue.Completion completion, boolean signaled) {
        if (!signaled) {
            this.unsignaledSends++;
            return;
        }
        this.cq.freesSendSlots.put(completion, this.unsignaledSends + 1);
        this.unsignaledSends = 0;
        this.cq.add(completion);
    }

    /** Under the fake's lock: {@code message} fills {@code receive}, of this queue pair or its SRQ. */
    void deliverInto(PostedReceive receive, byte[] message) {
        fill(receive, message, 0, false);
    }

    /** Under the fake's lock: {@code message} fills {@code receive}; {@code false}: too long, the queue pair broke. */
    boolean fill(PostedReceive receive, byte[] message, int imm, boolean withImm) {
        if (message.length > receive.length()) {
            receiveQueue().add(failed(receive.context(), IBV_WC_LOC_LEN_ERR));
            breakQueuePair();
            return false;
        }
        if (message.length > 0) {
            new Pointer(receive.address()).write(0, message, 0, message.length);
        }
        int sourceQp = (this.peer != null) ? this.peer.qpNumber : 0;
        receiveQueue().add(new FakeCompletionQueue.Completion(receive.context(), IBV_WC_SUCCESS, IBV_WC_RECV, 0,
                message.length, imm, this.qpNumber, sourceQp, withImm ? IBV_WC_WITH_IMM : 0));
        return true;
    }

    /**
     * Under the fake's lock: a work request posted on the send queue ends with the error {@code status}
     * (always reported, as an error completion is) and the queue pair fails.
     */
    void failWorkRequest(long context, int status) {
        sendCompletion(failed(context, status), true);
        breakQueuePair();
    }

    /** An error completion: its opcode is undefined in verbs, the fake writes {@value #FLUSHED_OPCODE}. */
    private FakeCompletionQueue.Completion failed(long context, int status) {
        return new FakeCompletionQueue.Completion(context, status, FLUSHED_OPCODE, 0, 0, 0, this.qpNumber, 0, 0);
    }

    FakeCompletionQueue.Completion flushed(long context) {
        return failed(context, IBV_WC_WR_FLUSH_ERR);
    }

    private FakeCompletionQueue receiveQueue() {
        if (this.srq != null && this.srq.rcq != null) {
            return this.srq.rcq;
        }
        return (this.rcq != null) ? this.rcq : this.cq;
    }

    @Override
    public String toString() {
        return "FakeConnection[qp " + this.qpNumber + (isDeleted() ? ", deleted]" : "]");
    }
}
