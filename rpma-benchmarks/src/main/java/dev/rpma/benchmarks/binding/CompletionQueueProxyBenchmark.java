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

import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.ForwardingLibRpma;

/**
 * A host-side stand-in for the completion-queue poll, which needs an RDMA device to be real (see
 * {@link LoopbackBenchmark} for the real one). The typed {@link RpmaCompletionQueue#poll} runs on a
 * connection made through the scripted fake, but its {@code rpma_cq_get_wc} is the real librpma
 * function over JNA, called with a NULL queue: librpma checks its arguments and returns
 * {@code RPMA_E_INVAL} at once, which this raw layer reports as {@code RPMA_E_NO_COMPLETION} (what an
 * empty queue returns). The raw baseline makes the same native call and the same translation, so
 * the difference is the typed layer alone: the connection's acquire/release, the interface call,
 * the result handling. The native part is cheaper than a real {@code ibv_poll_cq}, which makes the
 * typed layer's share look larger here than on a device.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CompletionQueueProxyBenchmark {

    private static final String ADDRESS = "198.18.0.1";

    private static final int PORT = 7204;

    private FakeLibRpma fake;

    private RpmaPeer peer;

    private RpmaEndpoint endpoint;

    private RpmaConnection connection;

    private RpmaCompletionQueue queue;

    private final RpmaCompletions completions = new RpmaCompletions(1);

    private final ByteBuffer wc = NativeMemory.allocate(RpmaCompletions.WC_SIZE);

    private final long wcAddress = NativeMemory.address(this.wc);

    private final ByteBuffer count = NativeMemory.allocate(Integer.BYTES);

    private final long countAddress = NativeMemory.address(this.count);

    @Setup
    public void connect() {
        this.fake = new FakeLibRpma();
        Rpma rpma = Rpma.using(new NativeEmptyQueue(this.fake));
        this.peer = rpma.openPeer(ADDRESS, PeerRole.SERVER);
        this.endpoint = this.peer.listen(ADDRESS, PORT);
        this.fake.endpointAt(ADDRESS, PORT).queueRequest(new byte[0]);
        this.connection = this.endpoint.nextConnectionRequest().connect();
        this.queue = this.connection.completionQueue();
    }

    @TearDown
    public void disconnect() {
        this.connection.disconnect();
        this.connection.close();
        this.endpoint.close();
        this.peer.close();
        this.fake.close();
    }

    @Benchmark
    public int typedPoll() {
        return this.queue.poll(this.completions);
    }

    @Benchmark
    public int rawPoll() {
        int rc = NativeEmptyQueue.emptyQueue(RawLibRpma.rpma_cq_get_wc(0, 1, this.wcAddress, this.countAddress));
        if (rc == 0) {
            return this.count.getInt(0);
        }
        if (rc == RawLibRpma.RPMA_E_NO_COMPLETION) {
            return 0;
        }
        throw new IllegalStateException("rpma_cq_get_wc returned " + rc);
    }

    /** The fake, except that polling a completion queue is librpma's own (NULL-queue) call. */
    static final class NativeEmptyQueue extends ForwardingLibRpma {

        NativeEmptyQueue(LibRpma delegate) {
            super(delegate);
        }

        @Override
        public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
            return emptyQueue(RawLibRpma.rpma_cq_get_wc(0, numEntries, wc, numEntriesGot));
        }

        static int emptyQueue(int rc) {
            return (rc == RawLibRpma.RPMA_E_INVAL) ? RawLibRpma.RPMA_E_NO_COMPLETION : rc;
        }
    }
}
