package dev.rpma.spring.boot.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import dev.rpma.server.RpmaEndpointSettings;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rpma.server.acceptor.inline-handler}: off unless set, and set per endpoint only, because it
 * promises that one endpoint's handler never blocks; a named endpoint does not inherit it.
 */
class RpmaInlineHandlerPropertyTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(PropertiesConfiguration.class)
        .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.endpoints.pingpong.port=7206");

    @Test
    void handlersRunOnHandlerThreadsUnlessAnEndpointSaysOtherwise() {
        this.runner.run((context) -> assertThat(settings(context.getBean(RpmaProperties.class)))
            .extracting((endpoint) -> endpoint.acceptor().inlineHandler()).containsExactly(false, false));
    }

    @Test
    void theDefaultEndpointsFlagIsNotInheritedByNamedEndpoints() {
        this.runner.withPropertyValues("rpma.server.acceptor.inline-handler=true").run((context) -> {
            List<RpmaEndpointSettings> settings = settings(context.getBean(RpmaProperties.class));
            assertThat(settings.get(0).acceptor().inlineHandler()).as("default").isTrue();
            assertThat(settings.get(1).acceptor().inlineHandler()).as("pingpong").isFalse();
        });
    }

    @Test
    void aNamedEndpointSetsItsOwn() {
        this.runner.withPropertyValues("rpma.server.endpoints.pingpong.acceptor.inline-handler=true").run((context) -> {
            List<RpmaEndpointSettings> settings = settings(context.getBean(RpmaProperties.class));
            assertThat(settings).extracting((endpoint) -> endpoint.acceptor().inlineHandler()).containsExactly(false, true);
        });
    }

    private static List<RpmaEndpointSettings> settings(RpmaProperties properties) {
        return RpmaServerSettingsFactory.create(properties, List.of()).endpoints();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RpmaProperties.class)
    static class PropertiesConfiguration {

    }
}
