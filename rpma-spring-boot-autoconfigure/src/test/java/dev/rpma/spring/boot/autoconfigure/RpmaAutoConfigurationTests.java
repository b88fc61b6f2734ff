package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaPeer;
import dev.rpma.jna.testing.FakeEndpoint;
import dev.rpma.jna.testing.FakeLibRpma;
import dev.rpma.jna.testing.FakeLibRpma.ConnectionConfigValues;
import dev.rpma.jna.testing.FakeRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandlerBeanPostProcessor;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;
import dev.rpma.spring.server.RpmaEndpointServer;
import dev.rpma.spring.server.RpmaEndpointSettings;
import dev.rpma.spring.server.RpmaRequestHandler;
import dev.rpma.spring.server.RpmaServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RpmaAutoConfiguration} over the scripted librpma fake: conditions, back-off, user overrides,
 * customizers, properties binding for the default and named endpoints, and the beans it exposes.
 * After each test every native object must be freed and librpma's rules kept.
 */
class RpmaAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
        .withBean("fakeRpma", Rpma.class, () -> Rpma.using(this.fake))
        .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.shutdown.grace-period=0");

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        try {
            this.fake.assertNoViolations();
            this.fake.assertAllFreed();
        }
        finally {
            this.fake.close();
        }
    }

    @Test
    void autoConfiguresTheServerAndItsBeans() {
        this.runner.withBean(Handlers.Greeter.class).run((context) -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(RpmaProperties.class)
                .hasSingleBean(RpmaServer.class)
                .hasSingleBean(RpmaServerLifecycle.class)
                .hasSingleBean(RpmaHandlerRegistry.class)
                .hasSingleBean(RpmaConnectionHandlerBeanPostProcessor.class)
                .hasSingleBean(RpmaEndpoint.class)
                .hasSingleBean(RpmaPeer.class);
            assertThat(context).getBeanNames(Rpma.class).containsExactly("fakeRpma");
            RpmaEndpointServer endpoint = context.getBean(RpmaServer.class).endpoint("default");
            assertThat(context.getBean(RpmaEndpoint.class)).isSameAs(endpoint.endpoint());
            assertThat(context.getBean(RpmaPeer.class)).isSameAs(endpoint.endpoint().peer());
            assertThat(endpoint.endpoint().address()).isEqualTo("198.18.0.1");
            assertThat(endpoint.endpoint().port()).isEqualTo(7204);
            assertThat(this.fake.endpointAt("198.18.0.1", 7204).isListening()).isTrue();
        });
    }

    @Test
    void handlerDiscoveryCausesNoPostProcessorWarnings() {
        Logger logger = (Logger) LoggerFactory.getLogger("org.springframework.context.support");
        ListAppender<ILoggingEvent> log = new ListAppender<>();
        log.start();
        logger.addAppender(log);
        try {
            this.runner.withBean(Handlers.Greeter.class).run((context) -> assertThat(context).hasNotFailed());
        }
        finally {
            logger.detachAppender(log);
        }
        assertThat(log.list).filteredOn((event) -> event.getLevel().isGreaterOrEqual(Level.WARN))
            .extracting(ILoggingEvent::getFormattedMessage)
            .noneMatch((message) -> message.contains("rpma"));
    }

    @Test
    void backsOffWhenDisabled() {
        this.runner.withPropertyValues("rpma.server.enabled=false").run((context) -> {
            assertThat(context).hasNotFailed()
                .doesNotHaveBean(RpmaServer.class)
                .doesNotHaveBean(RpmaServerLifecycle.class)
                .doesNotHaveBean(RpmaProperties.class)
                .doesNotHaveBean(RpmaHandlerRegistry.class);
            assertThat(this.fake.totalCalls()).isZero();
        });
    }

    @Test
    void disabledServerNeedsNoAddress() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withPropertyValues("rpma.server.enabled=false")
            .run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(RpmaServer.class));
    }

    @Test
    void backsOffWithoutTheBinding() {
        new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withClassLoader(new FilteredClassLoader(Rpma.class))
            .withPropertyValues("rpma.server.address=198.18.0.1")
            .run((context) -> assertThat(context).hasNotFailed()
                .doesNotHaveBean(RpmaServer.class)
                .doesNotHaveBean(RpmaProperties.class)
                .doesNotHaveBean(RpmaConnectionHandlerBeanPostProcessor.class));
    }

    @Test
    void userServerReplacesTheAutoConfiguredOne() {
        this.runner.withUserConfiguration(CustomServerConfiguration.class).withBean(Handlers.Greeter.class)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context).getBeanNames(RpmaServer.class).containsExactly("customServer");
                RpmaServer custom = context.getBean(RpmaServer.class);
                assertThat(context.getBean(RpmaEndpoint.class)).isSameAs(custom.endpoint("default").endpoint());
                assertThat(custom.endpoint("default").settings().port()).isEqualTo(7999);
                // the auto-configured lifecycle starts the user's server
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7999).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(this.fake.endpoints()).hasSize(1);
            });
    }

    @Test
    void userLifecycleRegistryAndPostProcessorReplaceTheAutoConfiguredOnes() {
        this.runner.withUserConfiguration(CustomComponentsConfiguration.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).getBeanNames(RpmaServerLifecycle.class).containsExactly("customLifecycle");
            assertThat(context).getBeanNames(RpmaHandlerRegistry.class).containsExactly("customRegistry");
            assertThat(context).getBeanNames(RpmaConnectionHandlerBeanPostProcessor.class)
                .containsExactly("customPostProcessor");
            // the custom handler registry is the one that found the handler
            assertThat(context.getBean(RpmaHandlerRegistry.class).handlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.beanName()).isEqualTo("greeter"));
        });
    }

    @Test
    void userEndpointAndPeerBeansReplaceTheAutoConfiguredOnes() {
        this.runner.withBean(Handlers.Greeter.class).withUserConfiguration(CustomEndpointConfiguration.class)
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context).getBeanNames(RpmaEndpoint.class).containsExactly("customEndpoint");
                assertThat(context).getBeanNames(RpmaPeer.class).containsExactly("customPeer");
            });
    }

    @Test
    void connectionPropertiesThenCustomizersInOrderShapeEveryRequest() {
        this.runner.withBean(Handlers.Greeter.class)
            .withUserConfiguration(CustomizersConfiguration.class)
            .withPropertyValues("rpma.server.connection.cq-size=32", "rpma.server.connection.sq-size=20",
                    "rpma.server.connection.rq-size=30", "rpma.server.connection.rcq-size=5",
                    "rpma.server.connection.timeout=2500ms",
                    "rpma.server.connection.shared-completion-channel=true")
            .run((context) -> {
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                // cq-size 32 from the properties, 48 from the first customizer, 64 from the second
                assertThat(request.config()).isEqualTo(new ConnectionConfigValues(2500, 64, 5, 20, 30, true, 0));
                assertThat(context.getBean(CustomizersConfiguration.class).customized)
                    .containsExactly("first:default", "second:default");
            });
    }

    @Test
    void namedEndpointsInheritFromTheDefaultAndEachGetsItsBeans() {
        this.runner.withBean(Handlers.Greeter.class)
            .withBean(Handlers.NamedEndpoints.class)
            .withUserConfiguration(QualifiedInjectionConfiguration.class)
            .withPropertyValues("rpma.server.connection.cq-size=32", "rpma.server.acceptor.handler-threads=3",
                    "rpma.server.endpoints.replica.port=7205", "rpma.server.endpoints.replica.connection.rq-size=4",
                    "rpma.server.endpoints.admin.address=198.18.0.2", "rpma.server.endpoints.admin.port=7300",
                    "rpma.server.endpoints.admin.acceptor.queue-capacity=8")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                RpmaServer server = context.getBean(RpmaServer.class);
                assertThat(server.endpoints()).containsOnlyKeys("default", "replica", "admin");
                assertThat(server.endpoint("replica").settings()).isEqualTo(new RpmaEndpointSettings("replica",
                        "198.18.0.1", 7205, 64, 3, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO, 10));
                assertThat(server.endpoint("admin").settings()).isEqualTo(new RpmaEndpointSettings("admin",
                        "198.18.0.2", 7300, 8, 3, Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO, 10));

                FakeRequest toDefault = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                FakeRequest toReplica = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
                FakeRequest toAdmin = this.fake.endpointAt("198.18.0.2", 7300).queueRequest(new byte[0]);
                assertThat(toDefault.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(toReplica.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(toAdmin.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
                // connection values: own rq-size, inherited cq-size, librpma's defaults otherwise
                assertThat(toDefault.config()).isEqualTo(new ConnectionConfigValues(1000, 32, 0, 10, 10, false, 0));
                assertThat(toReplica.config()).isEqualTo(new ConnectionConfigValues(1000, 32, 0, 10, 4, false, 0));
                assertThat(toAdmin.config()).isEqualTo(new ConnectionConfigValues(1000, 32, 0, 10, 10, false, 0));
                assertThat(context.getBean(Handlers.Greeter.class).endpoints).containsExactly("default");
                assertThat(context.getBean(Handlers.NamedEndpoints.class).endpoints)
                    .containsExactlyInAnyOrder("replica", "admin");
                // one acceptor thread per endpoint, the endpoint's only caller of rpma_ep_next_conn_req
                assertThat(this.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactlyInAnyOrder(
                        "rpma-acceptor-default", "rpma-acceptor-replica", "rpma-acceptor-admin");
                // one peer per address
                assertThat(this.fake.liveHandles(FakeLibRpma.Kind.PEER)).hasSize(2);

                // unqualified: the default endpoint's; qualified by name: the named endpoint's
                assertThat(context.getBean(RpmaEndpoint.class)).isSameAs(server.endpoint("default").endpoint());
                assertThat(context.getBean(RpmaPeer.class)).isSameAs(server.endpoint("default").endpoint().peer());
                QualifiedInjectionConfiguration.Injected injected = context
                    .getBean(QualifiedInjectionConfiguration.Injected.class);
                assertThat(injected.replicaEndpoint()).isSameAs(server.endpoint("replica").endpoint());
                assertThat(injected.adminEndpoint()).isSameAs(server.endpoint("admin").endpoint());
                assertThat(injected.replicaPeer()).isSameAs(server.endpoint("default").endpoint().peer());
                assertThat(injected.adminPeer()).isSameAs(server.endpoint("admin").endpoint().peer())
                    .isNotSameAs(injected.replicaPeer());
                assertThat(injected.adminPeer().address()).isEqualTo("198.18.0.2");
                assertThat(context.getBean("rpmaEndpoint.replica")).isSameAs(injected.replicaEndpoint());
                assertThat(context.getBean("rpmaPeer.admin")).isSameAs(injected.adminPeer());
            });
        // the server, not the context, released them: on each acceptor thread
        assertThat(this.fake.endpoints()).extracting(FakeEndpoint::shutDownOnThread)
            .containsExactlyInAnyOrder("rpma-acceptor-default", "rpma-acceptor-replica", "rpma-acceptor-admin");
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomServerConfiguration {

        @Bean
        RpmaServer customServer(Rpma rpma, RpmaHandlerRegistry registry) {
            RpmaEndpointSettings settings = new RpmaEndpointSettings("default", "198.18.0.1", 7999, 4, 1,
                    Duration.ofSeconds(5), Duration.ofSeconds(1), Duration.ZERO, 10);
            return RpmaServer.listen(rpma, List.of(settings), new RpmaServer.Components() {

                @Override
                public RpmaRequestHandler handler(String endpointName) {
                    return registry.handlerFor(endpointName);
                }

                @Override
                public RpmaConnectionConfig requestConfig(Rpma library, RpmaEndpointSettings endpoint) {
                    return null;
                }
            });
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomComponentsConfiguration {

        @Bean
        static RpmaHandlerRegistry customRegistry() {
            return new RpmaHandlerRegistry();
        }

        @Bean
        static RpmaConnectionHandlerBeanPostProcessor customPostProcessor(RpmaHandlerRegistry customRegistry) {
            return new RpmaConnectionHandlerBeanPostProcessor(customRegistry);
        }

        @Bean
        RpmaServerLifecycle customLifecycle(RpmaServer server, RpmaHandlerRegistry registry,
                ApplicationEventPublisher publisher) {
            return new RpmaServerLifecycle(server, registry, publisher);
        }

        @Bean
        Handlers.Greeter greeter() {
            return new Handlers.Greeter();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomEndpointConfiguration {

        @Bean(destroyMethod = "")
        RpmaEndpoint customEndpoint(RpmaServer server) {
            return server.endpoint("default").endpoint();
        }

        @Bean(destroyMethod = "")
        RpmaPeer customPeer(RpmaServer server) {
            return server.endpoint("default").endpoint().peer();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomizersConfiguration {

        final List<String> customized = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Bean
        @Order(2)
        RpmaConnectionConfigCustomizer second() {
            return (endpoint, config) -> {
                this.customized.add("second:" + endpoint);
                assertThat(config.cqSize()).isEqualTo(48);
                config.cqSize(64);
            };
        }

        @Bean
        @Order(1)
        RpmaConnectionConfigCustomizer first() {
            return (endpoint, config) -> {
                this.customized.add("first:" + endpoint);
                assertThat(config.cqSize()).isEqualTo(32);
                config.cqSize(48);
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class QualifiedInjectionConfiguration {

        record Injected(RpmaEndpoint replicaEndpoint, RpmaEndpoint adminEndpoint, RpmaPeer replicaPeer,
                RpmaPeer adminPeer) {
        }

        @Bean
        Injected injected(@Qualifier("replica") RpmaEndpoint replicaEndpoint,
                @Qualifier("admin") RpmaEndpoint adminEndpoint, @Qualifier("replica") RpmaPeer replicaPeer,
                @Qualifier("admin") RpmaPeer adminPeer) {
            return new Injected(replicaEndpoint, adminEndpoint, replicaPeer, adminPeer);
        }
    }
}
