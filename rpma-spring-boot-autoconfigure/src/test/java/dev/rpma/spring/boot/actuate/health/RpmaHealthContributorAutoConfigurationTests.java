package dev.rpma.spring.boot.actuate.health;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.CompositeHealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthDescriptor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.actuate.endpoint.IndicatedHealthDescriptor;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.actuate.ScriptedHandler;
import dev.rpma.spring.boot.autoconfigure.RpmaServerLifecycle;
import dev.rpma.server.RpmaServedEndpoint;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaEndpointState;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.submit;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code rpma} health contributor through actuator's health endpoint: UP while accepting, DOWN
 * with the cause after a fatal error and while degraded, OUT_OF_SERVICE before the start and from
 * the stop on.
 */
class RpmaHealthContributorAutoConfigurationTests {

    private static final int REPLICA_PORT = 7205;

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
                HealthContributorRegistryAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                HealthEndpointAutoConfiguration.class, RpmaHealthContributorAutoConfiguration.class))
        .withBean(ScriptedHandler.class)
        .withPropertyValues("management.endpoint.health.show-details=always");

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void upWhileAcceptingWithAddressPortQueueAndConnections() {
        this.runner.run((context) -> {
            HealthEndpoint health = context.getBean(HealthEndpoint.class);
            RpmaServedEndpoint endpoint = context.getBean(RpmaServer.class).endpoint("default");
            assertThat(health.healthForPath("rpma")).isInstanceOfSatisfying(CompositeHealthDescriptor.class,
                    (rpma) -> {
                        assertThat(rpma.getStatus()).isEqualTo(Status.UP);
                        assertThat(rpma.getComponents()).containsOnlyKeys("default");
                    });
            assertThat(details(health, "default")).containsExactlyInAnyOrderEntriesOf(Map.of("address", ADDRESS, "port",
                    PORT, "state", "RUNNING", "queueSize", 0, "queueCapacity", 64, "activeSessions", 0));

            submit(this.fake.endpointAt(ADDRESS, PORT), endpoint.statistics(), ScriptedHandler.ACCEPT);
            Await.until("the connection counted", () -> endpoint.activeConnections() == 1);
            assertThat(details(health, "default")).containsEntry("activeSessions", 1);

            // paused, it still listens but rejects every request: out of service until resumed
            endpoint.pause();
            assertThat(status(health, "default")).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(details(health, "default")).containsEntry("state", "PAUSED");
            endpoint.resume();
            assertThat(status(health, "default")).isEqualTo(Status.UP);
        });
    }

    @Test
    void downWithTheCauseOnlyForTheEndpointThatFailed() {
        this.runner.withBean(ReplicaHandler.class)
            .withPropertyValues("rpma.server.endpoints.replica.port=" + REPLICA_PORT)
            .run((context) -> {
                HealthEndpoint health = context.getBean(HealthEndpoint.class);
                RpmaServedEndpoint replica = context.getBean(RpmaServer.class).endpoint("replica");
                assertThat(health.health().getStatus()).isEqualTo(Status.UP);

                // fatal for the endpoint: the provider reports a bad file descriptor
                this.fake.endpointAt(ADDRESS, REPLICA_PORT).queueProviderError(Errno.EBADF);
                Await.until("the replica endpoint to fail", () -> replica.state() == RpmaEndpointState.FAILED);

                assertThat(status(health, "replica")).isEqualTo(Status.DOWN);
                assertThat(details(health, "replica")).containsEntry("state", "FAILED")
                    .hasEntrySatisfying("error", (error) -> assertThat((String) error).contains(
                            "rpma_ep_next_conn_req() failed with RPMA_E_PROVIDER", "errno 9 (EBADF)"));
                assertThat(status(health, "default")).isEqualTo(Status.UP);
                assertThat(health.healthForPath("rpma").getStatus()).isEqualTo(Status.DOWN);
                assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);
            });
    }

    @Test
    void downWithTheCauseWhileDegradedAndUpOnceItTakesRequestsAgain() {
        this.runner.run((context) -> {
            HealthEndpoint health = context.getBean(HealthEndpoint.class);
            RpmaServedEndpoint endpoint = context.getBean(RpmaServer.class).endpoint("default");
            // the file descriptor limit is reached: no request's queues can be made until some are freed
            this.fake.endpointAt(ADDRESS, PORT).failEveryLook(RpmaError.PROVIDER.code(), Errno.EMFILE).queueNoEvent();
            Await.until("the endpoint degraded", () -> endpoint.state() == RpmaEndpointState.DEGRADED);

            assertThat(status(health, "default")).isEqualTo(Status.DOWN);
            assertThat(details(health, "default")).containsEntry("state", "DEGRADED")
                .hasEntrySatisfying("error", (error) -> assertThat((String) error).contains(
                        "rpma_ep_next_conn_req() failed with RPMA_E_PROVIDER", "EMFILE"));

            this.fake.endpointAt(ADDRESS, PORT).stopFailing();
            Await.until("the endpoint running", () -> endpoint.state() == RpmaEndpointState.RUNNING);
            assertThat(status(health, "default")).isEqualTo(Status.UP);
            assertThat(details(health, "default")).containsEntry("state", "RUNNING").doesNotContainKey("error");
        });
    }

    @Test
    void outOfServiceFromTheStopOnWhileConnectionsAreGivenTheGracePeriod() {
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=60s").run((context) -> {
            HealthEndpoint health = context.getBean(HealthEndpoint.class);
            RpmaServedEndpoint endpoint = context.getBean(RpmaServer.class).endpoint("default");
            submit(this.fake.endpointAt(ADDRESS, PORT), endpoint.statistics(), ScriptedHandler.ACCEPT);
            Await.until("the connection counted", () -> endpoint.activeConnections() == 1);
            assertThat(status(health, "default")).isEqualTo(Status.UP);

            CountDownLatch stopped = new CountDownLatch(1);
            context.getBean(RpmaServerLifecycle.class).stop(stopped::countDown);
            // the open connection holds the endpoint in its grace period
            assertThat(status(health, "default")).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(details(health, "default")).containsEntry("state", "STOPPING")
                .containsEntry("activeSessions", 1);
            assertThat(stopped.getCount()).isOne();

            this.fake.connections().get(0).queueEvent(dev.rpma.binding.RpmaConnectionEvent.CLOSED);
            Await.until("the stop to complete", () -> stopped.getCount() == 0);
            assertThat(status(health, "default")).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(details(health, "default")).containsEntry("state", "STOPPED")
                .containsEntry("activeSessions", 0);
        });
    }

    @Test
    void outOfServiceUntilStartedThenUp() {
        RpmaEndpointSettings settings = new RpmaEndpointSettings("default", ADDRESS, PORT);
        RpmaServer server = new RpmaServer(Rpma.using(this.fake), RpmaServerSettings.of(List.of(settings)),
                new Components());
        try {
            RpmaEndpointHealthIndicator indicator = new RpmaEndpointHealthIndicator(server, settings);
            Health created = indicator.health();
            assertThat(created.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(created.getDetails()).containsEntry("state", "CREATED").containsEntry("port", PORT);
            server.listen();
            assertThat(indicator.health().getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(indicator.health().getDetails()).containsEntry("state", "CREATED")
                .containsEntry("queueCapacity", RpmaEndpointSettings.Acceptor.DEFAULT_QUEUE_CAPACITY);
            server.start();
            assertThat(indicator.health().getStatus()).isEqualTo(Status.UP);
            server.close();
            assertThat(indicator.health().getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
            assertThat(indicator.health().getDetails()).containsEntry("state", "STOPPED");
        }
        finally {
            server.close();
        }
    }

    @Test
    void disabledWithManagementHealthRpmaEnabledFalse() {
        this.runner.withPropertyValues("management.health.rpma.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("rpmaHealthContributor"));
    }

    @Test
    void backsOffWithoutTheServer() {
        this.runner.withPropertyValues("rpma.server.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("rpmaHealthContributor"));
    }

    private static Status status(HealthEndpoint health, String endpoint) {
        return health.healthForPath("rpma", endpoint).getStatus();
    }

    private static Map<String, Object> details(HealthEndpoint health, String endpoint) {
        HealthDescriptor descriptor = health.healthForPath("rpma", endpoint);
        assertThat(descriptor).isInstanceOf(IndicatedHealthDescriptor.class);
        return ((IndicatedHealthDescriptor) descriptor).getDetails();
    }

    /** Handles endpoint "replica". */
    static class ReplicaHandler {

        @RpmaConnectionHandler("replica")
        void handle(RpmaIncomingRequest request) {
            request.connect();
        }
    }

    /** What a server built without Spring needs. */
    private static final class Components implements RpmaServer.Components {

        @Override
        public RpmaRequestHandler handler(String endpointName) {
            return RpmaIncomingRequest::connect;
        }

        @Override
        public @Nullable RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings,
                RpmaQueueSizes needed) {
            return null;
        }
    }
}
