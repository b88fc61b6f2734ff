package dev.rpma.spring.boot.actuate;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.boot.actuate.endpoint.RpmaActuatorEndpointAutoConfiguration;
import dev.rpma.spring.boot.actuate.health.RpmaHealthContributorAutoConfiguration;
import dev.rpma.spring.boot.actuate.metrics.RpmaMetricsAutoConfiguration;
import dev.rpma.spring.boot.actuate.observation.RpmaObservationAutoConfiguration;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaServer;

import static dev.rpma.spring.boot.actuate.FakeRpmaServer.ADDRESS;
import static dev.rpma.spring.boot.actuate.FakeRpmaServer.PORT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Actuator, health and Micrometer are optional: without their classes the observability
 * auto-configurations back off and the server still serves.
 */
class RpmaObservabilityIsOptionalTests {

    private static final String[] OBSERVABILITY_BEANS = { "rpmaServerMetrics", "rpmaHandlerObservations",
            "rpmaHealthContributor", "rpmaActuatorEndpoint" };

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(RpmaMetricsAutoConfiguration.class,
                RpmaObservationAutoConfiguration.class, RpmaHealthContributorAutoConfiguration.class,
                RpmaActuatorEndpointAutoConfiguration.class))
        .withBean(ScriptedHandler.class)
        .withPropertyValues("rpma.server.observation-enabled=true", "management.endpoints.web.exposure.include=*");

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void everyPartIsRegisteredAsAnAutoConfiguration() {
        assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()).getCandidates())
            .contains(RpmaMetricsAutoConfiguration.class.getName(), RpmaObservationAutoConfiguration.class.getName(),
                    RpmaHealthContributorAutoConfiguration.class.getName(),
                    RpmaActuatorEndpointAutoConfiguration.class.getName());
    }

    @Test
    void withTheLibrariesEveryPartIsThere() {
        this.runner.withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class))
            .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
            .withBean(ObservationRegistry.class, ObservationRegistry::create)
            .run((context) -> assertThat(context).hasNotFailed().hasBean(OBSERVABILITY_BEANS[0])
                .hasBean(OBSERVABILITY_BEANS[1]).hasBean(OBSERVABILITY_BEANS[2]).hasBean(OBSERVABILITY_BEANS[3]));
    }

    @Test
    void withoutMicrometerActuatorAndHealthTheServerStillServes() {
        this.runner.withClassLoader(new FilteredClassLoader("io.micrometer.", "org.springframework.boot.actuate.",
                "org.springframework.boot.health.", "org.springframework.boot.micrometer."))
            .run((context) -> {
                assertThat(context).hasNotFailed().hasSingleBean(RpmaServer.class);
                for (String bean : OBSERVABILITY_BEANS) {
                    assertThat(context).doesNotHaveBean(bean);
                }
                RpmaEndpointStatistics statistics = context.getBean(RpmaServer.class).endpoint("default").statistics();
                FakeRpmaServer.submit(this.fake.endpointAt(ADDRESS, PORT), statistics, ScriptedHandler.ACCEPT);
                assertThat(statistics.accepted()).isOne();
            });
    }
}
