package dev.rpma.benchmarks.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.Rpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * {@code load_client pingpong} of benchmarks/rdma-vs-c on {@link RpmaClient}: the same arguments and
 * the same {@code RESULT pingpong ...} line, so that one script drives and one summarizer reads both.
 *
 * <pre>
 *   PingPongLoadClient pingpong ADDR PORT [--rounds R] [--concurrency C] [--warmup W] [--inflight K]
 *                                         [--timeout SEC] [--latency-file F] [--event-loops N] [--busy-poll-us N]
 *   PingPongLoadClient --commands         one such line per run from standard input, one RESULT line each
 * </pre>
 *
 * <p>One client in raw mode with a pool of C connections, K exchanges in flight per connection at most
 * (its raw window), keeps C x K chains of values going: each chain sends its next value from the callback
 * of the previous reply, on the client's event loop, so no other thread is woken per message. A request
 * goes to the connection with the fewest in flight, as it does for an application, so the chains are not
 * tied to connections; C x (W + R) messages in all, the first C x W unmeasured. Each message's latency
 * runs from the call of {@code exchange} to its reply; its reply must be its value + 1 (the ping-pong of
 * librpma's example 08). Rate: measured messages over the time from the first measured send to the last
 * measured reply. With {@code --commands} the JVM stays up between runs, so its JIT compiler can settle
 * before anything is measured; every run builds and closes its own client, as every {@code load_client}
 * process makes its own peer and connections.
 *
 * <p>Exit code (one run): 0 when every message was answered right, 1 when not, 2 for bad arguments.
 */
public final class PingPongLoadClient {

    static final String USAGE = "usage: pingpong ADDR PORT [--rounds R] [--concurrency C] [--warmup W] [--inflight K]"
            + " [--timeout SEC] [--latency-file F] [--event-loops N] [--busy-poll-us N]";

    private PingPongLoadClient() {
    }

    public static void main(String[] args) throws IOException {
        LoadRuns.main("PingPongLoadClient", USAGE, args, (arguments) -> run(Rpma.get(), Options.parse(arguments)));
    }

    /**
     * Runs each line of {@code in} as the arguments of one run and prints its RESULT line, or a line
     * {@code ERROR <why>} for a line that is not a run, until the end of the input.
     */
    static void commands(Rpma rpma, BufferedReader in, PrintStream out) throws IOException {
        LoadRuns.commands(in, out, (args) -> run(rpma, Options.parse(args)).line());
    }

    /** One run against the server at the options' address: connects, sends every message, closes. */
    static Result run(Rpma rpma, Options options) {
        Run run = new Run(options);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.timeoutSeconds());
        try (RpmaClient client = RpmaClient.builder(rpma)
            .name("load")
            .address(options.address())
            .port(options.port())
            .mode(RpmaWireMode.RAW)
            .maxMessageSize(Long.BYTES)
            .poolSize(options.concurrency())
            .rawWindow(options.inflight())
            // the C client's K receives and K send slots per connection (each at least what the client takes)
            .receiveSlots(Math.max(2, options.inflight()))
            .sendSlots(Math.min(64, Math.max(2, options.inflight())))
            .eventLoops(options.eventLoops())
            .busyPoll(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(options.busyPollMicros())))
            .requestTimeout(Duration.ofSeconds(options.timeoutSeconds()))
            .build()) {
            if (!LoadRuns.awaitEstablished(client, options.concurrency(), deadline)) {
                run.fail("the pool's " + options.concurrency() + " connections were not established in time: "
                        + client.connectionStates());
                return run.result(client.reconnects());
            }
            run.jitWaitMillis = LoadRuns.awaitJitIdle(deadline);
            long compiled = LoadRuns.compilerMillis();
            run.start(client);
            if (!run.await(deadline)) {
                run.fail("not every message was answered within " + options.timeoutSeconds() + " s");
            }
            run.jitRunMillis = (compiled < 0) ? -1 : LoadRuns.compilerMillis() - compiled;
            return run.result(client.reconnects());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            run.fail("interrupted");
            return run.result(0);
        }
        catch (RuntimeException ex) {
            run.fail("the client failed: " + ex);
            return run.result(0);
        }
    }

    /** The arguments of one run, as {@code load_client pingpong} takes them. */
    record Options(String address, int port, int rounds, int concurrency, int warmup, int inflight,
            long timeoutSeconds, @Nullable Path latencyFile, int eventLoops, long busyPollMicros) {

        static Options parse(List<String> args) {
            if (args.size() < 3 || !args.get(0).equals("pingpong")) {
                throw new IllegalArgumentException("expected pingpong ADDR PORT [options], got " + args);
            }
            String address = args.get(1);
            int port = (int) LoadRuns.number("PORT", args.get(2), 1, 65535);
            int rounds = 2000;
            int concurrency = 1;
            int warmup = 0;
            int inflight = 1;
            long timeout = 600;
            Path latencyFile = null;
            int eventLoops = 1;
            long busyPoll = 0;
            for (LoadRuns.Option each : LoadRuns.options(args)) {
                String option = each.name();
                String value = each.value();
                switch (option) {
                    case "--rounds" -> rounds = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE);
                    case "--concurrency" -> concurrency = (int) LoadRuns.number(option, value, 1, 1024);
                    case "--warmup" -> warmup = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE);
                    case "--inflight" -> inflight = (int) LoadRuns.number(option, value, 1, 1024);
                    case "--timeout" -> timeout = LoadRuns.number(option, value, 1, 86400);
                    case "--latency-file" -> latencyFile = Path.of(value);
                    case "--event-loops" -> eventLoops = (int) LoadRuns.number(option, value, 1, 64);
                    case "--busy-poll-us" -> busyPoll = LoadRuns.number(option, value, 0, 1_000_000);
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            if ((long) concurrency * (warmup + (long) rounds) > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("at most " + (Integer.MAX_VALUE - 8) + " messages per run");
            }
            return new Options(address, port, rounds, concurrency, warmup, inflight, timeout, latencyFile,
                    eventLoops, busyPoll);
        }
    }

    /** One run's messages: the counter that numbers them, their latencies, the first failure. */
    private static final class Run {

        private final Options options;

        private final long messages;

        private final long unmeasured;

        /** Nanoseconds from send to reply of each measured message, by its number less {@link #unmeasured}. */
        private final long[] latencies;

        private final AtomicLong next = new AtomicLong();

        private final AtomicLong errors = new AtomicLong();

        private final CountDownLatch idle;

        private Chain[] chains = new Chain[0];

        /** How long the run waited for the JIT compiler threads to be idle before it started. */
        long jitWaitMillis;

        /** The CPU time the JIT compiler threads used during the run, in ms; -1 where it cannot be read. */
        long jitRunMillis = -1;

        /** When the first measured message was sent; written by the chain that sends it, read after {@link #idle}. */
        private volatile long firstMeasuredSend;

        Run(Options options) {
            this.options = options;
            this.unmeasured = (long) options.concurrency() * options.warmup();
            this.messages = this.unmeasured + (long) options.concurrency() * options.rounds();
            this.latencies = new long[(int) (this.messages - this.unmeasured)];
            this.idle = new CountDownLatch(options.concurrency() * options.inflight());
        }

        void start(RpmaClient client) {
            this.chains = new Chain[options.concurrency() * options.inflight()];
            for (int i = 0; i < this.chains.length; i++) {
                // distinct values per chain, as the C client's: a reply to another chain's message cannot pass
                this.chains[i] = new Chain(this, client, (i + 1L) << 32);
            }
            for (Chain chain : this.chains) {
                chain.sendNext();
            }
        }

        boolean await(long deadline) throws InterruptedException {
            return this.idle.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        /** The next message's number, or -1 when every message was sent. */
        long take() {
            long number = this.next.getAndIncrement();
            return (number < this.messages) ? number : -1;
        }

        boolean isMeasured(long number) {
            return number >= this.unmeasured;
        }

        void sent(long number, long nanos) {
            if (number == this.unmeasured) {
                this.firstMeasuredSend = nanos;
            }
        }

        void answered(long number, long latency) {
            this.latencies[(int) (number - this.unmeasured)] = latency;
        }

        void chainDone() {
            this.idle.countDown();
        }

        void fail(String why) {
            if (this.errors.getAndIncrement() == 0) {
                System.err.println("PingPongLoadClient: " + why);
            }
        }

        Result result(long retries) {
            long lastReply = 0;
            int n = 0;
            long firstWakeups = Long.MAX_VALUE;
            long lastWakeups = 0;
            for (Chain chain : this.chains) {
                lastReply = Math.max(lastReply, chain.lastMeasuredReply);
                n += chain.measured;
                firstWakeups = Math.min(firstWakeups, chain.wakeupsAtFirstReply);
                lastWakeups = Math.max(lastWakeups, chain.wakeupsAtLastReply);
            }
            long expected = this.messages - this.unmeasured;
            // a failed run leaves gaps: only a complete one has its latencies in every place
            long[] sorted = (n == expected) ? this.latencies.clone() : new long[0];
            Arrays.sort(sorted);
            double seconds = (n > 0 && lastReply > this.firstMeasuredSend) ? (lastReply - this.firstMeasuredSend) / 1e9 : 0;
            boolean written = LoadRuns.writeLatencies(this.options.latencyFile(), sorted, "PingPongLoadClient");
            String line = LoadRuns.pingPongLine(this.options.address(), this.options.concurrency(), n, seconds, sorted,
                    retries, this.errors.get(), this.options.inflight())
                    + String.format(Locale.ROOT, " loop_wakeups_per_msg=%.3f jit_wait_ms=%d jit_run_ms=%d",
                            (n > 1) ? (double) (lastWakeups - firstWakeups) / (n - 1) : 0, this.jitWaitMillis,
                            this.jitRunMillis);
            return new Result(line, this.errors.get() == 0 && n == expected && written);
        }
    }

    /**
     * A chain of values: one message in flight at a time, the next sent from the reply's callback. Its own
     * callback object, so a message costs the client's allocations only.
     */
    private static final class Chain implements BiConsumer<byte[], @Nullable Throwable> {

        private final Run run;

        private final RpmaClient client;

        /** The client copies it at the call: one per chain serves every message. */
        private final byte[] message = new byte[Long.BYTES];

        private long value;

        private long number;

        private long sentAt;

        long lastMeasuredReply;

        /**
         * The event loop's returns from its wait at this chain's first and last measured reply (with
         * the client's one loop, as the comparison runs it, the run's are the least and the most).
         */
        long wakeupsAtFirstReply = Long.MAX_VALUE;

        long wakeupsAtLastReply;

        int measured;

        Chain(Run run, RpmaClient client, long value) {
            this.run = run;
            this.client = client;
            this.value = value;
        }

        void sendNext() {
            long taken = this.run.take();
            if (taken < 0) {
                this.run.chainDone();
                return;
            }
            this.number = taken;
            putLittleEndian(this.message, this.value);
            this.sentAt = System.nanoTime();
            this.run.sent(taken, this.sentAt);
            try {
                this.client.exchange(this.message).whenComplete(this);
            }
            catch (RuntimeException ex) {
                this.run.fail("message " + taken + ": exchange failed: " + ex);
                this.run.chainDone();
            }
        }

        @Override
        public void accept(byte @Nullable [] reply, @Nullable Throwable failure) {
            long now = System.nanoTime();
            if (failure != null || reply == null) {
                this.run.fail("message " + this.number + ": " + failure);
                this.run.chainDone();
                return;
            }
            if (reply.length != Long.BYTES || littleEndian(reply) != this.value + 1) {
                this.run.fail("message " + this.number + ": the reply (" + reply.length + " bytes) is not the value sent"
                        + " plus one");
                this.run.chainDone();
                return;
            }
            if (this.run.isMeasured(this.number)) {
                this.run.answered(this.number, now - this.sentAt);
                this.lastMeasuredReply = now;
                this.measured++;
                RpmaEventLoop loop = RpmaEventLoop.current();
                if (loop != null) {
                    this.wakeupsAtLastReply = loop.wakeups();
                    this.wakeupsAtFirstReply = Math.min(this.wakeupsAtFirstReply, this.wakeupsAtLastReply);
                }
            }
            this.value++;
            sendNext();
        }

        private static void putLittleEndian(byte[] bytes, long v) {
            for (int i = 0; i < Long.BYTES; i++) {
                bytes[i] = (byte) (v >>> (8 * i));
            }
        }

        private static long littleEndian(byte[] bytes) {
            long v = 0;
            for (int i = Long.BYTES - 1; i >= 0; i--) {
                v = (v << 8) | (bytes[i] & 0xFF);
            }
            return v;
        }
    }
}
