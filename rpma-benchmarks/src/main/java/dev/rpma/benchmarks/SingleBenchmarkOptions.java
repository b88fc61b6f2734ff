package dev.rpma.benchmarks;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.ProfilerConfig;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.runner.options.WarmupMode;
import org.openjdk.jmh.util.Optional;

/**
 * The command line's JMH options narrowed to one benchmark method, with the GC profiler always on
 * (its {@code gc.alloc.rate.norm} is the bytes allocated per call).
 */
final class SingleBenchmarkOptions implements Options {

    private static final long serialVersionUID = 1L;

    private final Options base;

    private final String benchmark;

    SingleBenchmarkOptions(Options base, String benchmark) {
        this.base = base;
        this.benchmark = benchmark;
    }

    @Override
    public List<String> getIncludes() {
        return List.of("^" + Pattern.quote(this.benchmark) + "$");
    }

    @Override
    public List<String> getExcludes() {
        return List.of();
    }

    @Override
    public List<ProfilerConfig> getProfilers() {
        List<ProfilerConfig> profilers = new ArrayList<>(this.base.getProfilers());
        if (profilers.stream().noneMatch((profiler) -> profiler.getKlass().equals("gc")
                || profiler.getKlass().equals(GCProfiler.class.getName()))) {
            profilers.add(new ProfilerConfig(GCProfiler.class.getName()));
        }
        return profilers;
    }

    @Override
    public Optional<String> getOutput() {
        return this.base.getOutput();
    }

    @Override
    public Optional<ResultFormatType> getResultFormat() {
        return this.base.getResultFormat();
    }

    @Override
    public Optional<String> getResult() {
        return this.base.getResult();
    }

    @Override
    public Optional<Boolean> shouldDoGC() {
        return this.base.shouldDoGC();
    }

    @Override
    public Optional<VerboseMode> verbosity() {
        return this.base.verbosity();
    }

    @Override
    public Optional<Boolean> shouldFailOnError() {
        // a benchmark that throws (no RDMA device, a failed write) must not pass as a result
        return this.base.shouldFailOnError().hasValue() ? this.base.shouldFailOnError() : Optional.of(true);
    }

    @Override
    public Optional<Integer> getThreads() {
        return this.base.getThreads();
    }

    @Override
    public Optional<int[]> getThreadGroups() {
        return this.base.getThreadGroups();
    }

    @Override
    public Optional<Boolean> shouldSyncIterations() {
        return this.base.shouldSyncIterations();
    }

    @Override
    public Optional<Integer> getWarmupIterations() {
        return this.base.getWarmupIterations();
    }

    @Override
    public Optional<TimeValue> getWarmupTime() {
        return this.base.getWarmupTime();
    }

    @Override
    public Optional<Integer> getWarmupBatchSize() {
        return this.base.getWarmupBatchSize();
    }

    @Override
    public Optional<WarmupMode> getWarmupMode() {
        return this.base.getWarmupMode();
    }

    @Override
    public List<String> getWarmupIncludes() {
        return this.base.getWarmupIncludes();
    }

    @Override
    public Optional<Integer> getMeasurementIterations() {
        return this.base.getMeasurementIterations();
    }

    @Override
    public Optional<TimeValue> getMeasurementTime() {
        return this.base.getMeasurementTime();
    }

    @Override
    public Optional<Integer> getMeasurementBatchSize() {
        return this.base.getMeasurementBatchSize();
    }

    @Override
    public Collection<Mode> getBenchModes() {
        return this.base.getBenchModes();
    }

    @Override
    public Optional<TimeUnit> getTimeUnit() {
        return this.base.getTimeUnit();
    }

    @Override
    public Optional<Integer> getOperationsPerInvocation() {
        return this.base.getOperationsPerInvocation();
    }

    @Override
    public Optional<Integer> getForkCount() {
        return this.base.getForkCount();
    }

    @Override
    public Optional<Integer> getWarmupForkCount() {
        return this.base.getWarmupForkCount();
    }

    @Override
    public Optional<String> getJvm() {
        return this.base.getJvm();
    }

    @Override
    public Optional<Collection<String>> getJvmArgs() {
        return this.base.getJvmArgs();
    }

    @Override
    public Optional<Collection<String>> getJvmArgsAppend() {
        return this.base.getJvmArgsAppend();
    }

    @Override
    public Optional<Collection<String>> getJvmArgsPrepend() {
        return this.base.getJvmArgsPrepend();
    }

    @Override
    public Optional<Collection<String>> getParameter(String name) {
        return this.base.getParameter(name);
    }

    @Override
    public Optional<TimeValue> getTimeout() {
        return this.base.getTimeout();
    }
}
