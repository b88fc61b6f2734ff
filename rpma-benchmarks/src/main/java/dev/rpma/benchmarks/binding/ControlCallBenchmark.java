package dev.rpma.benchmarks.binding;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.NativeMemory;

/**
 * Per-call cost of a control call on the real librpma, which needs no RDMA device: the
 * connection configuration's completion-queue size, read and written.
 *
 * <ul>
 * <li>{@code typed*}: {@link RpmaConnectionConfig#cqSize()} / {@code cqSize(int)}, the public API;
 * <li>{@code rawLayer*}: the binding's raw layer ({@link LibRpma}, an interface) with the caller's
 * own out-parameter memory;
 * <li>{@code raw*}: the bare JNA direct-mapped function ({@link RawLibRpma}).
 * </ul>
 * All three touch the same {@code struct rpma_conn_cfg} and check the return code.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ControlCallBenchmark {

    private RpmaConnectionConfig config;

    private LibRpma lib;

    private long cfg;

    private final ByteBuffer out = NativeMemory.allocate(8);

    private final long outAddress = NativeMemory.address(this.out);

    private int size = 16;

    @Setup
    public void setUp() {
        Rpma rpma = Rpma.get();
        this.config = rpma.newConnectionConfig();
        this.lib = Internals.libOf(rpma);
        this.cfg = Internals.pointerOf(this.config);
    }

    @TearDown
    public void tearDown() {
        this.config.close();
    }

    @Benchmark
    public int typedGet() {
        return this.config.cqSize();
    }

    @Benchmark
    public int rawLayerGet() {
        check(this.lib.rpma_conn_cfg_get_cq_size(this.cfg, this.outAddress));
        return this.out.getInt(0);
    }

    @Benchmark
    public int rawGet() {
        check(RawLibRpma.rpma_conn_cfg_get_cq_size(this.cfg, this.outAddress));
        return this.out.getInt(0);
    }

    @Benchmark
    public RpmaConnectionConfig typedSet() {
        return this.config.cqSize(nextSize());
    }

    @Benchmark
    public void rawSet() {
        check(RawLibRpma.rpma_conn_cfg_set_cq_size(this.cfg, nextSize()));
    }

    /** A changing value, so the call cannot be treated as loop-invariant. */
    private int nextSize() {
        this.size = (this.size + 1) & 1023;
        return this.size;
    }

    private static void check(int rc) {
        if (rc != 0) {
            throw new IllegalStateException("librpma returned " + rc);
        }
    }
}
