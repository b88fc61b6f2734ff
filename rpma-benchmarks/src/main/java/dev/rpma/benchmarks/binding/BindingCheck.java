package dev.rpma.benchmarks.binding;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * A check of the typed API against the raw JNA call that other processes' load cannot skew, to go
 * with the JMH benchmarks: each pair runs in the same JVM on the same native objects, in
 * alternating blocks (typed then raw, raw then typed, ...), and the ratio is the median of the
 * per-block-pair ratios, so a burst of load that slows one block slows its neighbour alike. Then
 * the bytes each typed call allocates, counted exactly with {@code ThreadMXBean.getThreadAllocatedBytes}
 * over many calls (JMH's {@code gc.alloc.rate.norm} also counts what the harness allocates per
 * iteration, about 1 B/op when a call takes tens of microseconds, as in the soft-RoCE VM).
 *
 * <p>Usage: {@code BindingCheck [--rdma ADDRESS]}: the calls that need no device always; with
 * {@code --rdma} also the completion-queue poll and the write over a real connection.
 */
public final class BindingCheck {

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    /** The target: a typed call takes at most this multiple of the raw call's time. */
    private static final double TARGET = 1.20;

    /** Runs {@code calls} calls of one variant; each block is its own class, so its inner call stays monomorphic. */
    @FunctionalInterface
    interface Block {
        long run(int calls);
    }

    private BindingCheck() {
    }

    public static void main(String[] args) {
        String rdma = (args.length == 2 && args[0].equals("--rdma")) ? args[1] : null;
        System.out.printf(Locale.ROOT, "%-40s %10s %10s %8s %17s %12s%n", "typed vs raw, interleaved blocks", "typed ns",
                "raw ns", "ratio", "(quartiles)", "typed B/call");
        boolean met = true;

        ControlCallBenchmark control = new ControlCallBenchmark();
        control.setUp();
        try {
            met &= compare("RpmaConnectionConfig.cqSize()", 10_000, 200, (n) -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    s += control.typedGet();
                }
                return s;
            }, (n) -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    s += control.rawGet();
                }
                return s;
            });
            met &= compare("RpmaConnectionConfig.cqSize(int)", 10_000, 200, (n) -> {
                for (int i = 0; i < n; i++) {
                    control.typedSet();
                }
                return n;
            }, (n) -> {
                for (int i = 0; i < n; i++) {
                    control.rawSet();
                }
                return n;
            });
        }
        finally {
            control.tearDown();
        }

        CompletionQueueProxyBenchmark proxy = new CompletionQueueProxyBenchmark();
        proxy.connect();
        try {
            met &= compare("RpmaCompletionQueue.poll (host stand-in)", 10_000, 200, (n) -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    s += proxy.typedPoll();
                }
                return s;
            }, (n) -> {
                long s = 0;
                for (int i = 0; i < n; i++) {
                    s += proxy.rawPoll();
                }
                return s;
            });
        }
        finally {
            proxy.disconnect();
        }

        if (rdma != null) {
            LoopbackBenchmark loopback = new LoopbackBenchmark();
            loopback.address = rdma;
            loopback.connect();
            try {
                met &= compare("RpmaCompletionQueue.poll (real, empty)", 500, 200, (n) -> {
                    long s = 0;
                    for (int i = 0; i < n; i++) {
                        s += loopback.typedPoll();
                    }
                    return s;
                }, (n) -> {
                    long s = 0;
                    for (int i = 0; i < n; i++) {
                        s += loopback.rawPoll();
                    }
                    return s;
                });
                // a block is whole batches: 63 writes without a completion and one that waits for its own
                met &= compare("RpmaConnection.write, 8 B", LoopbackBenchmark.BATCH, 200, (n) -> {
                    for (int i = 0; i < n; i++) {
                        loopback.typedWrite();
                    }
                    return n;
                }, (n) -> {
                    for (int i = 0; i < n; i++) {
                        loopback.rawWrite();
                    }
                    return n;
                });
            }
            finally {
                loopback.disconnect();
            }
        }
        System.out.println(met ? "every typed call within +20% of the raw call, allocating nothing"
                : "SOME TYPED CALL IS SLOWER THAN +20% OR ALLOCATES (see above)");
    }

    /**
     * Warms both up, times {@code pairs} pairs of blocks of {@code calls} calls in alternating order,
     * then counts the typed variant's allocation over {@code 10 * pairs} more blocks.
     */
    private static boolean compare(String name, int calls, int pairs, Block typed, Block raw) {
        long sink = 0;
        // a warm-up as long as the measurement: under software emulation the JIT takes that long to settle
        for (int i = 0; i < pairs; i++) {
            sink += typed.run(calls) + raw.run(calls);
        }
        double[] typedNanos = new double[pairs];
        double[] rawNanos = new double[pairs];
        double[] ratios = new double[pairs];
        for (int pair = 0; pair < pairs; pair++) {
            if (pair % 2 == 0) {
                long t0 = System.nanoTime();
                sink += typed.run(calls);
                long t1 = System.nanoTime();
                sink += raw.run(calls);
                long t2 = System.nanoTime();
                typedNanos[pair] = (double) (t1 - t0) / calls;
                rawNanos[pair] = (double) (t2 - t1) / calls;
            }
            else {
                long t0 = System.nanoTime();
                sink += raw.run(calls);
                long t1 = System.nanoTime();
                sink += typed.run(calls);
                long t2 = System.nanoTime();
                rawNanos[pair] = (double) (t1 - t0) / calls;
                typedNanos[pair] = (double) (t2 - t1) / calls;
            }
            ratios[pair] = typedNanos[pair] / rawNanos[pair];
        }
        int allocationBlocks = Math.max(1, 2 * pairs);
        long before = THREADS.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < allocationBlocks; i++) {
            sink += typed.run(calls);
        }
        long bytes = THREADS.getCurrentThreadAllocatedBytes() - before;
        double perCall = (double) bytes / ((long) allocationBlocks * calls);
        double ratio = quantile(ratios, 0.5);
        System.out.printf(Locale.ROOT, "%-40s %10.1f %10.1f %8.3f %8.3f..%-7.3f %12.4f%s%n", name,
                quantile(typedNanos, 0.5), quantile(rawNanos, 0.5), ratio, quantile(ratios, 0.25),
                quantile(ratios, 0.75), perCall, (sink == Long.MIN_VALUE) ? " " : "");
        // an object per call would be 16 bytes or more; a few hundred bytes over the window are the probes' own
        return ratio <= TARGET && perCall < 1;
    }

    private static double quantile(double[] values, double q) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int) Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))];
    }
}
