package dev.rpma.benchmarks.datapath;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.ForwardingLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaWireMode;

/**
 * What the client's own path of a round trip costs when a system call that runs much kernel code
 * comes before it, as the send's does under soft-RoCE. Raw exchanges, each made in the previous
 * reply's callback on the client's loop, with the settings of the comparison against C (one
 * connection, one in flight, 2 receive and 2 send slots), over {@link DataPathStub}, which answers
 * inside {@code rpma_send}; three measurements in turn, round after round, in one JVM: the exchanges
 * alone ({@code warm}), the exchanges with a UDP datagram sent to an unread socket on the loopback
 * inside each {@code rpma_send} ({@code after}), and the datagrams alone ({@code syscall}). The loop's
 * CPU per exchange, {@code after} less {@code syscall}, against {@code warm}: on a machine whose
 * caches the kernel's work hardly disturbs, about 1; under an emulator, what the system call's work
 * costs the Java code that follows it.
 *
 * <p>Options: {@code --exchanges N} per round (default 30000), {@code --rounds N} (7).
 */
public final class ClientPathAfterSyscall {

    private static final com.sun.management.ThreadMXBean THREADS = (com.sun.management.ThreadMXBean) ManagementFactory
            .getThreadMXBean();

    private ClientPathAfterSyscall() {
    }

    public static void main(String[] args) throws Exception {
        int exchanges = 30_000;
        int rounds = 7;
        for (int i = 0; i < args.length; i += 2) {
            String value = (i + 1 < args.length) ? args[i + 1] : "";
            switch (args[i]) {
                case "--exchanges" -> exchanges = Integer.parseInt(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        try (Datagrams datagrams = new Datagrams(); Looped warm = new Looped(null, 0); Looped after = new Looped(datagrams, 1)) {
            for (int i = 0; i < 5; i++) {
                warm.round(exchanges);
                after.round(exchanges);
                datagrams.round(exchanges);
            }
            double[][] results = new double[3][rounds];
            for (int r = 0; r < rounds; r++) {
                results[0][r] = warm.round(exchanges);
                results[1][r] = after.round(exchanges);
                results[2][r] = datagrams.round(exchanges);
            }
            for (double[] measured : results) {
                Arrays.sort(measured);
            }
            double warmNs = Medians.of(results[0]);
            double afterNs = Medians.of(results[1]);
            double syscallNs = Medians.of(results[2]);
            System.out.printf(Locale.ROOT, "%d rounds of %d exchanges, medians; %d CPUs, Java %s%n", rounds, exchanges,
                    Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
            System.out.printf(Locale.ROOT, "warm:    %8.0f ns of the loop's CPU per exchange%n", warmNs);
            System.out.printf(Locale.ROOT, "after:   %8.0f ns (with a datagram sent inside each rpma_send)%n", afterNs);
            System.out.printf(Locale.ROOT, "syscall: %8.0f ns per datagram alone%n", syscallNs);
            System.out.printf(Locale.ROOT, "the client's path after the system call: %.0f ns, %.2f times its warm cost%n",
                    afterNs - syscallNs, (afterNs - syscallNs) / warmNs);
        }
    }

    /** Datagrams to a bound socket nobody reads: the kernel's UDP path, dropped at the full socket. */
    private static final class Datagrams implements AutoCloseable {

        private final DatagramChannel sink = DatagramChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));

        private final DatagramChannel channel = DatagramChannel.open();

        private final ByteBuffer datagram = ByteBuffer.allocateDirect(64);

        private final InetSocketAddress target;

        Datagrams() throws IOException {
            this.channel.configureBlocking(false);
            this.target = (InetSocketAddress) this.sink.getLocalAddress();
        }

        void send() {
            try {
                this.datagram.clear();
                this.channel.send(this.datagram, this.target);
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
        }

        /** CPU ns of this thread per datagram. */
        double round(int count) {
            long cpu = THREADS.getCurrentThreadCpuTime();
            for (int i = 0; i < count; i++) {
                send();
            }
            return (double) (THREADS.getCurrentThreadCpuTime() - cpu) / count;
        }

        @Override
        public void close() throws IOException {
            this.channel.close();
            this.sink.close();
        }
    }

    /** A raw client over the stand-in, optionally sending a datagram inside each of its sends. */
    private static final class Looped implements AutoCloseable {

        private final FakeLibRpma fake = new FakeLibRpma().callLogLimit(1000);

        private final DataPathStub stub = new DataPathStub(this.fake, DataPathStub.Peer.RAW_ECHO);

        private final RpmaClient client;

        private final Thread loop;

        Looped(@Nullable Datagrams datagrams, int index) throws InterruptedException {
            LibRpma lib = (datagrams == null) ? this.stub : new ForwardingLibRpma(this.stub) {
                @Override
                public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
                    datagrams.send();
                    return super.rpma_send(conn, src, offset, len, flags, opContext);
                }
            };
            String name = "after" + index;
            this.client = RpmaClient.builder(Rpma.using(lib))
                .name(name)
                .address("198.18.0.1")
                .port(7420 + index)
                .mode(RpmaWireMode.RAW)
                .maxMessageSize(Long.BYTES)
                .rawWindow(1)
                .receiveSlots(2)
                .sendSlots(2)
                .requestTimeout(Duration.ofMinutes(5))
                .build();
            this.loop = this.stub.awaitClient(this.client, name);
        }

        /** CPU ns of the client's loop per exchange. */
        double round(int count) {
            long cpu = THREADS.getThreadCpuTime(this.loop.getId());
            new LoopedChain(this.client, false, 1, count).run();
            return (double) (THREADS.getThreadCpuTime(this.loop.getId()) - cpu) / count;
        }

        @Override
        public void close() {
            this.client.close();
            this.stub.close();
            this.fake.close();
        }
    }
}
