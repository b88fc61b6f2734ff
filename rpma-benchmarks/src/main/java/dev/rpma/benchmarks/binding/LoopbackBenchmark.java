package dev.rpma.benchmarks.binding;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.binding.internal.NativeMemory;

/**
 * Per-call cost of the completion-queue poll and of a data-path call over a real RDMA connection:
 * a server and a client in this JVM connected over one RDMA device (in the soft-RoCE VM: rxe0 on
 * 198.18.0.1, rxe's internal loopback). Needs an RDMA device; {@code bench.sh vm} starts it in the VM.
 *
 * <ul>
 * <li>{@code typedPoll} / {@code rawPoll}: {@code RpmaCompletionQueue.poll} against
 * {@code rpma_cq_get_wc} on the server's empty completion queue ({@code ibv_poll_cq} returns 0,
 * librpma {@code RPMA_E_NO_COMPLETION}, the typed call 0);
 * <li>{@code typedWrite} / {@code rawWrite}: {@code RpmaConnection.write} against {@code rpma_write}
 * of 8 bytes into the server's registered region without a completion
 * ({@code RPMA_F_COMPLETION_ON_ERROR}). Every {@value #BATCH}th write asks for a completion and waits
 * for it (with the raw poll in both variants), because unsignaled writes hold their send-queue slots
 * until a later signaled one completes; that wait is part of both scores alike.
 * </ul>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
// the VM's JIT runs under software emulation: C2 needs longer to settle than on the host
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class LoopbackBenchmark {

    /** Writes per signaled write; below the send queue size. */
    static final int BATCH = 64;

    private static final int QUEUE_SIZE = 2 * BATCH;

    private static final long COMPLETION_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private static final long SETUP_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(30);

    /** IP address of the RDMA device both sides use; the soft-RoCE VM's rxe0 by default. */
    @Param("198.18.0.1")
    public String address;

    private RpmaPeer serverPeer;

    private RpmaPeer clientPeer;

    private RpmaConnectionConfig config;

    private RpmaEndpoint endpoint;

    private RpmaConnection server;

    private RpmaConnection client;

    private RpmaMemoryRegion destination;

    private RpmaMemoryRegion source;

    private RpmaRemoteMemoryRegion remote;

    private final RpmaCompletions completions = new RpmaCompletions(1);

    // the raw variants' view of the same objects
    private long serverCq;

    private long clientCq;

    private long clientConn;

    private long remotePointer;

    private long sourcePointer;

    private final ByteBuffer wc = NativeMemory.allocate(RpmaCompletions.WC_SIZE);

    private final long wcAddress = NativeMemory.address(this.wc);

    private final ByteBuffer count = NativeMemory.allocate(Integer.BYTES);

    private final long countAddress = NativeMemory.address(this.count);

    private int writes;

    @Setup
    public void connect() {
        Rpma rpma = Rpma.get();
        int port = 7000 + (int) (ProcessHandle.current().pid() % 2000);
        this.serverPeer = rpma.openPeer(this.address, PeerRole.SERVER);
        this.clientPeer = rpma.openPeer(this.address, PeerRole.CLIENT);
        this.config = rpma.newConnectionConfig().sqSize(QUEUE_SIZE).cqSize(QUEUE_SIZE);
        this.endpoint = this.serverPeer.listen(this.address, port);
        this.destination = this.serverPeer.register(NativeMemory.allocate(4096), MemoryUsage.WRITE_DST);
        this.source = this.clientPeer.register(NativeMemory.allocate(4096), MemoryUsage.WRITE_SRC);
        // One thread plays both sides, in the order the handshake needs: the client's connect sends
        // the request; the server takes it and accepts; the client reads the accept (librdmacm then
        // completes the handshake) and sees ESTABLISHED; only then does the server see it.
        this.endpoint.configureBlocking(false);
        this.client = this.clientPeer.newConnectionRequest(this.address, port, this.config).connect();
        this.client.configureEventsBlocking(false);
        RpmaConnectionRequest request = awaitRequest(this.endpoint, this.config);
        this.server = request.connect();
        this.server.configureEventsBlocking(false);
        awaitEvent(this.client, RpmaConnectionEvent.ESTABLISHED);
        awaitEvent(this.server, RpmaConnectionEvent.ESTABLISHED);
        this.remote = rpma.remoteMemoryRegion(this.destination.descriptor());

        this.serverCq = Internals.pointerOf(this.server.completionQueue());
        this.clientCq = Internals.pointerOf(this.client.completionQueue());
        this.clientConn = Internals.pointerOf(this.client);
        this.remotePointer = Internals.pointerOf(this.remote);
        this.sourcePointer = Internals.pointerOf(this.source);
    }

    private static RpmaConnectionRequest awaitRequest(RpmaEndpoint endpoint, RpmaConnectionConfig config) {
        long deadline = System.nanoTime() + SETUP_TIMEOUT_NANOS;
        for (;;) {
            RpmaConnectionRequest request = endpoint.nextConnectionRequest(config);
            if (request != null) {
                return request;
            }
            pause(deadline, "the connection request");
        }
    }

    private static void awaitEvent(RpmaConnection connection, RpmaConnectionEvent expected) {
        long deadline = System.nanoTime() + SETUP_TIMEOUT_NANOS;
        for (;;) {
            RpmaConnectionEvent event = connection.nextEvent();
            if (event == expected) {
                return;
            }
            if (event != null) {
                throw new IllegalStateException("Expected " + expected + ", got " + event);
            }
            pause(deadline, expected.toString());
        }
    }

    private static void pause(long deadline, String what) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("No " + what + " within 30 s");
        }
        java.util.concurrent.locks.LockSupport.parkNanos(1_000_000);
    }

    @TearDown
    public void disconnect() {
        // best effort, in librpma's order: the process ends right after
        quietly(this.client::disconnect);
        quietly(() -> this.server.nextEvent());
        quietly(this.server::disconnect);
        quietly(this.server::close);
        quietly(this.client::close);
        quietly(this.remote::close);
        quietly(this.source::close);
        quietly(this.destination::close);
        quietly(this.endpoint::close);
        quietly(this.config::close);
        quietly(this.clientPeer::close);
        quietly(this.serverPeer::close);
    }

    private static void quietly(Runnable step) {
        try {
            step.run();
        }
        catch (RuntimeException ex) {
            System.err.println("teardown: " + ex.getMessage());
        }
    }

    @Benchmark
    public int typedPoll() {
        return this.server.completionQueue().poll(this.completions);
    }

    @Benchmark
    public int rawPoll() {
        int rc = RawLibRpma.rpma_cq_get_wc(this.serverCq, 1, this.wcAddress, this.countAddress);
        if (rc == 0) {
            return this.count.getInt(0);
        }
        if (rc == RawLibRpma.RPMA_E_NO_COMPLETION) {
            return 0;
        }
        throw new IllegalStateException("rpma_cq_get_wc returned " + rc);
    }

    @Benchmark
    public void typedWrite() {
        if (++this.writes % BATCH == 0) {
            this.client.write(this.remote, 0, this.source, 0, 8, CompletionMode.ALWAYS, this.writes);
            awaitCompletion();
        }
        else {
            this.client.write(this.remote, 0, this.source, 0, 8, CompletionMode.ON_ERROR, this.writes);
        }
    }

    @Benchmark
    public void rawWrite() {
        boolean signaled = ++this.writes % BATCH == 0;
        int rc = RawLibRpma.rpma_write(this.clientConn, this.remotePointer, 0, this.sourcePointer, 0, 8,
                signaled ? RawLibRpma.RPMA_F_COMPLETION_ALWAYS : RawLibRpma.RPMA_F_COMPLETION_ON_ERROR, this.writes);
        if (rc != 0) {
            throw new IllegalStateException("rpma_write returned " + rc);
        }
        if (signaled) {
            awaitCompletion();
        }
    }

    private void awaitCompletion() {
        long deadline = System.nanoTime() + COMPLETION_TIMEOUT_NANOS;
        for (;;) {
            int rc = RawLibRpma.rpma_cq_get_wc(this.clientCq, 1, this.wcAddress, this.countAddress);
            if (rc == 0) {
                int status = this.wc.getInt(8);
                if (status != 0) {
                    throw new IllegalStateException("write completed with ibv_wc_status " + status);
                }
                return;
            }
            if (rc != RawLibRpma.RPMA_E_NO_COMPLETION) {
                throw new IllegalStateException("rpma_cq_get_wc returned " + rc);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("no completion of a signaled write within 10 s");
            }
        }
    }
}
