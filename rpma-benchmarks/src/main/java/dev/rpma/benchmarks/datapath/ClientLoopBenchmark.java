package dev.rpma.benchmarks.datapath;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaWireMode;

/**
 * {@link RpmaClient} over {@link DataPathStub}, whose server side answers each of the client's sends
 * at once and allocates nothing: framed requests ({@code request(route, payload)}, 8-byte payload,
 * the REPLY carries it back) and raw exchanges ({@code exchange(payload)}, echoed), one in flight
 * (each waits for the previous reply) and sixteen, each on a client of its own (one connection, one
 * event loop without a busy poll, no observer, as by default; 32 receive slots and a raw window of 16,
 * so that 16 exchanges can be in flight). The calling thread
 * is this one. Per round: what the client's event loop thread allocated per request
 * ({@code ThreadMXBean.getThreadAllocatedBytes}), less the reply's {@code byte[]}, which the loop
 * allocates (the payload copied out of its receive) and is measured here as it is; the
 * request made by the call (the {@code CompletableFuture}, which is also the task that hands it to
 * the loop), the payload's copy and the task queue's node are the calling thread's,
 * reported beside it. The target is 0 bytes on the loop beyond the reply. The loop's CPU time per
 * request includes the stand-in's answer, which it runs inside {@code rpma_send}.
 *
 * <p>Options: {@code --requests N} per round (default 50000), {@code --rounds N} (10),
 * {@code --warmup-rounds N} (5).
 */
public final class ClientLoopBenchmark {

    private static final String ADDRESS = "198.18.0.1";

    private static final int PORT = 7410;

    private static final int PAYLOAD = 8;

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    /** Written so that the measured arrays escape. */
    static volatile byte[] sink;

    private int requests = 50_000;

    private int rounds = 10;

    private int warmupRounds = 5;

    /** A payload's value, read and written in place. */
    private static final VarHandle LITTLE_ENDIAN_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    private static final Variant[] VARIANTS = { new Variant(true, 1, false), new Variant(true, 16, false),
            new Variant(false, 1, false), new Variant(false, 16, false), new Variant(true, 1, true),
            new Variant(false, 1, true) };

    /**
     * Framed or raw, how many in flight, and whether each next request is made in the previous reply's
     * callback on the client's loop ("looped"), as the load client of the comparison against C makes them.
     */
    private record Variant(boolean framed, int inflight, boolean looped) {
    }

    public static void main(String[] args) throws Exception {
        ClientLoopBenchmark benchmark = new ClientLoopBenchmark();
        for (int i = 0; i < args.length; i += 2) {
            String value = (i + 1 < args.length) ? args[i + 1] : "";
            switch (args[i]) {
                case "--requests" -> benchmark.requests = Integer.parseInt(value);
                case "--rounds" -> benchmark.rounds = Integer.parseInt(value);
                case "--warmup-rounds" -> benchmark.warmupRounds = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        benchmark.run();
    }

    private void run() throws Exception {
        System.out.printf(Locale.ROOT, "Client loop benchmark over an allocation-free stand-in for the server: %d requests"
                + " per round, %d rounds after %d warm-up rounds; %d CPUs, Java %s%n", this.requests, this.rounds,
                this.warmupRounds, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        long replyBytes = arrayBytes(PAYLOAD);
        Bench[] clients = new Bench[VARIANTS.length];
        double[][][] results = new double[VARIANTS.length][this.rounds][];
        try {
            for (int v = 0; v < VARIANTS.length; v++) {
                clients[v] = new Bench(VARIANTS[v], v);
            }
            for (int i = 0; i < this.warmupRounds; i++) {
                for (int v = 0; v < VARIANTS.length; v++) {
                    clients[v].round(this.requests);
                }
            }
            for (int i = 0; i < this.rounds; i++) {
                // alternating order: another process's load falls on every variant alike
                for (int k = 0; k < VARIANTS.length; k++) {
                    int v = (i % 2 == 0) ? k : VARIANTS.length - 1 - k;
                    results[v][i] = clients[v].round(this.requests);
                }
            }
        }
        finally {
            for (Bench client : clients) {
                if (client != null) {
                    client.close();
                }
            }
        }
        System.out.printf(Locale.ROOT, "%nthe reply's byte[] of %d bytes: %d B (allocated on the loop, subtracted below)%n",
                PAYLOAD, replyBytes);
        System.out.println("call, in flight               loop B/request beyond the reply (max)   caller B/request (median)"
                + "   loop CPU ns/request (median)   requests/s (median)");
        double maxAllocated = 0;
        for (int v = 0; v < VARIANTS.length; v++) {
            double[][] rounds = results[v];
            double allocated = Arrays.stream(rounds).mapToDouble((r) -> r[0]).max().orElse(Double.NaN) - replyBytes;
            double caller = Medians.of(Arrays.stream(rounds).mapToDouble((r) -> r[1]).sorted().toArray());
            double cpu = Medians.of(Arrays.stream(rounds).mapToDouble((r) -> r[2]).sorted().toArray());
            double rate = Medians.of(Arrays.stream(rounds).mapToDouble((r) -> r[3]).sorted().toArray());
            Variant variant = VARIANTS[v];
            String call = variant.framed() ? "request" : "exchange";
            // a looped request is made on the loop: its future and its copy are the loop's, reported, not judged
            System.out.printf(Locale.ROOT, "%-9s %2d%-7s %38.3f %27s %30.0f %21.0f%n", call, variant.inflight(),
                    variant.looped() ? " looped" : "", allocated,
                    variant.looped() ? "-" : String.format(Locale.ROOT, "%.1f", caller), cpu, rate);
            if (!variant.looped()) {
                maxAllocated = Math.max(maxAllocated, allocated);
            }
        }
        System.out.printf(Locale.ROOT, "%nbytes allocated per request on the client's event loop beyond the reply: %.3f"
                + " (largest round of any variant made by this thread); target 0: %s%n", maxAllocated,
                (maxAllocated < 0.5) ? "met" : "MISSED");
    }

    /** What one {@code byte[length]} takes on this JVM's heap, measured on this thread. */
    private static long arrayBytes(int length) {
        long id = Thread.currentThread().getId();
        int count = 10_000;
        long best = Long.MAX_VALUE;
        for (int attempt = 0; attempt < 5; attempt++) {
            long before = THREADS.getThreadAllocatedBytes(id);
            for (int i = 0; i < count; i++) {
                sink = new byte[length];
            }
            best = Math.min(best, (THREADS.getThreadAllocatedBytes(id) - before) / count);
        }
        return best;
    }

    /** One client of one connection to the stand-in, and its event loop thread. */
    private static final class Bench implements AutoCloseable {

        private final FakeLibRpma fake = new FakeLibRpma().callLogLimit(1000);

        private final DataPathStub stub;

        private final RpmaClient client;

        private final Variant variant;

        private final Thread loop;

        private long nextValue = 1;

        Bench(Variant variant, int index) throws InterruptedException {
            this.variant = variant;
            this.stub = new DataPathStub(this.fake, variant.framed() ? DataPathStub.Peer.FRAMED_ECHO : DataPathStub.Peer.RAW_ECHO);
            String name = "bench" + index;
            this.client = RpmaClient.builder(Rpma.using(this.stub))
                .name(name)
                .address(ADDRESS)
                .port(PORT + index)
                .mode(variant.framed() ? RpmaWireMode.FRAMED : RpmaWireMode.RAW)
                .maxMessageSize(variant.framed() ? 4096 : PAYLOAD)
                .receiveSlots(32)
                .rawWindow(16)
                .build();
            this.loop = this.stub.awaitClient(this.client, name);
        }

        /** {loop bytes, caller bytes, loop CPU ns per request, requests per second}. */
        double[] round(int count) {
            long caller = Thread.currentThread().getId();
            long loopId = this.loop.getId();
            long allocated = THREADS.getThreadAllocatedBytes(loopId);
            long callerAllocated = THREADS.getThreadAllocatedBytes(caller);
            long cpu = THREADS.getThreadCpuTime(loopId);
            long start = System.nanoTime();
            if (this.variant.looped()) {
                loop(count);
            }
            else {
                drive(count, this.variant.inflight());
            }
            long elapsed = System.nanoTime() - start;
            return new double[] { (double) (THREADS.getThreadAllocatedBytes(loopId) - allocated) / count,
                    (double) (THREADS.getThreadAllocatedBytes(caller) - callerAllocated) / count,
                    (double) (THREADS.getThreadCpuTime(loopId) - cpu) / count, count * 1e9 / elapsed };
        }

        /** {@code count} requests, {@code inflight} at a time; each reply must carry its request's value. */
        @SuppressWarnings("unchecked")
        private void drive(int count, int inflight) {
            CompletableFuture<byte[]>[] futures = new CompletableFuture[inflight];
            long[] values = new long[inflight];
            byte[] payload = new byte[PAYLOAD];
            for (int i = 0; i < count + inflight; i++) {
                int k = i % inflight;
                if (futures[k] != null) {
                    byte[] reply = futures[k].join();
                    long got = (long) LITTLE_ENDIAN_LONG.get(reply, 0);
                    if (got != values[k]) {
                        throw new IllegalStateException("the reply carried " + got + ", not " + values[k]);
                    }
                    futures[k] = null;
                }
                if (i < count) {
                    values[k] = this.nextValue++;
                    // the client copies the payload when called: one array serves every call
                    LITTLE_ENDIAN_LONG.set(payload, 0, values[k]);
                    futures[k] = this.variant.framed() ? this.client.request("bench", payload) : this.client.exchange(payload);
                }
            }
        }

        /**
         * {@code count} requests one after the other, each made in the previous reply's callback on the
         * client's loop; each reply must carry its request's value.
         */
        private void loop(int count) {
            new LoopedChain(this.client, this.variant.framed(), this.nextValue, count).run();
            this.nextValue += count;
        }

        @Override
        public void close() {
            this.client.close();
            this.stub.close();
            this.fake.close();
        }
    }
}
