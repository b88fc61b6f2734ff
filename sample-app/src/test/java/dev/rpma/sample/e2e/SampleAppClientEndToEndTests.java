package dev.rpma.sample.e2e;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientBuilder;
import dev.rpma.client.RpmaClientConnection;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaClientException;
import dev.rpma.client.RpmaConnectionLostException;
import dev.rpma.client.RpmaRemoteErrorException;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaWireMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The Java client ({@link RpmaClient}) against the sample app's runnable jar over real RDMA: many
 * requests in flight over a pool, framed (the echo endpoint's route {@code upper}, each reply the
 * request's text upper-cased) and raw (the ping-pong endpoint's 8-byte counters, each answered with
 * its successor), so that every reply tells which request it belongs to; a route without a handler;
 * one-sided reads and writes of the app's regions; and the app killed mid-run and started again. One
 * app process per topology (a subclass each), tests in order.
 *
 * <p>The persistent region lives in a file of this test's own, so that nothing here changes what
 * other tests find in the default one.
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
abstract class SampleAppClientEndToEndTests {

    static final int WRITE_PORT = 7207;

    static final int ECHO_PORT = 7210;

    static final String ECHO = "echo";

    static final int POOL_SIZE = 8;

    static final int EXCHANGES = 1000;

    /** The ping-pong endpoint posts 8 receives per session (messages.receive-slots): at most that many on the wire. */
    static final int RAW_WINDOW = 8;

    /** The emulator is slow to start a JVM and to connect; these bound it, they measure nothing. */
    static final Duration ALLOWANCE = Duration.ofMinutes(3);

    private E2eEnvironment environment;

    private List<String> arguments;

    private SampleAppProcess app;

    abstract Topology topology();

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        Path region = Files.createTempDirectory("rpma-client-e2e-").resolve("persistent.region");
        this.arguments = List.of("--rpma.server.address=" + topology().serverAddress(),
                "--rpma.server.shutdown.grace-period=5s", "--rpma.server.regions.persistent.path=" + region);
        this.app = startApp();
    }

    @AfterAll
    void stopTheApp() throws Exception {
        if (this.app != null) {
            this.app.terminate();
            this.app.awaitExit(ALLOWANCE);
            this.app.close();
        }
    }

    /**
     * 1,000 exchanges made at once over 8 pooled connections (8 on the wire per connection, the rest
     * waiting in the client): every one completes with the answer to its own counter, the app answered
     * each message once, and it served the 8 connections as 8 sessions.
     */
    @Test
    @Order(1)
    void aThousandExchangesInFlightOverEightConnectionsEachGetTheAnswerToTheirOwnMessage() throws Exception {
        long roundsBefore = this.app.prometheus().count("sample_pingpong_rounds_total");
        try (RpmaClient client = builder("exchanges", ExampleProtocols.PING_PONG_PORT).poolSize(POOL_SIZE)
            .rawWindow(RAW_WINDOW)
            .build()) {
            awaitEstablished(client, POOL_SIZE);
            long base = 1L << 40;
            List<CompletableFuture<byte[]>> replies = new ArrayList<>(EXCHANGES);
            long start = System.nanoTime();
            for (int i = 0; i < EXCHANGES; i++) {
                replies.add(client.exchange(counter(base + 2L * i)));
            }
            int inFlight = client.inFlight();
            CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
                .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            long elapsed = System.nanoTime() - start;
            for (int i = 0; i < EXCHANGES; i++) {
                assertThat(value(replies.get(i).join())).as("the answer to message " + i).isEqualTo(base + 2L * i + 1);
            }
            assertThat(activeSessions("pingpong")).as("sessions of the ping-pong endpoint").isEqualTo(POOL_SIZE);
            assertThat(this.app.prometheus().count("sample_pingpong_rounds_total") - roundsBefore)
                .as("messages the app answered").isEqualTo(EXCHANGES);
            record(EXCHANGES + " exchanges over " + POOL_SIZE + " connections (raw window " + RAW_WINDOW + "): "
                    + inFlight + " in flight when the last was made, all answered in " + millis(elapsed)
                    + " (software emulation)");
        }
    }

    /**
     * 1,000 framed requests made at once over 8 pooled connections to the echo endpoint (the
     * framing's credits bound those on the wire, the rest wait in the client): every one completes
     * with its own text upper-cased, the app received each request once, and it served the 8
     * connections as 8 sessions.
     */
    @Test
    @Order(2)
    void aThousandFramedRequestsInFlightOverEightConnectionsEachGetTheReplyToTheirOwnRequest() throws Exception {
        long receivedBefore = echoMessagesReceived();
        try (RpmaClient client = framedBuilder("requests").poolSize(POOL_SIZE).build()) {
            awaitEstablished(client, POOL_SIZE);
            List<CompletableFuture<byte[]>> replies = new ArrayList<>(EXCHANGES);
            long start = System.nanoTime();
            for (int i = 0; i < EXCHANGES; i++) {
                replies.add(client.request("upper", utf8(request(i))));
            }
            int inFlight = client.inFlight();
            CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
                .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            long elapsed = System.nanoTime() - start;
            for (int i = 0; i < EXCHANGES; i++) {
                assertThat(new String(replies.get(i).join(), StandardCharsets.UTF_8)).as("the reply to request " + i)
                    .isEqualTo(request(i).toUpperCase(Locale.ROOT));
            }
            assertThat(activeSessions(ECHO)).as("sessions of the echo endpoint").isEqualTo(POOL_SIZE);
            assertThat(echoMessagesReceived() - receivedBefore).as("requests the app received").isEqualTo(EXCHANGES);
            assertThat(client.reconnects()).as("connection attempts after the first").isZero();
            record(EXCHANGES + " framed requests over " + POOL_SIZE + " connections: " + inFlight
                    + " in flight when the last was made, all answered in " + millis(elapsed) + " (software emulation)");
        }
    }

    /**
     * A request to a route the echo endpoint has no handler for fails with
     * {@link RpmaRemoteErrorException}, and the connection goes on: the next requests on it are
     * answered, and the client never connected again.
     */
    @Test
    @Order(3)
    void aRouteWithoutHandlerIsARemoteErrorAndTheConnectionGoesOn() throws Exception {
        try (RpmaClient client = framedBuilder("remote-error").build()) {
            RpmaClientConnection connection = awaitEstablished(client, 1);
            assertThat(client.request("upper", utf8("before")).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS))
                .asString(StandardCharsets.UTF_8)
                .isEqualTo("BEFORE");
            CompletableFuture<byte[]> nowhere = client.request("nowhere", utf8("lost"));
            assertThat(nowhere).failsWithin(ALLOWANCE)
                .withThrowableOfType(ExecutionException.class)
                .havingCause()
                .isInstanceOfSatisfying(RpmaRemoteErrorException.class, (ex) -> {
                    assertThat(ex).hasMessageContaining("route \"nowhere\"");
                    assertThat(ex.remoteMessage()).isEqualTo("no handler for route \"nowhere\"");
                });
            byte[] payload = { 0, 1, (byte) 0x80, (byte) 0xFF };
            assertThat(client.request("echo", payload).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo(payload);
            assertThat(client.request("upper", utf8("after")).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS))
                .asString(StandardCharsets.UTF_8)
                .isEqualTo("AFTER");
            assertThat(client.connection()).as("the one pooled connection").isSameAs(connection);
            assertThat(connection.state()).isEqualTo(RpmaClientConnectionState.ESTABLISHED);
            assertThat(client.reconnects()).as("connection attempts after the first").isZero();
        }
    }

    /**
     * The read endpoint's {@code greeting} region read with {@code rpma_read}; the write endpoint's
     * {@code persistent} region written with {@code rpma_write} and read back, over the descriptors of
     * the accepts' {@code struct common_data}, into memory registered with the client's peer.
     */
    @Test
    @Order(4)
    void theClientReadsTheGreetingRegionAndWritesThePersistentRegionAndReadsItBack() throws Exception {
        byte[] greeting = ExampleProtocols.cString(ExampleProtocols.READ_CONTENT);
        try (RpmaClient reader = builder("read", ExampleProtocols.READ_PORT).build()) {
            RpmaClientConnection connection = awaitEstablished(reader, 1);
            RpmaCommonData common = connection.commonData();
            assertThat(common).as("common_data in the read endpoint's accept").isNotNull();
            ByteBuffer local = ByteBuffer.allocateDirect(64);
            try (RpmaMemoryRegion destination = reader.register(local, MemoryUsage.READ_DST)) {
                connection.read(destination, 0, common.dataOffset(), greeting.length)
                    .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            }
            byte[] read = new byte[greeting.length];
            local.get(0, read);
            assertThat(read).as("the greeting region, read").isEqualTo(greeting);
        }

        byte[] written = new byte[4096];
        new Random().nextBytes(written);
        long offset = 64 * 1024;
        try (RpmaClient writer = builder("write", WRITE_PORT).build()) {
            RpmaClientConnection connection = awaitEstablished(writer, 1);
            RpmaCommonData common = connection.commonData();
            assertThat(common).as("common_data in the write endpoint's accept").isNotNull();
            ByteBuffer source = ByteBuffer.allocateDirect(written.length).put(0, written);
            ByteBuffer back = ByteBuffer.allocateDirect(written.length);
            try (RpmaMemoryRegion from = writer.register(source, MemoryUsage.WRITE_SRC);
                    RpmaMemoryRegion into = writer.register(back, MemoryUsage.READ_DST)) {
                connection.write(common.dataOffset() + offset, from, 0, written.length)
                    .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                // a read after a write on one connection sees it (the responder executes them in order)
                connection.read(into, 0, common.dataOffset() + offset, written.length)
                    .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            }
            byte[] read = new byte[written.length];
            back.get(0, read);
            assertThat(read).as("the persistent region, read back after the write").isEqualTo(written);
        }
    }

    /**
     * The app killed (SIGKILL) while exchanges are in flight and waiting: each of them completes, with
     * its answer or failed with an {@link RpmaClientException} (those on the wire with
     * {@link RpmaConnectionLostException}, exchanges being never retried); once the app is back, the
     * pool connects again after its back-off and serves exchanges.
     */
    /**
     * One connection writes two alternating 8-byte values with {@code rpma_atomic_write} into the
     * persistent region while another reads the same 8 bytes with {@code rpma_read}: every read sees the
     * value before, one of the two whole, never a mix, and the last write is what stays.
     */
    @Test
    @Order(5)
    void anAtomicWriteIsSeenWholeByAConcurrentReader() throws Exception {
        long offset = 128 * 1024;
        long first = 0x0123456789ABCDEFL;
        long second = ~first;
        int rounds = 200;
        try (RpmaClient writer = builder("atomic", WRITE_PORT).build();
                RpmaClient reader = builder("atomic-reader", WRITE_PORT).build()) {
            RpmaClientConnection writing = awaitEstablished(writer, 1);
            RpmaClientConnection reading = awaitEstablished(reader, 1);
            long at = writing.commonData().dataOffset() + offset;
            ByteBuffer before = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer seen = ByteBuffer.allocateDirect(8 * rounds).order(ByteOrder.LITTLE_ENDIAN);
            try (RpmaMemoryRegion start = reader.register(before, MemoryUsage.READ_DST);
                    RpmaMemoryRegion into = reader.register(seen, MemoryUsage.READ_DST)) {
                reading.read(start, 0, at, 8).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                List<CompletableFuture<Void>> operations = new ArrayList<>();
                for (int i = 0; i < rounds; i++) {
                    operations.add(writing.atomicWrite(at, (i % 2 == 0) ? first : second));
                    operations.add(reading.read(into, 8L * i, at, 8));
                }
                CompletableFuture.allOf(operations.toArray(CompletableFuture[]::new))
                    .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                Set<Long> whole = Set.of(before.getLong(0), first, second);
                int torn = 0;
                for (int i = 0; i < rounds; i++) {
                    torn += whole.contains(seen.getLong(8 * i)) ? 0 : 1;
                }
                assertThat(torn).as("reads that saw a mix of two atomic writes").isZero();
                reading.read(start, 0, at, 8).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                assertThat(before.getLong(0)).as("the value of the last atomic write").isEqualTo(second);
            }
        }
    }

    /**
     * Least privilege: the read endpoint's region is exposed {@code read-src} only, so a client's
     * {@code rpma_write} into it fails with the remote access error named, the region keeps its
     * greeting, and the app goes on serving the endpoint.
     */
    @Test
    @Order(6)
    void aWriteTheRegionsUsageDoesNotAllowFailsWithTheRemoteAccessErrorAndTheAppServesOn() throws Exception {
        byte[] greeting = ExampleProtocols.cString(ExampleProtocols.READ_CONTENT);
        try (RpmaClient intruder = builder("intruder", ExampleProtocols.READ_PORT)
            .backoff(Duration.ofMinutes(5), 2.0, Duration.ofMinutes(5))
            .build()) {
            RpmaClientConnection connection = awaitEstablished(intruder, 1);
            ByteBuffer source = ByteBuffer.allocateDirect(8).put(0, "intruder".getBytes(StandardCharsets.US_ASCII));
            try (RpmaMemoryRegion from = intruder.register(source, MemoryUsage.WRITE_SRC)) {
                try {
                    connection.write(connection.commonData().dataOffset(), from, 0, 8)
                        .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
                    fail("a write into a read-src region completed");
                }
                catch (ExecutionException ex) {
                    assertThat(ex.getCause()).isInstanceOf(RpmaConnectionLostException.class)
                        .hasMessageContaining("rpma_write completed with IBV_WC_REM_ACCESS_ERR (10)");
                }
            }
        }
        try (RpmaClient reader = builder("after-intruder", ExampleProtocols.READ_PORT).build()) {
            RpmaClientConnection connection = awaitEstablished(reader, 1);
            ByteBuffer local = ByteBuffer.allocateDirect(64);
            try (RpmaMemoryRegion destination = reader.register(local, MemoryUsage.READ_DST)) {
                connection.read(destination, 0, connection.commonData().dataOffset(), greeting.length)
                    .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            }
            byte[] read = new byte[greeting.length];
            local.get(0, read);
            assertThat(read).as("the greeting, after the refused write").isEqualTo(greeting);
        }
    }

    @Test
    @Order(7)
    void killingTheAppMidRunFailsTheFuturesAndThePoolConnectsAgainWhenItIsBack() throws Exception {
        int pool = 2;
        int exchanges = 20_000;
        try (RpmaClient client = builder("kill", ExampleProtocols.PING_PONG_PORT).poolSize(pool)
            .backoff(Duration.ofMillis(200), 2.0, Duration.ofSeconds(2))
            .build()) {
            awaitEstablished(client, pool);
            List<CompletableFuture<byte[]>> replies = new ArrayList<>(exchanges);
            for (int i = 0; i < exchanges; i++) {
                replies.add(client.exchange(counter(2L * i)));
            }
            await("100 exchanges answered", () -> replies.stream().filter((reply) -> reply.isDone()).count() >= 100);
            this.app.kill();
            assertThat(this.app.awaitExit(ALLOWANCE)).as("the killed app's exit").isNotNull();
            long killed = System.nanoTime();
            CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new))
                .handle((ignored, failure) -> null)
                .get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
            long settled = System.nanoTime() - killed;
            int answered = 0;
            int lost = 0;
            Set<String> failures = new TreeSet<>();
            for (int i = 0; i < exchanges; i++) {
                try {
                    assertThat(value(replies.get(i).join())).as("the answer to message " + i).isEqualTo(2L * i + 1);
                    answered++;
                }
                catch (CompletionException ex) {
                    assertThat(ex.getCause()).as("how message " + i + " failed").isInstanceOf(RpmaClientException.class);
                    lost += (ex.getCause() instanceof RpmaConnectionLostException) ? 1 : 0;
                    failures.add(ex.getCause().getClass().getSimpleName());
                }
            }
            assertThat(answered).as("exchanges answered before the kill").isBetween(100, exchanges - 1);
            assertThat(lost).as("exchanges on the wire when the connection was lost").isPositive();

            long down = System.nanoTime();
            this.app = startApp();
            awaitEstablished(client, pool);
            long back = System.nanoTime() - down;
            assertThat(value(client.exchange(counter(41)).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS))).isEqualTo(42);
            assertThat(client.reconnects()).as("connection attempts after the first").isPositive();
            record("app killed after " + answered + " of " + exchanges + " exchanges: the other " + (exchanges - answered)
                    + " failed within " + millis(settled) + " (" + lost + " lost on the wire; kinds " + failures
                    + "); started again, the pool of " + pool + " was back " + millis(back) + " after the restart began, "
                    + client.reconnects() + " connection attempts after the first");
        }
    }

    private SampleAppProcess startApp() throws Exception {
        long start = System.nanoTime();
        SampleAppProcess started = SampleAppProcess.start(this.environment, "client-sample-app-" + topology(),
                Duration.ofMinutes(8), this.arguments.toArray(String[]::new));
        record("app started in " + millis(System.nanoTime() - start));
        return started;
    }

    /** Raw mode with 8-byte messages (the ping-pong endpoint's); timeouts that the emulator's pace fits in. */
    private RpmaClientBuilder builder(String name, int port) {
        return RpmaClient.builder(Rpma.get())
            .name(name + "-" + topology())
            .address(topology().serverAddress())
            .port(port)
            .mode(RpmaWireMode.RAW)
            .maxMessageSize(8)
            .connectTimeout(Duration.ofSeconds(60))
            .requestTimeout(ALLOWANCE);
    }

    /** Framed mode (the client's default) with the echo endpoint's 4 KiB messages. */
    private RpmaClientBuilder framedBuilder(String name) {
        return RpmaClient.builder(Rpma.get())
            .name(name + "-" + topology())
            .address(topology().serverAddress())
            .port(ECHO_PORT)
            .connectTimeout(Duration.ofSeconds(60))
            .requestTimeout(ALLOWANCE);
    }

    private String request(int i) {
        return "request " + i + " of " + EXCHANGES + " over " + topology();
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private long echoMessagesReceived() throws Exception {
        return this.app.json("/actuator/rpma").path("endpoints").path(ECHO).path("messages").path("received").asLong();
    }

    private long activeSessions(String endpoint) throws Exception {
        return this.app.json("/actuator/rpma").path("endpoints").path(endpoint).path("sessions").path("active").asLong();
    }

    private static RpmaClientConnection awaitEstablished(RpmaClient client, int connections) throws Exception {
        await(connections + " connection(s) of " + client + " established",
                () -> client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == connections);
        return client.connection();
    }

    private static void await(String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + ALLOWANCE.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                fail("Waited " + ALLOWANCE.toSeconds() + " s for: " + what);
            }
            Thread.sleep(20);
        }
    }

    @FunctionalInterface
    private interface Condition {
        boolean holds() throws Exception;
    }

    private static byte[] counter(long value) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    private static long value(byte[] message) {
        assertThat(message).hasSize(8);
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    private void record(String measurement) {
        this.environment.record("client " + topology(), measurement);
    }

    private static String millis(long nanos) {
        return (nanos / 1_000_000) + " ms";
    }
}
