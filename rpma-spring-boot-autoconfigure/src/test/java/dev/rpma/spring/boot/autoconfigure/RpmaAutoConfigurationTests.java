package dev.rpma.spring.boot.autoconfigure;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeLibRpma.ConnectionConfigValues;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaRegions;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaSession;
import dev.rpma.server.RpmaSessionEnd;
import dev.rpma.server.RpmaSessionListener;
import dev.rpma.server.RpmaStringCodec;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.annotation.RpmaHandlerBeanPostProcessor;
import dev.rpma.spring.annotation.RpmaHandlerRegistry;
import dev.rpma.spring.annotation.RpmaMessageHandler;
import dev.rpma.spring.annotation.RpmaSessionEvent;

import dev.rpma.spring.boot.actuate.Await;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RpmaAutoConfiguration} over the scripted librpma fake: conditions, back-off, user overrides,
 * customizers, properties binding for the default and named endpoints, message handlers, session
 * events, regions, and the beans it exposes. After each test every native object must be freed and
 * librpma's rules kept.
 */
class RpmaAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final ApplicationContextRunner runner = FakeRpmaServer.runnerOnDefaultPort(this.fake)
        .withPropertyValues("rpma.server.event-loops.count=1");

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void autoConfiguresTheServerAndItsBeansAndListensOnceStarted() {
        this.runner.withBean(Handlers.Greeter.class).run((context) -> {
            assertThat(context).hasNotFailed()
                .hasSingleBean(RpmaProperties.class)
                .hasSingleBean(RpmaServer.class)
                .hasSingleBean(RpmaServerLifecycle.class)
                .hasSingleBean(RpmaHandlerRegistry.class)
                .hasSingleBean(RpmaHandlerBeanPostProcessor.class)
                .hasSingleBean(RpmaRegions.class)
                .hasSingleBean(RpmaStringCodec.class);
            assertThat(context).getBeanNames(Rpma.class).containsExactly("fakeRpma");
            RpmaServer server = context.getBean(RpmaServer.class);
            assertThat(server.isListening()).isTrue();
            assertThat(server.endpoint("default").settings().address()).isEqualTo("198.18.0.1");
            assertThat(server.endpoint("default").settings().port()).isEqualTo(7204);
            assertThat(server.eventLoops()).hasSize(1);
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
                .doesNotHaveBean(RpmaHandlerBeanPostProcessor.class));
    }

    @Test
    void userRegistryAndPostProcessorReplaceTheAutoConfiguredOnes() {
        this.runner.withUserConfiguration(CustomComponentsConfiguration.class).run((context) -> {
            assertThat(context).hasNotFailed();
            assertThat(context).getBeanNames(RpmaHandlerRegistry.class).containsExactly("customRegistry");
            assertThat(context).getBeanNames(RpmaHandlerBeanPostProcessor.class).containsExactly("customPostProcessor");
            // the custom handler registry is the one that found the handler
            assertThat(context.getBean(RpmaHandlerRegistry.class).connectionHandlers()).singleElement()
                .satisfies((handler) -> assertThat(handler.beanName()).isEqualTo("greeter"));
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
    void namedEndpointsInheritFromTheDefaultEndpoint() {
        this.runner.withBean(Handlers.Greeter.class)
            .withBean(Handlers.NamedEndpoints.class)
            .withPropertyValues("rpma.server.connection.cq-size=32", "rpma.server.acceptor.handler-threads=3",
                    "rpma.server.limits.max-connections=50", "rpma.server.messages.max-message-size=256",
                    "rpma.server.endpoints.replica.port=7205", "rpma.server.endpoints.replica.connection.rq-size=4",
                    "rpma.server.endpoints.replica.limits.idle-timeout=30s",
                    "rpma.server.endpoints.admin.address=198.18.0.2", "rpma.server.endpoints.admin.port=7300",
                    "rpma.server.endpoints.admin.acceptor.queue-capacity=8")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                RpmaServer server = context.getBean(RpmaServer.class);
                assertThat(server.endpoints()).containsOnlyKeys("default", "replica", "admin");
                RpmaEndpointSettings replica = server.endpoint("replica").settings();
                assertThat(replica.address()).isEqualTo("198.18.0.1");
                assertThat(replica.acceptor().handlerThreads()).isEqualTo(3);
                assertThat(replica.acceptor().queueCapacity()).isEqualTo(64);
                assertThat(replica.limits()).isEqualTo(new RpmaEndpointSettings.Limits(50, Duration.ofSeconds(30)));
                assertThat(replica.messages().maxMessageSize()).isEqualTo(256);
                RpmaEndpointSettings admin = server.endpoint("admin").settings();
                assertThat(admin.acceptor().queueCapacity()).isEqualTo(8);
                assertThat(admin.limits().idleTimeout()).isZero();

                FakeRequest toDefault = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                FakeRequest toReplica = this.fake.endpointAt("198.18.0.1", 7205).queueRequest(new byte[0]);
                FakeRequest toAdmin = this.fake.endpointAt("198.18.0.2", 7300).queueRequest(new byte[0]);
                assertThat(toDefault.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(toReplica.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(toAdmin.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
                // without message handlers: own rq-size, inherited cq-size, librpma's defaults otherwise
                assertThat(toDefault.config()).isEqualTo(new ConnectionConfigValues(1000, 32, 0, 10, 10, false, 0));
                assertThat(toReplica.config()).isEqualTo(new ConnectionConfigValues(1000, 32, 0, 10, 4, false, 0));
                assertThat(context.getBean(Handlers.NamedEndpoints.class).endpoints)
                    .containsExactlyInAnyOrder("replica", "admin");
                assertThat(this.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactlyInAnyOrder(
                        "rpma-acceptor-default", "rpma-acceptor-replica", "rpma-acceptor-admin");
                assertThat(this.fake.liveHandles(FakeLibRpma.Kind.PEER)).as("one peer per address").hasSize(2);
            });
        assertThat(this.fake.endpoints()).extracting(FakeEndpoint::shutDownOnThread)
            .containsExactlyInAnyOrder("rpma-acceptor-default", "rpma-acceptor-replica", "rpma-acceptor-admin");
    }

    @Test
    void aRawMessageHandlerServesItsEndpointsSessionsAndQueuesAreSizedForTheSlots() {
        this.runner.withBean(Handlers.Greeter.class).withBean(PingPong.class).withBean(EveryEndpointListener.class)
            .withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.messages.receive-slots=4",
                    "rpma.server.messages.send-slots=2", "rpma.server.messages.max-message-size=8")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                assertThat(request.config()).as("queues for 4 receive and 2 send slots")
                    .isEqualTo(new ConnectionConfigValues(1000, 6, 0, 2, 4, false, 0));
                assertThat(request.receives()).hasSize(4);
                FakeConnection client = request.connection();
                PingPong pingPong = context.getBean(PingPong.class);
                Await.until("established", () -> pingPong.established.size() == 1);
                client.deliver(ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 41).array());
                assertThat(client.awaitSent(1, WAIT)).isTrue();
                assertThat(ByteBuffer.wrap(client.sent().get(0)).order(ByteOrder.LITTLE_ENDIAN).getLong()).isEqualTo(42);
                assertThat(pingPong.threads).containsOnly("rpma-loop-0");
                client.peerDisconnects();
                Await.until("the end heard", () -> pingPong.ended.size() == 1);
                assertThat(pingPong.ended.get(0).reason()).isEqualTo(RpmaSessionEnd.Reason.CLOSED);
                assertThat(context.getBean(EveryEndpointListener.class).heard).containsExactly("established", "closed");
            });
    }

    @Test
    void queueSizesTooSmallForTheSlotsFailTheStartNamingTheProperty() {
        this.runner.withBean(Handlers.Greeter.class).withBean(PingPong.class)
            .withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.connection.rq-size=2")
            .run((context) -> assertThat(context).getFailure().rootCause()
                .isInstanceOfSatisfying(InvalidRpmaPropertyException.class, (ex) -> {
                    assertThat(ex.property()).isEqualTo("rpma.server.connection.rq-size");
                    assertThat(ex.getMessage()).contains("at least 8");
                }));
    }

    @Test
    void aRegionFromThePropertiesIsExposedWithItsUsageAndFilledByTheApplication() {
        this.runner.withBean(RegionHandler.class)
            .withPropertyValues("rpma.server.regions.greeting.size=14B",
                    "rpma.server.regions.greeting.usage=read-src,write-dst")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                RpmaRegions regions = context.getBean(RpmaRegions.class);
                assertThat(regions.definition("greeting").usages())
                    .containsExactlyInAnyOrder(MemoryUsage.READ_SRC, MemoryUsage.WRITE_DST);
                regions.memory("greeting").put(0, "Hello client!\0".getBytes());
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                byte[] descriptor = RpmaCommonData.decode(request.connectPrivateData()).memoryRegionDescriptor();
                assertThat(ByteBuffer.wrap(descriptor).order(ByteOrder.LITTLE_ENDIAN).getLong(8)).isEqualTo(14);
                // READ_DST comes with WRITE_DST: a session may read its client's memory into the region
                assertThat(descriptor[20]).isEqualTo((byte) (MemoryUsage.READ_SRC.flag() | MemoryUsage.WRITE_DST.flag()
                        | MemoryUsage.READ_DST.flag()));
            });
    }

    @Test
    void aRegionBeanIsExposedToo() {
        this.runner.withBean(RegionHandler.class)
            .withBean("greetingRegion", RpmaRegionDefinition.class, () -> new RpmaRegionDefinition("greeting",
                    ByteBuffer.allocateDirect(32), EnumSet.of(MemoryUsage.READ_SRC), Set.of()))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(context.getBean(RpmaRegions.class).names()).containsExactly("greeting");
                FakeRequest request = this.fake.endpointAt("198.18.0.1", 7204).queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
            });
    }

    /** An endpoint with a peer of its own: a second rpma_peer_new, and the region registered again on it. */
    @Test
    void anEndpointWithAPeerOfItsOwnListensAndRegistersOnIt() {
        this.runner.withBean(RegionHandler.class).withBean(ReplicaRegionHandler.class)
            .withPropertyValues("rpma.server.regions.greeting.size=14B", "rpma.server.endpoints.replica.port=7205",
                    "rpma.server.endpoints.replica.peer=replica")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(this.fake.calls("rpma_peer_new")).isEqualTo(2);
                FakeEndpoint replica = this.fake.endpointAt("198.18.0.1", 7205);
                FakeEndpoint shared = this.fake.endpointAt("198.18.0.1", 7204);
                assertThat(replica.peer()).isNotEqualTo(shared.peer());
                FakeRequest request = replica.queueRequest(new byte[0]);
                assertThat(request.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                byte[] descriptor = RpmaCommonData.decode(request.connectPrivateData()).memoryRegionDescriptor();
                assertThat(this.fake.peerOfRegion(descriptor)).isEqualTo(replica.peer());
            });
        assertThat(this.fake.calls("rpma_peer_delete")).isEqualTo(2);
    }

    @Test
    void aPooledEndpointAndItsSettings() {
        this.runner.withBean(Handlers.Greeter.class).withBean(PingPong.class)
            .withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.messages.dispatch=pool",
                    "rpma.server.messages.dispatch-threads=2", "rpma.server.event-loops.busy-poll=0")
            .run((context) -> {
                assertThat(context).hasNotFailed();
                RpmaServer server = context.getBean(RpmaServer.class);
                assertThat(server.endpoint("default").settings().messages().dispatch())
                    .isEqualTo(RpmaMessageDispatch.POOL);
                assertThat(server.settings().busyPoll()).isZero();
                assertThat(server.endpoint("default").settings().messages().mode()).isEqualTo(RpmaWireMode.RAW);
            });
    }

    /** A raw ping-pong handler with session events, recording where it ran. */
    static class PingPong {

        final List<String> threads = new CopyOnWriteArrayList<>();

        final List<RpmaSession> established = new CopyOnWriteArrayList<>();

        final List<RpmaSessionEnd> ended = new CopyOnWriteArrayList<>();

        @RpmaMessageHandler
        ByteBuffer pong(ByteBuffer ping, RpmaSession session) {
            this.threads.add(Thread.currentThread().getName());
            return session.newMessage().putLong(ping.getLong(0) + 1).flip();
        }

        @RpmaSessionEvent
        void established(RpmaSession session) {
            this.established.add(session);
        }

        @RpmaSessionEvent
        void ended(RpmaSessionEnd end, RpmaSession session) {
            this.ended.add(end);
        }
    }

    /** A listener bean: it hears every endpoint's sessions. */
    static class EveryEndpointListener implements RpmaSessionListener {

        final List<String> heard = new CopyOnWriteArrayList<>();

        @Override
        public void sessionEstablished(RpmaSession session) {
            this.heard.add("established");
        }

        @Override
        public void sessionEnded(RpmaSession session, RpmaSessionEnd end) {
            this.heard.add(end.reason().tag());
        }
    }

    /** Hands out the region 'greeting' to the clients of endpoint 'replica'. */
    static class ReplicaRegionHandler {

        @RpmaConnectionHandler("replica")
        void read(RpmaIncomingRequest request) {
            request.connect(RpmaCommonData.of(request.regionDescriptor("greeting")).encode());
        }
    }

    /** Hands out the region 'greeting' as librpma's example 02 does. */
    static class RegionHandler {

        @RpmaConnectionHandler
        void read(RpmaIncomingRequest request) {
            request.connect(RpmaCommonData.of(request.regionDescriptor("greeting")).encode());
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomComponentsConfiguration {

        @Bean
        static RpmaHandlerRegistry customRegistry() {
            return new RpmaHandlerRegistry();
        }

        @Bean
        static RpmaHandlerBeanPostProcessor customPostProcessor(RpmaHandlerRegistry customRegistry) {
            return new RpmaHandlerBeanPostProcessor(customRegistry);
        }

        @Bean
        Handlers.Greeter greeter() {
            return new Handlers.Greeter();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class CustomizersConfiguration {

        final List<String> customized = new CopyOnWriteArrayList<>();

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
}
