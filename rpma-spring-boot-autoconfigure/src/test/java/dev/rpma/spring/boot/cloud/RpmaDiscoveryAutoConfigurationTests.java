package dev.rpma.spring.boot.cloud;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.discovery.event.InstancePreRegisteredEvent;
import org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration;
import org.springframework.cloud.client.serviceregistry.AbstractAutoServiceRegistration;
import org.springframework.cloud.client.serviceregistry.AutoServiceRegistrationProperties;
import org.springframework.cloud.client.serviceregistry.Registration;
import org.springframework.cloud.client.serviceregistry.ServiceRegistry;
import org.springframework.cloud.commons.util.InetUtils;
import org.springframework.cloud.commons.util.InetUtilsProperties;
import org.springframework.cloud.commons.util.UtilAutoConfiguration;
import org.springframework.cloud.loadbalancer.config.LoadBalancerAutoConfiguration;
import org.springframework.cloud.zookeeper.discovery.ZookeeperDiscoveryProperties;
import org.springframework.cloud.zookeeper.discovery.ZookeeperInstance;
import org.springframework.cloud.zookeeper.serviceregistry.ServiceInstanceRegistration;
import org.springframework.context.ApplicationContext;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientConnectionState;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.autoconfigure.InvalidRpmaPropertyException;
import dev.rpma.spring.boot.autoconfigure.client.RpmaClientAutoConfiguration;
import dev.rpma.spring.boot.autoconfigure.client.RpmaServiceDiscovery;

/**
 * {@link RpmaDiscoveryAutoConfiguration} over the scripted fake and Spring Cloud's simple discovery: a
 * client configured with a service id connects to the instances that publish its endpoint, spread by
 * Spring Cloud LoadBalancer or in turn without it; a service id without Spring Cloud, or with an
 * address, or neither, fails the start-up and says which property; a server's endpoints are in its
 * registration's metadata when the registry is called.
 */
class RpmaDiscoveryAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner clients = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RpmaClientAutoConfiguration.class, RpmaDiscoveryAutoConfiguration.class,
                UtilAutoConfiguration.class, SimpleDiscoveryClientAutoConfiguration.class,
                CompositeDiscoveryClientAutoConfiguration.class))
        .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
        .withPropertyValues(instance(0, "198.18.0.1", "7204"))
        .withPropertyValues(instance(1, "198.18.3.2", "7204"))
        .withPropertyValues("spring.cloud.discovery.client.simple.instances.orders[2].uri=http://198.18.9.9:8080",
                "rpma.client.servers.orders.service-id=orders", "rpma.client.servers.orders.pool-size=4",
                "rpma.client.servers.orders.mode=raw");

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    /** Instance {@code index} of service {@code orders}, publishing endpoint {@code default}. */
    private static String[] instance(int index, String address, String port) {
        String prefix = "spring.cloud.discovery.client.simple.instances.orders[" + index + "].";
        return new String[] { prefix + "uri=http://" + address + ":8080",
                prefix + "metadata." + RpmaServiceMetadata.addressKey("default") + "=" + address,
                prefix + "metadata." + RpmaServiceMetadata.portKey("default") + "=" + port };
    }

    @Test
    void withLoadBalancerTheConnectionsSpreadOverTheInstancesThatPublishTheEndpoint() {
        this.clients.withConfiguration(AutoConfigurations.of(LoadBalancerAutoConfiguration.class)).run((context) -> {
            assertThat(context).hasNotFailed().hasSingleBean(RpmaServiceDiscovery.class);
            RpmaClient orders = context.getBean("ordersRpmaClient", RpmaClient.class);
            assertThat(orders.server()).isEqualTo("service 'orders' (endpoint 'default', load-balanced)");
            assertSpreadOverBothInstances(orders);
        });
    }

    @Test
    void withoutLoadBalancerTheConnectionsTakeTheDiscoveryClientsInstancesInTurn() {
        this.clients.withClassLoader(new FilteredClassLoader("org.springframework.cloud.loadbalancer", "reactor."))
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(RpmaServiceDiscovery.class);
                RpmaClient orders = context.getBean("ordersRpmaClient", RpmaClient.class);
                assertThat(orders.server()).isEqualTo("service 'orders' (endpoint 'default')");
                assertSpreadOverBothInstances(orders);
            });
    }

    @Test
    void aNamedEndpointIsFoundUnderItsOwnKeys() {
        this.clients.withPropertyValues("rpma.client.servers.orders.endpoint=admin", "rpma.client.servers.orders.pool-size=1",
                    "spring.cloud.discovery.client.simple.instances.orders[1].metadata.rpma-admin-address=198.18.3.2",
                    "spring.cloud.discovery.client.simple.instances.orders[1].metadata.rpma-admin-port=7300")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 1)).isTrue();
                assertThat(this.fake.lastConnection().request().address()).isEqualTo("198.18.3.2");
                assertThat(this.fake.lastConnection().request().port()).isEqualTo("7300");
            });
    }

    @Test
    void aServiceIdWithoutSpringCloudFailsTheStartupAndSaysWhatIsMissing() {
        this.clients.withClassLoader(new FilteredClassLoader(DiscoveryClient.class)).run((context) -> {
            InvalidRpmaPropertyException failure = invalidProperty(context);
            assertThat(failure.property()).isEqualTo("rpma.client.servers.orders.service-id");
            assertThat(failure.reason()).contains("Spring Cloud Commons is not on the class path");
            assertThat(this.fake.connections()).isEmpty();
        });
    }

    @Test
    void withoutSpringCloudAClientWithAnAddressIsMadeAsBefore() {
        new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RpmaClientAutoConfiguration.class, RpmaDiscoveryAutoConfiguration.class))
            .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
            .withClassLoader(new FilteredClassLoader(DiscoveryClient.class))
            .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1", "rpma.client.servers.orders.mode=raw")
            .run((context) -> {
                assertThat(context).hasNotFailed().doesNotHaveBean(RpmaServiceDiscovery.class);
                assertThat(context.getBean("ordersRpmaClient", RpmaClient.class).server()).isEqualTo("198.18.0.1:7204");
                assertThat(this.fake.await(WAIT, () -> this.fake.connections().size() == 1)).isTrue();
            });
    }

    @Test
    void anAddressTogetherWithAServiceIdFailsTheStartup() {
        this.clients.withPropertyValues("rpma.client.servers.orders.address=198.18.0.1").run((context) -> {
            InvalidRpmaPropertyException failure = invalidProperty(context);
            assertThat(failure.property()).isEqualTo("rpma.client.servers.orders.service-id");
            assertThat(failure.reason()).contains("together with rpma.client.servers.orders.address");
        });
    }

    @Test
    void neitherAddressNorServiceIdFailsTheStartup() {
        this.clients.withPropertyValues("rpma.client.servers.orders.service-id=").run((context) -> {
            InvalidRpmaPropertyException failure = invalidProperty(context);
            assertThat(failure.property()).isEqualTo("rpma.client.servers.orders.address");
            assertThat(failure.reason()).contains("nor is rpma.client.servers.orders.service-id");
        });
    }

    @Test
    void theServersEndpointsAreInTheRegistrationsMetadataWhenTheRegistryIsCalled() {
        FakeRpmaServer.runner(this.fake)
            .withConfiguration(AutoConfigurations.of(RpmaDiscoveryAutoConfiguration.class))
            .withPropertyValues("rpma.server.endpoints.admin.port=7300")
            .withBean(Accepting.class)
            .withBean(RecordingRegistry.class)
            .withBean(TestAutoRegistration.class)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                context.getBean(TestAutoRegistration.class).start();
                assertThat(context.getBean(RecordingRegistry.class).registered).singleElement()
                    .isEqualTo(Map.of("zone", "a", "rpma-default-address", FakeRpmaServer.ADDRESS,
                            "rpma-default-port", Integer.toString(FakeRpmaServer.PORT), "rpma-admin-address",
                            FakeRpmaServer.ADDRESS, "rpma-admin-port", "7300"));
            });
    }

    /**
     * Spring Cloud Zookeeper's registration builds the instance that holds its metadata only when it
     * registers, with its port, from the discovery properties' metadata (as its auto-configuration makes
     * it): the endpoints are in the instance it registers all the same.
     */
    @Test
    void withZooKeeperTheEndpointsAreInTheInstanceItRegisters() {
        FakeRpmaServer.runner(this.fake)
            .withConfiguration(AutoConfigurations.of(RpmaDiscoveryAutoConfiguration.class))
            .withPropertyValues("rpma.server.endpoints.admin.port=7300")
            .withBean(Accepting.class)
            .withBean(ZookeeperDiscoveryProperties.class, () -> new ZookeeperDiscoveryProperties(new InetUtils(
                    new InetUtilsProperties())))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                ZookeeperDiscoveryProperties properties = context.getBean(ZookeeperDiscoveryProperties.class);
                properties.getMetadata().put("zone", "a");
                ServiceInstanceRegistration registration = ServiceInstanceRegistration.builder()
                    .address("127.0.0.1")
                    .name("orders")
                    .payload(new ZookeeperInstance("orders-1", "orders", properties.getMetadata()))
                    .build();
                context.publishEvent(new InstancePreRegisteredEvent(this, registration));
                // as ZookeeperAutoServiceRegistration does before it calls the registry
                assertThat(registration.getPort()).isZero();
                registration.setPort(8080);
                assertThat(registration.getServiceInstance().getPayload().getMetadata())
                    .isEqualTo(Map.of("zone", "a", "rpma-default-address", FakeRpmaServer.ADDRESS, "rpma-default-port",
                            Integer.toString(FakeRpmaServer.PORT), "rpma-admin-address", FakeRpmaServer.ADDRESS,
                            "rpma-admin-port", "7300"));
            });
    }

    @Test
    void withoutAnRdmaServerNothingIsPublished() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaDiscoveryAutoConfiguration.class))
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaRegistrationMetadata.class));
    }

    private void assertSpreadOverBothInstances(RpmaClient orders) {
        assertThat(this.fake.await(WAIT,
                () -> orders.connectionStates().get(RpmaClientConnectionState.ESTABLISHED) == 4)).isTrue();
        assertThat(this.fake.connections()).extracting((connection) -> connection.request().address())
            .containsOnly("198.18.0.1", "198.18.3.2")
            .filteredOn("198.18.0.1"::equals).hasSize(2);
        assertThat(this.fake.connections()).extracting(FakeConnection::request)
            .allSatisfy((request) -> assertThat(request.port()).isEqualTo("7204"));
    }

    private static InvalidRpmaPropertyException invalidProperty(AssertableApplicationContext context) {
        assertThat(context).hasFailed();
        Throwable failure = context.getStartupFailure();
        while (failure.getCause() != null && !(failure instanceof InvalidRpmaPropertyException)) {
            failure = failure.getCause();
        }
        assertThat(failure).isInstanceOf(InvalidRpmaPropertyException.class);
        return (InvalidRpmaPropertyException) failure;
    }

    /** Accepts the requests of both endpoints. */
    static class Accepting {

        @RpmaConnectionHandler
        public void accept(RpmaIncomingRequest request) {
            request.connect();
        }

        @RpmaConnectionHandler("admin")
        public void admin(RpmaIncomingRequest request) {
            request.connect();
        }
    }

    /** A registry that records the registration's metadata as it is when it registers. */
    static final class RecordingRegistry implements ServiceRegistry<TestRegistration> {

        final List<Map<String, String>> registered = new CopyOnWriteArrayList<>();

        @Override
        public void register(TestRegistration registration) {
            this.registered.add(Map.copyOf(registration.getMetadata()));
        }

        @Override
        public void deregister(TestRegistration registration) {
        }

        @Override
        public void close() {
        }

        @Override
        public void setStatus(TestRegistration registration, String status) {
        }

        @Override
        public <T> T getStatus(TestRegistration registration) {
            return null;
        }
    }

    /** A registration with metadata of its own, as registries configure it. */
    static final class TestRegistration implements Registration {

        private final Map<String, String> metadata = new LinkedHashMap<>(Map.of("zone", "a"));

        @Override
        public String getServiceId() {
            return "orders";
        }

        @Override
        public String getHost() {
            return "198.18.0.1";
        }

        @Override
        public int getPort() {
            return 8080;
        }

        @Override
        public boolean isSecure() {
            return false;
        }

        @Override
        public URI getUri() {
            return URI.create("http://198.18.0.1:8080");
        }

        @Override
        public Map<String, String> getMetadata() {
            return this.metadata;
        }
    }

    /** Spring Cloud's auto-registration, as the registries built on it (Consul, ZooKeeper) use it. */
    static final class TestAutoRegistration extends AbstractAutoServiceRegistration<TestRegistration> {

        private final TestRegistration registration = new TestRegistration();

        TestAutoRegistration(ApplicationContext context, RecordingRegistry registry) {
            super(context, registry, new AutoServiceRegistrationProperties());
        }

        @Override
        protected Object getConfiguration() {
            return this.registration;
        }

        @Override
        protected boolean isEnabled() {
            return true;
        }

        @Override
        protected TestRegistration getRegistration() {
            return this.registration;
        }

        @Override
        protected TestRegistration getManagementRegistration() {
            return this.registration;
        }
    }
}
