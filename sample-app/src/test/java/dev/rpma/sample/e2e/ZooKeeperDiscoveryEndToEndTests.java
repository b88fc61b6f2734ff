package dev.rpma.sample.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaClientException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Discovery through a real registry over real RDMA: a ZooKeeper server (Curator's {@link TestingServer})
 * in this JVM, two instances of the sample app's jar registering in it under one service id (one
 * listening on {@code RPMA_TEST_SAME_IP}, 198.18.0.1, the other on {@code RPMA_TEST_SERVER_IP},
 * 198.18.3.2: two RDMA devices in the VM), each publishing its endpoints in its registration's metadata,
 * and one client in this JVM, a Spring context with the starter's client auto-configuration and Spring
 * Cloud's ZooKeeper discovery, configured with {@code rpma.client.servers.echo.service-id} alone. Its
 * pool spreads over both instances and so do its requests to the echo endpoint; one instance is stopped
 * (SIGTERM: its RDMA server stops gracefully, then it leaves ZooKeeper) and the client carries on with
 * the other: its pool moves there and every request from then on is answered by it.
 */
@Tag("rdma")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ZooKeeperDiscoveryEndToEndTests {

    /** The sample app's {@code spring.application.name}: the service id it registers under. */
    static final String SERVICE = "rpma-sample";

    static final String ECHO = "echo";

    static final int ECHO_PORT = 7210;

    /** Two connections per instance when the load balancer's round robin spreads them. */
    static final int POOL_SIZE = 4;

    static final int REQUESTS = 400;

    /** The emulator is slow to start a JVM and to connect; these bound it, they measure nothing. */
    static final Duration ALLOWANCE = Duration.ofMinutes(3);

    private E2eEnvironment environment;

    private TestingServer zookeeper;

    private SampleAppProcess sameIp;

    private SampleAppProcess veth;

    private ConfigurableApplicationContext clientContext;

    private RpmaClient client;

    private DiscoveryClient discovery;

    @BeforeAll
    void startZooKeeperBothInstancesAndTheClient() throws Exception {
        this.environment = E2eEnvironment.get();
        long start = System.nanoTime();
        this.zookeeper = new TestingServer(true);
        record("ZooKeeper started in " + millis(System.nanoTime() - start) + " at " + this.zookeeper.getConnectString());
        // in parallel: a JVM's start takes most of a minute in the emulator
        CompletableFuture<SampleAppProcess> first = CompletableFuture
            .supplyAsync(() -> startApp("discovery-sample-app-same-ip", E2eEnvironment.SAME_IP));
        CompletableFuture<SampleAppProcess> second = CompletableFuture
            .supplyAsync(() -> startApp("discovery-sample-app-veth", E2eEnvironment.SERVER_IP));
        // each kept when the other failed to start, so that stopEverything ends it
        this.sameIp = first.exceptionally((ex) -> null).join();
        this.veth = second.exceptionally((ex) -> null).join();
        first.join();
        second.join();
        record("both instances started in " + millis(System.nanoTime() - start));

        start = System.nanoTime();
        this.clientContext = new SpringApplicationBuilder(DiscoveringClient.class).web(WebApplicationType.NONE)
            .run("--spring.config.name=zookeeper-discovery-e2e-client", "--rpma.server.enabled=false",
                    "--spring.cloud.zookeeper.connect-string=" + this.zookeeper.getConnectString(),
                    "--spring.cloud.zookeeper.discovery.register=false",
                    "--rpma.client.servers.echo.service-id=" + SERVICE, "--rpma.client.servers.echo.endpoint=" + ECHO,
                    "--rpma.client.servers.echo.pool-size=" + POOL_SIZE,
                    "--rpma.client.servers.echo.connect-timeout=60s", "--rpma.client.servers.echo.request-timeout=60s",
                    "--rpma.client.servers.echo.backoff-max=1s");
        this.client = this.clientContext.getBean("echoRpmaClient", RpmaClient.class);
        this.discovery = this.clientContext.getBean(DiscoveryClient.class);
        record("client context started in " + millis(System.nanoTime() - start));
    }

    @AfterAll
    void stopEverything() throws Exception {
        if (this.clientContext != null) {
            this.clientContext.close();
        }
        for (SampleAppProcess app : new SampleAppProcess[] { this.sameIp, this.veth }) {
            if (app != null) {
                app.terminate();
                app.awaitExit(ALLOWANCE);
                app.close();
            }
        }
        if (this.zookeeper != null) {
            this.zookeeper.close();
        }
    }

    /**
     * Both instances are in ZooKeeper with their echo endpoint's address; the client's pool spreads over
     * them (sessions on each), and so do 400 requests made at once: each answered with its own text
     * upper-cased, each instance received a share, and together they received every one once.
     */
    @Test
    @Order(1)
    void theClientFindsBothInstancesInZooKeeperAndSpreadsItsConnectionsAndRequestsOverThem() throws Exception {
        assertThat(registeredEchoEndpoints()).as("the echo endpoints registered in ZooKeeper")
            .containsExactlyInAnyOrder(echoEndpoint(E2eEnvironment.SAME_IP), echoEndpoint(E2eEnvironment.SERVER_IP));
        long start = System.nanoTime();
        await(POOL_SIZE + " connections established", () -> established() == POOL_SIZE);
        long connected = System.nanoTime() - start;
        long sessionsSameIp = activeSessions(this.sameIp);
        long sessionsVeth = activeSessions(this.veth);
        assertThat(sessionsSameIp).as("sessions on the instance at 198.18.0.1").isPositive();
        assertThat(sessionsVeth).as("sessions on the instance at 198.18.3.2").isPositive();
        assertThat(sessionsSameIp + sessionsVeth).as("sessions on both").isEqualTo(POOL_SIZE);

        long receivedSameIp = received(this.sameIp);
        long receivedVeth = received(this.veth);
        List<CompletableFuture<byte[]>> replies = new ArrayList<>(REQUESTS);
        start = System.nanoTime();
        for (int i = 0; i < REQUESTS; i++) {
            replies.add(this.client.request("upper", utf8(request(i))));
        }
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
        long answered = System.nanoTime() - start;
        for (int i = 0; i < REQUESTS; i++) {
            assertThat(new String(replies.get(i).join(), StandardCharsets.UTF_8)).as("the reply to request " + i)
                .isEqualTo(request(i).toUpperCase(Locale.ROOT));
        }
        long shareSameIp = received(this.sameIp) - receivedSameIp;
        long shareVeth = received(this.veth) - receivedVeth;
        assertThat(shareSameIp).as("requests the instance at 198.18.0.1 received").isPositive();
        assertThat(shareVeth).as("requests the instance at 198.18.3.2 received").isPositive();
        assertThat(shareSameIp + shareVeth).as("requests both received").isEqualTo(REQUESTS);
        record("pool of " + POOL_SIZE + " established in " + millis(connected) + " (sessions " + sessionsSameIp
                + " on 198.18.0.1, " + sessionsVeth + " on 198.18.3.2); " + REQUESTS + " requests answered in "
                + millis(answered) + ", " + shareSameIp + " by 198.18.0.1 and " + shareVeth + " by 198.18.3.2");
    }

    /**
     * The instance on 198.18.3.2 stopped (SIGTERM) while the client keeps sending: requests caught by
     * the stop may fail (the client never sends one twice unless told), but within a bounded time the
     * whole pool is on 198.18.0.1, the stopped instance has left ZooKeeper, and every request from then
     * on is answered, by 198.18.0.1.
     */
    @Test
    @Order(2)
    void whenOneInstanceStopsTheClientCarriesOnWithTheOther() throws Exception {
        long stopped = System.nanoTime();
        this.veth.terminate();
        int sent = 0;
        int failed = 0;
        Set<String> failures = new TreeSet<>();
        long deadline = stopped + ALLOWANCE.toNanos();
        while (this.veth.isAlive() || activeSessions(this.sameIp) != POOL_SIZE || established() != POOL_SIZE) {
            if (System.nanoTime() - deadline > 0) {
                fail("Waited " + ALLOWANCE.toSeconds() + " s for the pool to move to 198.18.0.1: the stopped app "
                        + (this.veth.isAlive() ? "still runs" : "exited") + ", " + established() + " established, "
                        + activeSessions(this.sameIp) + " sessions on 198.18.0.1");
            }
            List<CompletableFuture<byte[]>> batch = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                batch.add(this.client.request("upper", utf8(request(sent + i))));
            }
            for (int i = 0; i < batch.size(); i++) {
                try {
                    assertThat(new String(batch.get(i).join(), StandardCharsets.UTF_8))
                        .isEqualTo(request(sent + i).toUpperCase(Locale.ROOT));
                }
                catch (CompletionException ex) {
                    assertThat(ex.getCause()).as("how request " + (sent + i) + " failed")
                        .isInstanceOf(RpmaClientException.class);
                    failed++;
                    failures.add(ex.getCause().getClass().getSimpleName());
                }
            }
            sent += batch.size();
            Thread.sleep(100);
        }
        long moved = System.nanoTime() - stopped;
        assertThat(this.veth.awaitExit(Duration.ZERO)).as("the stopped app's exit code (SIGTERM's)").isEqualTo(143);

        await("the stopped instance gone from ZooKeeper",
                () -> registeredEchoEndpoints().equals(List.of(echoEndpoint(E2eEnvironment.SAME_IP))));
        long deregistered = System.nanoTime() - stopped;

        long before = received(this.sameIp);
        List<CompletableFuture<byte[]>> replies = new ArrayList<>(REQUESTS);
        for (int i = 0; i < REQUESTS; i++) {
            replies.add(this.client.request("upper", utf8(request(i))));
        }
        CompletableFuture.allOf(replies.toArray(CompletableFuture[]::new)).get(ALLOWANCE.toSeconds(), TimeUnit.SECONDS);
        for (int i = 0; i < REQUESTS; i++) {
            assertThat(new String(replies.get(i).join(), StandardCharsets.UTF_8)).as("the reply to request " + i)
                .isEqualTo(request(i).toUpperCase(Locale.ROOT));
        }
        assertThat(received(this.sameIp) - before).as("requests 198.18.0.1 received").isEqualTo(REQUESTS);
        record("198.18.3.2 stopped: the pool was on 198.18.0.1 " + millis(moved) + " later (" + failed + " of " + sent
                + " requests sent meanwhile failed" + (failures.isEmpty() ? "" : ", kinds " + failures)
                + "), the instance out of ZooKeeper after " + millis(deregistered) + ", " + this.client.reconnects()
                + " connection attempts after the first; then " + REQUESTS + " requests all answered by 198.18.0.1");
    }

    private SampleAppProcess startApp(String name, String addressVariable) {
        try {
            Path region = Files.createTempDirectory("rpma-discovery-e2e-").resolve("persistent.region");
            return SampleAppProcess.start(this.environment, name, Duration.ofMinutes(8),
                    "--rpma.server.address=" + address(addressVariable), "--rpma.server.shutdown.grace-period=5s",
                    "--rpma.server.regions.persistent.path=" + region, "--spring.cloud.zookeeper.enabled=true",
                    "--spring.cloud.zookeeper.connect-string=" + this.zookeeper.getConnectString(),
                    // the HTTP side listens on loopback (server.address), where the test reads /actuator
                    "--spring.cloud.zookeeper.discovery.instance-host=127.0.0.1");
        }
        catch (Exception ex) {
            throw new IllegalStateException("Starting " + name + " failed", ex);
        }
    }

    /** The echo endpoints ({@code address:port}) of the instances ZooKeeper lists now, sorted. */
    private List<String> registeredEchoEndpoints() {
        return this.discovery.getInstances(SERVICE).stream()
            .map(ServiceInstance::getMetadata)
            .map((metadata) -> metadata.get("rpma-" + ECHO + "-address") + ":" + metadata.get("rpma-" + ECHO + "-port"))
            .sorted()
            .toList();
    }

    private static String echoEndpoint(String addressVariable) {
        return address(addressVariable) + ":" + ECHO_PORT;
    }

    private static String address(String variable) {
        return E2eEnvironment.address(variable);
    }

    private int established() {
        return this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED);
    }

    private static long received(SampleAppProcess app) throws Exception {
        return app.json("/actuator/rpma").path("endpoints").path(ECHO).path("messages").path("received").asLong();
    }

    private static long activeSessions(SampleAppProcess app) throws Exception {
        return app.json("/actuator/rpma").path("endpoints").path(ECHO).path("sessions").path("active").asLong();
    }

    private static String request(int i) {
        return "request " + i + " to whichever instance";
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void await(String what, Condition condition) throws Exception {
        long deadline = System.nanoTime() + ALLOWANCE.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() - deadline > 0) {
                fail("Waited " + ALLOWANCE.toSeconds() + " s for: " + what);
            }
            Thread.sleep(50);
        }
    }

    @FunctionalInterface
    private interface Condition {
        boolean holds() throws Exception;
    }

    private void record(String measurement) {
        this.environment.record("discovery", measurement);
    }

    private static String millis(long nanos) {
        return (nanos / 1_000_000) + " ms";
    }

    /**
     * The client's application: auto-configuration alone (the starter's client, Spring Cloud's ZooKeeper
     * discovery and LoadBalancer), without the sample app's beans or its {@code application.yml}.
     */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class DiscoveringClient {
    }
}
