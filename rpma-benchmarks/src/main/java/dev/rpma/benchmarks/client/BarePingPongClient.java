package dev.rpma.benchmarks.client;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.rpma.benchmarks.client.LoadRuns.Result;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.io.Epoll;

/**
 * {@code load_client pingpong} with one connection and one message in flight, written in Java as
 * {@code load_client.c} is written in C: one thread, straight on the binding ({@code rpma-jna}), no
 * event loop, no client, no future. The floor a JVM reaches with this binding: beside the C client
 * and {@link PingPongLoadClient} in one run ({@code CLIENT_MAIN_B=dev.rpma.benchmarks.client.BarePingPongClient
 * CLIENT_JAR_B=... ONLY="pingpong 1" compare.sh client}) it splits the Java client's gap to C into
 * what the JVM and the binding cost and what the client's own layers cost.
 *
 * <p>Each round: the value into the send slot, the start time, {@code rpma_send}, then completions
 * until the send's and the receive's both came (a look with {@code rpma_cq_get_wc}; when it finds
 * nothing, one {@code epoll_wait} over the completion channel and the connection's events, then
 * {@code rpma_cq_wait}), the end time, the check, and the receive posted again outside the timed
 * interval: the C client's steps in its order. The same arguments (only {@code --concurrency 1} and
 * {@code --inflight 1}) and the same {@code RESULT pingpong ...} line.
 */
public final class BarePingPongClient {

    static final String USAGE = "usage: pingpong ADDR PORT [--rounds R] [--warmup W] [--concurrency 1] [--inflight 1]"
            + " [--timeout SEC] [--latency-file F]";

    private static final long COMPLETIONS = 2;

    private BarePingPongClient() {
    }

    public static void main(String[] args) throws IOException {
        LoadRuns.main("BarePingPongClient", USAGE, args, (arguments) -> run(Rpma.get(), Options.parse(arguments)));
    }

    record Options(String address, int port, int rounds, int warmup, @Nullable Path latencyFile) {

        static Options parse(List<String> args) {
            if (args.size() < 3 || !args.get(0).equals("pingpong")) {
                throw new IllegalArgumentException("expected pingpong ADDR PORT [options], got " + args);
            }
            int rounds = 2000;
            int warmup = 0;
            Path latencyFile = null;
            for (LoadRuns.Option each : LoadRuns.options(args)) {
                String option = each.name();
                String value = each.value();
                switch (option) {
                    case "--rounds" -> rounds = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE - 8);
                    case "--warmup" -> warmup = (int) LoadRuns.number(option, value, 0, Integer.MAX_VALUE - 8);
                    case "--concurrency", "--inflight" -> LoadRuns.number(option, value, 1, 1);
                    case "--timeout" -> LoadRuns.number(option, value, 1, 86400);
                    case "--latency-file" -> latencyFile = Path.of(value);
                    default -> throw new IllegalArgumentException("unknown option " + option);
                }
            }
            return new Options(args.get(1), (int) LoadRuns.number("PORT", args.get(2), 1, 65535), rounds, warmup,
                    latencyFile);
        }
    }

    static Result run(Rpma rpma, Options options) {
        long[] latencies = new long[options.rounds()];
        String failure = null;
        int done = 0;
        long first = 0;
        long last = 0;
        try (BareSession session = BareSession.open(rpma, options.address(), options.port());
                Epoll epoll = new Epoll(2)) {
            RpmaCompletionQueue cq = session.completionQueue();
            epoll.add(cq.fd(), COMPLETIONS);
            epoll.add(session.eventFd(), BareSession.EVENTS);
            RpmaCompletions batch = new RpmaCompletions(8);
            long value = 1L << 32;
            for (int r = 0; r < options.warmup() + options.rounds(); r++) {
                session.put(value);
                long t0 = System.nanoTime();
                if (r == options.warmup()) {
                    first = t0;
                }
                session.send();
                failure = awaitSendAndReceive(session, cq, batch, epoll);
                long t1 = System.nanoTime();
                if (failure != null) {
                    break;
                }
                long got = session.received();
                if (got != value + 1) {
                    failure = "round " + r + ": sent " + value + ", got " + got;
                    break;
                }
                if (r >= options.warmup()) {
                    latencies[done++] = t1 - t0;
                    last = t1;
                }
                value = got;
                if (r + 1 < options.warmup() + options.rounds()) {
                    session.repost();
                }
            }
            epoll.remove(cq.fd());
            epoll.remove(session.eventFd());
        }
        catch (BareSession.NotEstablished ex) {
            return new Result("ERROR " + ex.getMessage(), false);
        }
        catch (RuntimeException ex) {
            failure = "the client failed: " + ex;
        }
        return result("BarePingPongClient", options, latencies, done, first, last, failure, "");
    }

    /**
     * The RESULT line of a bare client's run, in {@code load_client}'s format, the latencies written to
     * the options' file; {@code failure} (why the run failed, or null) goes to standard error and
     * {@code extra} (" key=value ...") at the end of the line.
     */
    static Result result(String program, Options options, long[] latencies, int measured, long first, long last,
            @Nullable String failure, String extra) {
        if (failure != null) {
            System.err.println(program + ": " + failure);
        }
        long[] sorted = Arrays.copyOf(latencies, measured);
        Arrays.sort(sorted);
        double seconds = (last > first) ? (last - first) / 1e9 : 0;
        boolean written = LoadRuns.writeLatencies(options.latencyFile(), sorted, program);
        String line = LoadRuns.pingPongLine(options.address(), 1, measured, seconds, sorted, 0, (failure != null) ? 1 : 0, 1);
        return new Result(line + extra, failure == null && measured == options.rounds() && written);
    }

    /** Completions until the send's and the receive's came, sleeping when a look finds none; why not, or null. */
    private static @Nullable String awaitSendAndReceive(BareSession session, RpmaCompletionQueue cq,
            RpmaCompletions batch, Epoll epoll) {
        while (!session.answered()) {
            int got = cq.poll(batch);
            if (got > 0) {
                String failure = session.take(batch, got);
                if (failure != null) {
                    return failure;
                }
                continue;
            }
            int ready = epoll.await(-1);
            for (int i = 0; i < ready; i++) {
                if (epoll.token(i) == BareSession.EVENTS) {
                    RpmaConnectionEvent event = session.pollEvent();
                    if (event == RpmaConnectionEvent.CLOSED || event == RpmaConnectionEvent.LOST) {
                        return "the server ended the connection: " + event;
                    }
                }
                else {
                    cq.await();
                }
            }
        }
        return null;
    }
}
