package dev.rpma.sample.e2e;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
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

import dev.rpma.sampleclient.protocol.ExampleProtocols;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app's network link and RDMA device taken away while it serves, then given back. Its hello
 * endpoint listens on the same-IP address (198.18.0.1, {@code rxe0} on the dummy {@code rxenet0}), the
 * others on the veth topology's server address (198.18.3.2, {@code rxeB} on {@code vethB}).
 * <ul>
 * <li>{@code rxenet0} set down: the hello endpoint's health goes DOWN, naming the interface, while the
 * others stay UP; set up again, it is UP and serves.</li>
 * <li>{@code rxeB} deleted with {@code rdma link delete} while silent clients (on {@code rxeA}) hold
 * connections. The deletion must finish (the kernel waits until every process released what it had
 * on the device), the endpoints on it must go DOWN with the cause and their sessions be counted
 * lost; once the device is added again, the app must listen anew by itself, report UP, and serve the
 * C clients of librpma's examples, the read example's region included. Not the same-IP device: the
 * clients' own contexts on it would hold its removal too.</li>
 * </ul>
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class DeviceLossEndToEndTests {

    static final String DEVICE = "rxeB";

    static final String NETDEV = "vethB";

    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(120);

    /** How long the deletion may take: it returned within a second once the device was released. */
    static final Duration DELETION = Duration.ofSeconds(30);

    static final int HELD = 3;

    static final String LINK = "rxenet0";

    /** The endpoints on {@link #DEVICE}: all but the hello endpoint. */
    static final List<String> ON_DEVICE = List.of("read", "pingpong");

    private E2eEnvironment environment;

    private SampleAppProcess app;

    private String address;

    private String helloAddress;

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        this.address = E2eEnvironment.address(E2eEnvironment.SERVER_IP);
        this.helloAddress = E2eEnvironment.address(E2eEnvironment.SAME_IP);
        List<String> args = new java.util.ArrayList<>(List.of("--rpma.server.address=" + this.helloAddress,
                "--rpma.server.shutdown.grace-period=2s", "--rpma.server.device-recovery.max-interval=1s"));
        for (String endpoint : List.of("read", "pingpong", "write", "flush", "gpspm", "echo")) {
            args.add("--rpma.server.endpoints." + endpoint + ".address=" + this.address);
        }
        this.app = SampleAppProcess.start(this.environment, "sample-app-device-loss", Duration.ofMinutes(5),
                args.toArray(String[]::new));
    }

    @AfterAll
    void stopTheAppAndRestoreTheDevice() throws Exception {
        try {
            if (this.app != null) {
                this.app.close();
            }
        }
        finally {
            // the tests after this class need the link and the device whatever happened here
            run("ip", "link", "set", LINK, "up");
            if (!rdma("link", "show").contains(DEVICE + "/")) {
                rdma("link", "add", DEVICE, "type", "rxe", "netdev", NETDEV);
            }
        }
    }

    @Test
    @Order(1)
    void anEndpointWhoseLinkIsDownIsReportedDownNamingTheInterfaceAndServesOnceItIsUp() throws Exception {
        assertServed("before the link went down", "hello_client", this.helloAddress, ExampleProtocols.HELLO_PORT);
        run("ip", "link", "set", LINK, "down");
        try {
            JsonNode down = awaitHealth("DOWN");
            JsonNode hello = down.path("components").path("rpma").path("components").path("default");
            assertThat(hello.path("status").asString()).isEqualTo("DOWN");
            assertThat(hello.path("details").path("link").asString()).as("health of default")
                .contains("network interface " + LINK + " of " + this.helloAddress + " is down");
            for (String endpoint : ON_DEVICE) {
                assertThat(down.path("components").path("rpma").path("components").path(endpoint).path("status")
                    .asString()).as("health of " + endpoint + ", on another link").isEqualTo("UP");
            }
        }
        finally {
            run("ip", "link", "set", LINK, "up");
        }
        long up = System.nanoTime();
        awaitHealth("UP");
        long upMillis = (System.nanoTime() - up) / 1_000_000;
        assertServed("after the link came up", "hello_client", this.helloAddress, ExampleProtocols.HELLO_PORT);
        this.environment.record("device-loss", String.format("'ip link set %s down': the hello endpoint's health DOWN"
                + " naming the interface, the others UP; set up again, UP in %d ms and served", LINK, upMillis));
    }

    @Test
    @Order(2)
    void aRemovedDeviceIsReleasedReportedDownAndServedAgainOnceItIsBack() throws Exception {
        assertServed("before");
        CClient holder = CClient.start(this.environment, "conn_holder", "device-loss-holder", this.address,
                String.valueOf(ExampleProtocols.PING_PONG_PORT), "--count", String.valueOf(HELD), "--hold", "300",
                "--timeout", "60");
        awaitActive(HELD);

        long start = System.nanoTime();
        Process deletion = new ProcessBuilder("rdma", "link", "delete", DEVICE).redirectErrorStream(true).start();
        boolean finished = deletion.waitFor(DELETION.toSeconds(), TimeUnit.SECONDS);
        long deletionMillis = (System.nanoTime() - start) / 1_000_000;
        if (!finished) {
            deletion.destroyForcibly();
        }
        assertThat(finished).as("'rdma link delete %s' finished within %s (app log: %s)", DEVICE, DELETION,
                this.app.logTail(40)).isTrue();
        assertThat(deletion.exitValue()).as(new String(deletion.getInputStream().readAllBytes(), StandardCharsets.UTF_8))
            .isZero();

        JsonNode down = awaitHealth("DOWN");
        assertThat(down.path("components").path("rpma").path("components").path("default").path("status").asString())
            .as("the hello endpoint, on another device").isEqualTo("UP");
        for (String endpoint : ON_DEVICE) {
            JsonNode health = down.path("components").path("rpma").path("components").path(endpoint);
            assertThat(health.path("status").asString()).as("health of " + endpoint).isEqualTo("DOWN");
            assertThat(health.path("details").path("error").asString()).as("health of " + endpoint)
                .contains("RDMA device of " + this.address + " is gone");
        }
        CClient.Result held = holder.terminate(Duration.ofSeconds(30));
        assertThat(held.output()).as("the holder's connections ended by the server or lost").containsPattern(
                "(CLOSED|LOST) 0");
        assertThat(this.app.isAlive()).isTrue();

        rdma("link", "add", DEVICE, "type", "rxe", "netdev", NETDEV);
        long added = System.nanoTime();
        awaitHealth("UP");
        long recoveryMillis = (System.nanoTime() - added) / 1_000_000;
        assertServed("after");

        Prometheus metrics = this.app.prometheus();
        assertThat(metrics.value("rpma_device_events_total", "endpoint", "default", "event", "lost"))
            .as("the hello endpoint's device losses").isZero();
        for (String endpoint : ON_DEVICE) {
            assertThat(metrics.value("rpma_device_events_total", "endpoint", endpoint, "event", "lost"))
                .as(endpoint + " device losses").isEqualTo(1.0);
            assertThat(metrics.value("rpma_device_events_total", "endpoint", endpoint, "event", "recovered"))
                .as(endpoint + " recoveries").isEqualTo(1.0);
        }
        assertThat(metrics.sum("rpma_sessions_ended_sessions_total", "reason", "lost")).as("sessions lost")
            .isGreaterThanOrEqualTo(HELD);
        this.environment.record("device-loss", String.format("'rdma link delete %s' with %d connections held: finished in"
                + " %d ms; health DOWN with the cause; after 'rdma link add' the app listened again and reported UP in %d"
                + " ms, and served hello, read and ping-pong clients", DEVICE, HELD, deletionMillis, recoveryMillis));
    }

    private void assertServed(String when) throws Exception {
        assertServed(when + " the device loss", "hello_client", this.helloAddress, ExampleProtocols.HELLO_PORT);
        assertServed(when + " the device loss", "read_client", this.address, ExampleProtocols.READ_PORT);
        assertServed(when + " the device loss", "pingpong_client", this.address, ExampleProtocols.PING_PONG_PORT,
                "1000", "5");
    }

    private void assertServed(String when, String client, String address, int port, String... more) throws Exception {
        List<String> args = new java.util.ArrayList<>(List.of(address, String.valueOf(port)));
        args.addAll(List.of(more));
        args.addAll(List.of("--timeout", "60"));
        CClient.Result result = CClient.run(this.environment, client,
                client + "-" + when.replace(' ', '-') + "-device-loss", CLIENT_TIMEOUT, args.toArray(String[]::new));
        assertThat(result.exitCode()).as(when + ": " + result).isZero();
    }

    private void awaitActive(int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int active = -1;
        while (System.nanoTime() < deadline) {
            active = this.app.json("/actuator/rpma").path("endpoints").path("pingpong").path("sessions")
                .path("active").asInt(-1);
            if (active == count) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("pingpong has " + active + " active sessions, not " + count);
    }

    private JsonNode awaitHealth(String status) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        JsonNode health = null;
        while (System.nanoTime() < deadline) {
            health = this.app.json("/actuator/health");
            if (status.equals(health.path("status").asString())) {
                return health;
            }
            Thread.sleep(250);
        }
        throw new AssertionError("health is not " + status + ": " + health + "\n" + this.app.logTail(40));
    }

    private static String rdma(String... args) {
        List<String> command = new java.util.ArrayList<>(List.of("rdma"));
        command.addAll(List.of(args));
        return run(command.toArray(String[]::new));
    }

    /** Bounded: a device removal that waits for a process also holds the next rdma command. */
    private static String run(String... args) {
        List<String> command = new java.util.ArrayList<>(List.of("timeout", "30"));
        command.addAll(List.of(args));
        return RdmaResources.run(command.toArray(String[]::new));
    }
}
