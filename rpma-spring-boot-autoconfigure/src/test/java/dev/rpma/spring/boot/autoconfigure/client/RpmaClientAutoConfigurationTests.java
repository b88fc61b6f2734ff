package dev.rpma.spring.boot.autoconfigure.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.client.RpmaRequestOptions;
import dev.rpma.client.RpmaRequestTimeoutException;
import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaTokenAdmission;
import dev.rpma.spring.boot.autoconfigure.InvalidRpmaPropertyException;

/**
 * {@link RpmaClientAutoConfiguration} over the scripted librpma fake: a client bean per configured
 * server, named and qualified, its properties bound, its meters, the builder for servers known at run
 * time, and back-off without the client on the class path. Every native object is freed at the end.
 */
class RpmaClientAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final String SECRET = "the-client-secret-of-32-bytes-or-more";

    private static final String ADMISSION = "rpma.client.servers.orders.admission";

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RpmaClientAutoConfiguration.class))
        .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake));

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void withoutServersThereIsOnlyTheFactoryAndNoLibrpmaIsAskedFor() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaClientAutoConfiguration.class))
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(RpmaClients.class).doesNotHaveBean(RpmaClient.class);
                assertThat(context.getBean(RpmaClientProperties.class).getServers()).isEmpty();
            });
    }

    @Test
    void aClientBeanPerServerNamedAndQualifiedWithItsPropertiesBound() {
        this.runner.withPropertyValues("rpma.client.servers.orders.address=198.18.0.1",
                "rpma.client.servers.orders.port=7300", "rpma.client.servers.orders.pool-size=2",
                "rpma.client.servers.orders.receive-slots=4", "rpma.client.servers.catalog.address=198.18.0.2",
                "rpma.client.servers.catalog.mode=raw", "rpma.client.servers.catalog.max-message-size=8")
            .withUserConfiguration(UsesQualifiers.class)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBeanNamesForType(RpmaClient.class)).containsExactlyInAnyOrder("ordersRpmaClient",
                        "catalogRpmaClient");
                RpmaClient orders = context.getBean("ordersRpmaClient", RpmaClient.class);
                assertThat(orders.server()).isEqualTo("198.18.0.1:7300");
                assertThat(orders.connections()).hasSize(2);
                assertThat(context.getBean(UsesQualifiers.class).orders).isSameAs(orders);
                assertThat(context.getBean(UsesQualifiers.class).catalog.server()).isEqualTo("198.18.0.2:7204");
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 3)).isTrue();
                RpmaClientProperties.Server catalog = context.getBean(RpmaClientProperties.class).getServers()
                    .get("catalog");
                assertThat(catalog.getMode()).isEqualTo(RpmaWireMode.RAW);
                assertThat(catalog.getRequestTimeout()).as("a default on the field").isEqualTo(Duration.ofSeconds(10));
                assertThat(this.fake.lastConnection().request().config().rqSize()).isIn(4, 16);
            });
        assertThat(this.fake.connections()).allSatisfy((connection) -> assertThat(connection.isDeleted()).isTrue());
    }

    @Test
    void theClientsMetersAreRegisteredWhenThereIsARegistry() {
        this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(RpmaClientMetrics.class);
                RpmaClient client = context.getBean(RpmaClient.class);
                MeterRegistry registry = context.getBean(MeterRegistry.class);
                assertThat(this.fake.await(WAIT, () -> client.connectionStates()
                    .get(RpmaClientConnectionState.ESTABLISHED) == 1)).isTrue();
                assertThat(registry.get("rpma.client.connections").tags("client", "orders", "state", "established")
                    .gauge().value()).isEqualTo(1.0);
                assertThat(registry.get("rpma.client.in-flight").tags("client", "orders").gauge().value()).isZero();
            });
    }

    @Test
    void requestsAreTimedByClientServerRouteAndOutcomeWithAHistogram() {
        this.fake.establishOnConnect(false);
        this.runner.withBean(PrometheusMeterRegistry.class, () -> new PrometheusMeterRegistry(PrometheusConfig.DEFAULT))
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .run((context) -> {
                assertThat(context).doesNotHaveBean(RpmaClientObservations.class);
                timeOut(context.getBean(RpmaClient.class));
                PrometheusMeterRegistry registry = context.getBean(PrometheusMeterRegistry.class);
                Timer timer = registry.get("rpma.client.requests")
                    .tags("client", "orders", "server", "198.18.0.1:7204", "route", "orders.create", "outcome", "timeout")
                    .timer();
                assertThat(timer.count()).isEqualTo(1);
                assertThat(registry.find("rpma.client.requests").timers()).as("a series only for an outcome met").hasSize(1);
                assertThat(registry.scrape()).as("a percentile histogram").contains("rpma_client_requests_seconds_bucket{"
                        + "client=\"orders\",outcome=\"timeout\",route=\"orders.create\",server=\"198.18.0.1:7204\",le=");
            });
    }

    @Test
    void withAnObservationRegistryEachRequestIsObservedAndNotTimedTwice() {
        this.fake.establishOnConnect(false);
        TestObservationRegistry observations = TestObservationRegistry.create();
        this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(ObservationRegistry.class, () -> observations)
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .run((context) -> {
                assertThat(context).hasSingleBean(RpmaClientObservations.class).hasSingleBean(RpmaClientMetrics.class);
                timeOut(context.getBean(RpmaClient.class));
                TestObservationRegistryAssert.assertThat(observations).hasSingleObservationThat()
                    .hasNameEqualTo("rpma.client.requests")
                    .hasContextualNameEqualTo("rpma orders.create")
                    .hasLowCardinalityKeyValue("client", "orders")
                    .hasLowCardinalityKeyValue("server", "198.18.0.1:7204")
                    .hasLowCardinalityKeyValue("route", "orders.create")
                    .hasLowCardinalityKeyValue("outcome", "timeout")
                    .hasKeyValuesCount(4)
                    .assertThatError().isInstanceOf(RpmaRequestTimeoutException.class);
                assertThat(context.getBean(MeterRegistry.class).find("rpma.client.requests").timer())
                    .as("Micrometer's meter handler makes it from the observation").isNull();
            });
    }

    @Test
    void observationsOffByPropertyLeaveTheTimingToTheMetrics() {
        this.fake.establishOnConnect(false);
        TestObservationRegistry observations = TestObservationRegistry.create();
        this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(ObservationRegistry.class, () -> observations)
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1", "rpma.client.observation-enabled=false")
            .run((context) -> {
                assertThat(context).doesNotHaveBean(RpmaClientObservations.class);
                timeOut(context.getBean(RpmaClient.class));
                assertThat(observations).doesNotHaveAnyObservation();
                assertThat(context.getBean(MeterRegistry.class).get("rpma.client.requests").timer().count()).isEqualTo(1);
            });
    }

    @Test
    void theTimerMadeFromTheObservationsPublishesAHistogramToPrometheus() {
        this.fake.establishOnConnect(false);
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(MetricsAutoConfiguration.class,
                    PrometheusMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
                    ObservationAutoConfiguration.class, RpmaClientAutoConfiguration.class))
            .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .run((context) -> {
                assertThat(context).hasSingleBean(RpmaClientObservations.class);
                timeOut(context.getBean(RpmaClient.class));
                String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
                assertThat(scrape).contains("rpma_client_requests_seconds_bucket{client=\"orders\","
                        + "error=\"RpmaRequestTimeoutException\",outcome=\"timeout\",route=\"orders.create\","
                        + "server=\"198.18.0.1:7204\",le=");
            });
    }

    /** A request that times out: no connection is ever established. */
    private static void timeOut(RpmaClient client) {
        CompletableFuture<byte[]> request = client.request("orders.create", new byte[1],
                RpmaRequestOptions.DEFAULT.withTimeout(Duration.ofMillis(10)));
        assertThatThrownBy(() -> request.get(30, TimeUnit.SECONDS)).cause()
            .isInstanceOf(RpmaRequestTimeoutException.class);
    }

    @Test
    void theFactoryBuildsClientsForServersKnownAtRunTime() {
        this.runner.run((context) -> {
            try (RpmaClient client = context.getBean(RpmaClients.class).builder("adhoc").address("198.18.0.9").port(7400)
                .build()) {
                assertThat(client.name()).isEqualTo("adhoc");
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 1)).isTrue();
            }
        });
    }

    @Test
    void backsOffWithoutTheClientOnTheClassPath() {
        this.runner.withClassLoader(new FilteredClassLoader(RpmaClient.class))
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaClients.class));
    }

    @Test
    void aServerWithoutAnAddressFailsTheStartNamingTheProperty() {
        this.runner.withPropertyValues("rpma.client.servers.orders.port=7300").run((context) -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("rpma.client.servers.orders.address");
        });
    }

    @Test
    void anAdmissionKeyMakesEachConnectionPresentATokenOfItsOwnInFrontOfThePrivateData() {
        this.runner.withPropertyValues("rpma.client.servers.orders.address=198.18.0.1",
                "rpma.client.servers.orders.pool-size=2", "rpma.client.servers.orders.private-data=acme",
                ADMISSION + ".key-id=5", ADMISSION + ".secret=" + SECRET)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 2)).isTrue();
                // the server's check of the same key: it admits a token once
                RpmaTokenAdmission server = new RpmaTokenAdmission(List.of(RpmaAdmissionKey.of(5, SECRET)));
                for (FakeConnection connection : this.fake.connections()) {
                    RpmaAdmission.Decision decision = server.admit("default", connection.request().connectPrivateData());
                    assertThat(decision.isAdmitted()).as("the token of %s", connection).isTrue();
                    assertThat(decision.privateData()).asString(StandardCharsets.UTF_8).isEqualTo("acme");
                }
                assertThat(context.getBean(RpmaClientProperties.class).getServers().get("orders").getAdmission())
                    .hasToString("Admission[keyId=5, secret=******]");
            });
    }

    @Test
    void withoutAnAdmissionKeyThePrivateDataGoesAlone() {
        this.runner.withPropertyValues("rpma.client.servers.orders.address=198.18.0.1",
                "rpma.client.servers.orders.private-data=acme")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 1)).isTrue();
                assertThat(this.fake.lastConnection().request().connectPrivateData()).asString(StandardCharsets.UTF_8)
                    .isEqualTo("acme");
            });
    }

    @Test
    void anInvalidAdmissionKeyFailsTheStartNamingThePropertyAndNeverShowingTheSecret() {
        failsNaming(ADMISSION + ".key-id", SECRET, ADMISSION + ".key-id=256", ADMISSION + ".secret=" + SECRET);
        failsNaming(ADMISSION + ".key-id", SECRET, ADMISSION + ".key-id=-1", ADMISSION + ".secret=" + SECRET);
        failsNaming(ADMISSION + ".secret", "too-short-a-secret", ADMISSION + ".key-id=5",
                ADMISSION + ".secret=too-short-a-secret");
        failsNaming(ADMISSION + ".secret", SECRET, ADMISSION + ".key-id=5");
        failsNaming(ADMISSION + ".key-id", SECRET, ADMISSION + ".secret=" + SECRET);
        failsNaming("rpma.client.servers.orders.private-data", SECRET, ADMISSION + ".key-id=5",
                ADMISSION + ".secret=" + SECRET, "rpma.client.servers.orders.private-data=" + "x".repeat(26));
    }

    private void failsNaming(String property, String secret, String... properties) {
        this.runner.withPropertyValues("rpma.client.servers.orders.address=198.18.0.1")
            .withPropertyValues(properties)
            .run((context) -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                    .isInstanceOfSatisfying(InvalidRpmaPropertyException.class,
                            (ex) -> assertThat(ex.property()).isEqualTo(property))
                    .hasMessageContaining("'" + property + "'");
                for (Throwable cause = context.getStartupFailure(); cause != null; cause = cause.getCause()) {
                    assertThat(cause.getMessage()).as("a message of %s", cause.getClass()).doesNotContain(secret);
                }
            });
    }

    static class UsesQualifiers {

        final RpmaClient orders;

        final RpmaClient catalog;

        UsesQualifiers(@Qualifier("orders") RpmaClient orders, @Qualifier("catalog") RpmaClient catalog) {
            this.orders = orders;
            this.catalog = catalog;
        }
    }
}
