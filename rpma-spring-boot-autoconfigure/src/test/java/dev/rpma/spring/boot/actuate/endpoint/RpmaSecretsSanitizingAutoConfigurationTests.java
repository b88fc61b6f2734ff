package dev.rpma.spring.boot.actuate.endpoint;

import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.autoconfigure.context.properties.ConfigurationPropertiesReportEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.env.EnvironmentEndpointAutoConfiguration;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.env.EnvironmentEndpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.core.env.MapPropertySource;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;
import dev.rpma.spring.boot.actuate.ScriptedHandler;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The secrets of the admission token's keys stay hidden in {@code /actuator/configprops} and
 * {@code /actuator/env} even with {@code show-values: always}, where Spring Boot shows every other
 * value; and they would be shown without this auto-configuration.
 */
class RpmaSecretsSanitizingAutoConfigurationTests {

    private static final String SECRET = "default-endpoint-secret-of-32-bytes-or-more";

    private static final String ORDERS_SECRET = "orders-endpoint-secret-of-32-bytes-or-more";

    private static final String ENV_SECRET = "secret-from-an-environment-variable-32-bytes";

    private final FakeLibRpma fake = new FakeLibRpma();

    private final ApplicationContextRunner withoutSanitizing = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
                ConfigurationPropertiesReportEndpointAutoConfiguration.class, EnvironmentEndpointAutoConfiguration.class))
        .withBean(ScriptedHandler.class)
        .withBean(Orders.class)
        .withInitializer((context) -> context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(
                "systemEnvironmentLike", Map.of("RPMA_SERVER_ENDPOINTS_ORDERS_ADMISSION_KEYS_1_SECRET", ENV_SECRET,
                        "RPMA_SERVER_ENDPOINTS_ORDERS_ADMISSION_KEYS_1_ID", "9"))))
        .withPropertyValues("management.endpoints.web.exposure.include=configprops,env",
                "management.endpoint.configprops.show-values=always", "management.endpoint.env.show-values=always",
                "rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET,
                "rpma.server.endpoints.orders.port=7300", "rpma.server.endpoints.orders.admission.keys[0].id=2",
                "rpma.server.endpoints.orders.admission.keys[0].secret=" + ORDERS_SECRET);

    private final ApplicationContextRunner runner = this.withoutSanitizing
        .withConfiguration(AutoConfigurations.of(RpmaSecretsSanitizingAutoConfiguration.class));

    @AfterEach
    void checkFake() {
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void configpropsShowsTheKeysIdsAndOtherValuesButNotTheirSecrets() {
        this.runner.run((context) -> {
            assertThat(context).hasNotFailed();
            String json = configprops(context);
            assertThat(json).contains("\"port\":7204").contains("\"maxClockSkew\":\"PT30S\"").contains("\"id\":2")
                .contains("******").doesNotContain(SECRET).doesNotContain(ORDERS_SECRET).doesNotContain(ENV_SECRET);
        });
    }

    @Test
    void envShowsOtherValuesButNotTheSecretsHoweverTheyAreSpelled() {
        this.runner.run((context) -> {
            String json = env(context);
            assertThat(json).contains("rpma.server.endpoints.orders.port").contains("\"7300\"")
                .contains("RPMA_SERVER_ENDPOINTS_ORDERS_ADMISSION_KEYS_1_ID")
                .doesNotContain(SECRET).doesNotContain(ORDERS_SECRET).doesNotContain(ENV_SECRET);
        });
    }

    @Test
    void withoutItSpringBootWouldShowThem() {
        this.withoutSanitizing.run((context) -> {
            assertThat(configprops(context)).contains(SECRET);
            assertThat(env(context)).contains(SECRET).contains(ENV_SECRET);
        });
    }

    private static String configprops(ApplicationContext context) {
        return JsonMapper.builder().build()
            .writeValueAsString(context.getBean(ConfigurationPropertiesReportEndpoint.class).configurationProperties());
    }

    private static String env(ApplicationContext context) {
        return JsonMapper.builder().build()
            .writeValueAsString(context.getBean(EnvironmentEndpoint.class).environment(null));
    }

    /** The handler of the named endpoint 'orders'. */
    static class Orders {

        @RpmaConnectionHandler("orders")
        void handle(RpmaIncomingRequest request) {
            request.connect();
        }
    }
}
