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

import dev.rpma.sampleclient.PingPongOptions;
import dev.rpma.sampleclient.PingPongResult;
import dev.rpma.sampleclient.SampleClient;
import dev.rpma.sampleclient.SampleClientException;
import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.binding.Rpma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * The sample app's runnable jar over real RDMA, seen from outside: C clients that behave as librpma's
 * example clients do, and a Java client (in this JVM, or as a process), speak the three example
 * protocols, and the app's {@code /actuator} must agree with what the clients did. One app process
 * per topology, tests in order; the last one stops it.
 *
 * <p>The app runs with its own configuration and the default thread settings, plus a 5 s grace
 * period and an idle timeout of {@value #IDLE_TIMEOUT_SECONDS} s on the {@code read} endpoint (whose
 * clients send no messages), so that silent connections are seen disconnected within a test.
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

    /** For 64 clients to connect next to 192 idle connections, under the emulator and a loaded host. */
    static final Duration CONNECT_ALL = Duration.ofMinutes(4);

    static final int PING_PONG_ROUNDS = 100;

    static final int IDLE_TIMEOUT_SECONDS = 4;

    /** Issue 17: 256 connections on one endpoint, 192 of them idle. */
    static final int IDLE_CONNECTIONS = 192;

    static final int PING_PONG_CLIENTS = 64;

    static final int MIXED_SESSIONS = 1000;

    /**
     * Sessions each C client process runs one after the other on its peer (its {@code --sessions}): a
     * process of its own per session spends most of its time under the emulator starting up.
     */
    static final int SESSIONS_PER_CLIENT = 25;

    /** C clients run at once in the mixed sessions. */
    static final int MIXED_PARALLEL = 8;

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

    /** What this class's app is started with besides the address, grace period and idle timeout. */
    String[] appArguments() {
        return new String[0];
    }

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        this.beforeApp = RdmaResources.snapshot();
        long start = System.nanoTime();
        List<String> arguments = new ArrayList<>(List.of("--rpma.server.address=" + serverAddress(),
                "--rpma.server.shutdown.grace-period=" + GRACE_PERIOD.toSeconds() + "s",
                "--rpma.server.endpoints.read.limits.idle-timeout=" + IDLE_TIMEOUT_SECONDS + "s"));
        arguments.addAll(List.of(appArguments()));
        this.app = SampleAppProcess.start(this.environment, "sample-app-" + topology(), Duration.ofMinutes(8),
                arguments.toArray(String[]::new));
        record("app started (until /actuator/health answered) in " + seconds(System.nanoTime() - start) + ", with "
                + arguments);
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
        // librpma's rpma_conn_req_delete does not destroy the request's CM id (see librpma-facts); the
        // binding does
        assertThat(delta.get("cm_id")).as("CM ids kept by one reject").isZero();
    }

    @Test
    @Order(3)
    void theExampleClientsWrittenInCCompleteAgainstTheApp() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        Expected expected = new Expected();
        String port = String.valueOf(ExampleProtocols.HELLO_PORT);
        CClient.Result hello = CClient.run(this.environment, "hello_client", "hello-" + topology(), CLIENT_TIMEOUT,
                serverAddress(), port, "--timeout", "60");
        // example 01's client waits for the server's disconnect: it ends only if the app sends it
        assertThat(hello.exitCode()).as(hello.toString()).isZero();
        assertThat(hello.output()).contains("Received a message: " + ExampleProtocols.SERVER_GREETING);
        expected.accepted("default");
        CClient.Result read = CClient.run(this.environment, "read_client", "read-" + topology(), CLIENT_TIMEOUT,
                serverAddress(), String.valueOf(ExampleProtocols.READ_PORT), "--timeout", "60");
        assertThat(read.exitCode()).as(read.toString()).isZero();
        assertThat(read.output()).contains("Read a message: " + ExampleProtocols.READ_CONTENT);
        expected.accepted("read");
        CClient.Result pingPong = CClient.run(this.environment, "pingpong_client", "pingpong-" + topology(),
                CLIENT_TIMEOUT, serverAddress(), String.valueOf(ExampleProtocols.PING_PONG_PORT), "1000", "50",
                "--timeout", "60", "--quiet");
        assertThat(pingPong.exitCode()).as(pingPong.toString()).isZero();
        assertThat(pingPong.result("rounds")).isEqualTo(49);
        assertThat(pingPong.result("last")).isEqualTo(1049);
        expected.pingPongDoneOrClosed(49);
        assertTheAppAgrees(before, expected);
    }

    /**
     * 192 connections that connect and then send nothing, and 64 ping-pong clients at once, on one
     * endpoint with the default thread settings (4 handler threads): no session holds a thread, so
     * all 256 are served at once.
     */
    @Test
    @Order(4)
    void twoHundredFiftySixConcurrentConnectionsOnOneEndpointAreAllServedWithTheDefaultThreads() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        Expected expected = new Expected();
        String port = String.valueOf(ExampleProtocols.PING_PONG_PORT);
        CClient holder = CClient.start(this.environment, "conn_holder", "holder-" + topology(), serverAddress(), port,
                "--count", String.valueOf(IDLE_CONNECTIONS), "--hold", "600", "--timeout", "120");
        await("the holder's " + IDLE_CONNECTIONS + " connections established",
                () -> holder.output().contains("ESTABLISHED ") || !holder.isAlive());
        assertThat(holder.output().lines()).as(holder.output()).contains("ESTABLISHED " + IDLE_CONNECTIONS);
        awaitActiveSessions("pingpong", IDLE_CONNECTIONS);
        long start = System.nanoTime();
        // each client connects, then waits for the start file before its first round: all 64 sessions are
        // open at once next to the 192 idle ones however slowly the emulator lets them connect
        Path startFile = this.environment.logDirectory().resolve("c-clients").resolve("start-" + topology());
        Files.deleteIfExists(startFile);
        List<CClient> clients = new ArrayList<>();
        for (int i = 0; i < PING_PONG_CLIENTS; i++) {
            clients.add(CClient.start(this.environment, "pingpong_client", "pingpong-" + topology() + "-" + i,
                    serverAddress(), port, String.valueOf(1000L * i), "101", "20000", "--timeout", "300", "--quiet",
                    "--start-file", startFile.toString()));
        }
        // the sessions open at once on the ping-pong endpoint
        awaitActiveSessions("pingpong", IDLE_CONNECTIONS + PING_PONG_CLIENTS, CONNECT_ALL);
        long connected = System.nanoTime();
        Files.createFile(startFile);
        for (int i = 0; i < PING_PONG_CLIENTS; i++) {
            CClient.Result result = clients.get(i).finish(CLIENT_TIMEOUT);
            assertThat(result.exitCode()).as(result.toString()).isZero();
            assertThat(result.result("last")).as(result.name()).isEqualTo(1000L * i + 100);
            expected.pingPongDoneOrClosed(100);
        }
        long elapsed = System.nanoTime() - start;
        CClient.Result held = holder.terminate(CLIENT_TIMEOUT);
        assertThat(held.result("established")).as(held.toString()).isEqualTo(IDLE_CONNECTIONS);
        assertThat(held.result("closed_by_server")).as("idle connections the server closed").isZero();
        for (int i = 0; i < IDLE_CONNECTIONS; i++) {
            // the idle ones never sent a message: each ends closed, after no rounds
            expected.pingPongClosed(0);
        }
        record(IDLE_CONNECTIONS + " idle connections and " + PING_PONG_CLIENTS + " ping-pong clients (100 rounds each)"
                + " on one endpoint: all " + (IDLE_CONNECTIONS + PING_PONG_CLIENTS) + " sessions open at once after "
                + seconds(connected - start) + ", the clients took " + seconds(elapsed));
        assertTheAppAgrees(before, expected);
    }

    @Test
    @Order(5)
    void silentConnectionsAreDisconnectedAtTheIdleTimeoutWhileTheEndpointServesOthers() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        Expected expected = new Expected();
        int silent = 8;
        String port = String.valueOf(ExampleProtocols.READ_PORT);
        CClient holder = CClient.start(this.environment, "conn_holder", "idle-" + topology(), serverAddress(), port,
                "--count", String.valueOf(silent), "--hold", "120", "--timeout", "60");
        await("the silent connections established", () -> holder.output().contains("ESTABLISHED ") || !holder.isAlive());
        // meanwhile the endpoint serves its readers
        for (int i = 0; i < 3; i++) {
            assertThat(this.client.read(ExampleProtocols.READ_PORT)).isEqualTo(ExampleProtocols.READ_CONTENT);
            expected.accepted("read");
        }
        await("the server closed every silent connection",
                () -> holder.output().lines().filter((line) -> line.startsWith("CLOSED ")).count() == silent
                        || !holder.isAlive());
        CClient.Result held = holder.terminate(CLIENT_TIMEOUT);
        assertThat(held.lines("CLOSED ")).as(held.toString()).hasSize(silent).allSatisfy((line) -> {
            long afterMs = Long.parseLong(line.replaceAll(".*after_ms=(\\d+).*", "$1"));
            // looked at four times per timeout: within 1.25 timeouts, plus the disconnect's way to the client
            assertThat(afterMs).as(line).isBetween(IDLE_TIMEOUT_SECONDS * 1000L, IDLE_TIMEOUT_SECONDS * 1250L + 3000);
        });
        assertThat(held.result("closed_by_server")).isEqualTo(silent);
        for (int i = 0; i < silent; i++) {
            expected.accepted("read").endedAs("read", "idle");
        }
        record(silent + " silent connections closed by the idle timeout (" + IDLE_TIMEOUT_SECONDS + " s) after "
                + held.lines("CLOSED ").stream().map((line) -> line.replaceAll(".*after_ms=(\\d+).*", "$1"))
                    .toList() + " ms");
        assertTheAppAgrees(before, expected);
    }

    @Test
    @Order(6)
    void oversizedEmptyAndOutOfProtocolMessagesEachEndOnlyTheirOwnConnection() throws Exception {
        AppNumbers before = AppNumbers.read(this.app);
        Expected expected = new Expected();
        String port = String.valueOf(ExampleProtocols.PING_PONG_PORT);
        // a ping-pong session that runs through all three: a round every 20 ms until the stop file is there
        Path stop = this.environment.logDirectory().resolve("steady-" + topology() + ".stop");
        Files.deleteIfExists(stop);
        CClient steady = CClient.start(this.environment, "pingpong_client", "steady-" + topology(), serverAddress(),
                port, "7", "100001", "20000", "--timeout", "120", "--quiet", "--stop-file", stop.toString());
        awaitActiveSessions("pingpong", 1);
        String[][] cases = { { "oversized", "64" }, { "empty" }, { "short", "3" } };
        String[] kinds = { "oversized", "empty", "malformed" };
        for (int i = 0; i < cases.length; i++) {
            List<String> args = new ArrayList<>(List.of(serverAddress(), port));
            args.addAll(List.of(cases[i]));
            args.addAll(List.of("--wait", "30", "--timeout", "60"));
            CClient.Result bad = CClient.run(this.environment, "bad_client", "bad-" + cases[i][0] + "-" + topology(),
                    CLIENT_TIMEOUT, args.toArray(String[]::new));
            assertThat(bad.exitCode()).as(bad.toString()).isZero();
            assertThat(bad.output()).as(bad.toString()).contains("SERVER CLOSED");
            expected.pingPongBadMessage(kinds[i]);
            record("bad message '" + String.join(" ", cases[i]) + "': " + String.join("; ", bad.lines("COMPLETION"))
                    + "; " + String.join("; ", bad.lines("SERVER CLOSED")));
        }
        assertThat(steady.isAlive()).as("the steady client still runs: " + steady.output()).isTrue();
        Files.createFile(stop);
        CClient.Result result = steady.finish(CLIENT_TIMEOUT);
        assertThat(result.exitCode()).as(result.toString()).isZero();
        long rounds = result.result("rounds");
        assertThat(rounds).as("rounds of the steady client").isPositive().isLessThan(100000);
        assertThat(result.result("last")).isEqualTo(7 + rounds);
        expected.pingPongDoneOrClosed(rounds);
        assertTheAppAgrees(before, expected);
        assertThat(this.app.log()).contains("of endpoint 'pingpong' ends: ");
    }

    @Test
    @Order(7)
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
            awaitActiveSessions("pingpong", 1);
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
    @Order(8)
    void aThousandMixedSessionsLeaveTheKernelResourceCountsWhereTheyWere() throws Exception {
        AppNumbers numbersBefore = AppNumbers.read(this.app);
        Expected expected = new Expected();
        RdmaResources before = RdmaResources.snapshot();
        long start = System.nanoTime();
        int clients = MIXED_SESSIONS / SESSIONS_PER_CLIENT;
        ExecutorService pool = Executors.newFixedThreadPool(MIXED_PARALLEL);
        try {
            List<Future<CClient.Result>> runs = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int client = i;
                runs.add(pool.submit(() -> mixedSessions(client)));
            }
            for (int i = 0; i < clients; i++) {
                CClient.Result result = runs.get(i).get(5, TimeUnit.MINUTES);
                assertThat(result.exitCode()).as(result.toString()).isZero();
                switch (i % 3) {
                    case 0 -> {
                        assertThat(result.lines("Received a message: " + ExampleProtocols.SERVER_GREETING))
                            .hasSize(SESSIONS_PER_CLIENT);
                        expected.accepted("default", SESSIONS_PER_CLIENT);
                    }
                    case 1 -> {
                        assertThat(result.lines("Read a message: " + ExampleProtocols.READ_CONTENT))
                            .hasSize(SESSIONS_PER_CLIENT);
                        expected.accepted("read", SESSIONS_PER_CLIENT);
                    }
                    default -> {
                        assertThat(result.result("sessions")).isEqualTo(SESSIONS_PER_CLIENT);
                        assertThat(result.result("rounds")).isEqualTo(2L * SESSIONS_PER_CLIENT);
                        assertThat(result.result("last")).isEqualTo(i + 2);
                        for (int session = 0; session < SESSIONS_PER_CLIENT; session++) {
                            expected.pingPongDoneOrClosed(2);
                        }
                    }
                }
            }
        }
        finally {
            pool.shutdownNow();
        }
        long elapsed = System.nanoTime() - start;
        assertTheAppAgrees(numbersBefore, expected);
        RdmaResources after = RdmaResources.snapshot();
        Map<String, Long> delta = after.minus(before);
        record(MIXED_SESSIONS + " sessions (hello, read, ping-pong in turn, by " + clients + " C clients of "
                + SESSIONS_PER_CLIENT + " sessions each, " + MIXED_PARALLEL + " at a time) took " + seconds(elapsed)
                + "; resources before " + before.counts() + ", after " + after.counts() + ", change " + delta);
        assertThat(delta).as("kernel RDMA resources after " + MIXED_SESSIONS + " sessions").allSatisfy(
                (kind, change) -> assertThat(change).as(kind).isZero());
    }

    /** Client {@code i}'s {@value #SESSIONS_PER_CLIENT} sessions: hello, read or ping-pong, in turn by {@code i}. */
    private CClient.Result mixedSessions(int i) throws IOException, InterruptedException {
        String label = "mixed-" + topology() + "/" + i;
        String sessions = String.valueOf(SESSIONS_PER_CLIENT);
        return switch (i % 3) {
            case 0 -> CClient.run(this.environment, "hello_client", label, CLIENT_TIMEOUT, serverAddress(),
                    String.valueOf(ExampleProtocols.HELLO_PORT), "--timeout", "100", "--sessions", sessions);
            case 1 -> CClient.run(this.environment, "read_client", label, CLIENT_TIMEOUT, serverAddress(),
                    String.valueOf(ExampleProtocols.READ_PORT), "--timeout", "100", "--sessions", sessions);
            default -> CClient.run(this.environment, "pingpong_client", label, CLIENT_TIMEOUT, serverAddress(),
                    String.valueOf(ExampleProtocols.PING_PONG_PORT), String.valueOf(i), "3", "--timeout", "100",
                    "--quiet", "--sessions", sessions);
        };
    }

    /**
     * A client that connects again and again with a greeting the hello handler rejects: librpma 1.2/1.3
     * leave each rejected request's kernel CM id alive until the endpoint closes, which the binding
     * makes up for. The CM ids are back at their count once the flood ends, and ping-pong clients
     * admitted meanwhile, one after the other, are served throughout. {@code -Drpma.e2e.rejects=N} sets how many (default 1,000
     * per topology; the figure is in measurements.txt).
     */
    @Test
    @Order(9)
    void aFloodOfRejectedRequestsLeavesNoKernelCmIdBehindWhileAnAdmittedClientIsServed() throws Exception {
        int rejects = Integer.getInteger("rpma.e2e.rejects", 1000);
        AppNumbers before = AppNumbers.read(this.app);
        RdmaResources resourcesBefore = RdmaResources.snapshot();
        Expected expected = new Expected();
        CClient flood = CClient.start(this.environment, "reject_flood", "reject-flood-" + topology(), serverAddress(),
                String.valueOf(ExampleProtocols.HELLO_PORT), String.valueOf(rejects), "--timeout", "590");
        int served = 0;
        while (flood.isAlive()) {
            CClient.Result pingPong = CClient.run(this.environment, "pingpong_client",
                    "pingpong-during-flood-" + topology() + "-" + served, CLIENT_TIMEOUT, serverAddress(),
                    String.valueOf(ExampleProtocols.PING_PONG_PORT), "1000", "20", "--timeout", "60", "--quiet");
            assertThat(pingPong.exitCode()).as(pingPong.toString()).isZero();
            assertThat(pingPong.result("last")).isEqualTo(1019);
            expected.pingPongDoneOrClosed(19);
            served++;
        }
        CClient.Result result = flood.finish(CLIENT_TIMEOUT);
        assertThat(result.exitCode()).as(result.toString()).isZero();
        assertThat(result.output()).contains("REJECTED " + rejects + " in ");
        assertThat(served).as("ping-pong sessions served while the flood ran").isPositive();
        for (int i = 0; i < rejects; i++) {
            expected.rejected("default", "handler");
        }
        assertTheAppAgrees(before, expected);
        Map<String, Long> delta = RdmaResources.snapshot().minus(resourcesBefore);
        record(rejects + " rejected requests (" + result.lines("REJECTED").get(0) + "), " + served
                + " ping-pong sessions served meanwhile; the kernel's RDMA resources changed by " + delta);
        assertThat(delta).as("no CM id, nor anything else, is left of the rejected requests")
            .allSatisfy((kind, change) -> assertThat(change).as(kind).isZero());
    }

    @Test
    @Order(10)
    void aGracefulShutdownWithAClientConnectedEndsWithinTheGracePeriodAndLeavesNothingBehind() throws Exception {
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            CountDownLatch holding = new CountDownLatch(1);
            Future<PingPongResult> holder = pool.submit(() -> this.client.pingPong(ExampleProtocols.PING_PONG_PORT,
                    PingPongOptions.of(0, 2).holding(Duration.ofMinutes(5), null, holding::countDown)));
            assertThat(holding.await(3, TimeUnit.MINUTES)).isTrue();
            awaitActiveSessions("pingpong", 1);
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

    /**
     * Lines at WARN or ERROR, except librpma's own report of an empty non-blocking poll and the
     * lines of the sessions the bad messages ended (one each, asserted by their test).
     */
    private static List<String> problems(String log) {
        List<String> problems = new ArrayList<>();
        for (String line : log.split("\n")) {
            if ((line.contains(" WARN ") || line.contains(" ERROR ")) && !line.contains("Resource temporarily unavailable")
                    && !line.contains("of endpoint 'pingpong' ends: ")) {
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
                return last[0].changesSince(before).entrySet().containsAll(wanted.entrySet())
                        && last[0].active().values().stream().allMatch((active) -> active == 0);
            });
        }
        catch (AssertionError timedOut) {
            // fall through: the assertions below say what differs
        }
        AppNumbers after = last[0];
        assertThat(after.changesSince(before)).as("changes of the app's counters; the clients did: " + expected)
            .containsAllEntriesOf(wanted);
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

    private void awaitActiveSessions(String endpoint, long count) throws Exception {
        awaitActiveSessions(endpoint, count, SETTLE);
    }

    private void awaitActiveSessions(String endpoint, long count, Duration timeout) throws Exception {
        await(endpoint + " has " + count + " active session(s)",
                () -> rpma().path("endpoints").path(endpoint).path("sessions").path("active").asLong() == count,
                timeout);
    }

    private static void await(String what, Condition condition) throws Exception {
        await(what, condition, SETTLE);
    }

    private static void await(String what, Condition condition, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                fail("Waited " + timeout.toSeconds() + " s for: " + what);
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
