package dev.rpma.spring.boot.autoconfigure.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.server.RpmaWireMode;

/**
 * {@link RpmaClientAutoConfiguration} over the scripted librpma fake: a client bean per configured
 * server, named and qualified, its properties bound, its meters, the builder for servers known at run
 * time, and back-off without the client on the class path. Every native object is freed at the end.
 */
class RpmaClientAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

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

    static class UsesQualifiers {

        final RpmaClient orders;

        final RpmaClient catalog;

        UsesQualifiers(@Qualifier("orders") RpmaClient orders, @Qualifier("catalog") RpmaClient catalog) {
            this.orders = orders;
            this.catalog = catalog;
        }
    }
}
