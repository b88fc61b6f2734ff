package dev.rpma.spring.boot.actuate;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.ThrowableProxyUtil;
import ch.qos.logback.core.AppenderBase;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.actuate.autoconfigure.context.properties.ConfigurationPropertiesReportEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.env.EnvironmentEndpointAutoConfiguration;
import org.springframework.boot.actuate.context.properties.ConfigurationPropertiesReportEndpoint;
import org.springframework.boot.actuate.env.EnvironmentEndpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.contributor.HealthContributorAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.prometheus.PrometheusMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.endpoint.RpmaActuatorEndpoint;
import dev.rpma.spring.boot.actuate.endpoint.RpmaActuatorEndpointAutoConfiguration;
import dev.rpma.spring.boot.actuate.endpoint.RpmaSecretsSanitizingAutoConfiguration;
import dev.rpma.spring.boot.actuate.health.RpmaHealthContributorAutoConfiguration;
import dev.rpma.spring.boot.actuate.metrics.RpmaEndpointMetrics;
import dev.rpma.spring.boot.actuate.metrics.RpmaMetricsAutoConfiguration;
import dev.rpma.spring.boot.actuate.observation.RpmaObservationAutoConfiguration;
import dev.rpma.spring.boot.autoconfigure.RpmaProperties;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The secrets of the admission token's keys, set as properties, appear nowhere an operator or a
 * scraper looks: not in what is logged (every level of the starter's and server's loggers) while the
 * server starts, rejects a request without a token and one with a wrong key's token, admits a valid
 * token's, meets a failing handler and stops; not in the {@code rpma} actuator endpoint, health,
 * {@code configprops} or {@code env} (with {@code show-values: always}); not in any meter's name, tag
 * or Prometheus' scrape, nor in the handler observations' key values; and the configuration metadata
 * gives a secret no default. Each place is searched for the secret as it was configured, in Base64
 * and in hex, and for a distinctive part of it, so that a secret cut short or encoded is found too.
 */
@ExtendWith(OutputCaptureExtension.class)
class RpmaSecretsAppearNowhereTests {

    private static final String SECRET = "s3cr3t-NEVER-SHOWN-0123456789abcdef";

    private static final String ORDERS_SECRET = "0rd3rs-NEVER-SHOWN-fedcba9876543210";

    /** In both secrets, and in nothing else the application shows. */
    private static final String PART = "NEVER-SHOWN";

    private static final int ORDERS_PORT = 7205;

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final List<String> LOGGERS = List.of("dev.rpma");

    private final FakeLibRpma fake = new FakeLibRpma();

    private final List<String> logged = new CopyOnWriteArrayList<>();

    private final List<String> observed = new CopyOnWriteArrayList<>();

    private final AppenderBase<ILoggingEvent> appender = new AppenderBase<>() {

        @Override
        protected void append(ILoggingEvent event) {
            StringBuilder line = new StringBuilder(event.getLoggerName()).append(' ')
                .append(event.getFormattedMessage());
            if (event.getThrowableProxy() != null) {
                line.append('\n').append(ThrowableProxyUtil.asString(event.getThrowableProxy()));
            }
            RpmaSecretsAppearNowhereTests.this.logged.add(line.toString());
        }
    };

    private final List<Level> levelsBefore = new ArrayList<>();

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withConfiguration(AutoConfigurations.of(EndpointAutoConfiguration.class,
                ConfigurationPropertiesReportEndpointAutoConfiguration.class, EnvironmentEndpointAutoConfiguration.class,
                RpmaSecretsSanitizingAutoConfiguration.class, RpmaActuatorEndpointAutoConfiguration.class,
                HealthContributorRegistryAutoConfiguration.class, HealthContributorAutoConfiguration.class,
                HealthEndpointAutoConfiguration.class, RpmaHealthContributorAutoConfiguration.class,
                MetricsAutoConfiguration.class, PrometheusMetricsExportAutoConfiguration.class,
                CompositeMeterRegistryAutoConfiguration.class, RpmaMetricsAutoConfiguration.class,
                RpmaObservationAutoConfiguration.class))
        .withBean(ScriptedHandler.class)
        .withBean(Orders.class)
        .withBean(ObservationRegistry.class, this::observationRegistry)
        .withPropertyValues("management.endpoints.web.exposure.include=configprops,env,health,rpma",
                "management.endpoint.configprops.show-values=always", "management.endpoint.env.show-values=always",
                "management.endpoint.health.show-details=always", "rpma.server.observation-enabled=true",
                "rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET,
                "rpma.server.endpoints.orders.port=" + ORDERS_PORT,
                "rpma.server.endpoints.orders.admission.keys[0].id=2",
                "rpma.server.endpoints.orders.admission.keys[0].secret=" + ORDERS_SECRET);

    @BeforeEach
    void logEverything() {
        LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        this.appender.setContext(logging);
        this.appender.start();
        logging.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(this.appender);
        for (String name : LOGGERS) {
            this.levelsBefore.add(logging.getLogger(name).getLevel());
            logging.getLogger(name).setLevel(Level.TRACE);
        }
    }

    @AfterEach
    void restoreTheLoggingAndCheckTheFake() {
        LoggerContext logging = (LoggerContext) LoggerFactory.getILoggerFactory();
        logging.getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(this.appender);
        this.appender.stop();
        for (int i = 0; i < LOGGERS.size(); i++) {
            logging.getLogger(LOGGERS.get(i)).setLevel(this.levelsBefore.get(i));
        }
        this.fake.assertNoViolationsAndClose();
    }

    @Test
    void notInTheLogsTheActuatorTheMetricsOrTheObservationsWhileRequestsAreRejectedAndAdmitted(CapturedOutput output) {
        this.runner.run((context) -> {
            assertThat(context).hasNotFailed();
            RpmaServer server = context.getBean(RpmaServer.class);
            RpmaEndpointStatistics statistics = server.endpoint("default").statistics();
            RpmaEndpointStatistics orders = server.endpoint("orders").statistics();

            assertThat(request(FakeRpmaServer.PORT, ScriptedHandler.data(ScriptedHandler.ACCEPT)))
                .as("no token").isEqualTo(FakeRequest.State.DELETED);
            assertThat(request(FakeRpmaServer.PORT, RpmaAdmissionToken.issue(
                    RpmaAdmissionKey.of(1, "a-wrong-secret-under-the-right-key-id"), ScriptedHandler.data("accept"))))
                .as("a token of the wrong secret").isEqualTo(FakeRequest.State.DELETED);
            assertThat(request(ORDERS_PORT, RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET),
                    ScriptedHandler.data("accept"))))
                .as("the default endpoint's token on 'orders', which has its own key").isEqualTo(FakeRequest.State.DELETED);
            assertThat(request(FakeRpmaServer.PORT, RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET),
                    ScriptedHandler.data(ScriptedHandler.ACCEPT))))
                .as("a valid token").isEqualTo(FakeRequest.State.CONNECTED);
            assertThat(request(ORDERS_PORT, RpmaAdmissionToken.issue(RpmaAdmissionKey.of(2, ORDERS_SECRET),
                    ScriptedHandler.data(ScriptedHandler.ACCEPT))))
                .as("a valid token of 'orders'").isEqualTo(FakeRequest.State.CONNECTED);
            // admitted, then the handler throws: its failure is logged with its stack trace
            FakeRequest failing = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                .queueRequest(RpmaAdmissionToken.issue(RpmaAdmissionKey.of(1, SECRET),
                        ScriptedHandler.data(ScriptedHandler.THROW)));
            assertThat(failing.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
            assertThat(this.fake.await(WAIT, () -> statistics.accepted() == 1 && orders.accepted() == 1))
                .as("both valid tokens' connections counted").isTrue();

            assertThat(statistics.rejected(RejectReason.UNAUTHENTICATED)).as("rejected for their token").isEqualTo(2);
            assertThat(orders.rejected(RejectReason.UNAUTHENTICATED)).isOne();

            MeterRegistry meters = context.getBean(MeterRegistry.class);
            assertThat(meters.get(RpmaEndpointMetrics.REQUESTS).tag("endpoint", "default")
                .tag("reason", "unauthenticated").functionCounter().count()).isEqualTo(2);
            assertThat(meters.get(RpmaEndpointMetrics.REQUESTS).tag("endpoint", "orders")
                .tag("reason", "unauthenticated").functionCounter().count()).isOne();
            List<String> meterParts = new ArrayList<>();
            for (Meter meter : meters.getMeters()) {
                meterParts.add(meter.getId().getName());
                meterParts.add(String.valueOf(meter.getId().getDescription()));
                for (Tag tag : meter.getId().getTags()) {
                    meterParts.add(tag.getKey());
                    meterParts.add(tag.getValue());
                }
            }
            assertThat(meterParts).contains("rpma.requests", "unauthenticated");
            assertNowhere("the meters' names, descriptions and tags", String.join("\n", meterParts));
            String scrape = context.getBean(PrometheusMeterRegistry.class).scrape();
            assertThat(scrape).contains("rpma_requests");
            assertNowhere("Prometheus' scrape", scrape);

            assertThat(this.observed).as("the handler invocations were observed").isNotEmpty();
            assertNowhere("the observations", String.join("\n", this.observed));

            JsonMapper json = JsonMapper.builder().build();
            RpmaActuatorEndpoint rpma = context.getBean(RpmaActuatorEndpoint.class);
            String endpoint = json.writeValueAsString(rpma.server()) + json.writeValueAsString(rpma.endpoint("orders"));
            assertThat(endpoint).contains("\"unauthenticated\":2").contains("\"unauthenticated\":1");
            assertNowhere("/actuator/rpma", endpoint);
            String health = json.writeValueAsString(context.getBean(HealthEndpoint.class).health());
            assertThat(health).contains("orders");
            assertNowhere("/actuator/health", health);
            String configprops = json.writeValueAsString(
                    context.getBean(ConfigurationPropertiesReportEndpoint.class).configurationProperties());
            assertThat(configprops).as("values are shown").contains("\"port\":" + ORDERS_PORT);
            assertNowhere("/actuator/configprops", configprops);
            String env = json.writeValueAsString(context.getBean(EnvironmentEndpoint.class).environment(null));
            assertThat(env).as("values are shown").contains("\"" + ORDERS_PORT + "\"");
            assertNowhere("/actuator/env", env);

            assertThat(context.getBean(RpmaProperties.class).toString()).doesNotContain(PART);
        });
        String logs = String.join("\n", this.logged);
        assertThat(logs).as("the logs were captured, the handler's failure with them")
            .contains("RDMA endpoint 'default' listening")
            .contains("RDMA endpoint 'orders' listening")
            .contains("scripted failure")
            .contains("RDMA endpoint 'default' stopped");
        assertNowhere("the log events", logs);
        assertNowhere("the standard output and error", output.getAll());
    }

    @Test
    @SuppressWarnings("unchecked")
    void theConfigurationMetadataGivesNoSecretADefaultOrExample() throws IOException {
        Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(metadataJson());
        List<Map<String, Object>> properties = (List<Map<String, Object>>) metadata.get("properties");
        List<Map<String, Object>> keys = properties.stream()
            .filter((property) -> ((String) property.get("name")).contains("admission.keys")
                    || ((String) property.get("name")).toLowerCase(Locale.ROOT).contains("secret"))
            .toList();
        assertThat(keys).extracting((property) -> property.get("name")).contains("rpma.server.admission.keys");
        assertThat(keys).allSatisfy((property) -> assertThat(property).as((String) property.get("name"))
            .doesNotContainKey("defaultValue"));
        List<Map<String, Object>> hints = (List<Map<String, Object>>) metadata.getOrDefault("hints", List.of());
        assertThat(hints).noneSatisfy((hint) -> assertThat(((String) hint.get("name")).toLowerCase(Locale.ROOT))
            .containsAnyOf("secret", "admission.keys"));
        assertNowhere("the configuration metadata", metadataJson());
    }

    private FakeRequest.State request(int port, byte[] privateData) {
        return this.fake.endpointAt(FakeRpmaServer.ADDRESS, port).queueRequest(privateData).awaitConsumed(WAIT);
    }

    private ObservationRegistry observationRegistry() {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {

            @Override
            public void onStop(Observation.Context context) {
                RpmaSecretsAppearNowhereTests.this.observed.add(context.getName() + " " + context.getContextualName()
                        + " " + context.getAllKeyValues() + " " + context.getError());
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        return registry;
    }

    /** {@code META-INF/spring-configuration-metadata.json} as the build wrote it into this module's classes. */
    private static String metadataJson() throws IOException {
        try {
            Path classes = Path.of(RpmaProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            return Files.readString(classes.resolve("META-INF/spring-configuration-metadata.json"),
                    StandardCharsets.UTF_8);
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Neither secret in {@code text}: as configured, in part, in Base64 (both alphabets) or in hex. */
    private static void assertNowhere(String where, String text) {
        for (String secret : List.of(SECRET, ORDERS_SECRET)) {
            byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
            assertThat(text).as(where).doesNotContainIgnoringCase(PART)
                .doesNotContain(Base64.getEncoder().withoutPadding().encodeToString(bytes))
                .doesNotContain(Base64.getUrlEncoder().withoutPadding().encodeToString(bytes))
                .doesNotContainIgnoringCase(HexFormat.of().formatHex(bytes));
        }
    }

    /** The handler of the named endpoint 'orders'. */
    static class Orders {

        @RpmaConnectionHandler("orders")
        void handle(RpmaIncomingRequest request) {
            request.connect();
        }
    }
}
