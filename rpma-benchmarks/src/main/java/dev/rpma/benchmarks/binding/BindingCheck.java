package dev.rpma.benchmarks.binding;

import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.function.IntSupplier;

/**
 * Bytes allocated per typed call, counted exactly: the calling thread's allocated bytes
 * ({@code ThreadMXBean.getThreadAllocatedBytes}) over many calls after a warm-up, nothing else in
 * the window. JMH's {@code gc.alloc.rate.norm} also counts what the harness allocates per iteration,
 * which shows as about 1 B/op when a call takes tens of microseconds (in the soft-RoCE VM); this
 * check has no harness.
 *
 * <p>Usage: {@code AllocationCheck [--rdma ADDRESS]}: the host calls always, and with {@code --rdma}
 * the completion-queue poll and the write over a real connection on that address.
 */
public final class AllocationCheck {

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    private AllocationCheck() {
    }

    public static void main(String[] args) {
        String rdma = (args.length == 2 && args[0].equals("--rdma")) ? args[1] : null;
        boolean clean = true;

        ControlCallBenchmark control = new ControlCallBenchmark();
        control.setUp();
        try {
            clean &= report("RpmaConnectionConfig.cqSize()", 200_000, 1_000_000, control::typedGet);
            clean &= report("RpmaConnectionConfig.cqSize(int)", 200_000, 1_000_000, () -> {
                control.typedSet();
                return 0;
            });
        }
        finally {
            control.tearDown();
        }

        CompletionQueueProxyBenchmark proxy = new CompletionQueueProxyBenchmark();
        proxy.connect();
        try {
            clean &= report("RpmaCompletionQueue.poll (host stand-in)", 200_000, 1_000_000, proxy::typedPoll);
        }
        finally {
            proxy.disconnect();
        }

        if (rdma != null) {
            LoopbackBenchmark loopback = new LoopbackBenchmark();
            loopback.address = rdma;
            loopback.connect();
            try {
                clean &= report("RpmaCompletionQueue.poll (real, empty)", 20_000, 100_000, loopback::typedPoll);
                clean &= report("RpmaConnection.write, 8 B", 2_000, 10_000, () -> {
                    loopback.typedWrite();
                    return 0;
                });
            }
            finally {
                loopback.disconnect();
            }
        }
        System.out.println(clean ? "no typed call allocates" : "SOME TYPED CALL ALLOCATES");
    }

    /** Runs {@code call} {@code warmup} times, then counts the bytes of {@code calls} more. */
    private static boolean report(String name, int warmup, int calls, IntSupplier call) {
        int sink = 0;
        for (int i = 0; i < warmup; i++) {
            sink += call.getAsInt();
        }
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < calls; i++) {
            sink += call.getAsInt();
        }
        long bytes = THREADS.getCurrentThreadAllocatedBytes() - before;
        double perCall = (double) bytes / calls;
        System.out.printf(Locale.ROOT, "%-44s %10.4f bytes per call (%d bytes over %d calls)%s%n", name, perCall, bytes,
                calls, (sink == Integer.MIN_VALUE) ? " " : "");
        // the window itself (the two probes) may show a few dozen bytes; an object per call would be >= 16 per call
        return perCall < 1;
    }
}
