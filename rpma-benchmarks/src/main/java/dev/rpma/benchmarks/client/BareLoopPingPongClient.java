package dev.rpma.benchmarks.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

import dev.rpma.benchmarks.client.BarePingPongClient.Options;
import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaOpcode;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * {@link BarePingPongClient}'s steps on an {@link RpmaEventLoop} without a busy poll, as the client's
 * connections run: the completion queue is the loop's busy poller (looked at until a few looks find
 * nothing) and its channel the fd it sleeps on. No client, no request, no future: beside
 * {@link BarePingPongClient} and {@link PingPongLoadClient} it splits the Java client's gap to C into
 * the binding, the loop and the client's own layers. Same arguments and {@code RESULT} line.
 *
 * <p>With the system property {@value #TOUCH_PAGES} = N it reads one word of each of N separate pages
 * after each reply, before the next send: what work at that place costs a round trip
 * ({@code JAVA_CLIENT_OPTS_B="... -Drpma.benchmarks.touch-pages=256"}).
 */
public final class BareLoopPingPongClient {

    static final String TOUCH_PAGES = "rpma.benchmarks.touch-pages";

    private BareLoopPingPongClient() {
    }

    public static void main(String[] args) throws IOException {
        LoadRuns.main("BareLoopPingPongClient", BarePingPongClient.USAGE, args,
                (arguments) -> run(Rpma.get(), Options.parse(arguments)));
    }

    static Result run(Rpma rpma, Options options) {
        ByteBuffer sendSlot = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer receiveSlot = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        Chain chain = null;
        RpmaEventLoop loop = new RpmaEventLoop("bare-loop", Duration.ZERO);
        try (RpmaPeer peer = rpma.openPeer(options.address(), PeerRole.CLIENT);
                RpmaMemoryRegion sendRegion = peer.register(sendSlot, MemoryUsage.SEND);
                RpmaMemoryRegion receiveRegion = peer.register(receiveSlot, MemoryUsage.RECV)) {
            RpmaConnection connection;
            try (RpmaConnectionRequest request = peer.newConnectionRequest(options.address(), options.port(), null)) {
                request.receive(receiveRegion, 0, Long.BYTES, 0);
                connection = request.connect(null);
            }
            try (RpmaConnection conn = connection) {
                RpmaConnectionEvent event = BarePingPongClient.nextEvent(conn);
                if (event != RpmaConnectionEvent.ESTABLISHED) {
                    return new Result("ERROR the connection was not established: " + event, false);
                }
                Chain running = new Chain(options, conn, sendRegion, sendSlot, receiveRegion, receiveSlot, loop);
                chain = running;
                loop.start();
                loop.execute(running::start);
                if (!running.done.await(600, TimeUnit.SECONDS)) {
                    running.failure = "not done in time";
                }
                CountDownLatch detached = new CountDownLatch(1);
                loop.execute(() -> {
                    running.detach();
                    detached.countDown();
                });
                detached.await(10, TimeUnit.SECONDS);
                conn.disconnect();
                BarePingPongClient.awaitEnd(conn);
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            if (chain != null) {
                chain.failure = "interrupted";
            }
        }
        catch (RuntimeException ex) {
            if (chain == null) {
                return new Result("ERROR the client failed: " + ex, false);
            }
            chain.failure = "the client failed: " + ex;
        }
        finally {
            loop.shutdown();
        }
        if (chain == null) {
            return new Result("ERROR no chain", false);
        }
        return chain.result();
    }

    /** The rounds, on the loop: a round ends when its send's and its receive's completions both came. */
    private static final class Chain implements RpmaEventLoop.BusyPoller, RpmaEventLoop.IoHandler {

        final CountDownLatch done = new CountDownLatch(1);

        volatile @Nullable String failure;

        private final Options options;

        private final RpmaConnection conn;

        private final RpmaCompletionQueue cq;

        private final RpmaMemoryRegion sendRegion;

        private final ByteBuffer sendSlot;

        private final RpmaMemoryRegion receiveRegion;

        private final ByteBuffer receiveSlot;

        private final RpmaEventLoop loop;

        private final RpmaCompletions batch = new RpmaCompletions(8);

        /** A page each ({@value BareLoopPingPongClient#TOUCH_PAGES}), read after each reply. */
        private final long[][] pages = new long[Integer.getInteger(TOUCH_PAGES, 0)][512];

        /** What the reads added up to, kept so that they are not optimized away. */
        long touched;

        private final long[] latencies;

        private final int total;

        private int round;

        private int measured;

        private int sends;

        private int receives;

        private long value = 1L << 32;

        private long t0;

        private long first;

        private long last;

        private int cqFd = -1;

        private long registration;

        Chain(Options options, RpmaConnection conn, RpmaMemoryRegion sendRegion, ByteBuffer sendSlot,
                RpmaMemoryRegion receiveRegion, ByteBuffer receiveSlot, RpmaEventLoop loop) {
            this.options = options;
            this.conn = conn;
            this.cq = conn.completionQueue();
            this.sendRegion = sendRegion;
            this.sendSlot = sendSlot;
            this.receiveRegion = receiveRegion;
            this.receiveSlot = receiveSlot;
            this.loop = loop;
            this.latencies = new long[options.rounds()];
            this.total = options.warmup() + options.rounds();
        }

        void start() {
            this.cqFd = this.cq.fd();
            FileDescriptors.setBlocking(this.cqFd, false);
            this.registration = this.loop.registerBusyPolled(this.cqFd, this, 0);
            this.loop.addBusyPoller(this);
            if (this.total == 0) {
                this.done.countDown();
                return;
            }
            try {
                send();
            }
            catch (RuntimeException ex) {
                end("rpma_send failed: " + ex);
            }
        }

        void detach() {
            if (this.cqFd >= 0) {
                this.loop.removeBusyPoller(this);
                this.loop.unregister(this.cqFd, this.registration);
                this.cqFd = -1;
            }
        }

        private void send() {
            this.sendSlot.putLong(0, this.value);
            this.sends = 1;
            this.receives = 1;
            this.t0 = System.nanoTime();
            if (this.round == this.options.warmup()) {
                this.first = this.t0;
            }
            this.conn.send(this.sendRegion, 0, Long.BYTES, CompletionMode.ALWAYS, 0);
        }

        @Override
        public void onReadable(int kind) {
            this.cq.await();
            pollOnce();
        }

        @Override
        public boolean pollOnce() {
            if (this.done.getCount() == 0) {
                return false;
            }
            int got;
            try {
                got = this.cq.poll(this.batch);
            }
            catch (RuntimeException ex) {
                end("rpma_cq_get_wc failed: " + ex);
                return false;
            }
            for (int i = 0; i < got; i++) {
                if (!this.batch.isSuccess(i)) {
                    end("a completion failed: status " + this.batch.status(i));
                    return true;
                }
                RpmaOpcode opcode = this.batch.opcode(i);
                if (opcode == RpmaOpcode.SEND) {
                    this.sends--;
                }
                else if (opcode == RpmaOpcode.RECV) {
                    this.receives--;
                }
            }
            if (got > 0 && this.sends == 0 && this.receives == 0) {
                roundDone();
            }
            return got > 0;
        }

        private void roundDone() {
            long sum = 0;
            for (long[] page : this.pages) {
                sum += page[0];
            }
            this.touched += sum;
            long t1 = System.nanoTime();
            long got = this.receiveSlot.getLong(0);
            if (got != this.value + 1) {
                end("round " + this.round + ": sent " + this.value + ", got " + got);
                return;
            }
            if (this.round >= this.options.warmup()) {
                this.latencies[this.measured++] = t1 - this.t0;
                this.last = t1;
            }
            this.value = got;
            if (++this.round == this.total) {
                end(null);
                return;
            }
            try {
                this.conn.receive(this.receiveRegion, 0, Long.BYTES, 0);
                send();
            }
            catch (RuntimeException ex) {
                end("rpma_recv or rpma_send failed: " + ex);
            }
        }

        private void end(@Nullable String why) {
            if (why != null) {
                this.failure = why;
            }
            this.done.countDown();
        }

        Result result() {
            String extra = String.format(Locale.ROOT, " loop_wakeups_per_msg=%.3f",
                    (this.total > 0) ? (double) this.loop.wakeups() / this.total : 0);
            return BarePingPongClient.result("BareLoopPingPongClient", this.options, this.latencies, this.measured,
                    this.first, this.last, this.failure, extra);
        }
    }
}
