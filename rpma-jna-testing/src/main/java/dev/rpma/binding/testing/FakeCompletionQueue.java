package dev.rpma.binding.testing;

import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * A completion queue of a {@link FakeLibRpma} ({@code struct rpma_cq}) with the verbs semantics of
 * its completion channel: completions queued here are what {@code rpma_cq_get_wc} writes, as
 * {@code struct ibv_wc} of rdma-core 44. The queue starts armed (librpma's {@code rpma_cq_new}
 * requests a notification); the first completion added to an armed queue disarms it and puts one
 * event on its channel, whose fd ({@code rpma_cq_get_fd}, a real eventfd) is readable while an event
 * is there. {@code rpma_cq_wait} takes the event and re-arms the queue; re-arming does not report
 * completions already queued, only the next one (as {@code ibv_req_notify_cq}), so a consumer that
 * does not drain the queue after each wait misses completions, here as on hardware. With no event
 * {@code rpma_cq_wait} returns {@code RPMA_E_NO_COMPLETION} on a non-blocking fd and is a violation
 * on a blocking one (librpma would block for ever). Thread-safe.
 */
public final class FakeCompletionQueue extends FakeObject {

    /** One {@code struct ibv_wc}. */
    public record Completion(long wrId, int status, int opcode, int vendorError, int byteLength, int immediateData,
            int qpNumber, int sourceQp, int flags) {

        /** A successful completion of {@code opcode} ({@code IBV_WC_SEND} 0, {@code IBV_WC_RECV} 128, ...). */
        public static Completion success(long wrId, int opcode, int byteLength) {
            return new Completion(wrId, 0, opcode, 0, byteLength, 0, 0, 0, 0);
        }
    }

    final ArrayDeque<Completion> completions = new ArrayDeque<>();

    /** Send queue slots a completion frees when it is taken (a signaled send frees the unsignaled ones before it). */
    final Map<Completion, Integer> freesSendSlots = new IdentityHashMap<>();

    final boolean receive;

    /** Completions it holds at most ({@code cq_size}); more is an overrun, a violation. 0: unchecked. */
    int capacity;

    FakeEventFd fd;

    /** The connection whose shared completion channel reports this queue's events, or {@code null}. */
    FakeConnection sharedChannelOf;

    boolean armed = true;

    int events;

    /** The connection whose send queue this queue's send completions free, or {@code null}. */
    FakeConnection owner;

    FakeCompletionQueue(FakeLibRpma fake, boolean receive) {
        super(fake);
        this.receive = receive;
    }

    /** The queue's completion channel fd ({@code rpma_cq_get_fd}); -1 once its owner was deleted. */
    public int fd() {
        synchronized (this.fake.lock) {
            return FakeEventFd.numberOf(this.fd);
        }
    }

    /** Whether this is a receive completion queue. */
    public boolean isReceiveQueue() {
        return this.receive;
    }

    /** Adds a completion, as the device would; an armed queue reports it on its channel. */
    public FakeCompletionQueue queue(Completion completion) {
        synchronized (this.fake.lock) {
            add(completion);
            this.fake.lock.notifyAll();
        }
        return this;
    }

    public FakeCompletionQueue queueSuccess(long wrId, int opcode, int byteLength) {
        return queue(Completion.success(wrId, opcode, byteLength));
    }

    /** Completions not yet taken by {@code rpma_cq_get_wc}. */
    public int pending() {
        synchronized (this.fake.lock) {
            return this.completions.size();
        }
    }

    /** Whether the next completion will put an event on the channel. */
    public boolean isArmed() {
        synchronized (this.fake.lock) {
            return this.armed;
        }
    }

    /** Events on the channel that no {@code rpma_cq_wait} took yet. */
    public int pendingEvents() {
        synchronized (this.fake.lock) {
            return this.events;
        }
    }

    /** Under the fake's lock. */
    void add(Completion completion) {
        this.completions.add(completion);
        if (this.capacity > 0 && this.completions.size() > this.capacity) {
            this.fake.recordOverrun(this);
        }
        if (this.armed) {
            this.armed = false;
            this.events++;
            signal();
        }
    }

    /** Under the fake's lock: {@code rpma_cq_wait}'s work once an event is there. */
    void takeEventAndRearm() {
        this.events--;
        this.armed = true;
        signal();
    }

    /** Under the fake's lock: the slots of the send queue that taking {@code completion} frees. */
    void taken(Completion completion) {
        Integer slots = this.freesSendSlots.remove(completion);
        if (slots != null && this.owner != null) {
            this.owner.sendSlotsFreed(slots);
        }
    }

    void signal() {
        if (this.sharedChannelOf != null) {
            this.sharedChannelOf.signalSharedChannel();
        }
        else if (this.fd != null) {
            this.fd.readable(this.events > 0);
        }
    }

    @Override
    public String toString() {
        return "FakeCompletionQueue[" + (this.receive ? "rcq" : "cq") + ", " + this.completions.size() + " queued, "
                + (this.armed ? "armed" : "disarmed") + ", " + this.events + " event(s)]";
    }
}
