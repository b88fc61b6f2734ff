package dev.rpma.spring.boot.autoconfigure;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaBackingStore;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.loop.RpmaEventLoopGroup;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code rpma.server.*} bound as Spring Boot binds it, turned into the server's settings: defaults,
 * inheritance by named endpoints, event loops, regions, and every invalid value named with its
 * property.
 */
class RpmaServerSettingsFactoryTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(PropertiesConfiguration.class)
        .withPropertyValues("rpma.server.address=198.18.0.1");

    @Test
    void defaultEndpointHasTheDocumentedDefaults() {
        this.runner.run((context) -> {
            List<RpmaEndpointSettings> settings = endpoints(context.getBean(RpmaProperties.class));
            assertThat(settings).singleElement().satisfies((endpoint) -> {
                assertThat(endpoint.name()).isEqualTo("default");
                assertThat(endpoint.address()).isEqualTo("198.18.0.1");
                assertThat(endpoint.port()).isEqualTo(7204);
                assertThat(endpoint.acceptor()).isEqualTo(new RpmaEndpointSettings.Acceptor(64, 4, Duration.ofSeconds(5),
                        Duration.ofSeconds(1), 10, false, true, 256));
                assertThat(endpoint.messages()).isEqualTo(new RpmaEndpointSettings.Messages(RpmaWireMode.FRAMED, 8, 8,
                        4096, RpmaMessageDispatch.LOOP, 4, 1024, 0));
                assertThat(endpoint.limits()).isEqualTo(new RpmaEndpointSettings.Limits(1024, Duration.ZERO));
                assertThat(endpoint).as("the core's defaults, for an application that builds the server itself")
                    .isEqualTo(new RpmaEndpointSettings("default", "198.18.0.1", 7204));
            });
            RpmaProperties properties = context.getBean(RpmaProperties.class);
            RpmaServerSettings server = RpmaServerSettingsFactory.create(properties, List.of());
            assertThat(server.gracePeriod()).isEqualTo(Duration.ofSeconds(20));
            assertThat(server.shutdownTimeout()).isEqualTo(Duration.ofSeconds(10));
            assertThat(server.busyPoll()).isEqualTo(Duration.ofNanos(50_000));
            assertThat(server.eventLoops()).isEqualTo(RpmaEventLoopGroup.defaultSize());
            assertThat(server.regions()).isEmpty();
            assertThat(properties.isEnabled()).isTrue();
            assertThat(properties.isLogToSlf4j()).isTrue();
        });
    }

    @Test
    void namedEndpointsInheritAddressAndAcceptorValuesTheyLeaveUnset() {
        this.runner
            .withPropertyValues("rpma.server.port=7000", "rpma.server.acceptor.handler-threads=8",
                    "rpma.server.acceptor.request-deadline=2s", "rpma.server.acceptor.poll-interval=250ms",
                    "rpma.server.shutdown.grace-period=3s",
                    "rpma.server.endpoints.replica.port=7001", "rpma.server.endpoints.replica.acceptor.handler-threads=2",
                    "rpma.server.endpoints.admin.address=198.18.0.2", "rpma.server.endpoints.admin.port=7000",
                    "rpma.server.endpoints.admin.acceptor.queue-capacity=8",
                    "rpma.server.endpoints.admin.acceptor.max-consecutive-errors=3")
            .run((context) -> {
                List<RpmaEndpointSettings> settings = endpoints(context.getBean(RpmaProperties.class));
                assertThat(settings).extracting(RpmaEndpointSettings::name).first().isEqualTo("default");
                assertThat(settings).extracting(RpmaEndpointSettings::name)
                    .containsExactlyInAnyOrder("default", "replica", "admin");
                assertThat(named(settings, "default").acceptor()).isEqualTo(new RpmaEndpointSettings.Acceptor(64, 8,
                        Duration.ofSeconds(2), Duration.ofMillis(250), 10, false, true, 256));
                // own handler threads, the rest from the default endpoint
                assertThat(named(settings, "replica").acceptor()).isEqualTo(new RpmaEndpointSettings.Acceptor(64, 2,
                        Duration.ofSeconds(2), Duration.ofMillis(250), 10, false, true, 256));
                // own address, so the same port as the default endpoint is fine
                assertThat(named(settings, "admin").address()).isEqualTo("198.18.0.2");
                assertThat(named(settings, "admin").port()).isEqualTo(7000);
                assertThat(named(settings, "admin").acceptor()).isEqualTo(new RpmaEndpointSettings.Acceptor(8, 8,
                        Duration.ofSeconds(2), Duration.ofMillis(250), 3, false, true, 256));
            });
    }

    @Test
    void handlerThreadSchedulingAndLooksAreInheritedUnlessAnEndpointSetsItsOwn() {
        this.runner
            .withPropertyValues("rpma.server.acceptor.handler-batch-scheduling=false",
                    "rpma.server.acceptor.handler-spin-looks=32",
                    "rpma.server.endpoints.replica.port=7001",
                    "rpma.server.endpoints.bulk.port=7002",
                    "rpma.server.endpoints.bulk.acceptor.handler-batch-scheduling=true",
                    "rpma.server.endpoints.bulk.acceptor.handler-spin-looks=0")
            .run((context) -> {
                List<RpmaEndpointSettings> settings = endpoints(context.getBean(RpmaProperties.class));
                assertThat(named(settings, "default").acceptor().batchScheduling()).isFalse();
                assertThat(named(settings, "default").acceptor().spinLooks()).isEqualTo(32);
                assertThat(named(settings, "replica").acceptor().batchScheduling()).isFalse();
                assertThat(named(settings, "replica").acceptor().spinLooks()).isEqualTo(32);
                assertThat(named(settings, "bulk").acceptor().batchScheduling()).isTrue();
                assertThat(named(settings, "bulk").acceptor().spinLooks()).isZero();
            });
    }

    @Test
    void gracePeriodMayBeNegativeOrZero() {
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=-1s").run((context) -> assertThat(
                RpmaServerSettingsFactory.create(context.getBean(RpmaProperties.class), List.of()).gracePeriod())
            .isEqualTo(Duration.ofSeconds(-1)));
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=0").run((context) -> assertThat(
                RpmaServerSettingsFactory.create(context.getBean(RpmaProperties.class), List.of()).gracePeriod())
            .isZero());
    }

    @Test
    void messagesAndLimitsAreInheritedUnlessAnEndpointSetsItsOwn() {
        this.runner
            .withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.messages.receive-slots=16",
                    "rpma.server.messages.dispatch=pool", "rpma.server.limits.idle-timeout=1m",
                    "rpma.server.event-loops.count=3", "rpma.server.event-loops.busy-poll=0",
                    "rpma.server.endpoints.replica.port=7001",
                    "rpma.server.endpoints.bulk.port=7002", "rpma.server.endpoints.bulk.messages.mode=framed",
                    "rpma.server.endpoints.bulk.messages.max-message-size=65536",
                    "rpma.server.endpoints.bulk.limits.max-connections=2")
            .run((context) -> {
                RpmaServerSettings server = RpmaServerSettingsFactory.create(context.getBean(RpmaProperties.class),
                        List.of());
                assertThat(server.eventLoops()).isEqualTo(3);
                assertThat(server.busyPoll()).isZero();
                RpmaEndpointSettings replica = named(server.endpoints(), "replica");
                assertThat(replica.messages()).isEqualTo(new RpmaEndpointSettings.Messages(RpmaWireMode.RAW, 16, 8,
                        4096, RpmaMessageDispatch.POOL, 4, 1024, 0));
                assertThat(replica.limits()).isEqualTo(new RpmaEndpointSettings.Limits(1024, Duration.ofMinutes(1)));
                RpmaEndpointSettings bulk = named(server.endpoints(), "bulk");
                assertThat(bulk.messages().mode()).isEqualTo(RpmaWireMode.FRAMED);
                assertThat(bulk.messages().maxMessageSize()).isEqualTo(65536);
                assertThat(bulk.messages().receiveSlots()).isEqualTo(16);
                assertThat(bulk.limits()).isEqualTo(new RpmaEndpointSettings.Limits(2, Duration.ofMinutes(1)));
            });
    }

    @Test
    void deviceRecoveryIsOnWithAFiveSecondCeilingUnlessTurnedOff() {
        this.runner.run((context) -> assertThat(
                RpmaServerSettingsFactory.create(context.getBean(RpmaProperties.class), List.of()).deviceRecovery())
            .isEqualTo(Duration.ofSeconds(5)));
        this.runner.withPropertyValues("rpma.server.device-recovery.max-interval=750ms")
            .run((context) -> assertThat(RpmaServerSettingsFactory
                .create(context.getBean(RpmaProperties.class), List.of()).deviceRecovery())
                .isEqualTo(Duration.ofMillis(750)));
        this.runner.withPropertyValues("rpma.server.device-recovery.enabled=false",
                "rpma.server.device-recovery.max-interval=0s")
            .run((context) -> assertThat(RpmaServerSettingsFactory
                .create(context.getBean(RpmaProperties.class), List.of()).deviceRecovery())
                .as("off: never looked for again").isZero());
    }

    @Test
    void regionsFromThePropertiesComeFirstThenTheBeans() {
        this.runner
            .withPropertyValues("rpma.server.endpoints.replica.port=7001", "rpma.server.regions.log.size=4KB",
                    "rpma.server.regions.log.usage=write-dst,flush-type-visibility",
                    "rpma.server.regions.log.endpoints=replica", "rpma.server.regions.greeting.size=14B")
            .run((context) -> {
                RpmaRegionDefinition bean = RpmaRegionDefinition.readOnly("bean", ByteBuffer.allocateDirect(8));
                List<RpmaRegionDefinition> regions = RpmaServerSettingsFactory
                    .create(context.getBean(RpmaProperties.class), List.of(bean)).regions();
                assertThat(regions).extracting(RpmaRegionDefinition::name).containsExactly("log", "greeting", "bean");
                assertThat(regions.get(0).memory().capacity()).isEqualTo(4096);
                assertThat(regions.get(0).usages()).containsExactlyInAnyOrder(MemoryUsage.WRITE_DST,
                        MemoryUsage.FLUSH_TYPE_VISIBILITY);
                assertThat(regions.get(0).endpoints()).containsExactly("replica");
                assertThat(regions.get(1).usages()).as("read-only unless asked").containsExactly(MemoryUsage.READ_SRC);
                assertThat(regions.get(1).endpoints()).as("all").isEmpty();
            });
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.port                                 | 0     | rpma.server.port                          | between 1 and 65535
            rpma.server.port                                 | 65536 | rpma.server.port                          | between 1 and 65535
            rpma.server.acceptor.queue-capacity              | 0     | rpma.server.acceptor.queue-capacity       | at least 1
            rpma.server.acceptor.queue-capacity              | 4097  | rpma.server.acceptor.queue-capacity       | at most 4096
            rpma.server.acceptor.handler-threads             | -1    | rpma.server.acceptor.handler-threads      | at least 1
            rpma.server.acceptor.request-deadline            | 0s    | rpma.server.acceptor.request-deadline     | must be positive
            rpma.server.acceptor.poll-interval               | -5ms  | rpma.server.acceptor.poll-interval        | must be positive
            rpma.server.acceptor.max-consecutive-errors      | 0     | rpma.server.acceptor.max-consecutive-errors | at least 1
            rpma.server.shutdown.timeout                     | 0s    | rpma.server.shutdown.timeout              | must be positive
            rpma.server.shutdown.timeout                     | -1s   | rpma.server.shutdown.timeout              | must be positive
            rpma.server.device-recovery.max-interval         | 0s    | rpma.server.device-recovery.max-interval  | device-recovery.enabled=false
            rpma.server.device-recovery.max-interval         | -1s   | rpma.server.device-recovery.max-interval  | at least 1ms
            rpma.server.acceptor.handler-spin-looks          | -1    | rpma.server.acceptor.handler-spin-looks   | at least 0 (0 parks an idle handler thread at once)
            rpma.server.address                              | 127.0.0.1 | rpma.server.address                   | loopback
            rpma.server.address                              | 0.0.0.0   | rpma.server.address                   | wildcard
            rpma.server.address                              | rdma-host | rpma.server.address                   | not a host name
            rpma.server.endpoints.replica.acceptor.queue-capacity | 0 | rpma.server.endpoints.replica.acceptor.queue-capacity | at least 1
            rpma.server.endpoints.replica.port               | 70000 | rpma.server.endpoints.replica.port        | between 1 and 65535
            rpma.server.endpoints.replica.port               | 7204  | rpma.server.endpoints.replica.port        | another endpoint already listens on 198.18.0.1:7204
            rpma.server.endpoints.replica.address            | ::1   | rpma.server.endpoints.replica.address     | loopback
            rpma.server.messages.receive-slots               | 2     | rpma.server.messages.receive-slots        | at least 3 in framed mode
            rpma.server.messages.receive-slots               | 5000  | rpma.server.messages.receive-slots        | at most 4096
            rpma.server.messages.send-slots                  | 65    | rpma.server.messages.send-slots           | at most 64
            rpma.server.messages.send-slots                  | 0     | rpma.server.messages.send-slots           | at least 1
            rpma.server.messages.max-message-size            | 0     | rpma.server.messages.max-message-size     | at least 1
            rpma.server.messages.dispatch-threads            | 0     | rpma.server.messages.dispatch-threads     | at least 1
            rpma.server.messages.send-queue-limit            | -1    | rpma.server.messages.send-queue-limit     | at least 0
            rpma.server.messages.shared-receive-slots        | 64    | rpma.server.messages.shared-receive-slots | needs mode 'raw'
            rpma.server.messages.shared-receive-slots        | -1    | rpma.server.messages.shared-receive-slots | must be 0
            rpma.server.messages.shared-receive-slots        | 16385 | rpma.server.messages.shared-receive-slots | to 16384
            rpma.server.limits.max-connections               | 0     | rpma.server.limits.max-connections        | at least 1
            rpma.server.limits.idle-timeout                  | -1s   | rpma.server.limits.idle-timeout           | 0 (never) or positive
            rpma.server.endpoints.replica.limits.max-connections | 0 | rpma.server.endpoints.replica.limits.max-connections | at least 1
            rpma.server.limits.requests-per-second           | 0     | rpma.server.limits.requests-per-second    | must be positive; leave it unset
            rpma.server.limits.requests-per-second           | -5    | rpma.server.limits.requests-per-second    | must be positive
            rpma.server.limits.requests-per-second           | NaN   | rpma.server.limits.requests-per-second    | must be positive
            rpma.server.limits.request-burst                 | 10    | rpma.server.limits.request-burst          | requests-per-second is not set
            rpma.server.endpoints.replica.limits.requests-per-second | 0 | rpma.server.endpoints.replica.limits.requests-per-second | must be positive
            rpma.server.event-loops.count                    | -1    | rpma.server.event-loops.count             | at least 0
            rpma.server.event-loops.busy-poll                | -1ms  | rpma.server.event-loops.busy-poll         | 0 or positive
            rpma.server.regions.r.usage                      | send  | rpma.server.regions.r.size                | must be set
            """)
    void invalidValueIsNamedAndAnalyzed(String property, String value, String reported, String reason) {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.port=7205", property + "=" + value)
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)), reported, reason));
    }

    @Test
    void aRequestRateIsInheritedAndItsBurstIsOneSecondsRequestsUnlessSet() {
        this.runner
            .withPropertyValues("rpma.server.limits.requests-per-second=50", "rpma.server.endpoints.replica.port=7205",
                    "rpma.server.endpoints.bulk.port=7206", "rpma.server.endpoints.bulk.limits.requests-per-second=2.5",
                    "rpma.server.endpoints.bursty.port=7207", "rpma.server.endpoints.bursty.limits.request-burst=200")
            .run((context) -> {
                List<RpmaEndpointSettings> settings = endpoints(context.getBean(RpmaProperties.class));
                assertThat(named(settings, "default").limits().requestRate())
                    .isEqualTo(new RpmaEndpointSettings.RequestRate(50, 50));
                assertThat(named(settings, "replica").limits().requestRate())
                    .isEqualTo(new RpmaEndpointSettings.RequestRate(50, 50));
                assertThat(named(settings, "bulk").limits().requestRate())
                    .isEqualTo(new RpmaEndpointSettings.RequestRate(2.5, 3));
                assertThat(named(settings, "bursty").limits().requestRate())
                    .isEqualTo(new RpmaEndpointSettings.RequestRate(50, 200));
            });
    }

    @Test
    void aBurstBelowOneIsNamed() {
        this.runner.withPropertyValues("rpma.server.limits.requests-per-second=1", "rpma.server.limits.request-burst=0")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.limits.request-burst", "at least 1"));
    }

    @Test
    void aFileRegionIsMappedFromItsPathAndKeepsItsContentForTheNextStart(@TempDir Path dir) {
        Path file = dir.resolve("log.region");
        this.runner.withPropertyValues("rpma.server.regions.log.size=4KB", "rpma.server.regions.log.store=file",
                "rpma.server.regions.log.path=" + file, "rpma.server.regions.log.usage=write-dst,flush-type-visibility")
            .run((context) -> {
                RpmaRegionDefinition region = RpmaServerSettingsFactory
                    .create(context.getBean(RpmaProperties.class), List.of()).regions().get(0);
                assertThat(region.store().kind()).isEqualTo(RpmaBackingStore.Kind.FILE);
                assertThat(region.store().path()).contains(file);
                assertThat(region.directWriteToPmem()).isFalse();
                region.memory().put(0, (byte) 42);
                region.store().makeDurable(0, 1);
            });
        assertThat(file).hasSize(4096);
        this.runner.withPropertyValues("rpma.server.regions.log.size=4KB", "rpma.server.regions.log.store=file",
                "rpma.server.regions.log.path=" + file, "rpma.server.regions.log.create-if-missing=false")
            .run((context) -> assertThat(RpmaServerSettingsFactory.create(context.getBean(RpmaProperties.class), List.of())
                .regions().get(0).memory().get(0)).isEqualTo((byte) 42));
    }

    @Test
    void aRegionThatWouldLieAboutDurabilityIsRefusedBeforeItsFileIsCreated(@TempDir Path dir) {
        Path file = dir.resolve("never");
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.store=file",
                "rpma.server.regions.r.path=" + file, "rpma.server.regions.r.usage=write-dst,flush-type-persistent")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.usage", "only a 'dax' store gives, not 'file'"));
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.usage=write-dst",
                "rpma.server.regions.r.direct-write-to-pmem=true")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.direct-write-to-pmem", "only a 'dax' store is persistent memory, not 'volatile'"));
        assertThat(file).doesNotExist();
    }

    @Test
    void aDaxRegionOnAFileSystemWithoutDaxIsRefusedNamingItsPath(@TempDir Path dir) {
        Path file = dir.resolve("not-pmem");
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.store=dax",
                "rpma.server.regions.r.path=" + file, "rpma.server.regions.r.usage=write-dst,flush-type-persistent",
                "rpma.server.regions.r.direct-write-to-pmem=true")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.path", "not on a DAX file system"));
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.store=file",
                "rpma.server.regions.r.path=" + dir.resolve("missing"), "rpma.server.regions.r.create-if-missing=false")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.path", "does not exist and create-if-missing is off"));
    }

    @Test
    void aDaxRegionOnADeviceThatIsNotADeviceDaxOrIsMissingIsRefusedNamingItsPath() {
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.store=dax",
                "rpma.server.regions.r.path=/dev/null", "rpma.server.regions.r.usage=write-dst,flush-type-persistent")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.path", "/dev/null is not a device DAX"));
        this.runner.withPropertyValues("rpma.server.regions.r.size=4KB", "rpma.server.regions.r.store=dax",
                "rpma.server.regions.r.path=/dev/dax-rpma-missing", "rpma.server.regions.r.usage=write-dst")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.regions.r.path", "no such device"));
        assertThat(Path.of("/dev/dax-rpma-missing")).doesNotExist();
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.regions.r.usage     | send     | rpma.server.regions.r.usage     | not for exposed memory
            rpma.server.regions.r.endpoints | nowhere  | rpma.server.regions.r.endpoints | not a configured endpoint
            rpma.server.regions.r.size      | 0B       | rpma.server.regions.r.size      | from 1 byte to 2GB
            rpma.server.regions.r.store     | file     | rpma.server.regions.r.path      | must be set for store 'file'
            rpma.server.regions.r.store     | dax      | rpma.server.regions.r.path      | must be set for store 'dax'
            rpma.server.regions.r.path      | /tmp/x   | rpma.server.regions.r.path      | only for store 'file' or 'dax'
            """)
    void invalidRegionValueIsNamed(String property, String value, String reported, String reason) {
        this.runner.withPropertyValues("rpma.server.regions.r.size=8B", property + "=" + value)
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)), reported, reason));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.connection.rq-size  | 4 | rq  | at least 8 for the endpoint's receive and send slots
            rpma.server.connection.cq-size  | 8 | cq  | at least 16
            rpma.server.connection.sq-size  | 1 | sq  | at least 8
            rpma.server.connection.rcq-size | 2 | rcq | must be 0 for an endpoint with message handlers
            """)
    void queueSizesAnEndpointsSlotsCannotLiveWithAreNamed(String property, String value, String queue, String reason) {
        this.runner.withPropertyValues(property + "=" + value).run((context) -> {
            RpmaProperties properties = context.getBean(RpmaProperties.class);
            RpmaConnectionConfigFactory factory = new RpmaConnectionConfigFactory(properties, List.of());
            RpmaEndpointSettings endpoint = endpoints(properties).get(0);
            try (FakeLibRpma fake = new FakeLibRpma()) {
                assertInvalid(() -> factory.create(Rpma.using(fake), endpoint, new RpmaQueueSizes(16, 8, 8)).close(),
                        property, reason);
                fake.assertAllFreed();
            }
        });
    }

    @Test
    void aSharedCompletionChannelWithASharedReceiveQueueIsNamed() {
        this.runner.withPropertyValues("rpma.server.messages.mode=raw", "rpma.server.messages.shared-receive-slots=64",
                "rpma.server.connection.shared-completion-channel=true").run((context) -> {
                    RpmaProperties properties = context.getBean(RpmaProperties.class);
                    RpmaConnectionConfigFactory factory = new RpmaConnectionConfigFactory(properties, List.of());
                    RpmaEndpointSettings endpoint = endpoints(properties).get(0);
                    assertThat(endpoint.messages().sharedReceiveSlots()).isEqualTo(64);
                    try (FakeLibRpma fake = new FakeLibRpma()) {
                        assertInvalid(() -> factory.create(Rpma.using(fake), endpoint, new RpmaQueueSizes(8, 8, 0))
                            .close(), "rpma.server.connection.shared-completion-channel", "must be false with a shared"
                                    + " receive queue");
                        fake.assertAllFreed();
                    }
                });
    }

    @Test
    void unsetQueueSizesAreSizedForTheSlotsOrLeftToLibrpma() {
        this.runner.run((context) -> {
            RpmaProperties properties = context.getBean(RpmaProperties.class);
            RpmaConnectionConfigFactory factory = new RpmaConnectionConfigFactory(properties, List.of());
            RpmaEndpointSettings endpoint = endpoints(properties).get(0);
            try (FakeLibRpma fake = new FakeLibRpma()) {
                try (RpmaConnectionConfig sized = factory.create(Rpma.using(fake), endpoint, new RpmaQueueSizes(24, 8, 16));
                        RpmaConnectionConfig plain = factory.create(Rpma.using(fake), endpoint,
                                new RpmaQueueSizes(0, 0, 0))) {
                    assertThat(List.of(sized.cqSize(), sized.sqSize(), sized.rqSize())).containsExactly(24, 8, 16);
                    assertThat(List.of(plain.cqSize(), plain.sqSize(), plain.rqSize())).as("librpma's")
                        .containsExactly(10, 10, 10);
                }
            }
        });
    }

    @Test
    void connectionValuesAreInheritedUnlessAnEndpointSetsItsOwn() {
        this.runner.withPropertyValues("rpma.server.connection.timeout=2s", "rpma.server.connection.cq-size=40",
                "rpma.server.connection.shared-completion-channel=true", "rpma.server.endpoints.replica.port=7205",
                "rpma.server.endpoints.bulk.port=7206", "rpma.server.endpoints.bulk.connection.timeout=3s",
                "rpma.server.endpoints.bulk.connection.shared-completion-channel=false").run((context) -> {
                    RpmaProperties properties = context.getBean(RpmaProperties.class);
                    RpmaConnectionConfigFactory factory = new RpmaConnectionConfigFactory(properties, List.of());
                    List<RpmaEndpointSettings> endpoints = endpoints(properties);
                    RpmaQueueSizes noMessages = new RpmaQueueSizes(0, 0, 0);
                    try (FakeLibRpma fake = new FakeLibRpma();
                            RpmaConnectionConfig replica = factory.create(Rpma.using(fake), named(endpoints, "replica"),
                                    noMessages);
                            RpmaConnectionConfig bulk = factory.create(Rpma.using(fake), named(endpoints, "bulk"),
                                    noMessages)) {
                        assertThat(replica.timeout()).isEqualTo(Duration.ofSeconds(2));
                        assertThat(replica.sharedCompletionChannel()).isTrue();
                        assertThat(replica.cqSize()).isEqualTo(40);
                        assertThat(bulk.timeout()).isEqualTo(Duration.ofSeconds(3));
                        assertThat(bulk.sharedCompletionChannel()).isFalse();
                        assertThat(bulk.cqSize()).isEqualTo(40);
                    }
                });
    }

    /** A peer of its own sets an endpoint apart, so it is never inherited. */
    @Test
    void anEndpointsOwnPeerIsItsAlone() {
        this.runner
            .withPropertyValues("rpma.server.endpoints.tenant.port=7205", "rpma.server.endpoints.tenant.peer= tenant ",
                    "rpma.server.endpoints.replica.port=7206")
            .run((context) -> {
                List<RpmaEndpointSettings> settings = endpoints(context.getBean(RpmaProperties.class));
                assertThat(named(settings, "tenant").peer()).isEqualTo("tenant");
                assertThat(named(settings, "replica").peer()).isNull();
                assertThat(named(settings, "default").peer()).isNull();
            });
    }

    @Test
    void aBlankPeerIsNamed() {
        this.runner.withPropertyValues("rpma.server.endpoints.tenant.port=7205", "rpma.server.endpoints.tenant.peer= ")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.endpoints.tenant.peer", "must name a peer"));
    }

    @Test
    void addressIsRequired() {
        new ApplicationContextRunner().withUserConfiguration(PropertiesConfiguration.class)
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.address", "is required"));
    }

    @Test
    void namedEndpointNeedsItsOwnPort() {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.address=198.18.0.2")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.endpoints.replica.port", "needs its own port"));
    }

    @Test
    void defaultIsNotANameForANamedEndpoint() {
        this.runner.withPropertyValues("rpma.server.endpoints.default.port=7300")
            .run((context) -> assertInvalid(() -> endpoints(context.getBean(RpmaProperties.class)),
                    "rpma.server.endpoints.default", "choose another name"));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma.server.connection.cq-size                   | 0     | at least 1
            rpma.server.connection.rcq-size                  | -1    | at least 0
            rpma.server.connection.sq-size                   | -1    | at least 0
            rpma.server.connection.rq-size                   | -2    | at least 0
            rpma.server.connection.timeout                   | -1ms  | between 0 and 2147483647 ms
            rpma.server.connection.timeout                   | 30d   | between 0 and 2147483647 ms
            rpma.server.endpoints.replica.connection.cq-size | 0     | at least 1
            """)
    void invalidConnectionValueIsNamedBeforeAnythingNativeExists(String property, String value, String reason) {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.port=7205", property + "=" + value)
            .run((context) -> assertInvalid(
                    () -> new RpmaConnectionConfigFactory(context.getBean(RpmaProperties.class), List.of()), property,
                    reason));
    }

    private static void assertInvalid(Runnable creation, String property, String reason) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class).isThrownBy(creation::run)
            .satisfies(analyzedAs(property, reason));
    }

    static Consumer<InvalidRpmaPropertyException> analyzedAs(String property, String reason) {
        return (ex) -> {
            assertThat(ex.property()).isEqualTo(property);
            assertThat(ex.getMessage()).contains(property).contains(reason);
            FailureAnalysis analysis = new InvalidRpmaPropertyFailureAnalyzer().analyze(ex);
            assertThat(analysis.getDescription()).contains("'" + property + "'").contains(reason);
            // an address says what to set it to; the other properties, only which one to update
            assertThat(analysis.getAction()).contains("'" + property + "'").isEqualTo((ex.action() != null)
                    ? ex.action() + "." : "Update '" + property + "' in your application's configuration.");
            assertThat(analysis.getCause()).isSameAs(ex);
        };
    }

    private static List<RpmaEndpointSettings> endpoints(RpmaProperties properties) {
        return RpmaServerSettingsFactory.create(properties, List.of()).endpoints();
    }

    private static RpmaEndpointSettings named(List<RpmaEndpointSettings> settings, String name) {
        return settings.stream().filter((endpoint) -> endpoint.name().equals(name)).findFirst().orElseThrow();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RpmaProperties.class)
    static class PropertiesConfiguration {

    }
}
