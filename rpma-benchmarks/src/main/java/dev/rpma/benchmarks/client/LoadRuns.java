package dev.rpma.benchmarks.client;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;

/**
 * What the Java load clients share with each other and with {@code load_client.c}: the option values
 * it accepts, its nearest-rank percentiles, its latency files and the one-JVM mode that runs a line of
 * arguments at a time.
 */
final class LoadRuns {

    /** How long the JIT compiler threads must have been idle before a run starts. */
    private static final long JIT_IDLE_MILLIS = 100;

    private LoadRuns() {
    }

    /** What one run prints, in {@code load_client}'s format, and whether every operation succeeded. */
    record Result(String line, boolean ok) {
    }

    /**
     * A load client's {@code main}: with {@code --commands} one run per line of standard input (see
     * {@link #commands}); else one run of the arguments, its RESULT line printed, and the exit code 0
     * when it succeeded, 1 when not, 2 for bad arguments ({@code run} throws
     * {@link IllegalArgumentException} for those).
     */
    static void main(String program, String usage, String[] args, Function<List<String>, Result> run)
            throws IOException {
        if (args.length == 1 && args[0].equals("--commands")) {
            commands(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)), System.out,
                    (line) -> run.apply(line).line());
            return;
        }
        Result result;
        try {
            result = run.apply(List.of(args));
        }
        catch (IllegalArgumentException ex) {
            System.err.println(program + ": " + ex.getMessage());
            System.err.println(usage + "\n       --commands");
            System.exit(2);
            return;
        }
        System.out.println(result.line());
        System.exit(result.ok() ? 0 : 1);
    }

    /**
     * Waits until the client's pool has {@code connections} established, as the C client's threads
     * connect before they measure anything; false when the deadline ({@link System#nanoTime()}) passed.
     */
    static boolean awaitEstablished(RpmaClient client, int connections, long deadline) throws InterruptedException {
        while (client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) < connections) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(1);
        }
        return true;
    }

    /**
     * Waits until the JIT compiler threads used no CPU for {@value #JIT_IDLE_MILLIS} ms (at most until
     * {@code deadline}, {@link System#nanoTime()}), so that the run measures the client and not a
     * compilation going on beside it: what runs once per run (connecting, closing, sorting and writing
     * the latencies) gets hot only after many runs, and its compilations, a few hundred ms of a CPU
     * each in an emulated machine, started inside the next run. The C client has no such thing. Reads
     * the threads' CPU time from {@code /proc/self/task}; where there is none it does not wait.
     *
     * @return the milliseconds waited
     */
    static long awaitJitIdle(long deadline) throws InterruptedException {
        long start = System.nanoTime();
        long last = compilerTicks();
        long quietSince = start;
        while (last >= 0 && System.nanoTime() - quietSince < JIT_IDLE_MILLIS * 1_000_000 && System.nanoTime() < deadline) {
            Thread.sleep(10);
            long now = compilerTicks();
            if (now != last) {
                last = now;
                quietSince = System.nanoTime();
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * The CPU time this JVM's compiler threads have used, in ms ({@code /proc} counts it in clock ticks,
     * of 10 ms on Linux); -1 where it cannot be read.
     */
    static long compilerMillis() {
        long ticks = compilerTicks();
        return (ticks < 0) ? -1 : ticks * 10;
    }

    /** CPU clock ticks of this JVM's compiler threads (user and system); -1 where they cannot be read. */
    private static long compilerTicks() {
        Path tasks = Path.of("/proc/self/task");
        long ticks = 0;
        try (var threads = Files.list(tasks)) {
            for (Path thread : (Iterable<Path>) threads::iterator) {
                try {
                    String name = Files.readString(thread.resolve("comm")).trim();
                    if (!name.startsWith("C1 CompilerThre") && !name.startsWith("C2 CompilerThre")) {
                        continue;
                    }
                    String stat = Files.readString(thread.resolve("stat"));
                    // the fields after the name, which may hold spaces, in parentheses: utime is the 14th
                    // of the line, the 12th after it; stime the 13th
                    String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                    ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                }
                catch (IOException | RuntimeException ex) {
                    // a thread that ended meanwhile
                }
            }
        }
        catch (IOException ex) {
            return -1;
        }
        return ticks;
    }

    /**
     * Runs each line of {@code in} as the arguments of one run ({@code run} answers its RESULT line and
     * throws {@link IllegalArgumentException} for a line that is not a run, printed as {@code ERROR <why>}),
     * until the end of the input.
     */
    static void commands(BufferedReader in, PrintStream out, Function<List<String>, String> run) throws IOException {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            try {
                out.println(run.apply(List.of(line.trim().split("\\s+"))));
            }
            catch (IllegalArgumentException ex) {
                out.println("ERROR " + ex.getMessage());
            }
            out.flush();
        }
    }

    /** One {@code --name value} pair of a load client's arguments. */
    record Option(String name, String value) {
    }

    /**
     * The {@code --name value} pairs of {@code args} after {@code MODE ADDR PORT}, in order.
     *
     * @throws IllegalArgumentException for a name without a value
     */
    static List<Option> options(List<String> args) {
        List<Option> options = new ArrayList<>();
        for (int i = 3; i < args.size(); i += 2) {
            if (i + 1 >= args.size()) {
                throw new IllegalArgumentException(args.get(i) + " needs a value");
            }
            options.add(new Option(args.get(i), args.get(i + 1)));
        }
        return options;
    }

    /** An option's value, as {@code load_client} checks it. */
    static long number(String option, String value, long min, long max) {
        long parsed;
        try {
            parsed = Long.parseLong(value);
        }
        catch (NumberFormatException ex) {
            throw new IllegalArgumentException("bad value for " + option + ": " + value, ex);
        }
        if (parsed < min || parsed > max) {
            throw new IllegalArgumentException(option + " must be " + min + " to " + max + ", got " + value);
        }
        return parsed;
    }

    /**
     * {@code load_client pingpong}'s RESULT line, up to {@code inflight=}: the percentiles, mean, least
     * and most of {@code sorted} (the latencies in ns, sorted), {@code rounds} the round trips measured.
     */
    static String pingPongLine(String address, int concurrency, long rounds, double seconds, long[] sorted, long retries,
            long errors, int inflight) {
        double sum = 0;
        for (long latency : sorted) {
            sum += latency;
        }
        int n = sorted.length;
        return String.format(Locale.ROOT, "RESULT pingpong addr=%s concurrency=%d rounds=%d seconds=%.3f rate=%.1f"
                + " p50_us=%.1f p99_us=%.1f mean_us=%.1f min_us=%.1f max_us=%.1f retries=%d errors=%d inflight=%d",
                address, concurrency, rounds, seconds, (seconds > 0) ? rounds / seconds : 0, percentile(sorted, 50) / 1e3,
                percentile(sorted, 99) / 1e3, (n > 0) ? sum / n / 1e3 : 0, (n > 0) ? sorted[0] / 1e3 : 0,
                (n > 0) ? sorted[n - 1] / 1e3 : 0, retries, errors, inflight);
    }

    /** Nearest rank, as load_client.c takes it. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        long rank = Math.max(1, (long) (p / 100.0 * sorted.length + 0.999999));
        return sorted[(int) Math.min(rank, sorted.length) - 1];
    }

    /** Appends the latencies to {@code file}, one per line, as {@code --latency-file} does; false when it failed. */
    static boolean writeLatencies(@Nullable Path file, long[] sorted, String program) {
        if (file == null) {
            return true;
        }
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(file, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND))) {
            for (long latency : sorted) {
                out.println(latency);
            }
            return !out.checkError();
        }
        catch (IOException ex) {
            System.err.println(program + ": " + file + ": " + ex);
            return false;
        }
    }
}
