package dev.rpma.benchmarks.client;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.benchmarks.client.BarePingPongClient.Options;
import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
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
 *
 * <p>With {@value #FUTURES} = true each round trip also goes through what the client's API adds at
 * the least: a {@link CompletableFuture} made at the send, with the next step as its
 * {@code whenComplete} callback, completed with the reply copied into a new {@code byte[]}.
 *
 * <p>With {@value #REPOST_IN_ROUND} = true each round trip's time starts before the receive is posted
 * again instead of after it: the repost is inside the timed interval, as it is for {@code RpmaClient},
 * which posts a reply's receive again after the callback's next send, not before the caller's call.
 */
public final class BareLoopPingPongClient {

    static final String TOUCH_PAGES = "rpma.benchmarks.touch-pages";

    static final String FUTURES = "rpma.benchmarks.future-per-exchange";

    static final String REPOST_IN_ROUND = "rpma.benchmarks.repost-in-round";

    private BareLoopPingPongClient() {
    }

    public static void main(String[] args) throws IOException {
        LoadRuns.main("BareLoopPingPongClient", BarePingPongClient.USAGE, args,
                (arguments) -> run(Rpma.get(), Options.parse(arguments)));
    }

    static Result run(Rpma rpma, Options options) {
        BareSession session;
        try {
            session = BareSession.open(rpma, options.address(), options.port());
        }
        catch (BareSession.NotEstablished ex) {
            return new Result("ERROR " + ex.getMessage(), false);
        }
        catch (RuntimeException ex) {
            return new Result("ERROR the client failed: " + ex, false);
        }
        RpmaEventLoop loop = new RpmaEventLoop("bare-loop", Duration.ZERO);
        Chain chain = new Chain(options, session, loop);
        try (session) {
            loop.start();
            loop.execute(chain::start);
            if (!chain.done.await(600, TimeUnit.SECONDS)) {
                chain.failure = "not done in time";
            }
            CountDownLatch detached = new CountDownLatch(1);
            loop.execute(() -> {
                chain.detach();
                detached.countDown();
            });
            detached.await(10, TimeUnit.SECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            chain.failure = "interrupted";
        }
        catch (RuntimeException ex) {
            chain.failure = "the client failed: " + ex;
        }
        finally {
            loop.shutdown();
        }
        return chain.result();
    }

    private static final VarHandle LITTLE_ENDIAN_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    /** The rounds, on the loop: a round ends when its send's and its receive's completions both came. */
    private static final class Chain implements RpmaEventLoop.BusyPoller, RpmaEventLoop.IoHandler {

        final CountDownLatch done = new CountDownLatch(1);

        volatile @Nullable String failure;

        private final Options options;

        private final BareSession session;

        private final RpmaCompletionQueue cq;

        private final RpmaEventLoop loop;

        private final RpmaCompletions batch = new RpmaCompletions(8);

        /** A page each ({@value BareLoopPingPongClient#TOUCH_PAGES}), read after each reply. */
        private final long[][] pages = new long[Integer.getInteger(TOUCH_PAGES, 0)][512];

        /** What the reads added up to, kept so that they are not optimized away. */
        long touched;

        private final boolean futures = Boolean.getBoolean(FUTURES);

        private final boolean repostInRound = Boolean.getBoolean(REPOST_IN_ROUND);

        private final BiConsumer<byte[], @Nullable Throwable> replied = (reply, failure) -> next(System.nanoTime(),
                (long) LITTLE_ENDIAN_LONG.get(reply, 0));

        private @Nullable CompletableFuture<byte[]> future;

        private final long[] latencies;

        private final int total;

        private int round;

        private int measured;

        private long value = 1L << 32;

        private long t0;

        private long first;

        private long last;

        private int cqFd = -1;

        private long registration;

        Chain(Options options, BareSession session, RpmaEventLoop loop) {
            this.options = options;
            this.session = session;
            this.cq = session.completionQueue();
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
                send(System.nanoTime());
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

        /** Sends the round's value; its time runs from {@code start}. */
        private void send(long start) {
            this.session.put(this.value);
            this.t0 = start;
            if (this.round == this.options.warmup()) {
                this.first = this.t0;
            }
            if (this.futures) {
                CompletableFuture<byte[]> next = new CompletableFuture<>();
                next.whenComplete(this.replied);
                this.future = next;
            }
            this.session.send();
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
            String failed = this.session.take(this.batch, got);
            if (failed != null) {
                end(failed);
                return true;
            }
            if (got > 0 && this.session.answered()) {
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
            CompletableFuture<byte[]> waiting = this.future;
            if (waiting != null) {
                byte[] reply = new byte[Long.BYTES];
                LITTLE_ENDIAN_LONG.set(reply, 0, this.session.received());
                waiting.complete(reply);
                return;
            }
            next(System.nanoTime(), this.session.received());
        }

        private void next(long t1, long got) {
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
                long start = this.repostInRound ? System.nanoTime() : 0;
                this.session.repost();
                send(this.repostInRound ? start : System.nanoTime());
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
            String extra = String.format(Locale.ROOT, " loop_wakeups_per_msg=%.3f%s",
                    (this.total > 0) ? (double) this.loop.wakeups() / this.total : 0,
                    (this.futures ? " future_per_exchange=1" : "") + (this.repostInRound ? " repost_in_round=1" : ""));
            return BarePingPongClient.result("BareLoopPingPongClient", this.options, this.latencies, this.measured,
                    this.first, this.last, this.failure, extra);
        }
    }
}
