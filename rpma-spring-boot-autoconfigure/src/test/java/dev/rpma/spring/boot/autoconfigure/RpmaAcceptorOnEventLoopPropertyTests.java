package dev.rpma.spring.boot.autoconfigure;

import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import dev.rpma.server.RpmaEndpointSettings;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code rpma.server.acceptor.on-event-loop}: off unless set; set under rpma.server it holds for every
 * endpoint, and a named endpoint may say otherwise.
 */
class RpmaAcceptorOnEventLoopPropertyTests {

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
        .withUserConfiguration(PropertiesConfiguration.class)
        .withPropertyValues("rpma.server.address=198.18.0.1", "rpma.server.endpoints.pingpong.port=7206");

    @Test
    void acceptorsHaveThreadsOfTheirOwnByDefault() {
        this.runner.run((context) -> assertThat(settings(context.getBean(RpmaProperties.class)))
            .extracting((endpoint) -> endpoint.acceptor().onEventLoop()).containsExactly(false, false));
    }

    @Test
    void namedEndpointsInheritTheServersValue() {
        this.runner.withPropertyValues("rpma.server.acceptor.on-event-loop=true")
            .run((context) -> assertThat(settings(context.getBean(RpmaProperties.class)))
                .extracting((endpoint) -> endpoint.acceptor().onEventLoop()).containsExactly(true, true));
    }

    @Test
    void aNamedEndpointSetsItsOwn() {
        this.runner
            .withPropertyValues("rpma.server.acceptor.on-event-loop=true",
                    "rpma.server.endpoints.pingpong.acceptor.on-event-loop=false")
            .run((context) -> assertThat(settings(context.getBean(RpmaProperties.class)))
                .extracting((endpoint) -> endpoint.acceptor().onEventLoop()).containsExactly(true, false));
    }

    private static List<RpmaEndpointSettings> settings(RpmaProperties properties) {
        return RpmaServerSettingsFactory.create(properties, List.of()).endpoints();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RpmaProperties.class)
    static class PropertiesConfiguration {

    }
}
