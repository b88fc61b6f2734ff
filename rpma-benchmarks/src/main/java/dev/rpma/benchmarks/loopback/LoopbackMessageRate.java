package dev.rpma.benchmarks.loopback;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;

/**
 * How fast a test suite moves messages over the in-JVM loopback of librpma ({@link FakeLibRpma#loopback()},
 * what {@code @RpmaTest} runs an application on): an {@link RpmaClient} and an {@link RpmaServer} of
 * this JVM, with their default settings, exchange round trips on one connection. Variants: framed
 * requests of 64 bytes to a route whose handler answers with the same bytes, one in flight (each
 * waits for its reply, as a test that calls {@code get()} does) and 16 in flight; raw 8-byte
 * exchanges answered with the counter plus one (the sample app's ping-pong), one in flight. Every
 * reply is checked. Per round of {@code --round-trips} round trips it measures the wall-clock time;
 * it prints, per variant, the median round's time and round trips per second, and the range.
 *
 * <p>Options: {@code --round-trips N} per round (default 10000), {@code --rounds N} (5),
 * {@code --warmup-rounds N} (3).
 */
public final class LoopbackMessageRate {

    /** Any address: on the loopback only the port decides. */
    private static final String ADDRESS = "192.0.2.1";

    private static final int FRAMED_PORT = 7500;

    private static final int RAW_PORT = 7501;

    private static final String ROUTE = "echo";

    private static final int PAYLOAD = 64;

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final String[] VARIANTS = { "framed request/reply, 1 in flight", "framed request/reply, 16 in flight",
            "raw 8-byte ping-pong, 1 in flight" };

    private int roundTrips = 10_000;

    private int rounds = 5;

    private int warmupRounds = 3;

    public static void main(String[] args) throws Exception {
        LoopbackMessageRate benchmark = new LoopbackMessageRate();
        for (int i = 0; i < args.length; i += 2) {
            String value = (i + 1 < args.length) ? args[i + 1] : "";
            switch (args[i]) {
                case "--round-trips" -> benchmark.roundTrips = Integer.parseInt(value);
                case "--rounds" -> benchmark.rounds = Integer.parseInt(value);
                case "--warmup-rounds" -> benchmark.warmupRounds = Integer.parseInt(value);
                default -> throw new IllegalArgumentException("Unknown option " + args[i]);
            }
        }
        benchmark.run();
    }

    private void run() throws Exception {
        System.out.printf(Locale.ROOT, "Loopback message rate: RpmaClient -> RpmaServer in one JVM over"
                + " FakeLibRpma.loopback(), default settings; %d round trips per round, %d rounds after %d warm-up"
                + " rounds; %d CPUs, Java %s%n", this.roundTrips, this.rounds, this.warmupRounds,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        double[][] nanos = new double[VARIANTS.length][this.rounds];
        try (FakeLibRpma fake = FakeLibRpma.loopback().callLogLimit(1000)) {
            Rpma rpma = Rpma.using(fake);
            RpmaServer server = server(rpma);
            try (RpmaClient framed = RpmaClient.builder(rpma).name("framed").address(ADDRESS).port(FRAMED_PORT)
                        .requestTimeout(TIMEOUT).build();
                    RpmaClient raw = RpmaClient.builder(rpma).name("raw").address(ADDRESS).port(RAW_PORT)
                        .mode(RpmaWireMode.RAW).maxMessageSize(Long.BYTES).build()) {
                long[] counter = { 0 };
                Round[] variants = { () -> framed(framed, 1), () -> framed(framed, 16),
                        () -> counter[0] = pingPong(raw, counter[0]) };
                for (int i = 0; i < this.warmupRounds; i++) {
                    for (Round variant : variants) {
                        variant.run();
                    }
                }
                for (int i = 0; i < this.rounds; i++) {
                    // alternating order: another process's load falls on every variant alike
                    for (int k = 0; k < variants.length; k++) {
                        int v = (i % 2 == 0) ? k : variants.length - 1 - k;
                        long start = System.nanoTime();
                        variants[v].run();
                        nanos[v][i] = System.nanoTime() - start;
                    }
                }
            }
            finally {
                server.close();
            }
            fake.assertNoViolations();
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%-36s %24s %24s %26s%n", "variant", "ms per " + this.roundTrips + " (median)",
                "round trips/s (median)", "round trips/s (min-max)");
        for (int v = 0; v < VARIANTS.length; v++) {
            double[] sorted = nanos[v].clone();
            Arrays.sort(sorted);
            double median = median(sorted);
            System.out.printf(Locale.ROOT, "%-36s %24.0f %24.0f %17.0f-%.0f%n", VARIANTS[v], median / 1e6,
                    this.roundTrips * 1e9 / median, this.roundTrips * 1e9 / sorted[sorted.length - 1],
                    this.roundTrips * 1e9 / sorted[0]);
        }
    }

    /** {@code roundTrips} framed requests, {@code inFlight} at a time; each reply must be its request's bytes. */
    private void framed(RpmaClient client, int inFlight) throws Exception {
        byte[][] payloads = new byte[inFlight][PAYLOAD];
        @SuppressWarnings("unchecked")
        CompletableFuture<byte[]>[] window = new CompletableFuture[inFlight];
        for (int i = 0; i < this.roundTrips + inFlight; i++) {
            int slot = i % inFlight;
            if (window[slot] != null) {
                byte[] reply = window[slot].get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
                if (!Arrays.equals(reply, payloads[slot])) {
                    throw new IllegalStateException("request " + (i - inFlight) + " was answered with other bytes");
                }
                window[slot] = null;
            }
            if (i < this.roundTrips) {
                ByteBuffer.wrap(payloads[slot]).putInt(0, i);
                window[slot] = client.request(ROUTE, payloads[slot].clone());
            }
        }
    }

    /** {@code roundTrips} raw exchanges from {@code counter}, little-endian as the server's slots are; returns the last reply. */
    private long pingPong(RpmaClient client, long counter) throws Exception {
        byte[] message = new byte[Long.BYTES];
        for (int i = 0; i < this.roundTrips; i++) {
            ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).putLong(0, counter);
            byte[] reply = client.exchange(message).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            long answer = ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
            if (answer != counter + 1) {
                throw new IllegalStateException("sent " + counter + ", the server answered " + answer);
            }
            counter = answer;
        }
        return counter;
    }

    /** A framed endpoint whose route echoes and a raw one that answers each counter with its successor. */
    private static RpmaServer server(Rpma rpma) {
        RpmaEndpointSettings framed = new RpmaEndpointSettings("framed", ADDRESS, FRAMED_PORT);
        RpmaEndpointSettings raw = new RpmaEndpointSettings("raw", ADDRESS, RAW_PORT).withMessages(
                RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW).withMaxMessageSize(Long.BYTES));
        RpmaMessageListener echo = (message, session) -> {
            byte[] bytes = new byte[message.remaining()];
            message.get(bytes);
            return bytes;
        };
        RpmaMessageListener pong = (message, session) -> session.newMessage().putLong(message.getLong(0) + 1).flip();
        RpmaServer server = RpmaServer.listen(rpma, RpmaServerSettings.of(List.of(framed, raw))
            .withGracePeriod(Duration.ZERO), new RpmaServer.Components() {

                @Override
                public RpmaRequestHandler handler(String endpoint) {
                    return RpmaIncomingRequest::connect;
                }

                @Override
                public Map<String, RpmaMessageListener> messageListeners(String endpoint) {
                    return endpoint.equals("framed") ? Map.of(ROUTE, echo) : Map.of("", pong);
                }

                @Override
                public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings,
                        RpmaQueueSizes needed) {
                    return rpma.newConnectionConfig().cqSize(needed.cq()).sqSize(needed.sq()).rqSize(needed.rq());
                }
            });
        server.start();
        return server;
    }

    private static double median(double[] sorted) {
        int n = sorted.length;
        return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    @FunctionalInterface
    private interface Round {

        void run() throws Exception;
    }
}
