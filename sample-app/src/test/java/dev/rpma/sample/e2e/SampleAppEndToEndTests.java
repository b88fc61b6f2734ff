package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
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
import tools.jackson.databind.JsonNode;

import dev.rpma.client.PingPongOptions;
import dev.rpma.client.PingPongResult;
import dev.rpma.client.SampleClient;
import dev.rpma.client.SampleClientException;
import dev.rpma.client.SampleClientException.Failure;
import dev.rpma.client.protocol.ExampleProtocols;
import dev.rpma.jna.Rpma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The sample app's runnable jar over real RDMA, seen from outside: a Java client (in this JVM, or
 * as a process) speaks the three example protocols, and the app's {@code /actuator} must agree with
 * what the clients did. One app process per topology, tests in order; the last one stops it.
 *
 * <p>The app runs with a ping-pong endpoint of one handler thread and a queue of one, so that one
 * held session plus one queued request fill it, and a 5 s grace period.
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
abstract class SampleAppEndToEndTests {

    static final Duration GRACE_PERIOD = Duration.ofSeconds(5);

    /** The JVM under software emulation is slow to start and to stop; this bounds it, it measures nothing. */
    static final Duration PROCESS_ALLOWANCE = Duration.ofSeconds(60);

    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(120);

    static final Duration SETTLE = Duration.ofMinutes(2);

    static final int PING_PONG_ROUNDS = 100;

    static final int OVERFLOW_CLIENTS = 6;

    static final int CYCLES = 200;

    private E2eEnvironment environment;

    private RdmaResources beforeApp;

    private SampleAppProcess app;

    private SampleClient client;

    /** The address the app listens on and the clients connect to. */
    abstract String serverAddress();

    /** A short name for logs and measurements. */
    abstract String topology();

    /** Asks the app to stop as this class's deployment would; returns the exit code a clean stop gives. */
    abstract int stop(SampleAppProcess app) throws Exception;

    /** How {@link #stop} stops the app, for the measurements. */
    abstract String stopHow();

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        this.beforeApp = RdmaResources.snapshot();
        long start = System.nanoTime();
        this.app = SampleAppProcess.start(this.environment, "sample-app-" + topology(), Duration.ofMinutes(8),
                "--rpma.server.address=" + serverAddress(),
                "--rpma.server.shutdown.grace-period=" + GRACE_PERIOD.toSeconds() + "s",
                "--rpma.server.endpoints.pingpong.acceptor.handler-threads=1",
                "--rpma.server.endpoints.pingpong.acceptor.queue-capacity=1",
                "--rpma.server.endpoints.pingpong.acceptor.request-deadline=120s");
        record("app started (until /actuator/health answered) in " + seconds(System.nanoTime() - start));
        this.client = SampleClient.open(Rpma.get(), serverAddress(), CLIENT_TIMEOUT);
    }

    @AfterAll
    void stopEverything() throws Exception {
        if (this.client != null) {
            this.client.close();
        }
        if (this.app != null) {
            this.app.close();
        }
    }

    @Test
    @Order(1)
    void helloReadAndPingPongGetWhatTheExamplesPromise() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        Expected expected = new Expected();
        assertThat(this.client.hello(ExampleProtocols.HELLO_PORT)).isEqualTo(ExampleProtocols.SERVER_GREETING);
        expected.accepted("default");
        assertThat(this.client.read(ExampleProtocols.READ_PORT)).isEqualTo(ExampleProtocols.READ_CONTENT);
        expected.accepted("read");
        PingPongResult result = this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 1000, PING_PONG_ROUNDS);
        assertThat(result.rounds()).isEqualTo(PING_PONG_ROUNDS);
        assertThat(result.lastReply()).isEqualTo(1000 + PING_PONG_ROUNDS);
        expected.pingPong(PING_PONG_ROUNDS);
        record("ping-pong: " + PING_PONG_ROUNDS + " rounds, mean round trip " + result.meanRoundTrip().toNanos() / 1000
                + " us (software emulation: compare only ratios)");
        assertTheAppAgrees(before, expected);
    }

    @Test
    @Order(2)
    void aRequestTheHandlerRejectsArrivesAsRejected() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        RdmaResources resourcesBefore = RdmaResources.snapshot();
        assertThatThrownBy(() -> this.client.hello(ExampleProtocols.HELLO_PORT, "Hello stranger!"))
            .isInstanceOfSatisfying(SampleClientException.class,
                    (ex) -> assertThat(ex.failure()).isEqualTo(Failure.REJECTED));
        assertTheAppAgrees(before, new Expected().rejected("default", "handler"));
        Map<String, Long> delta = RdmaResources.snapshot().minus(resourcesBefore);
        record("one rejected request changed the kernel's RDMA resources by " + delta);
        assertThat(delta).as("a rejected request keeps no QP, CQ or MR").containsEntry("qp", 0L)
            .containsEntry("cq", 0L).containsEntry("mr", 0L);
        // librpma's rpma_conn_req_delete does not destroy the request's CM id (see librpma-facts):
        // at most that one id stays until the endpoint closes
        assertThat(delta.get("cm_id")).as("CM ids kept by one reject").isBetween(0L, 1L);
    }

    @Test
    @Order(3)
    void aQueueOverflowRejectsTheExcessAndTheAppKeepsServing() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        RdmaResources resourcesBefore = RdmaResources.snapshot();
        Expected expected = new Expected();
        ExecutorService pool = Executors.newFixedThreadPool(OVERFLOW_CLIENTS + 1);
        try {
            CountDownLatch holding = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            Future<PingPongResult> holder = pool.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                    PingPongOptions.of(0, 1).holding(Duration.ofMinutes(5), release, holding::countDown)));
            assertThat(holding.await(3, TimeUnit.MINUTES)).as("the first client holds its session").isTrue();
            awaitActiveConnections("pingpong", 1);
            List<Future<PingPongResult>> crowd = new ArrayList<>();
            for (int i = 1; i <= OVERFLOW_CLIENTS; i++) {
                long seed = 100L * i;
                crowd.add(pool.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT, seed, 1)));
            }
            // the single handler thread serves the holder, one request waits in the queue of one,
            // every other is rejected at once
            await("the acceptor rejected " + (OVERFLOW_CLIENTS - 1) + " requests as queue-full",
                    () -> rejected("pingpong", "queue-full") - before.counters().get("rpma pingpong rejected queue-full")
                            == OVERFLOW_CLIENTS - 1);
            release.countDown();
            assertThat(holder.get(3, TimeUnit.MINUTES).lastReply()).isEqualTo(1);
            expected.pingPong(1);
            int served = 0;
            int rejected = 0;
            for (Future<PingPongResult> future : crowd) {
                try {
                    assertThat(future.get(3, TimeUnit.MINUTES).rounds()).isEqualTo(1);
                    served++;
                    expected.pingPong(1);
                }
                catch (ExecutionException ex) {
                    assertThat(ex.getCause()).isInstanceOfSatisfying(SampleClientException.class,
                            (failure) -> assertThat(failure.failure()).isEqualTo(Failure.REJECTED));
                    rejected++;
                    expected.rejected("pingpong", "queue-full");
                }
            }
            assertThat(served).as("clients served after the holder").isEqualTo(1);
            assertThat(rejected).as("clients rejected as queue-full").isEqualTo(OVERFLOW_CLIENTS - 1);
        }
        finally {
            pool.shutdownNow();
        }
        awaitActiveConnections("pingpong", 0);
        Map<String, Long> delta = RdmaResources.snapshot().minus(resourcesBefore);
        record((OVERFLOW_CLIENTS - 1) + " requests rejected as queue-full (and " + (OVERFLOW_CLIENTS + 1)
                + " sessions served) changed the kernel's RDMA resources by " + delta);
        assertThat(delta).as("rejected requests keep no QP, CQ or MR").containsEntry("qp", 0L).containsEntry("cq", 0L)
            .containsEntry("mr", 0L);
        assertThat(delta.get("cm_id")).as("CM ids kept by the rejects").isBetween(0L, (long) OVERFLOW_CLIENTS - 1);
        assertThat(this.client.hello(ExampleProtocols.HELLO_PORT)).isEqualTo(ExampleProtocols.SERVER_GREETING);
        expected.accepted("default");
        assertThat(this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 5, 10).lastReply()).isEqualTo(15);
        expected.pingPong(10);
        assertTheAppAgrees(before, expected);
    }

    @Test
    @Order(4)
    void aClientKilledMidConnectionIsSeenClosedOrLostAndCleanedUp() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        RdmaResources resourcesBefore = RdmaResources.snapshot();
        Path output = this.environment.logDirectory().resolve("killed-client-" + topology() + ".log");
        List<String> command = new ArrayList<>(this.environment.javaCommand());
        command.addAll(List.of("-jar", this.environment.sampleJar().toString(), "--client=pingpong",
                "--server=" + serverAddress(), "--rounds=3", "--hold=10m", "--timeout=120s"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        try {
            await("the client process holds its session",
                    () -> read(output).contains("holding the connection") || !process.isAlive());
            assertThat(process.isAlive()).as("client process alive; its output:\n" + read(output)).isTrue();
            awaitActiveConnections("pingpong", 1);
            process.destroyForcibly();
            assertThat(process.waitFor(1, TimeUnit.MINUTES)).isTrue();
        }
        finally {
            process.destroyForcibly();
        }
        assertTheAppAgrees(before, new Expected().pingPongClosed(3));
        Map<String, Long> delta = RdmaResources.snapshot().minus(resourcesBefore);
        record("killed client: the kernel's RDMA resources changed by " + delta + " once the app cleaned up");
        assertThat(delta).as("nothing of the killed client's connection is left").allSatisfy(
                (kind, change) -> assertThat(change).as(kind).isZero());
    }

    @Test
    @Order(5)
    void manyConnectServeDisconnectCyclesLeaveTheKernelResourceCountsWhereTheyWere() throws Exception {
        AppNumbers numbersBefore = AppNumbers.read(this.app);
        Expected expected = new Expected();
        RdmaResources before = RdmaResources.snapshot();
        long start = System.nanoTime();
        for (int i = 0; i < CYCLES; i++) {
            switch (i % 3) {
                case 0 -> {
                    assertThat(this.client.hello(ExampleProtocols.HELLO_PORT)).isEqualTo(ExampleProtocols.SERVER_GREETING);
                    expected.accepted("default");
                }
                case 1 -> {
                    assertThat(this.client.read(ExampleProtocols.READ_PORT)).isEqualTo(ExampleProtocols.READ_CONTENT);
                    expected.accepted("read");
                }
                default -> {
                    assertThat(this.client.pingPong(ExampleProtocols.PING_PONG_PORT, i, 1).lastReply()).isEqualTo(i + 1);
                    expected.pingPong(1);
                }
            }
        }
        long elapsed = System.nanoTime() - start;
        assertTheAppAgrees(numbersBefore, expected);
        RdmaResources after = RdmaResources.snapshot();
        Map<String, Long> delta = after.minus(before);
        record(CYCLES + " cycles (hello, read, ping-pong in turn) took " + seconds(elapsed) + "; resources before "
                + before.counts() + ", after " + after.counts() + ", change " + delta);
        assertThat(delta).as("kernel RDMA resources after " + CYCLES + " cycles").allSatisfy(
                (kind, change) -> assertThat(change).as(kind).isZero());
    }

    @Test
    @Order(6)
    void aGracefulShutdownWithAClientConnectedEndsWithinTheGracePeriodAndLeavesNothingBehind() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch holding = new CountDownLatch(1);
            Future<PingPongResult> holder = pool.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                    PingPongOptions.of(0, 2).holding(Duration.ofMinutes(5), null, holding::countDown)));
            assertThat(holding.await(3, TimeUnit.MINUTES)).isTrue();
            awaitActiveConnections("pingpong", 1);
            long start = System.nanoTime();
            int expectedExitCode = stop(this.app);
            Integer exitCode = this.app.awaitExit(GRACE_PERIOD.plus(PROCESS_ALLOWANCE));
            long elapsed = System.nanoTime() - start;
            record("graceful shutdown (" + stopHow() + ") with a client connected: exit code " + exitCode + " after "
                    + seconds(elapsed)
                    + " (grace period " + GRACE_PERIOD.toSeconds() + " s)");
            assertThat(exitCode).as("exit code; log:\n" + this.app.logTail(40)).isEqualTo(expectedExitCode);
            assertThat(Duration.ofNanos(elapsed)).as("the app waited the grace period for its connected client")
                .isGreaterThanOrEqualTo(GRACE_PERIOD);
            assertThatThrownBy(() -> holder.get(1, TimeUnit.MINUTES)).cause()
                .isInstanceOfSatisfying(SampleClientException.class,
                        (ex) -> assertThat(ex.failure()).as("the client saw the server end the connection")
                            .isEqualTo(Failure.CONNECTION_LOST));
        }
        finally {
            pool.shutdownNow();
        }
        String log = this.app.log();
        assertThat(log).contains("pingpong: session ended (closed) after 2 rounds");
        assertThat(problems(log)).as("warnings and errors in the app's log").isEmpty();
        this.client.close();
        this.client = null;
        Map<String, Long> delta = RdmaResources.snapshot().minus(this.beforeApp);
        record("after the app exited: kernel RDMA resources changed by " + delta + " since before it started"
                + " (the device contexts librdmacm keeps open in this test JVM, pid " + ProcessHandle.current().pid()
                + ", are not counted; all contexts now: " + RdmaResources.listing("ctx").replace('\n', ';') + ")");
        assertThat(delta).allSatisfy((kind, change) -> assertThat(change).as(kind).isZero());
    }

    /** Lines at WARN or ERROR, except librpma's own report of an empty non-blocking poll. */
    private static List<String> problems(String log) {
        List<String> problems = new ArrayList<>();
        for (String line : log.split("\n")) {
            if ((line.contains(" WARN ") || line.contains(" ERROR ")) && !line.contains("Resource temporarily unavailable")) {
                problems.add(line);
            }
        }
        return problems;
    }

    /**
     * Waits until the app's counters moved as the test's clients did and no connection is left,
     * then compares: the changes in {@code /actuator/rpma} and {@code /actuator/prometheus} with
     * {@code expected}, and the active connections of all three sources (health included) with 0.
     */
    private void assertTheAppAgrees(AppNumbers before, Expected expected) throws Exception {
        Map<String, Long> wanted = expected.changes();
        AppNumbers[] last = new AppNumbers[1];
        try {
            await("the app's numbers agree with what the clients did", () -> {
                last[0] = AppNumbers.read(this.app);
                return last[0].changesSince(before).equals(wanted)
                        && last[0].active().values().stream().allMatch((active) -> active == 0);
            });
        }
        catch (AssertionError timedOut) {
            // fall through: the assertions below say what differs
        }
        AppNumbers after = last[0];
        assertThat(after.changesSince(before)).as("changes of the app's counters; the clients did: " + expected)
            .containsExactlyInAnyOrderEntriesOf(wanted);
        Map<String, Long> established = after.establishedSince(before);
        for (String endpoint : Expected.ENDPOINTS) {
            long accepted = wanted.get("rpma " + endpoint + " accepted");
            long seen = established.get("rpma " + endpoint);
            assertThat(established.get("prometheus " + endpoint)).as(endpoint + " ESTABLISHED: prometheus and rpma")
                .isEqualTo(seen);
            assertThat(seen).as(endpoint + " ESTABLISHED seen by the server, of " + accepted + " accepted")
                .isBetween(0L, accepted);
            if (seen != accepted) {
                record(endpoint + ": the server saw ESTABLISHED for " + seen + " of " + accepted
                        + " accepted connections (the others' RTU came after their DREQ, or never)");
            }
        }
        assertThat(after.active()).as("active connections").allSatisfy(
                (source, active) -> assertThat(active).as(source).isZero());
        assertThat(after.health().path("status").asString()).as("/actuator/health").isEqualTo("UP");
        for (String endpoint : Expected.ENDPOINTS) {
            assertThat(after.health().path("components").path("rpma").path("components").path(endpoint).path("status")
                .asString()).as("health of " + endpoint).isEqualTo("UP");
        }
    }

    private JsonNode rpma() throws IOException, InterruptedException {
        return this.app.json("/actuator/rpma");
    }

    private long rejected(String endpoint, String reason) throws IOException, InterruptedException {
        return rpma().path("endpoints").path(endpoint).path("requests").path("rejected").path(reason).asLong();
    }

    private long connectionEvents(String endpoint, String type) throws IOException, InterruptedException {
        return rpma().path("endpoints").path(endpoint).path("connectionEvents").path(type).asLong();
    }

    private void awaitActiveConnections(String endpoint, long count) throws Exception {
        await(endpoint + " has " + count + " active connection(s)",
                () -> rpma().path("endpoints").path(endpoint).path("activeConnections").asLong() == count);
    }

    private static void await(String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                fail("Waited " + SETTLE.toSeconds() + " s for: " + what);
            }
            Thread.sleep(100);
        }
    }

    @FunctionalInterface
    private interface Condition {
        boolean holds() throws Exception;
    }

    private void record(String measurement) {
        String line = "[e2e " + topology() + "] " + measurement;
        System.out.println(line);
        try {
            Files.writeString(this.environment.logDirectory().resolve("measurements.txt"), line + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            System.out.println("(cannot append to measurements.txt: " + ex.getMessage() + ")");
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        }
        catch (IOException ex) {
            return "";
        }
    }

    private static String seconds(long nanos) {
        return String.format("%.1f s", nanos / 1e9);
    }
}
