package dev.rpma.sample.e2e;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.github.dockerjava.api.model.Ulimit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.output.OutputFrame;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.images.builder.Transferable;
import org.testcontainers.utility.DockerImageName;

import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.testcontainers.RdmaDevices;
import dev.rpma.testcontainers.RpmaCClientContainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The sample app and its clients in containers, driven by Testcontainers against the docker daemon
 * of the machine with the RDMA devices (in the soft-RoCE VM: {@code tools/e2e/run-e2e.sh --containers}
 * starts one there and loads the images of {@code tools/container/build-images.sh}). In order:
 * C clients in containers against the app on the machine, on both topologies (hello and read on the
 * same-IP address, ping-pong across the veth pair); a real Prometheus in a container scrapes the app
 * and answers the queries of {@code docs/observability.md} and of the Grafana dashboard as the
 * clients' numbers say; then the app in a container serves C clients on the machine, and, without
 * its devices or with a memory-lock limit of 64 KiB, fails to start with a message that names the
 * flags to add.
 */
@Tag("containers")
@ExtendWith(ContainersEndToEndTests.FailuresAsTheyHappen.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class ContainersEndToEndTests {

    static final DockerImageName SAMPLE_APP = DockerImageName.parse("rpma/sample-app:latest");

    static final DockerImageName PROMETHEUS = DockerImageName.parse("rpma/prometheus:latest");

    /** The JVM under software emulation is slow to start; this bounds it, it measures nothing. */
    static final Duration APP_START = Duration.ofMinutes(12);

    static final Duration CLIENT_TIMEOUT = Duration.ofMinutes(2);

    static final int ROUNDS = 50;

    /** hello_client's attempts against a paused endpoint, all rejected. */
    static final int HELLO_ATTEMPTS = 10;

    private E2eEnvironment environment;

    private RdmaDevices rdma;

    private SampleAppProcess app;

    private GenericContainer<?> prometheus;

    private PrometheusApi prometheusApi;

    private String sameIp;

    private String serverIp;

    @BeforeAll
    void startTheAppAndPrometheus() throws Exception {
        this.environment = E2eEnvironment.get();
        this.sameIp = E2eEnvironment.address(E2eEnvironment.SAME_IP);
        this.serverIp = E2eEnvironment.address(E2eEnvironment.SERVER_IP);
        this.rdma = RdmaDevices.ofHost();
        assertThat(this.rdma.isAvailable()).as("RDMA devices: %s", this.rdma).isTrue();
        assertThat(DockerClientFactory.instance().isDockerAvailable()).as("a docker daemon").isTrue();
        long start = System.nanoTime();
        this.app = SampleAppProcess.start(this.environment, "sample-app-containers", APP_START,
                "--rpma.server.address=" + this.sameIp, "--rpma.server.endpoints.pingpong.address=" + this.serverIp,
                "--management.endpoint.rpma.access=unrestricted");
        record("app on the machine started in " + seconds(start));
        start = System.nanoTime();
        int port = freePort();
        // the app answers a scrape slowly under emulation: a timeout as long as the interval
        String config = "global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\n  evaluation_interval: 2s\nscrape_configs:\n"
                + "  - job_name: sample-app\n    metrics_path: /actuator/prometheus\n    static_configs:\n"
                + "      - targets: ['127.0.0.1:" + this.app.httpPort() + "']\n";
        this.prometheus = new GenericContainer<>(PROMETHEUS).withNetworkMode("host")
            .withCopyToContainer(Transferable.of(config), "/etc/prometheus/prometheus.yml")
            .withCommand("--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus",
                    "--web.listen-address=127.0.0.1:" + port)
            .waitingFor(Wait.forLogMessage(".*Server is ready to receive web requests.*", 1)
                .withStartupTimeout(Duration.ofMinutes(3)));
        this.prometheus.start();
        this.prometheusApi = new PrometheusApi(port);
        // every counter's first sample is 0 when no client has come yet: the rates then count every request
        awaitSeries("rpma_requests_total{endpoint=\"default\"}");
        record("Prometheus container started and scraped the app in " + seconds(start));
    }

    @AfterAll
    void stopEverything() throws Exception {
        if (this.prometheus != null) {
            Files.writeString(this.environment.logDirectory().resolve("prometheus.log"), this.prometheus.getLogs());
            this.prometheus.stop();
        }
        if (this.app != null) {
            this.app.close();
        }
    }

    @Test
    @Order(1)
    void cClientsInContainersOnBothTopologies() throws Exception {
        long start = System.nanoTime();
        RpmaCClientContainer.Result hello = client().hello(this.sameIp, ExampleProtocols.HELLO_PORT).run();
        assertThat(hello.exitCode()).as(hello.toString()).isZero();
        assertThat(hello.output()).contains("Received a message: " + ExampleProtocols.SERVER_GREETING);
        RpmaCClientContainer.Result read = client().read(this.sameIp, ExampleProtocols.READ_PORT).run();
        assertThat(read.exitCode()).as(read.toString()).isZero();
        assertThat(read.output()).contains("Read a message: " + ExampleProtocols.READ_CONTENT);
        RpmaCClientContainer.Result pingPong = client().pingPong(this.serverIp, ExampleProtocols.PING_PONG_PORT, 1, ROUNDS)
            .run();
        assertThat(pingPong.exitCode()).as(pingPong.toString()).isZero();
        assertThat(pingPong.value("rounds")).isEqualTo(ROUNDS - 1);
        assertThat(pingPong.value("last")).isEqualTo(ROUNDS);
        record("hello and read (same-IP " + this.sameIp + ") and ping-pong (veth, to " + this.serverIp
                + ") C clients in containers, one after the other: " + seconds(start));
    }

    @Test
    @Order(2)
    void aPausedEndpointRejectsAContainerizedClient() throws Exception {
        // the handler timer appears with its first observation: Prometheus must have seen it before
        // the next one, or the p99 query has no increase to work on
        awaitSeries("rpma_handler_duration_seconds_count{endpoint=\"default\"}");
        this.app.post("/actuator/rpma/default", "{\"action\":\"pause\"}");
        RpmaCClientContainer.Result rejected = client()
            .client("hello_client", this.sameIp, ExampleProtocols.HELLO_PORT, "--retry-delay-ms", "100").run();
        assertThat(rejected.exitCode()).as(rejected.toString()).isEqualTo(1);
        this.app.post("/actuator/rpma/default", "{\"action\":\"resume\"}");
        RpmaCClientContainer.Result hello = client().hello(this.sameIp, ExampleProtocols.HELLO_PORT).run();
        assertThat(hello.exitCode()).as(hello.toString()).isZero();
        long paused = this.app.prometheus().count("rpma_requests_total", "endpoint", "default", "outcome", "rejected",
                "reason", "paused");
        record("a paused endpoint: hello_client in a container exited with " + rejected.exitCode() + ", the app counted "
                + paused + " requests rejected as paused");
        assertThat(paused).isEqualTo(HELLO_ATTEMPTS);
    }

    @Test
    @Order(3)
    void prometheusAnswersTheDocumentedQueriesAsTheClientsSay() throws Exception {
        Prometheus own = this.app.prometheus();
        double total = own.sum("rpma_requests_total", "endpoint", "default");
        double notAccepted = total - own.sum("rpma_requests_total", "endpoint", "default", "outcome", "accepted");
        assertThat(notAccepted).isEqualTo(HELLO_ATTEMPTS);
        // the app is idle: wait until Prometheus has scraped its last numbers
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (scraped("sum by (endpoint) (rpma_requests_total)", "default") != total) {
            assertThat(System.nanoTime() - deadline).as("Prometheus scraped %s requests", total).isNegative();
            Thread.sleep(500);
        }
        // [30m]: a range that holds every sample, all of the same scrapes and starting at 0, so that a
        // ratio of rates is the ratio of the counts
        Map<String, PrometheusApi.Series> share = this.prometheusApi
            .query(ObservabilityQueries.NOT_ACCEPTED.replace("[5m]", "[30m]"));
        record("share of requests not accepted, Prometheus: " + share);
        assertThat(share).containsKeys("default", "read", "pingpong");
        assertThat(share.get("default").value()).isCloseTo(notAccepted / total, within(0.01));
        assertThat(share.get("read").value()).isZero();
        record("share of requests not accepted, Prometheus: " + share.get("default").value() + ", the app's counts: "
                + (int) notAccepted + "/" + (int) total);

        Map<String, PrometheusApi.Series> p99 = this.prometheusApi
            .query(ObservabilityQueries.HANDLER_P99.replace("[5m]", "[30m]"));
        record("p99 of the connection handlers, Prometheus: " + p99);
        assertThat(p99).containsKey("default");
        SortedMap<Double, Double> buckets = own.buckets("rpma_handler_duration_seconds_bucket", "endpoint", "default");
        double count = buckets.get(Double.POSITIVE_INFINITY);
        double highest = buckets.entrySet().stream().filter((bucket) -> bucket.getValue() >= count)
            .findFirst().orElseThrow().getKey();
        assertThat(p99.get("default").value()).as("p99 of the hello handler").isPositive().isLessThanOrEqualTo(highest);
        record("p99 of the hello handler, Prometheus: " + p99.get("default").value() + " s; the app's slowest bucket: le="
                + highest + " s, " + (long) count + " invocations");

        assertThat(this.prometheusApi.query(ObservabilityQueries.QUEUE_NEARLY_FULL)).as("queues nearly full").isEmpty();
        Map<String, PrometheusApi.Series> queues = this.prometheusApi
            .query(ObservabilityQueries.QUEUE_NEARLY_FULL.replace(" > 0.8", ""));
        record("handler queue use, Prometheus: " + queues);
        assertThat(queues.get("read").value()).isZero();
        assertThat(queues.get("pingpong").value()).isZero();
        // hello's handler runs on the acceptor thread (inline-handler): no queue, capacity 0
        assertThat(queues.get("default").value()).isNaN();

        List<String> empty = new ArrayList<>();
        for (String query : ObservabilityQueries.dashboard()) {
            if (this.prometheusApi.query(ObservabilityQueries.withRange(query, "30m")).isEmpty()) {
                empty.add(query);
            }
        }
        assertThat(empty).as("dashboard queries without a series").isEmpty();
        record("the dashboard's " + ObservabilityQueries.dashboard().size() + " queries each answered with series");
    }

    @Test
    @Order(4)
    void theAppInAContainerServesClientsOnTheMachine() throws Exception {
        long start = System.nanoTime();
        try (GenericContainer<?> app = this.rdma.applyTo(appContainer(7304))) {
            startOrFailWithItsOutput(app);
            record("app in a container started in " + seconds(start));
            CClient.Result hello = CClient.run(this.environment, "hello_client", "containerized-app-hello", CLIENT_TIMEOUT,
                    this.sameIp, "7304");
            assertThat(hello.exitCode()).as(hello.toString()).isZero();
            assertThat(hello.output()).contains("Received a message: " + ExampleProtocols.SERVER_GREETING);
            CClient.Result pingPong = CClient.run(this.environment, "pingpong_client", "containerized-app-pingpong",
                    CLIENT_TIMEOUT, this.serverIp, "7306", "1", Integer.toString(ROUNDS), "--quiet");
            assertThat(pingPong.exitCode()).as(pingPong.toString()).isZero();
            assertThat(pingPong.result("last")).isEqualTo(ROUNDS);
            Files.writeString(this.environment.logDirectory().resolve("sample-app-in-container.log"), app.getLogs());
        }
    }

    @Test
    @Order(5)
    void withoutItsDevicesOrWithATinyMemlockTheContainerizedAppNamesTheFlagsToAdd() throws Exception {
        long start = System.nanoTime();
        GenericContainer<?> noDevices = appContainer(7404).withNetworkMode("host")
            .withCreateContainerCmdModifier((command) -> command.getHostConfig()
                .withUlimits(new Ulimit[] { new Ulimit("memlock", -1L, -1L) }));
        // the devices, but 64 KiB of locked memory: set after applyTo's unlimited one, so it wins; a
        // container's root lacks CAP_IPC_LOCK (not in Docker's default capabilities), so the limit applies
        GenericContainer<?> tinyMemlock = this.rdma.applyTo(appContainer(7504))
            .withCreateContainerCmdModifier((command) -> command.getHostConfig()
                .withUlimits(new Ulimit[] { new Ulimit("memlock", 65536L, 65536L) }));
        // both at once: each spends most of its time starting the JVM
        CompletableFuture<String> memlockRun = CompletableFuture.supplyAsync(() -> runToExit(tinyMemlock));
        String withoutDevices = runToExit(noDevices);
        String withTinyMemlock = memlockRun.get(3, TimeUnit.MINUTES);
        Files.writeString(this.environment.logDirectory().resolve("sample-app-container-no-devices.log"), withoutDevices);
        Files.writeString(this.environment.logDirectory().resolve("sample-app-container-memlock-64k.log"),
                withTinyMemlock);
        record("the app in a container without devices, and in one with --ulimit memlock=65536:65536, ended in "
                + seconds(start));
        record("without --device:\n" + failureAnalysis(withoutDevices));
        record("with --ulimit memlock=65536:65536:\n" + failureAnalysis(withTinyMemlock));
        assertThat(withoutDevices).contains("APPLICATION FAILED TO START")
            .contains("this process runs in a container without the machine's RDMA devices")
            .contains("--device /dev/infiniband/rdma_cm")
            .contains("--network host");
        assertThat(withTinyMemlock).contains("APPLICATION FAILED TO START")
            .contains("this process may lock only 64 KiB (RLIMIT_MEMLOCK)")
            .contains("'docker run --ulimit memlock=-1:-1'")
            .contains("add the IPC_LOCK capability");
    }

    /**
     * The app's container, started once the app says it started or failed (a failure without an
     * analysis ends with "Application run failed"), so that a failed start does not wait out the bound.
     */
    private GenericContainer<?> appContainer(int port) throws IOException {
        String wait = ".*(APPLICATION FAILED TO START|Application run failed|Started SampleApplication).*";
        return new GenericContainer<>(SAMPLE_APP)
            .withEnv("JAVA_TOOL_OPTIONS", String.join(" ", this.environment.javaCommand().subList(1,
                    this.environment.javaCommand().size())))
            .withCommand(appArguments(port))
            .waitingFor(Wait.forLogMessage(wait, 1).withStartupTimeout(APP_START));
    }

    private static void startOrFailWithItsOutput(GenericContainer<?> app) {
        String output;
        try {
            app.start();
            output = app.getLogs();
        }
        catch (RuntimeException ex) {
            output = (app.getContainerId() != null) ? app.getLogs() : "(the container's start failed: " + ex + ")";
        }
        assertThat(output).as("the app in a container did not start:\n%s", failureAnalysis(output))
            .contains("Started SampleApplication");
    }

    /**
     * The app's arguments for a container beside the app on the machine (the host network is shared):
     * every endpoint moved to a port of its own from {@code port} on, in the order of the sample's
     * defaults (7204 to 7211), the ping-pong across the veth pair.
     */
    private String[] appArguments(int port) throws IOException {
        List<String> arguments = new ArrayList<>(List.of("--server.port=" + freePort(),
                "--rpma.server.address=" + this.sameIp, "--rpma.server.port=" + port,
                "--rpma.server.endpoints.pingpong.address=" + this.serverIp));
        List<String> endpoints = List.of("read", "pingpong", "write", "flush", "gpspm", "echo", "read-to-persistent");
        for (int i = 0; i < endpoints.size(); i++) {
            arguments.add("--rpma.server.endpoints." + endpoints.get(i) + ".port=" + (port + 1 + i));
        }
        return arguments.toArray(String[]::new);
    }

    /**
     * Starts the container, waits for the failure's first line and the exit, and returns the output
     * (also when the start itself failed: the output says why).
     */
    private static String runToExit(GenericContainer<?> container) {
        try {
            container.start();
            long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            while (container.isRunning() && System.nanoTime() - deadline < 0) {
                Thread.sleep(500);
            }
            return container.getLogs(OutputFrame.OutputType.STDOUT, OutputFrame.OutputType.STDERR);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
        catch (RuntimeException ex) {
            String output = (container.getContainerId() != null)
                    ? container.getLogs(OutputFrame.OutputType.STDOUT, OutputFrame.OutputType.STDERR) : "";
            return "(the container's start failed: " + ex + ")\n" + output;
        }
        finally {
            container.stop();
        }
    }

    /** Spring Boot's "APPLICATION FAILED TO START" block: description and action. */
    private static String failureAnalysis(String log) {
        int at = log.indexOf("Description:");
        if (at < 0) {
            at = log.indexOf("Application run failed");
        }
        return (at < 0) ? "(no failure analysis; the output's end:)\n" + log.substring(Math.max(0, log.length() - 3000))
                : log.substring(at, Math.min(log.length(), at + 3000)).strip();
    }

    private RpmaCClientContainer client() {
        return new RpmaCClientContainer().withRdma(this.rdma).withRunTimeout(CLIENT_TIMEOUT);
    }

    private double scraped(String query, String endpoint) throws IOException, InterruptedException {
        PrometheusApi.Series series = this.prometheusApi.query(query).get(endpoint);
        return (series != null) ? series.value() : -1;
    }

    private void awaitSeries(String query) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        while (this.prometheusApi.query(query).isEmpty()) {
            assertThat(System.nanoTime() - deadline).as("Prometheus has %s", query).isNegative();
            Thread.sleep(500);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static String seconds(long startNanos) {
        return String.format("%.1f s", (System.nanoTime() - startNanos) / 1e9);
    }

    private void record(String measurement) {
        String line = "[e2e containers] " + measurement;
        System.out.println(line);
        try {
            Files.writeString(this.environment.logDirectory().resolve("measurements.txt"), line + "\n",
                    StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        }
        catch (IOException ex) {
            System.out.println("(cannot append to measurements.txt: " + ex.getMessage() + ")");
        }
    }

    /**
     * Prints each result when it comes: the console launcher prints its tree at the end only, and a
     * VM that runs out of time ends before that.
     */
    static final class FailuresAsTheyHappen implements TestWatcher {

        @Override
        public void testSuccessful(ExtensionContext context) {
            System.out.println("[e2e containers] PASSED " + context.getDisplayName());
        }

        @Override
        public void testFailed(ExtensionContext context, Throwable cause) {
            System.out.println("[e2e containers] FAILED " + context.getDisplayName() + ": " + cause);
        }
    }
}
