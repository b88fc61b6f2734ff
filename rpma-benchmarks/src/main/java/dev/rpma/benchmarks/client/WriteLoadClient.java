package dev.rpma.benchmarks.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
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
import dev.rpma.binding.FlushType;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnection;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaWireMode;

/**
 * {@code load_client write} of benchmarks/rdma-vs-c on {@link RpmaClient}: writes plus flushes into the
 * region a server exposes in its accept ({@code struct common_data}, librpma's example 05), with the same
 * arguments and the same {@code RESULT write ...} line as the C client.
 *
 * <pre>
 *   WriteLoadClient write ADDR PORT --size S [--rounds R] [--concurrency C] [--warmup W] [--inflight K]
 *                                   [--timeout SEC] [--latency-file F] [--event-loops N] [--busy-poll-us N]
 *   WriteLoadClient --commands      one such line per run from standard input, one RESULT line each
 * </pre>
 *
 * <p>One client with a pool of C connections; on each, K chains of operations, each an
 * {@link RpmaClientConnection#write} of S bytes followed at once by an {@link RpmaClientConnection#flush}
 * of the same range with the connection's {@link RpmaClientConnection#flushType()}, the next operation
 * posted from the flush's callback on the client's event loop. Chain j of connection i writes from its
 * own S bytes of one registered source at offset ((i K + j) S) modulo the region's room for S bytes, as
 * the C client does. W + R operations per connection, the first W unmeasured; each is timed from the
 * write's call to the flush's completion. Rate: measured operations over the time from the first
 * measured write to the last measured flush.
 *
 * <p>Exit code (one run): 0 when every operation completed, 1 when not, 2 for bad arguments.
 */
public final class WriteLoadClient {

    static final String USAGE = "usage: write ADDR PORT --size S [--rounds R] [--concurrency C] [--warmup W]"
            + " [--inflight K] [--timeout SEC] [--latency-file F] [--event-loops N] [--busy-poll-us N]";

    private WriteLoadClient() {
    }

    public static void main(String[] args) throws IOException {
        LoadRuns.main("WriteLoadClient", USAGE, args, (arguments) -> run(Rpma.get(), Options.parse(arguments)));
    }

    static void commands(Rpma rpma, BufferedReader in, PrintStream out) throws IOException {
        LoadRuns.commands(in, out, (args) -> run(rpma, Options.parse(args)).line());
    }

    /** One run against the server at the options' address: connects, writes and flushes, closes. */
    static Result run(Rpma rpma, Options options) {
        Run run = new Run(options);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(options.timeoutSeconds());
        try (RpmaClient client = RpmaClient.builder(rpma)
            .name("write-load")
            .address(options.address())
            .port(options.port())
            .mode(RpmaWireMode.RAW)
            .maxMessageSize(Long.BYTES)
            .poolSize(options.concurrency())
            // a write and a flush per chain in flight
            .oneSidedDepth(Math.min(64, 2 * options.inflight()))
            .eventLoops(options.eventLoops())
            .busyPoll(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(options.busyPollMicros())))
            .requestTimeout(Duration.ofSeconds(options.timeoutSeconds()))
            .build()) {
            if (!LoadRuns.awaitEstablished(client, options.concurrency(), deadline)) {
                run.fail("the pool's " + options.concurrency() + " connections were not established in time: "
                        + client.connectionStates());
                return run.result(client.reconnects());
            }
            ByteBuffer source = ByteBuffer.allocateDirect(
                    Math.multiplyExact(options.concurrency() * options.inflight(), options.size()));
            for (int i = 0; i < source.capacity(); i++) {
                source.put(i, (byte) i);
            }
            try (RpmaMemoryRegion from = client.register(source, MemoryUsage.WRITE_SRC)) {
                if (run.start(client.connections(), from)) {
                    if (!run.await(deadline)) {
                        run.fail("not every operation completed within " + options.timeoutSeconds() + " s");
                    }
                }
                return run.result(client.reconnects());
            }
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

    /** The arguments of one run, as {@code load_client write} takes them. */
    record Options(String address, int port, int size, int rounds, int concurrency, int warmup, int inflight,
            long timeoutSeconds, @Nullable Path latencyFile, int eventLoops, long busyPollMicros) {

        static Options parse(List<String> args) {
            if (args.size() < 3 || !args.get(0).equals("write")) {
                throw new IllegalArgumentException("expected write ADDR PORT --size S [options], got " + args);
            }
            String address = args.get(1);
            int port = (int) LoadRuns.number("PORT", args.get(2), 1, 65535);
            int size = 0;
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
                    case "--size" -> size = (int) LoadRuns.number(option, value, 1, 1 << 30);
                    case "--rounds" -> rounds = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE);
                    case "--concurrency" -> concurrency = (int) LoadRuns.number(option, value, 1, 1024);
                    case "--warmup" -> warmup = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE);
                    case "--inflight" -> inflight = (int) LoadRuns.number(option, value, 1, 32);
                    case "--timeout" -> timeout = LoadRuns.number(option, value, 1, 86400);
                    case "--latency-file" -> latencyFile = Path.of(value);
                    case "--event-loops" -> eventLoops = (int) LoadRuns.number(option, value, 1, 64);
                    case "--busy-poll-us" -> busyPoll = LoadRuns.number(option, value, 0, 1_000_000);
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            if (size == 0) {
                throw new IllegalArgumentException("write needs --size");
            }
            if ((long) concurrency * inflight * size > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("the source of concurrency x inflight x size bytes must fit 2 GiB");
            }
            if ((long) concurrency * (warmup + (long) rounds) > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("at most " + (Integer.MAX_VALUE - 8) + " operations per run");
            }
            return new Options(address, port, size, rounds, concurrency, warmup, inflight, timeout, latencyFile,
                    eventLoops, busyPoll);
        }
    }

    /** One run's operations: what each connection does, their latencies, the first failure. */
    private static final class Run {

        private final Options options;

        private final long unmeasured;

        /** Nanoseconds from write to flush completion of each measured operation, in completion order. */
        private final long[] latencies;

        private final AtomicLong measuredDone = new AtomicLong();

        private final AtomicLong errors = new AtomicLong();

        private final CountDownLatch idle;

        private Chain[] chains = new Chain[0];

        private volatile long firstMeasuredWrite;

        private volatile FlushType flushType = FlushType.VISIBILITY;

        Run(Options options) {
            this.options = options;
            this.unmeasured = options.warmup();
            this.latencies = new long[(int) ((long) options.concurrency() * options.rounds())];
            this.idle = new CountDownLatch(options.concurrency() * options.inflight());
        }

        /** Starts every chain; false (the run failed) when a connection has no region to write. */
        boolean start(List<RpmaClientConnection> connections, RpmaMemoryRegion source) {
            int k = this.options.inflight();
            Chain[] all = new Chain[connections.size() * k];
            for (int i = 0; i < connections.size(); i++) {
                RpmaClientConnection connection = connections.get(i);
                RpmaCommonData common = connection.commonData();
                long size = this.options.size();
                if (common == null || connection.remoteRegionSize() < common.dataOffset() + size) {
                    fail("connection " + i + ": the server's accept describes no region of " + size + " bytes or more"
                            + " (common_data " + common + ", region of " + connection.remoteRegionSize() + " bytes)");
                    return false;
                }
                this.flushType = connection.flushType();
                long room = (connection.remoteRegionSize() - common.dataOffset()) / size;
                AtomicLong operations = new AtomicLong();
                for (int j = 0; j < k; j++) {
                    int chain = i * k + j;
                    all[chain] = new Chain(this, connection, operations, source, chain * size,
                            common.dataOffset() + (chain % room) * size);
                }
            }
            this.chains = all;
            for (Chain chain : all) {
                chain.postNext();
            }
            return true;
        }

        boolean await(long deadline) throws InterruptedException {
            return this.idle.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }

        long perConnection() {
            return this.options.warmup() + (long) this.options.rounds();
        }

        boolean isMeasured(long operation) {
            return operation >= this.unmeasured;
        }

        void posted(long operation, long nanos) {
            if (operation == this.unmeasured && this.firstMeasuredWrite == 0) {
                this.firstMeasuredWrite = nanos;
            }
        }

        void completed(long latency) {
            long at = this.measuredDone.getAndIncrement();
            if (at < this.latencies.length) {
                this.latencies[(int) at] = latency;
            }
        }

        void chainDone() {
            this.idle.countDown();
        }

        void fail(String why) {
            if (this.errors.getAndIncrement() == 0) {
                System.err.println("WriteLoadClient: " + why);
            }
        }

        Result result(long retries) {
            long last = 0;
            for (Chain chain : this.chains) {
                last = Math.max(last, chain.lastMeasuredCompletion);
            }
            int n = (int) Math.min(this.measuredDone.get(), this.latencies.length);
            long[] sorted = Arrays.copyOf(this.latencies, n);
            Arrays.sort(sorted);
            double seconds = (n > 0 && last > this.firstMeasuredWrite) ? (last - this.firstMeasuredWrite) / 1e9 : 0;
            double rate = (seconds > 0) ? n / seconds : 0;
            boolean written = LoadRuns.writeLatencies(this.options.latencyFile(), sorted, "WriteLoadClient");
            String line = String.format(Locale.ROOT, "RESULT write addr=%s concurrency=%d size=%d rounds=%d"
                    + " seconds=%.3f rate=%.1f mib_s=%.1f p50_us=%.1f p99_us=%.1f retries=%d errors=%d inflight=%d"
                    + " flush=%s", this.options.address(), this.options.concurrency(), this.options.size(), n, seconds,
                    rate, rate * this.options.size() / 1048576.0, LoadRuns.percentile(sorted, 50) / 1e3,
                    LoadRuns.percentile(sorted, 99) / 1e3, retries, this.errors.get(), this.options.inflight(),
                    this.flushType.name().toLowerCase(Locale.ROOT));
            return new Result(line, this.errors.get() == 0 && n == this.latencies.length && written);
        }
    }

    /**
     * One operation in flight at a time on one connection: a write, then a flush of its range, the next
     * posted from the flush's callback. Its own callback object, so an operation costs the client's
     * allocations only.
     */
    private static final class Chain implements BiConsumer<Void, @Nullable Throwable> {

        private final Run run;

        private final RpmaClientConnection connection;

        /** The operations posted on the connection, by all its chains. */
        private final AtomicLong operations;

        private final RpmaMemoryRegion source;

        private final long sourceOffset;

        private final long remoteOffset;

        private long operation;

        private long postedAt;

        long lastMeasuredCompletion;

        Chain(Run run, RpmaClientConnection connection, AtomicLong operations, RpmaMemoryRegion source,
                long sourceOffset, long remoteOffset) {
            this.run = run;
            this.connection = connection;
            this.operations = operations;
            this.source = source;
            this.sourceOffset = sourceOffset;
            this.remoteOffset = remoteOffset;
        }

        void postNext() {
            long taken = this.operations.getAndIncrement();
            if (taken >= this.run.perConnection()) {
                this.run.chainDone();
                return;
            }
            this.operation = taken;
            this.postedAt = System.nanoTime();
            this.run.posted(taken, this.postedAt);
            int size = this.run.options.size();
            try {
                // the responder executes the flush after the write: its completion says the write landed
                this.connection.write(this.remoteOffset, this.source, this.sourceOffset, size)
                    .exceptionally(this::writeFailed);
                this.connection.flush(this.remoteOffset, size, this.connection.flushType()).whenComplete(this);
            }
            catch (RuntimeException ex) {
                this.run.fail("operation " + taken + ": posting failed: " + ex);
                this.run.chainDone();
            }
        }

        private @Nullable Void writeFailed(Throwable failure) {
            this.run.fail("operation " + this.operation + ": the write failed: " + failure);
            return null;
        }

        @Override
        public void accept(@Nullable Void ignored, @Nullable Throwable failure) {
            long now = System.nanoTime();
            if (failure != null) {
                this.run.fail("operation " + this.operation + ": the flush failed: " + failure);
                this.run.chainDone();
                return;
            }
            if (this.run.isMeasured(this.operation)) {
                this.run.completed(now - this.postedAt);
                this.lastMeasuredCompletion = now;
            }
            postNext();
        }
    }
}
