package dev.rpma.binding.io;

import java.nio.ByteBuffer;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeMemory;

/** Linux scheduling policies of the threads that hand work to each other around librpma. */
public final class ThreadScheduling {

    /** A {@code struct sched_param} with priority 0, which the batch policy requires; only read by the kernel. */
    private static final ByteBuffer PRIORITY_ZERO = NativeMemory.allocate(Integer.BYTES);

    private ThreadScheduling() {
    }

    /**
     * Puts the calling thread under {@code SCHED_BATCH}: when it is woken it does not preempt the
     * thread running on its CPU, it waits for that thread's time slice or for an idle CPU. Its nice
     * value and its share of the CPU stay as they were; an unprivileged process may do this.
     *
     * @return 0, or the {@code errno} of the failed {@code sched_setscheduler} (e.g. {@code EPERM}
     *         under a seccomp profile that forbids it)
     */
    public static int batchCurrentThread() {
        return LibC.sched_setscheduler(0, LibC.SCHED_BATCH, NativeMemory.address(PRIORITY_ZERO)) == 0 ? 0 : LibC.errno();
    }
}
