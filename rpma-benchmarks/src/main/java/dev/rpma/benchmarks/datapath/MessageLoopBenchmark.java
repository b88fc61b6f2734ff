package dev.rpma.benchmarks.datapath;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaSessionState;
import dev.rpma.server.RpmaWireMode;

/**
 * The starter's data path over {@link DataPathStub}, a stand-in for the device that allocates
 * nothing: one raw ping-pong session (the sample app's handler: an 8-byte counter answered with
 * its successor, built in a send slot with {@code session.newMessage()}), driven from this thread
 * with one message in flight (each waits for the previous reply) and with eight (the receive
 * slots). For each, in both of the loop's modes (busy-polling 50 µs after work, as by default, and
 * without a busy poll), per round: what the event loop thread allocated per message
 * ({@code ThreadMXBean.getThreadAllocatedBytes}; the target is 0), its CPU time per message (with
 * the stand-in's few stores per call, this is the loop's own cost: completions, dispatch, handler,
 * repost, send, and the wake-ups), and the message rate. Then the same, busy-polling, with the
 * session receiving through a shared receive queue ({@code messages.shared-receive-slots}). The six
 * servers run side by side and their rounds alternate.
 *
 * <p>Options: {@code --messages N} per round (default 200000), {@code --rounds N} (10),
 * {@code --warmup-rounds N} (5).
 */
public final class MessageLoopBenchmark {

    private static final String ADDRESS = "198.18.0.1";

    private static final int PORT = 7400;

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    private int messages = 200_000;

    private int rounds = 10;

    private int warmupRounds = 5;

    /** In flight, busy poll in µs, shared receive slots (0: the session's own). */
    private static final int[][] VARIANTS = { { 1, 50, 0 }, { 1, 0, 0 }, { 8, 50, 0 }, { 8, 0, 0 }, { 1, 50, 64 },
            { 8, 50, 64 } };

    public static void main(String[] args) throws Exception {
        MessageLoopBenchmark benchmark = new MessageLoopBenchmark();
        for (int i = 0; i < args.length; i += 2) {
            String value = (i + 1 < args.length) ? args[i + 1] : "";
            switch (args[i]) {
                case "--messages" -> benchmark.messages = Integer.parseInt(value);
                case "--rounds" -> benchmark.rounds = Integer.parseInt(value);
                case "--warmup-rounds" -> benchmark.warmupRounds = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        benchmark.run();
    }

    private void run() throws Exception {
        System.out.printf(Locale.ROOT, "Message loop benchmark over an allocation-free stand-in for the device: %d messages"
                + " per round, %d rounds after %d warm-up rounds; %d CPUs, Java %s%n", this.messages, this.rounds,
                this.warmupRounds, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        Starter[] servers = new Starter[VARIANTS.length];
        double[][][] results = new double[VARIANTS.length][this.rounds][];
        try {
            for (int v = 0; v < VARIANTS.length; v++) {
                servers[v] = new Starter(VARIANTS[v][1], VARIANTS[v][2]);
            }
            for (int i = 0; i < this.warmupRounds; i++) {
                for (int v = 0; v < VARIANTS.length; v++) {
                    servers[v].round(this.messages, VARIANTS[v][0]);
                }
            }
            for (int i = 0; i < this.rounds; i++) {
                // alternating order: another process's load falls on every variant alike
                for (int k = 0; k < VARIANTS.length; k++) {
                    int v = (i % 2 == 0) ? k : VARIANTS.length - 1 - k;
                    results[v][i] = servers[v].round(this.messages, VARIANTS[v][0]);
                }
            }
        }
        finally {
            for (Starter server : servers) {
                if (server != null) {
                    server.close();
                }
            }
        }
        System.out.println();
        System.out.println("in flight, loop mode             B/message (max)   loop CPU ns/message (median, min-max)"
                + "   messages/s (median)");
        double maxAllocated = 0;
        for (int v = 0; v < VARIANTS.length; v++) {
            double[][] rounds = results[v];
            double allocated = Arrays.stream(rounds).mapToDouble((r) -> r[0]).max().orElse(Double.NaN);
            double[] cpu = Arrays.stream(rounds).mapToDouble((r) -> r[1]).sorted().toArray();
            double[] rate = Arrays.stream(rounds).mapToDouble((r) -> r[2]).sorted().toArray();
            String mode = ((VARIANTS[v][1] > 0) ? "busy-polls " + VARIANTS[v][1] + " us" : "no busy poll")
                    + ((VARIANTS[v][2] > 0) ? ", SRQ" : "");
            System.out.printf(Locale.ROOT, "%d, %-26s %15.3f %20.0f (%.0f-%.0f) %24.0f%n", VARIANTS[v][0], mode, allocated,
                    Medians.of(cpu), cpu[0], cpu[cpu.length - 1], Medians.of(rate));
            maxAllocated = Math.max(maxAllocated, allocated);
        }
        System.out.printf(Locale.ROOT, "%nbytes allocated per message on the event loop: %.3f (largest round of any"
                + " variant); target 0: %s%n", maxAllocated, (maxAllocated == 0) ? "met" : "MISSED");
    }

    /** Delivers {@code count} messages, {@code inflight} at a time, and waits for every reply. */
    private static void drive(DataPathStub stub, int count, int inflight, long firstValue) {
        long base = stub.replies();
        long sent = 0;
        long value = firstValue;
        while (sent < count) {
            if (sent - (stub.replies() - base) < inflight && stub.deliver(value)) {
                sent++;
                value++;
            }
            else {
                Thread.onSpinWait();
            }
        }
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (stub.replies() - base < count) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("only " + (stub.replies() - base) + " of " + count + " replies came");
            }
            Thread.onSpinWait();
        }
        if (stub.lastReply() != value) {
            throw new IllegalStateException("the last reply was " + stub.lastReply() + ", not " + value);
        }
    }

    /** {bytes allocated, CPU ns, messages per second} of {@code thread} while {@code work} runs. */
    private static double[] measure(Thread thread, int count, Runnable work) {
        long allocated = THREADS.getThreadAllocatedBytes(thread.getId());
        long cpu = THREADS.getThreadCpuTime(thread.getId());
        long start = System.nanoTime();
        work.run();
        long elapsed = System.nanoTime() - start;
        return new double[] { (double) (THREADS.getThreadAllocatedBytes(thread.getId()) - allocated) / count,
                (double) (THREADS.getThreadCpuTime(thread.getId()) - cpu) / count, count * 1e9 / elapsed };
    }

    /** The starter serving one raw ping-pong session on one event loop. */
    private static final class Starter implements AutoCloseable {

        private final FakeLibRpma fake = new FakeLibRpma().callLogLimit(1000);

        private final DataPathStub stub = new DataPathStub(this.fake);

        private final RpmaServer server;

        private final Thread loop;

        private long nextValue = 1;

        Starter(long busyPollMicros, int sharedReceiveSlots) throws InterruptedException {
            RpmaEndpointSettings endpoint = new RpmaEndpointSettings("bench", ADDRESS, PORT)
                .withMessages(RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW).withMaxMessageSize(8)
                    .withSharedReceiveSlots(sharedReceiveSlots));
            RpmaServerSettings settings = new RpmaServerSettings(1, Duration.ofNanos(busyPollMicros * 1000), Duration.ZERO,
                    RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT, List.of(endpoint), List.of());
            RpmaMessageListener pingPong = new RpmaMessageListener() {

                @Override
                public Object onMessage(ByteBuffer message, dev.rpma.server.RpmaSession session) {
                    return session.newMessage().putLong(message.getLong(0) + 1).flip();
                }

                @Override
                public String name() {
                    return "MessageLoopBenchmark.pong";
                }
            };
            this.server = RpmaServer.listen(Rpma.using(this.stub), settings, new RpmaServer.Components() {

                @Override
                public RpmaRequestHandler handler(String name) {
                    return RpmaIncomingRequest::connect;
                }

                @Override
                public Map<String, RpmaMessageListener> messageListeners(String name) {
                    return Map.of("", pingPong);
                }

                @Override
                public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed) {
                    return rpma.newConnectionConfig().cqSize(needed.cq()).sqSize(needed.sq()).rqSize(needed.rq());
                }
            });
            this.server.start();
            FakeRequest request = this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[0]);
            if (request.awaitConsumed(Duration.ofSeconds(30)) != FakeRequest.State.CONNECTED) {
                throw new IllegalStateException("the benchmark's session was not accepted");
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!this.stub.established() || this.server.endpoint("bench").sessions().stream()
                .noneMatch((session) -> session.state() == RpmaSessionState.ESTABLISHED)) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("the benchmark's session was not established");
                }
                Thread.sleep(1);
            }
            this.loop = this.server.eventLoops().get(0).thread();
        }

        double[] round(int count, int inflight) {
            long first = this.nextValue;
            this.nextValue += count;
            return measure(this.loop, count, () -> drive(this.stub, count, inflight, first));
        }

        @Override
        public void close() {
            this.server.close();
            this.stub.close();
            this.fake.close();
        }
    }
}
