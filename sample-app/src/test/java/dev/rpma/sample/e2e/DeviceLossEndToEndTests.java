package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;

import dev.rpma.sampleclient.protocol.ExampleProtocols;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app's RDMA device removed while it serves, then added again: the veth topology's server
 * device {@code rxeB} deleted with {@code rdma link delete} while silent clients (on {@code rxeA}) hold
 * connections. Not the same-IP device: the clients' own contexts on it would hold its removal too. The deletion must finish (the kernel waits until every process released what it had on
 * the device), health must go DOWN with the cause and the sessions be counted lost; once the device is
 * added again, the app must listen anew by itself, report UP, and serve the C clients of librpma's
 * examples, the read example's region included.
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class DeviceLossEndToEndTests {

    static final String DEVICE = "rxeB";

    static final String NETDEV = "vethB";

    static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(120);

    /** How long the deletion may take: it returned within a second once the device was released. */
    static final Duration DELETION = Duration.ofSeconds(30);

    static final int HELD = 3;

    private E2eEnvironment environment;

    private SampleAppProcess app;

    private String address;

    @BeforeAll
    void startTheApp() throws Exception {
        this.environment = E2eEnvironment.get();
        this.address = E2eEnvironment.address(E2eEnvironment.SERVER_IP);
        this.app = SampleAppProcess.start(this.environment, "sample-app-device-loss", Duration.ofMinutes(5),
                "--rpma.server.address=" + this.address, "--rpma.server.shutdown.grace-period=2s",
                "--rpma.server.device-recovery.max-interval=1s");
    }

    @AfterAll
    void stopTheAppAndRestoreTheDevice() throws Exception {
        try {
            if (this.app != null) {
                this.app.close();
            }
        }
        finally {
            // the tests after this class need the device whatever happened here
            if (!rdma("link", "show").contains(DEVICE + "/")) {
                rdma("link", "add", DEVICE, "type", "rxe", "netdev", NETDEV);
            }
        }
    }

    @Test
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
        for (String endpoint : Expected.ENDPOINTS) {
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
        for (String endpoint : Expected.ENDPOINTS) {
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
        List<String[]> clients = List.of(
                new String[] { "hello_client", String.valueOf(ExampleProtocols.HELLO_PORT) },
                new String[] { "read_client", String.valueOf(ExampleProtocols.READ_PORT) },
                new String[] { "pingpong_client", String.valueOf(ExampleProtocols.PING_PONG_PORT), "1000", "5" });
        for (String[] client : clients) {
            String[] args = new String[client.length + 2];
            args[0] = this.address;
            System.arraycopy(client, 1, args, 1, client.length - 1);
            args[client.length] = "--timeout";
            args[client.length + 1] = "60";
            CClient.Result result = CClient.run(this.environment, client[0], client[0] + "-" + when + "-device-loss",
                    CLIENT_TIMEOUT, args);
            assertThat(result.exitCode()).as(when + " the device loss: " + result).isZero();
        }
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

    private static String rdma(String... args) throws IOException, InterruptedException {
        List<String> command = new java.util.ArrayList<>(List.of("timeout", "30", "rdma"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (process.waitFor() != 0) {
            throw new IllegalStateException(command + " failed: " + output);
        }
        return output;
    }
}
