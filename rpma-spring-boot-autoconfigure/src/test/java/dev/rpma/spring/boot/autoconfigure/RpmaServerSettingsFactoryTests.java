package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import dev.rpma.spring.server.RpmaEndpointSettings;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code rpma.server.*} bound as Spring Boot binds it, turned into endpoint settings: defaults,
 * inheritance by named endpoints, and every invalid value named with its property.
 */
class RpmaEndpointSettingsFactoryTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(PropertiesConfiguration.class)
        .withPropertyValues("rpma.server.address=198.18.0.1");

    @Test
    void defaultEndpointHasTheDocumentedDefaults() {
        this.runner.run((context) -> {
            List<RpmaEndpointSettings> settings = RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class));
            assertThat(settings).singleElement().satisfies((endpoint) -> {
                assertThat(endpoint.name()).isEqualTo("default");
                assertThat(endpoint.address()).isEqualTo("198.18.0.1");
                assertThat(endpoint.port()).isEqualTo(7204);
                assertThat(endpoint.queueCapacity()).isEqualTo(64);
                assertThat(endpoint.handlerThreads()).isEqualTo(4);
                assertThat(endpoint.requestDeadline()).isEqualTo(Duration.ofSeconds(5));
                assertThat(endpoint.pollInterval()).isEqualTo(Duration.ofSeconds(1));
                assertThat(endpoint.maxConsecutiveErrors()).isEqualTo(10);
                assertThat(endpoint.gracePeriod()).isEqualTo(Duration.ofSeconds(20));
                assertThat(endpoint.inlineHandler()).isFalse();
                assertThat(endpoint.batchHandlerThreads()).isTrue();
                assertThat(endpoint.handlerSpinLooks()).isEqualTo(256);
            });
            RpmaProperties properties = context.getBean(RpmaProperties.class);
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
                List<RpmaEndpointSettings> settings = RpmaEndpointSettingsFactory
                    .create(context.getBean(RpmaProperties.class));
                assertThat(settings).extracting(RpmaEndpointSettings::name).first().isEqualTo("default");
                assertThat(settings).extracting(RpmaEndpointSettings::name)
                    .containsExactlyInAnyOrder("default", "replica", "admin");
                assertThat(named(settings, "default")).isEqualTo(new RpmaEndpointSettings("default", "198.18.0.1", 7000,
                        64, 8, Duration.ofSeconds(2), Duration.ofMillis(250), Duration.ofSeconds(3), 10));
                // own handler threads, the rest from the default endpoint
                assertThat(named(settings, "replica")).isEqualTo(new RpmaEndpointSettings("replica", "198.18.0.1", 7001,
                        64, 2, Duration.ofSeconds(2), Duration.ofMillis(250), Duration.ofSeconds(3), 10));
                // own address, so the same port as the default endpoint is fine
                assertThat(named(settings, "admin")).isEqualTo(new RpmaEndpointSettings("admin", "198.18.0.2", 7000,
                        8, 8, Duration.ofSeconds(2), Duration.ofMillis(250), Duration.ofSeconds(3), 3));
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
                List<RpmaEndpointSettings> settings = RpmaEndpointSettingsFactory
                    .create(context.getBean(RpmaProperties.class));
                assertThat(named(settings, "default").batchHandlerThreads()).isFalse();
                assertThat(named(settings, "default").handlerSpinLooks()).isEqualTo(32);
                assertThat(named(settings, "replica").batchHandlerThreads()).isFalse();
                assertThat(named(settings, "replica").handlerSpinLooks()).isEqualTo(32);
                assertThat(named(settings, "bulk").batchHandlerThreads()).isTrue();
                assertThat(named(settings, "bulk").handlerSpinLooks()).isZero();
            });
    }

    @Test
    void gracePeriodMayBeNegativeOrZero() {
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=-1s").run((context) -> assertThat(
                RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)).get(0).gracePeriod())
            .isEqualTo(Duration.ofSeconds(-1)));
        this.runner.withPropertyValues("rpma.server.shutdown.grace-period=0").run((context) -> assertThat(
                RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)).get(0).gracePeriod())
            .isZero());
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
            rpma.server.acceptor.handler-spin-looks          | -1    | rpma.server.acceptor.handler-spin-looks   | at least 0 (0 parks an idle handler thread at once)
            rpma.server.address                              | 127.0.0.1 | rpma.server.address                   | loopback
            rpma.server.address                              | 0.0.0.0   | rpma.server.address                   | wildcard
            rpma.server.address                              | rdma-host | rpma.server.address                   | not a host name
            rpma.server.endpoints.replica.acceptor.queue-capacity | 0 | rpma.server.endpoints.replica.acceptor.queue-capacity | at least 1
            rpma.server.endpoints.replica.port               | 70000 | rpma.server.endpoints.replica.port        | between 1 and 65535
            rpma.server.endpoints.replica.port               | 7204  | rpma.server.endpoints.replica.port        | another endpoint already listens on 198.18.0.1:7204
            rpma.server.endpoints.replica.address            | ::1   | rpma.server.endpoints.replica.address     | loopback
            """)
    void invalidValueIsNamedAndAnalyzed(String property, String value, String reported, String reason) {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.port=7205", property + "=" + value)
            .run((context) -> assertInvalid(() -> RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)),
                    reported, reason));
    }

    @Test
    void addressIsRequired() {
        new ApplicationContextRunner().withUserConfiguration(PropertiesConfiguration.class)
            .run((context) -> assertInvalid(() -> RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)),
                    "rpma.server.address", "is required"));
    }

    @Test
    void namedEndpointNeedsItsOwnPort() {
        this.runner.withPropertyValues("rpma.server.endpoints.replica.address=198.18.0.2")
            .run((context) -> assertInvalid(() -> RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)),
                    "rpma.server.endpoints.replica.port", "needs its own port"));
    }

    @Test
    void defaultIsNotANameForANamedEndpoint() {
        this.runner.withPropertyValues("rpma.server.endpoints.default.port=7300")
            .run((context) -> assertInvalid(() -> RpmaEndpointSettingsFactory.create(context.getBean(RpmaProperties.class)),
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
            assertThat(analysis.getAction()).isEqualTo("Update '" + property + "' in your application's configuration.");
            assertThat(analysis.getCause()).isSameAs(ex);
        };
    }

    private static RpmaEndpointSettings named(List<RpmaEndpointSettings> settings, String name) {
        return settings.stream().filter((endpoint) -> endpoint.name().equals(name)).findFirst().orElseThrow();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RpmaProperties.class)
    static class PropertiesConfiguration {

    }
}
