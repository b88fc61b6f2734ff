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
import dev.rpma.spring.boot.autoconfigure.client.RpmaClientAutoConfiguration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The secrets of the admission token's keys, the server's and the clients', stay hidden in {@code /actuator/configprops} and
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

    private static final String CLIENT_SECRET = "client-of-orders-secret-of-32-bytes-or-more";

    private static final String CLIENT_ENV_SECRET = "client-secret-from-an-environment-variable!";

    /** With a client of the server 'orders' that presents an admission token. */
    private final ApplicationContextRunner withClient = this.withoutSanitizing
        .withConfiguration(AutoConfigurations.of(RpmaClientAutoConfiguration.class))
        .withInitializer((context) -> context.getEnvironment().getPropertySources().addFirst(new MapPropertySource(
                "clientEnvironmentLike", Map.of("RPMA_CLIENT_SERVERS_CATALOG_ADMISSION_SECRET", CLIENT_ENV_SECRET,
                        "RPMA_CLIENT_SERVERS_CATALOG_ADMISSION_KEY_ID", "6"))))
        .withPropertyValues("rpma.client.servers.orders.address=198.18.0.1",
                "rpma.client.servers.orders.admission.key-id=4",
                "rpma.client.servers.orders.admission.secret=" + CLIENT_SECRET);

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

    @Test
    void aClientsSecretIsHiddenToo() {
        this.withClient.withConfiguration(AutoConfigurations.of(RpmaSecretsSanitizingAutoConfiguration.class))
            .run((context) -> {
                assertThat(context).hasNotFailed();
                assertThat(configprops(context)).contains("\"keyId\":4").contains("******").doesNotContain(CLIENT_SECRET);
                assertThat(env(context)).contains("rpma.client.servers.orders.admission.key-id")
                    .contains("RPMA_CLIENT_SERVERS_CATALOG_ADMISSION_KEY_ID")
                    .doesNotContain(CLIENT_SECRET).doesNotContain(CLIENT_ENV_SECRET);
            });
        this.withClient.run((context) -> {
            assertThat(configprops(context)).as("shown without it").contains(CLIENT_SECRET);
            assertThat(env(context)).contains(CLIENT_SECRET).contains(CLIENT_ENV_SECRET);
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
