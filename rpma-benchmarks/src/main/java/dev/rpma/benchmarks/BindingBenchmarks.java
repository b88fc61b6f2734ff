package dev.rpma.benchmarks;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SortedSet;

import org.openjdk.jmh.Main;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.BenchmarkList;
import org.openjdk.jmh.runner.BenchmarkListEntry;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.VerboseMode;

/**
 * Runs the binding benchmarks (typed API against the raw JNA call) and prints each typed/raw pair
 * side by side: median and best iteration, their ratios, and the bytes the typed call allocates.
 *
 * <p>Usage: {@code BindingBenchmarks [--rounds N] [JMH options] [benchmark regex...]}. JMH's own
 * options apply ({@code -f 1 -wi 3 -i 5}, {@code -p address=...}); without a regex it runs the
 * benchmarks that need no RDMA device. The GC profiler is always on.
 *
 * <p>On a shared machine the load of other processes changes from one fork to the next, and JMH runs
 * benchmarks in alphabetical order, so a raw and a typed run minutes apart can differ by 2x for
 * reasons of their own. Here every benchmark is run once per round, rounds alternate the order
 * (A B, B A, ...), and pairs are compared on the median and on the best of all their iterations:
 * the best iteration is the one least disturbed by others.
 *
 * <p>Pairs are found by name: {@code typedX} against {@code rawX} (the bare JNA call) and against
 * {@code rawLayerX} (the binding's raw-layer interface) of the same class and parameters.
 */
public final class BindingBenchmarks {

    /** What runs on any machine with librpma installed. */
    static final String HOST_BENCHMARKS = "binding\\.(ControlCallBenchmark|CompletionQueueProxyBenchmark)\\.";

    /** The target: the typed layer adds at most this fraction to the raw call's time. */
    static final double TARGET_OVERHEAD = 0.20;

    private BindingBenchmarks() {
    }

    public static void main(String[] args) throws Exception {
        List<String> jmhArgs = new ArrayList<>(Arrays.asList(args));
        int rounds = 2;
        int at = jmhArgs.indexOf("--rounds");
        if (at >= 0) {
            rounds = Integer.parseInt(jmhArgs.get(at + 1));
            jmhArgs.subList(at, at + 2).clear();
        }
        String[] rest = jmhArgs.toArray(new String[0]);
        CommandLineOptions command = new CommandLineOptions(rest);
        if (command.shouldHelp() || command.shouldList() || command.shouldListWithParams()
                || command.shouldListProfilers() || command.shouldListResultFormats()) {
            Main.main(rest);
            return;
        }
        List<String> includes = command.getIncludes().isEmpty() ? List.of(HOST_BENCHMARKS) : command.getIncludes();
        SortedSet<BenchmarkListEntry> entries = BenchmarkList.defaultList()
                .find(OutputFormatFactory.createFormatInstance(System.out, VerboseMode.SILENT), includes,
                        command.getExcludes());
        List<String> benchmarks = new ArrayList<>();
        entries.forEach((entry) -> {
            if (!benchmarks.contains(entry.getUsername())) {
                benchmarks.add(entry.getUsername());
            }
        });
        if (benchmarks.isEmpty()) {
            throw new IllegalArgumentException("No benchmark matches " + includes);
        }
        List<RunResult> results = new ArrayList<>();
        for (int round = 0; round < rounds; round++) {
            List<String> order = new ArrayList<>(benchmarks);
            if (round % 2 == 1) {
                Collections.reverse(order);
            }
            for (String benchmark : order) {
                results.addAll(new Runner(new SingleBenchmarkOptions(command, benchmark)).run());
            }
        }
        System.out.println();
        System.out.println("Binding benchmarks: " + rounds + " round(s) in alternating order, all iterations pooled");
        print(results, System.out);
    }

    static void print(List<RunResult> results, PrintStream out) {
        Map<String, Row> rows = new LinkedHashMap<>();
        for (RunResult result : results) {
            Row.add(rows, result);
        }
        out.printf(Locale.ROOT, "%-48s %6s %10s %10s %10s %12s%n", "benchmark", "iters", "mean", "median", "best",
                "alloc B/op");
        rows.values().stream().sorted((a, b) -> a.key().compareTo(b.key())).forEach((row) -> out.printf(Locale.ROOT,
                "%-48s %6d %10.2f %10.2f %10.2f %12.3f  %s%n", row.key(), row.scores.size(), row.mean(), row.median(),
                row.best(), row.allocatedBytes, row.unit));
        out.println();
        out.printf(Locale.ROOT, "%-44s %9s %9s %8s %8s %11s  %s%n", "typed vs raw (medians; best iterations)", "typed",
                "raw", "ratio", "best", "typed B/op", "target: ratio <= 1.20, no allocation");
        for (Row typed : rows.values()) {
            if (!typed.method.startsWith("typed")) {
                continue;
            }
            String operation = typed.method.substring("typed".length());
            for (String baseline : List.of("raw", "rawLayer")) {
                Row raw = rows.get(typed.keyFor(baseline + operation));
                if (raw == null) {
                    continue;
                }
                double ratio = typed.median() / raw.median();
                double bestRatio = typed.best() / raw.best();
                String verdict;
                if (baseline.equals("raw")) {
                    // JMH's figure includes the harness's per-iteration allocation, as in the raw baseline;
                    // BindingCheck counts the typed call's own bytes exactly
                    verdict = ((ratio <= 1 + TARGET_OVERHEAD) ? "time met" : "time MISSED") + ", "
                            + ((typed.allocatedBytes - raw.allocatedBytes < 0.5) ? "allocates no more than raw"
                                    : "ALLOCATES MORE THAN RAW");
                }
                else {
                    verdict = "(how much is the raw layer's interface)";
                }
                out.printf(Locale.ROOT, "%-44s %9.2f %9.2f %8.3f %8.3f %11.3f  %s%n",
                        typed.className + "." + operation + " vs " + baseline, typed.median(), raw.median(), ratio,
                        bestRatio, typed.allocatedBytes, verdict);
            }
        }
    }

    /** One benchmark's iterations over every round, and the most it allocated per call in any round. */
    private static final class Row {

        final String className;

        final String method;

        final String params;

        final List<Double> scores = new ArrayList<>();

        double allocatedBytes;

        String unit;

        private Row(String className, String method, String params) {
            this.className = className;
            this.method = method;
            this.params = params;
        }

        static void add(Map<String, Row> rows, RunResult result) {
            BenchmarkParams params = result.getParams();
            String name = params.getBenchmark();
            int lastDot = name.lastIndexOf('.');
            String qualifiedClass = name.substring(0, lastDot);
            String className = qualifiedClass.substring(qualifiedClass.lastIndexOf('.') + 1).replace("Benchmark", "");
            StringBuilder paramText = new StringBuilder();
            for (String key : params.getParamsKeys()) {
                paramText.append(paramText.isEmpty() ? "" : ",").append(key).append('=').append(params.getParam(key));
            }
            Row fresh = new Row(className, name.substring(lastDot + 1), paramText.toString());
            Row row = rows.computeIfAbsent(fresh.key(), (key) -> fresh);
            for (BenchmarkResult benchmarkResult : result.getBenchmarkResults()) {
                for (IterationResult iteration : benchmarkResult.getIterationResults()) {
                    row.scores.add(iteration.getPrimaryResult().getScore());
                }
            }
            Result<?> allocation = result.getSecondaryResults().get("gc.alloc.rate.norm");
            row.allocatedBytes = Math.max(row.allocatedBytes, (allocation != null) ? allocation.getScore() : Double.NaN);
            row.unit = result.getPrimaryResult().getScoreUnit();
        }

        double mean() {
            return this.scores.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        }

        double median() {
            double[] sorted = this.scores.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            int n = sorted.length;
            return (n == 0) ? Double.NaN : (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        }

        double best() {
            return this.scores.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
        }

        String key() {
            return keyFor(this.method);
        }

        String keyFor(String otherMethod) {
            return this.className + "." + otherMethod + (this.params.isEmpty() ? "" : " [" + this.params + "]");
        }
    }
}
