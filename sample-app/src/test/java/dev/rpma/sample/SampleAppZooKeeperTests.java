package dev.rpma.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaServerUnreachableException;
import dev.rpma.spring.boot.test.AutoConfigureRpmaLoopback;
import dev.rpma.spring.boot.test.RpmaLoopback;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.entry;
import static org.awaitility.Awaitility.await;

/**
 * The sample app registered in a real ZooKeeper (Curator's {@link TestingServer}, in this JVM), on the
 * in-JVM loopback of librpma: its registration carries every RDMA endpoint's address and port, and a
 * client configured with the service id alone finds the echo endpoint through ZooKeeper and Spring Cloud
 * LoadBalancer and gets its replies. The soft-RoCE counterpart, with two instances and one stopped, is
 * {@code dev.rpma.sample.e2e.ZooKeeperDiscoveryEndToEndTests}.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = { "rpma.server.address=" + SampleAppZooKeeperTests.ADDRESS, "rpma.server.shutdown.grace-period=0",
                "spring.cloud.zookeeper.enabled=true",
                "spring.cloud.zookeeper.discovery.instance-host=127.0.0.1",
                // the client's pool starts with the context, before the app has registered: the balancer's
                // instance cache would keep that empty list for its whole time to live (35 s)
                "spring.cloud.loadbalancer.cache.enabled=false",
                "rpma.client.servers.echo.service-id=rpma-sample", "rpma.client.servers.echo.endpoint=echo" })
@AutoConfigureRpmaLoopback
class SampleAppZooKeeperTests {

    /** The soft-RoCE VM's address: on the loopback any address works. */
    static final String ADDRESS = "198.18.0.1";

    private static final TestingServer zookeeper = startZooKeeper();

    @DynamicPropertySource
    static void zooKeeperAndARegionFile(DynamicPropertyRegistry registry) throws IOException {
        registry.add("spring.cloud.zookeeper.connect-string", zookeeper::getConnectString);
        Path directory = Files.createTempDirectory("sample-app-zookeeper");
        directory.toFile().deleteOnExit();
        Path region = directory.resolve("persistent.region");
        region.toFile().deleteOnExit();
        registry.add("rpma.server.regions.persistent.path", region::toString);
    }

    @Autowired
    DiscoveryClient discovery;

    @Autowired
    @Qualifier("echo")
    RpmaClient echo;

    @Autowired
    RpmaLoopback loopback;

    @Test
    void theRegistrationPublishesEveryEndpointAndAClientOfTheServiceGetsTheEchoEndpointsReplies() {
        List<ServiceInstance> instances = this.discovery.getInstances("rpma-sample");
        assertThat(instances).singleElement()
            .satisfies((instance) -> assertThat(instance.getMetadata()).contains(
                    entry("rpma-default-address", ADDRESS), entry("rpma-default-port", "7204"),
                    entry("rpma-echo-address", ADDRESS), entry("rpma-echo-port", "7210"),
                    entry("rpma-pingpong-port", "7206")));

        // its first connection attempts may have come before the registration; the next after its back-off
        // finds the instance, and until one is made a request fails at once with the last attempt's cause
        await().atMost(Duration.ofSeconds(30))
            .ignoreException(RpmaServerUnreachableException.class)
            .untilAsserted(() -> assertThat(new String(this.echo.requestBlocking("upper",
                    "found in zookeeper".getBytes(StandardCharsets.UTF_8), Duration.ofSeconds(10)),
                    StandardCharsets.UTF_8)).isEqualTo("FOUND IN ZOOKEEPER"));
        this.loopback.assertNoViolations();
    }

    /**
     * ZooKeeper stops after the app, when the JVM exits: the app leaves ZooKeeper as it stops, and with
     * the server gone first its Curator client would retry the deregistration for longer than the test.
     */
    private static TestingServer startZooKeeper() {
        try {
            TestingServer server = new TestingServer(true);
            SpringApplication.getShutdownHandlers().add(() -> {
                try {
                    server.close();
                }
                catch (IOException ex) {
                    throw new UncheckedIOException(ex);
                }
            });
            return server;
        }
        catch (Exception ex) {
            throw new IllegalStateException("Cannot start ZooKeeper's testing server", ex);
        }
    }
}
