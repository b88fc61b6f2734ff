package dev.rpma.benchmarks.dispatch;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;

import dev.rpma.benchmarks.binding.Internals;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.ForwardingLibRpma;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaHandlerBeanPostProcessor;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;

/**
 * The dispatch path of the starter over the scripted fake native layer: how many
 * connection requests per second get from {@code rpma_ep_next_conn_req} returning to their handler
 * being invoked, the dispatch latency (that return to that invocation), and the bytes allocated
 * per request; and the same for bare loops, a single thread that calls the fake's
 * {@code rpma_ep_next_conn_req} and the handler directly. Every handler records
 * {@link System#nanoTime()} first and then rejects the request.
 *
 * <ul>
 * <li><b>bare loop, raw fake calls</b>: {@code rpma_ep_next_conn_req}, {@code rpma_conn_req_get_private_data}
 * and {@code rpma_conn_req_delete} on the fake's raw layer, in one thread;
 * <li><b>bare loop, typed API</b>: {@code RpmaEndpoint.nextConnectionRequest} and
 * {@code RpmaConnectionRequest.reject} over the fake, in one thread: the layers the starter is built
 * on, without the starter;
 * <li><b>starter, saturated</b>: the real {@link RpmaServer} with one endpoint (its acceptor thread polls the
 * endpoint's eventfd, takes requests, hands each to the handler pool; the handler's reject goes back
 * to the acceptor, the endpoint's owner) with a backlog of every request of the round queued
 * in the fake before it starts and a handler queue of {@value #SATURATED_QUEUE_CAPACITY}; throughput
 * is handler invocations per second from the return of the round's request number
 * {@code requests / 10} to the last invocation (the first requests also start the handler
 * threads; the bare loops are measured the same way);
 * <li><b>starter, @RpmaConnectionHandler, saturated</b>: the same with the handler written as
 * applications write it, an annotated bean method found by the starter's bean post-processor and
 * invoked through its registry;
 * <li><b>starter, inline handler, saturated</b>: the same with {@code inline-handler} on: the handler
 * runs on the acceptor thread (for handlers that decide at once and never block), so there is no
 * hand-off to a handler thread and back;
 * <li><b>starter, one at a time</b>: the server with the starter's defaults (queue 64, 4 handler
 * threads); the next request is queued once the previous one was handled: dispatch latency with no
 * queueing; and the same with the inline handler;
 * <li><b>starter, paced</b>: 4 x {@code --latency-samples} requests arrive at a fixed rate, by default
 * 10% and 50% of the saturated throughput, with the starter's defaults (queue 64, 4 handler
 * threads); a feeder that was descheduled skips ahead rather than sending a burst.
 * </ul>
 *
 * <p>Measured in one run: warm-up rounds first, then rounds that alternate their order (A B C,
 * C B A, ...) so that other processes' load on a shared machine falls on every variant alike;
 * throughput is the median over rounds, latencies are pooled over rounds. Allocation per request
 * is what the threads doing the work allocated ({@code ThreadMXBean.getThreadAllocatedBytes}),
 * divided by the requests; the fake's own allocations are in every variant.
 *
 * <p>Options: {@code --requests N} (per round, default 40000), {@code --rounds N} (20), {@code --warmup-rounds N} (10),
 * {@code --handler-threads N} (4), {@code --latency-samples N} (5000), {@code --paced-load F,F...}
 * (0.1,0.5; empty skips the paced runs), {@code --paced-rate R,R...} (requests per second instead of
 * fractions of the measured throughput), {@code --profile
 * bare-raw|bare-typed|starter|starter-annotated|starter-inline|one-at-a-time|one-at-a-time-inline} (only that variant, {@code --rounds}
 * times, to attach a profiler such as JFR).
 */
public final class DispatchBenchmark {

    private static final String ADDRESS = "198.18.0.1";

    private static final String NAME = "bench";

    /** The target: the starter reaches at least this share of the bare loop's throughput. */
    static final double TARGET_THROUGHPUT_RATIO = 0.80;

    /**
     * The saturated starter's handler queue, below the acceptor's limit of 4096 requests in flight:
     * the acceptor gets that far ahead of the handler threads only when they lose their CPU for
     * milliseconds; the requests it then rejects as the queue being full are reported.
     */
    static final int SATURATED_QUEUE_CAPACITY = 4000;

    /** The target: p99 dispatch latency below this. */
    static final long TARGET_P99_NANOS = TimeUnit.MICROSECONDS.toNanos(50);

    private static final long TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    /** How far the paced feeder may fall behind its schedule before it skips ahead instead of catching up. */
    private static final long MAX_FEEDER_LAG_NANOS = TimeUnit.MICROSECONDS.toNanos(200);

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    /**
     * Requests per round. A round lasts tens of milliseconds: rounds of a few milliseconds, as
     * 4000 requests were, last about one scheduler time slice, so each either ran undisturbed or lost
     * a CPU to another process for much of its length, and the medians over rounds jumped between the two.
     */
    private int requests = 40_000;

    private int rounds = 20;

    private int warmupRounds = 10;

    private int handlerThreads = 4;

    private int latencySamples = 5000;

    private double[] pacedLoads = { 0.1, 0.5 };

    private double[] pacedRates = {};

    private int feederResets;

    private int nextPort = 7300;

    /** Runs only this variant, {@code --rounds} times, and prints nothing else: for a profiler. */
    private @Nullable Variant profile;

    private boolean profileOneAtATime;

    private boolean profileInline;

    public static void main(String[] args) throws Exception {
        DispatchBenchmark benchmark = new DispatchBenchmark();
        benchmark.parse(args);
        benchmark.run();
    }

    private void parse(String[] args) {
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("Missing the value of " + args[i]);
            }
            String value = args[i + 1];
            switch (args[i]) {
                case "--requests" -> this.requests = Integer.parseInt(value);
                case "--rounds" -> this.rounds = Integer.parseInt(value);
                case "--warmup-rounds" -> this.warmupRounds = Integer.parseInt(value);
                case "--handler-threads" -> this.handlerThreads = Integer.parseInt(value);
                case "--latency-samples" -> this.latencySamples = Integer.parseInt(value);
                case "--paced-load" -> this.pacedLoads = numbers(value);
                case "--paced-rate" -> this.pacedRates = numbers(value);
                case "--profile" -> {
                    if (value.startsWith("one-at-a-time")) {
                        this.profileOneAtATime = true;
                        this.profileInline = value.equals("one-at-a-time-inline");
                    }
                    else {
                        this.profile = Variant.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_'));
                    }
                }
                default -> throw new IllegalArgumentException("Unknown option " + args[i] + "; options: --requests,"
                        + " --rounds, --warmup-rounds, --handler-threads, --latency-samples, --paced-load, --paced-rate, --profile");
            }
        }
        if (this.requests < 10) {
            throw new IllegalArgumentException("--requests must be at least 10");
        }
    }

    private static double[] numbers(String list) {
        return list.isBlank() ? new double[0] : Arrays.stream(list.split(",")).mapToDouble(Double::parseDouble).toArray();
    }

    private enum Variant {
        BARE_RAW("bare loop, raw fake calls"), BARE_TYPED("bare loop, typed API"), STARTER("starter, saturated"),
        STARTER_ANNOTATED("starter, @RpmaConnectionHandler, saturated"),
        STARTER_INLINE("starter, inline handler, saturated");

        final String label;

        Variant(String label) {
            this.label = label;
        }
    }

    /**
     * One variant's round: throughput, the latency of each handled request, bytes per request, CPU
     * time per request of the thread that calls {@code rpma_ep_next_conn_req} (the bare loop's only
     * thread, the starter's acceptor) and of the handler threads (starter only).
     */
    private record Round(double perSecond, long[] latencies, double bytesPerRequest, long notHandled,
            double loopCpuNanos, double handlersCpuNanos) {

        Round withCpu(long loopCpu, long handlersCpu) {
            int handled = this.latencies.length;
            return new Round(this.perSecond, this.latencies, this.bytesPerRequest, this.notHandled,
                    (double) loopCpu / handled, (double) handlersCpu / handled);
        }
    }

    private void run() throws Exception {
        if (this.profileOneAtATime) {
            long start = System.nanoTime();
            Round round = starterOneAtATime(this.profileInline);
            System.out.printf(Locale.ROOT, "one at a time: %d requests in %.1f s, acceptor %.2f us CPU per request%n",
                    this.latencySamples, (System.nanoTime() - start) / 1e9, round.loopCpuNanos() / 1e3);
            return;
        }
        if (this.profile != null) {
            long start = System.nanoTime();
            for (int round = 0; round < this.rounds; round++) {
                run(this.profile);
            }
            System.out.printf(Locale.ROOT, "%s: %d rounds of %d requests in %.1f s%n", this.profile.label, this.rounds,
                    this.requests, (System.nanoTime() - start) / 1e9);
            return;
        }
        System.out.printf(Locale.ROOT, "Dispatch benchmark over the scripted fake: %d requests per round, %d rounds"
                + " (alternating order) after %d warm-up rounds; saturated starter: %d handler threads;"
                + " %d CPUs, Java %s; load average %s%n", this.requests, this.rounds, this.warmupRounds,
                this.handlerThreads, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"),
                loadAverage());
        List<Variant> variants = List.of(Variant.values());
        for (int round = 0; round < this.warmupRounds; round++) {
            for (Variant variant : variants) {
                run(variant);
            }
        }
        List<List<Round>> results = new ArrayList<>();
        variants.forEach((variant) -> results.add(new ArrayList<>()));
        for (int round = 0; round < this.rounds; round++) {
            List<Variant> order = new ArrayList<>(variants);
            if (round % 2 == 1) {
                Collections.reverse(order);
            }
            for (Variant variant : order) {
                results.get(variant.ordinal()).add(run(variant));
            }
        }
        List<Round> starter = results.get(Variant.STARTER.ordinal());
        List<Round> bareTyped = results.get(Variant.BARE_TYPED.ordinal());
        List<Round> bareRaw = results.get(Variant.BARE_RAW.ordinal());
        double starterRate = median(starter, Round::perSecond);
        Round idle = starterOneAtATime(false);
        Round idleInline = starterOneAtATime(true);
        double[] pacedAt = (this.pacedRates.length > 0) ? this.pacedRates
                : Arrays.stream(this.pacedLoads).map((load) -> load * starterRate).toArray();
        List<Round> paced = new ArrayList<>();
        for (double rate : pacedAt) {
            paced.add(starterPaced(rate));
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%-42s %9s %9s %8s %8s %9s %9s %11s %11s %9s%n", "", "req/s", "best", "p50 us",
                "p99 us", "p99.9 us", "max us", "loop CPU", "handler CPU", "B/req");
        System.out.printf(Locale.ROOT, "%-42s %9s %9s %8s %8s %9s %9s %11s %11s %9s%n", "", "(median)", "round", "",
                "", "", "", "us/req", "us/req", "");
        for (Variant variant : variants) {
            List<Round> rows = results.get(variant.ordinal());
            long[] latencies = rows.stream().flatMapToLong((r) -> Arrays.stream(r.latencies())).toArray();
            String label = variant.label;
            printRow(label, median(rows, Round::perSecond), rows.stream().mapToDouble(Round::perSecond).max().orElse(0),
                    latencies, median(rows, Round::loopCpuNanos), median(rows, Round::handlersCpuNanos),
                    median(rows, Round::bytesPerRequest));
        }
        printRow("starter, one request at a time (64/4)", Double.NaN, Double.NaN, idle.latencies(), idle.loopCpuNanos(),
                idle.handlersCpuNanos(), idle.bytesPerRequest());
        printRow("starter, inline handler, one at a time", Double.NaN, Double.NaN, idleInline.latencies(),
                idleInline.loopCpuNanos(), idleInline.handlersCpuNanos(), idleInline.bytesPerRequest());
        for (int i = 0; i < pacedAt.length; i++) {
            Round round = paced.get(i);
            printRow(String.format(Locale.ROOT, "starter, paced at %.0f req/s (64/4)", pacedAt[i]), round.perSecond(),
                    Double.NaN, round.latencies(), round.loopCpuNanos(), round.handlersCpuNanos(), round.bytesPerRequest());
        }
        long notHandled = starter.stream().mapToLong(Round::notHandled).sum();
        if (notHandled > 0) {
            System.out.printf(Locale.ROOT, "saturated: %d requests rejected before a handler saw them%n", notHandled);
        }
        for (int i = 0; i < pacedAt.length; i++) {
            if (paced.get(i).notHandled() > 0) {
                System.out.printf(Locale.ROOT, "paced at %.0f req/s: %d of %d requests rejected as the queue (64) was full%n",
                        pacedAt[i], paced.get(i).notHandled(), 4 * this.latencySamples);
            }
        }
        if (this.feederResets > 0) {
            System.out.printf(Locale.ROOT, "the paced feeder fell more than %d us behind %d times and skipped ahead%n",
                    TimeUnit.NANOSECONDS.toMicros(MAX_FEEDER_LAG_NANOS), this.feederResets);
        }
        System.out.println("load average at the end: " + loadAverage());

        double ratio = starterRate / median(bareTyped, Round::perSecond);
        double bestRatio = best(starter) / best(bareTyped);
        long idleP99 = percentile(idle.latencies(), 0.99);
        long idleP99Typical = medianOfSegmentP99(idle.latencies(), 10);
        StringBuilder pacedP99 = new StringBuilder();
        for (int i = 0; i < pacedAt.length; i++) {
            pacedP99.append(String.format(Locale.ROOT, "; paced at %.0f req/s: %.1f us", pacedAt[i],
                    percentile(paced.get(i).latencies(), 0.99) / 1e3));
        }
        double starterCpu = median(starter, Round::loopCpuNanos);
        double handlerCpu = median(starter, Round::handlersCpuNanos);
        double bareCpu = median(bareTyped, Round::loopCpuNanos);
        int cpus = Runtime.getRuntime().availableProcessors();
        double starterCapacity = Math.min(1e9 / starterCpu, cpus * 1e9 / (starterCpu + handlerCpu));
        double bareCapacity = 1e9 / bareCpu;
        System.out.println();
        System.out.printf(Locale.ROOT, "throughput, starter / bare loop (typed API): %.3f (medians), %.3f (best rounds);"
                + " target >= %.2f: %s%n", ratio, bestRatio, TARGET_THROUGHPUT_RATIO,
                verdict(ratio >= TARGET_THROUGHPUT_RATIO, bestRatio >= TARGET_THROUGHPUT_RATIO));
        List<Round> annotated = results.get(Variant.STARTER_ANNOTATED.ordinal());
        System.out.printf(Locale.ROOT, "throughput, starter with an @RpmaConnectionHandler method / bare loop (typed API):"
                + " %.3f (medians), %.3f (best rounds)%n", median(annotated, Round::perSecond) / median(bareTyped, Round::perSecond),
                best(annotated) / best(bareTyped));
        System.out.printf(Locale.ROOT, "throughput, starter / bare loop (raw calls): %.3f (medians), %.3f (best rounds)%n",
                starterRate / median(bareRaw, Round::perSecond), best(starter) / best(bareRaw));
        double[] perRound = perRoundRatios(starter, bareTyped);
        System.out.printf(Locale.ROOT, "throughput, starter / bare loop (typed API) within each round (run next to each other):"
                + " median %.3f, %d of %d rounds >= %.2f; by round: %s%n", median(perRound),
                Arrays.stream(perRound).filter((r) -> r >= TARGET_THROUGHPUT_RATIO).count(), perRound.length,
                TARGET_THROUGHPUT_RATIO, Arrays.stream(perRound).mapToObj((r) -> String.format(Locale.ROOT, "%.2f", r))
                        .collect(Collectors.joining(" ")));
        System.out.printf(Locale.ROOT, "CPU-bound estimate (no other load, %d CPUs): starter %.0f req/s (acceptor %.2f us +"
                + " handlers %.2f us per request), bare loop %.0f req/s (%.2f us): ratio %.3f%n", cpus, starterCapacity,
                starterCpu / 1e3, handlerCpu / 1e3, bareCapacity, bareCpu / 1e3, starterCapacity / bareCapacity);
        System.out.printf(Locale.ROOT, "p99 dispatch latency, one at a time: %.1f us (all samples), %.1f us (median of 10"
                + " segments)%s; target < %d us (one at a time): %s%n", idleP99 / 1e3, idleP99Typical / 1e3, pacedP99,
                TimeUnit.NANOSECONDS.toMicros(TARGET_P99_NANOS),
                verdict(idleP99 < TARGET_P99_NANOS, idleP99Typical < TARGET_P99_NANOS));
        List<Round> inline = results.get(Variant.STARTER_INLINE.ordinal());
        long inlineP99 = percentile(idleInline.latencies(), 0.99);
        System.out.printf(Locale.ROOT, "with the inline handler (rpma.server.acceptor.inline-handler, opt-in): throughput /"
                + " bare loop (typed API) %.3f (medians), %.3f (best rounds); p99 dispatch latency one at a time %.1f us"
                + " (all samples), %.1f us (median of 10 segments)%n", median(inline, Round::perSecond)
                        / median(bareTyped, Round::perSecond), best(inline) / best(bareTyped), inlineP99 / 1e3,
                medianOfSegmentP99(idleInline.latencies(), 10) / 1e3);
        double starterBytes = median(starter, Round::bytesPerRequest);
        double bareBytes = median(bareTyped, Round::bytesPerRequest);
        System.out.printf(Locale.ROOT, "allocation per request: starter %.0f B, bare loop (typed API) %.0f B, so the"
                + " starter's own %.0f B (the rest is the fake's)%n", starterBytes, bareBytes, starterBytes - bareBytes);
    }

    private static String verdict(boolean strict, boolean lenient) {
        return strict ? "met" : lenient ? "MISSED on all samples, met on the least disturbed" : "MISSED";
    }

    private static double median(List<Round> rounds, java.util.function.ToDoubleFunction<Round> value) {
        return median(rounds.stream().mapToDouble(value).toArray());
    }

    /**
     * Throughput of the starter over the bare loop's in the same round: the two ran one after the
     * other (alternating order), so a slow stretch of the shared machine falls on both.
     */
    private static double[] perRoundRatios(List<Round> starter, List<Round> bare) {
        double[] ratios = new double[starter.size()];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = starter.get(i).perSecond() / bare.get(i).perSecond();
        }
        return ratios;
    }

    private static double best(List<Round> rounds) {
        return rounds.stream().mapToDouble(Round::perSecond).max().orElse(Double.NaN);
    }

    /** The median of the p99s of {@code segments} consecutive slices: what a typical stretch of time sees. */
    private static long medianOfSegmentP99(long[] latencies, int segments) {
        int size = latencies.length / segments;
        if (size == 0) {
            return percentile(latencies, 0.99);
        }
        double[] p99s = new double[segments];
        for (int i = 0; i < segments; i++) {
            p99s[i] = percentile(Arrays.copyOfRange(latencies, i * size, (i + 1) * size), 0.99);
        }
        return (long) median(p99s);
    }

    private static String loadAverage() {
        try {
            String[] fields = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg")).split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        }
        catch (java.io.IOException | RuntimeException ex) {
            return "unknown";
        }
    }

    private static void printRow(String label, double rate, double best, long[] latencies, double loopCpu,
            double handlersCpu, double bytes) {
        System.out.printf(Locale.ROOT, "%-42s %9s %9s %8.1f %8.1f %9.1f %9.1f %11s %11s %9.0f%n", label, number(rate),
                number(best), percentile(latencies, 0.50) / 1e3, percentile(latencies, 0.99) / 1e3,
                percentile(latencies, 0.999) / 1e3, percentile(latencies, 1.0) / 1e3, micros(loopCpu),
                micros(handlersCpu), bytes);
    }

    private static String number(double value) {
        return Double.isNaN(value) ? "-" : String.format(Locale.ROOT, "%.0f", value);
    }

    private static String micros(double nanos) {
        return Double.isNaN(nanos) ? "-" : String.format(Locale.ROOT, "%.2f", nanos / 1e3);
    }

    private Round run(Variant variant) throws Exception {
        return switch (variant) {
            case BARE_RAW -> bareRaw();
            case BARE_TYPED -> bareTyped();
            case STARTER -> starterSaturated(false, false);
            case STARTER_ANNOTATED -> starterSaturated(true, false);
            case STARTER_INLINE -> starterSaturated(false, true);
        };
    }

    // ---------------------------------------------------------------- bare loops

    private Round bareTyped() {
        Fixture fixture = new Fixture(this.requests, this.nextPort++);
        try {
            RpmaEndpoint endpoint = fixture.listen();
            RpmaConnectionConfig config = fixture.rpma.newConnectionConfig();
            fixture.queue(this.requests);
            DispatchRecorder recorder = fixture.recorder;
            BareHandler handler = (request) -> {
                long now = System.nanoTime();
                recorder.invoked(now, request.privateData());
                request.reject();
                recorder.done();
            };
            long allocated = THREADS.getCurrentThreadAllocatedBytes();
            long cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < this.requests; i++) {
                RpmaConnectionRequest request = endpoint.nextConnectionRequest(config);
                if (request == null) {
                    throw new IllegalStateException("the fake ran out of requests at " + i);
                }
                handler.handle(request);
            }
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            allocated = THREADS.getCurrentThreadAllocatedBytes() - allocated;
            config.close();
            endpoint.close();
            return fixture.finish(allocated, 0).withCpu(cpu, 0);
        }
        finally {
            fixture.close();
        }
    }

    private Round bareRaw() {
        Fixture fixture = new Fixture(this.requests, this.nextPort++);
        try {
            RpmaEndpoint endpoint = fixture.listen();
            RpmaConnectionConfig config = fixture.rpma.newConnectionConfig();
            long ep = Internals.pointerOf(endpoint);
            long cfg = Internals.pointerOf(config);
            fixture.queue(this.requests);
            LibRpma lib = fixture.lib;
            DispatchRecorder recorder = fixture.recorder;
            ByteBuffer scratch = NativeMemory.allocate(32);
            long out = NativeMemory.address(scratch);
            long pdata = out + 16;
            long allocated = THREADS.getCurrentThreadAllocatedBytes();
            long cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < this.requests; i++) {
                check(lib.rpma_ep_next_conn_req(ep, cfg, out), "rpma_ep_next_conn_req");
                long request = scratch.getLong(0);
                // the handler, inlined: timestamp, private data, reject
                long now = System.nanoTime();
                check(lib.rpma_conn_req_get_private_data(request, pdata), "rpma_conn_req_get_private_data");
                recorder.invoked(now, NativeMemory.copyOut(scratch.getLong(16), Byte.toUnsignedInt(scratch.get(24))));
                scratch.putLong(8, request);
                check(lib.rpma_conn_req_delete(out + 8), "rpma_conn_req_delete");
                recorder.done();
            }
            cpu = THREADS.getCurrentThreadCpuTime() - cpu;
            allocated = THREADS.getCurrentThreadAllocatedBytes() - allocated;
            config.close();
            endpoint.close();
            return fixture.finish(allocated, 0).withCpu(cpu, 0);
        }
        finally {
            fixture.close();
        }
    }

    private static void check(int rc, String function) {
        if (rc != 0) {
            throw new IllegalStateException(function + " returned " + rc);
        }
    }

    @FunctionalInterface
    private interface BareHandler {
        void handle(RpmaConnectionRequest request);
    }

    // ---------------------------------------------------------------- the starter

    private Round starterSaturated(boolean annotated, boolean inline) throws Exception {
        Fixture fixture = new Fixture(this.requests, this.nextPort++);
        try {
            // a queue the acceptor fills only when the handler threads lose their CPU: this measures
            // dispatch, not the queue-full path
            RpmaServer server = annotated
                    ? fixture.server(SATURATED_QUEUE_CAPACITY, this.handlerThreads, false, fixture.annotatedHandler())
                    : fixture.server(SATURATED_QUEUE_CAPACITY, this.handlerThreads, inline);
            fixture.queue(this.requests);
            server.start();
            long notHandled = fixture.awaitDecided(server, this.requests);
            long allocated = fixture.serverThreadsAllocated();
            long[] cpu = fixture.serverThreadsCpu();
            fixture.stop(server);
            return fixture.finish(allocated, notHandled).withCpu(cpu[0], cpu[1]);
        }
        finally {
            fixture.close();
        }
    }

    private Round starterOneAtATime(boolean inline) throws Exception {
        Fixture fixture = new Fixture(this.latencySamples, this.nextPort++);
        try {
            RpmaServer server = fixture.server(64, 4, inline);
            server.start();
            long allocated = 0;
            long[] cpu = new long[2];
            for (int i = 0; i < this.latencySamples; i++) {
                if (i == 1) {
                    // the first request pays for what happens once per server; count from the second
                    allocated = -fixture.serverThreadsAllocated();
                    cpu = fixture.serverThreadsCpu();
                }
                fixture.script.queueRequest(DispatchRecorder.privateData(i));
                long deadline = System.nanoTime() + TIMEOUT_NANOS;
                while (fixture.recorder.handled() <= i) {
                    LockSupport.parkNanos(10_000);
                    if (System.nanoTime() - deadline > 0) {
                        throw new IllegalStateException("request " + i + " was not handled within 60 s");
                    }
                }
            }
            allocated += fixture.serverThreadsAllocated();
            long[] cpuAfter = fixture.serverThreadsCpu();
            fixture.stop(server);
            Round round = fixture.finish(0, 0);
            int counted = Math.max(1, this.latencySamples - 1);
            return new Round(Double.NaN, round.latencies(), (double) allocated / counted, 0,
                    (double) (cpuAfter[0] - cpu[0]) / counted, (double) (cpuAfter[1] - cpu[1]) / counted);
        }
        finally {
            fixture.close();
        }
    }

    private Round starterPaced(double perSecond) throws Exception {
        int count = 4 * this.latencySamples;
        Fixture fixture = new Fixture(count, this.nextPort++);
        try {
            RpmaServer server = fixture.server(64, 4, false);
            server.start();
            long interval = (long) (1e9 / perSecond);
            long start = System.nanoTime();
            long next = start;
            int queued = 0;
            while (queued < count) {
                long now = System.nanoTime();
                while (queued < count && next - now <= 0) {
                    fixture.script.queueRequest(DispatchRecorder.privateData(queued++));
                    next += interval;
                }
                if (now - next > MAX_FEEDER_LAG_NANOS) {
                    // this thread was descheduled: do not make up for it with a burst the server never caused
                    next = now;
                    this.feederResets++;
                }
                LockSupport.parkNanos(Math.max(1_000, next - System.nanoTime()));
            }
            long notHandled = fixture.awaitDecided(server, count);
            long elapsed = System.nanoTime() - start;
            long allocated = fixture.serverThreadsAllocated();
            long[] cpu = fixture.serverThreadsCpu();
            fixture.stop(server);
            Round round = fixture.finish(allocated, notHandled).withCpu(cpu[0], cpu[1]);
            return new Round(count * 1e9 / elapsed, round.latencies(), round.bytesPerRequest(), notHandled,
                    round.loopCpuNanos(), round.handlersCpuNanos());
        }
        finally {
            fixture.close();
        }
    }

    // ---------------------------------------------------------------- one round's fake, endpoint and recorder

    /** A fresh fake per round, so its bookkeeping (it keeps every handle) is the same size in every variant. */
    private static final class Fixture implements AutoCloseable {

        final FakeLibRpma fake = new FakeLibRpma().callLogLimit(256);

        final DispatchRecorder recorder;

        final LibRpma lib;

        final Rpma rpma;

        final int port;

        final RpmaPeer peer;

        FakeEndpoint script;

        Fixture(int requests, int port) {
            this.recorder = new DispatchRecorder(requests);
            this.lib = new TimedLibRpma(this.fake, this.recorder);
            this.rpma = Rpma.using(this.lib);
            this.port = port;
            this.peer = this.rpma.openPeer(ADDRESS, PeerRole.SERVER);
        }

        RpmaEndpoint listen() {
            RpmaEndpoint endpoint = this.peer.listen(ADDRESS, this.port);
            endpoint.configureBlocking(false);
            this.script = this.fake.endpointAt(ADDRESS, this.port);
            return endpoint;
        }

        /**
         * The handler as applications write it: an {@link RpmaConnectionHandler} method, found by the
         * starter's bean post-processor and called through its registry (reflection included).
         */
        RpmaRequestHandler annotatedHandler() {
            RpmaHandlerRegistry registry = new RpmaHandlerRegistry();
            new RpmaHandlerBeanPostProcessor(registry)
                    .postProcessAfterInitialization(new AnnotatedHandler(this.recorder), "dispatchBenchmarkHandler");
            registry.resolve(java.util.Map.of(NAME, RpmaWireMode.FRAMED), List.of());
            return registry.connectionHandler(NAME);
        }

        RpmaServer server(int queueCapacity, int handlerThreads, boolean inline) {
            DispatchRecorder recorder = this.recorder;
            RpmaRequestHandler handler = new RpmaRequestHandler() {

                @Override
                public void handle(RpmaIncomingRequest request) {
                    long now = System.nanoTime();
                    recorder.invoked(now, request.privateData());
                    request.reject();
                    recorder.done();
                }

                @Override
                public String name() {
                    // constant, as a handler's name should be: the acceptor asks for it at every request
                    return "DispatchBenchmark.handle";
                }
            };
            return server(queueCapacity, handlerThreads, inline, handler);
        }

        RpmaServer server(int queueCapacity, int handlerThreads, boolean inline, RpmaRequestHandler handler) {
            RpmaEndpointSettings settings = new RpmaEndpointSettings(NAME, ADDRESS, this.port)
                .withAcceptor(new RpmaEndpointSettings.Acceptor(queueCapacity, handlerThreads, Duration.ofSeconds(5),
                        Duration.ofSeconds(1), 10, inline, true, RpmaEndpointSettings.Acceptor.DEFAULT_SPIN_LOOKS))
                // requests being decided count against the connection limit: a saturated round has thousands
                .withLimits(new RpmaEndpointSettings.Limits(Integer.MAX_VALUE, Duration.ZERO));
            RpmaServerSettings server = new RpmaServerSettings(1, Duration.ZERO, Duration.ZERO,
                    RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT, List.of(settings), List.of());
            RpmaServer listening = RpmaServer.listen(this.rpma, server, new RpmaServer.Components() {

                @Override
                public RpmaRequestHandler handler(String endpoint) {
                    return handler;
                }

                @Override
                public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings endpoint,
                        RpmaQueueSizes needed) {
                    return rpma.newConnectionConfig();
                }
            });
            this.script = this.fake.endpointAt(ADDRESS, this.port);
            return listening;
        }

        void queue(int count) {
            for (int i = 0; i < count; i++) {
                this.script.queueRequest(DispatchRecorder.privateData(i));
            }
        }

        /** Waits until every request was handled or rejected by the server; returns how many never reached a handler. */
        long awaitDecided(RpmaServer server, int count) throws InterruptedException {
            RpmaEndpointStatistics statistics = server.endpoint(NAME).statistics();
            long deadline = System.nanoTime() + TIMEOUT_NANOS;
            for (;;) {
                long notHandled = statistics.rejectedTotal() - statistics.rejected(RejectReason.HANDLER);
                if (this.recorder.handled() + notHandled >= count) {
                    return notHandled;
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IllegalStateException("only " + this.recorder.handled() + " of " + count
                            + " requests were handled within 60 s; endpoint " + server.endpoint(NAME).state());
                }
                // not a 1 ms poll: a thread waking that often took CPU from the measured server's threads
                // (the bare loops have no such neighbour); requests rejected before a handler are
                // counted by the server only, so their rounds end by the timeout
                this.recorder.awaitAllHandled(20, TimeUnit.MILLISECONDS);
            }
        }

        /** Bytes allocated so far by the server's acceptor and handler threads. */
        long serverThreadsAllocated() {
            long total = 0;
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                String name = thread.getName();
                if (name.equals("rpma-acceptor-" + NAME) || name.startsWith("rpma-" + NAME + "-handler-")) {
                    total += THREADS.getThreadAllocatedBytes(thread.getId());
                }
            }
            return total;
        }

        /** CPU time so far of the acceptor thread and of all handler threads. */
        long[] serverThreadsCpu() {
            long[] cpu = new long[2];
            for (Thread thread : Thread.getAllStackTraces().keySet()) {
                String name = thread.getName();
                if (name.equals("rpma-acceptor-" + NAME)) {
                    cpu[0] += THREADS.getThreadCpuTime(thread.getId());
                }
                else if (name.startsWith("rpma-" + NAME + "-handler-")) {
                    cpu[1] += THREADS.getThreadCpuTime(thread.getId());
                }
            }
            return cpu;
        }

        void stop(RpmaServer server) throws InterruptedException {
            CountDownLatch stopped = new CountDownLatch(1);
            server.stop(stopped::countDown);
            if (!stopped.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the server did not stop within 30 s");
            }
        }

        /** Checks the fake saw nothing wrong; this round's numbers. */
        Round finish(long allocated, long notHandled) {
            this.peer.close();
            this.fake.assertNoViolations();
            int handled = this.recorder.handled();
            return new Round(this.recorder.perSecond(handled / 10), this.recorder.latencies(),
                    (double) allocated / Math.max(1, handled), notHandled, Double.NaN, Double.NaN);
        }

        @Override
        public void close() {
            this.fake.close();
        }
    }

    /** The same handler as an annotated bean method. */
    public static final class AnnotatedHandler {

        private final DispatchRecorder recorder;

        AnnotatedHandler(DispatchRecorder recorder) {
            this.recorder = recorder;
        }

        @RpmaConnectionHandler(NAME)
        public void handle(RpmaIncomingRequest request) {
            long now = System.nanoTime();
            this.recorder.invoked(now, request.privateData());
            request.reject();
            this.recorder.done();
        }
    }

    /** The raw layer with a timestamp where {@code rpma_ep_next_conn_req} returns a request. */
    static final class TimedLibRpma extends ForwardingLibRpma {

        private final DispatchRecorder recorder;

        TimedLibRpma(LibRpma delegate, DispatchRecorder recorder) {
            super(delegate);
            this.recorder = recorder;
        }

        @Override
        public int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr) {
            int rc = super.rpma_ep_next_conn_req(ep, cfg, reqPtr);
            if (rc == 0) {
                this.recorder.returned();
            }
            return rc;
        }
    }

    // ---------------------------------------------------------------- statistics

    private static double median(double[] values) {
        if (values.length == 0) {
            return Double.NaN;
        }
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /** The {@code p}-quantile (nearest rank); {@code p = 1} is the maximum. */
    static long percentile(long[] values, double p) {
        if (values.length == 0) {
            return 0;
        }
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
    }
}
