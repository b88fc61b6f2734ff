package dev.rpma.jna.testing;

import java.util.ArrayDeque;

/**
 * A completion queue of a {@link FakeLibRpma} ({@code struct rpma_cq}): completions queued here are
 * what {@code rpma_cq_get_wc} writes, as {@code struct ibv_wc} of rdma-core 44. Its fd
 * ({@code rpma_cq_get_fd}, a real eventfd) is readable while completions are queued;
 * {@code rpma_cq_wait} returns 0 then and {@code RPMA_E_NO_COMPLETION} otherwise. Thread-safe.
 */
public final class FakeCompletionQueue {

    /** One {@code struct ibv_wc}. */
    public record Completion(long wrId, int status, int opcode, int vendorError, int byteLength, int immediateData,
            int qpNumber, int sourceQp, int flags) {

        /** A successful completion of {@code opcode} ({@code IBV_WC_SEND} 0, {@code IBV_WC_RECV} 128, ...). */
        public static Completion success(long wrId, int opcode, int byteLength) {
            return new Completion(wrId, 0, opcode, 0, byteLength, 0, 0, 0, 0);
        }
    }

    private final FakeLibRpma fake;

    final ArrayDeque<Completion> completions = new ArrayDeque<>();

    final boolean receive;

    long handle;

    FakeEventFd fd;

    FakeCompletionQueue(FakeLibRpma fake, boolean receive) {
        this.fake = fake;
        this.receive = receive;
    }

    /** The fake {@code struct rpma_cq *}. */
    public long handle() {
        synchronized (this.fake.lock) {
            return this.handle;
        }
    }

    /** The queue's completion channel fd ({@code rpma_cq_get_fd}); -1 once its owner was deleted. */
    public int fd() {
        synchronized (this.fake.lock) {
            return (this.fd != null && this.fd.isOpen()) ? this.fd.fd() : -1;
        }
    }

    /** Whether this is a receive completion queue. */
    public boolean isReceiveQueue() {
        return this.receive;
    }

    public FakeCompletionQueue queue(Completion completion) {
        synchronized (this.fake.lock) {
            this.completions.add(completion);
            signal();
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

    void signal() {
        if (this.fd != null) {
            this.fd.readable(!this.completions.isEmpty());
        }
    }
}
