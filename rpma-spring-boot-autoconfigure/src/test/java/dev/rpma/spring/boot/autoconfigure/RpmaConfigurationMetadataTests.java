package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.util.ClassUtils;

import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.admission.RpmaTokenAdmission;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metadata spring-boot-configuration-processor generated from {@link RpmaProperties}: what an
 * IDE shows for {@code rpma.server.*}.
 */
class RpmaConfigurationMetadataTests {

    private static Map<String, Map<String, Object>> properties;

    @BeforeAll
    @SuppressWarnings("unchecked")
    static void readMetadata() throws IOException {
        properties = new LinkedHashMap<>();
        ((List<Map<String, Object>>) RpmaConfigurationReference.metadata().get("properties"))
            .forEach((entry) -> properties.put((String) entry.get("name"), entry));
        assertThat(properties).as("generated metadata").containsKey("rpma.server.address");
    }

    @Test
    void everyPropertyOfTheIssueIsDescribed() {
        assertThat(properties).containsKeys("rpma.server.enabled", "rpma.server.address", "rpma.server.port",
                "rpma.server.log-to-slf4j", "rpma.server.connection.cq-size", "rpma.server.connection.rcq-size",
                "rpma.server.connection.sq-size", "rpma.server.connection.rq-size", "rpma.server.connection.timeout",
                "rpma.server.connection.shared-completion-channel", "rpma.server.acceptor.queue-capacity",
                "rpma.server.acceptor.handler-threads", "rpma.server.acceptor.request-deadline",
                "rpma.server.acceptor.poll-interval", "rpma.server.acceptor.max-consecutive-errors",
                "rpma.server.shutdown.grace-period", "rpma.server.shutdown.timeout", "rpma.server.endpoints",
                "rpma.server.messages.mode",
                "rpma.server.messages.receive-slots", "rpma.server.messages.send-slots",
                "rpma.server.messages.max-message-size", "rpma.server.messages.dispatch",
                "rpma.server.messages.dispatch-threads", "rpma.server.messages.send-queue-limit",
                "rpma.server.messages.shared-receive-slots",
                "rpma.server.limits.max-connections", "rpma.server.limits.idle-timeout",
                "rpma.server.limits.requests-per-second", "rpma.server.limits.request-burst",
                "rpma.server.admission.keys", "rpma.server.admission.max-clock-skew",
                "rpma.server.admission.replay-capacity",
                "rpma.server.event-loops.count", "rpma.server.event-loops.busy-poll", "rpma.server.regions");
        properties.forEach((name, entry) -> assertThat((String) entry.get("description")).as(name).isNotBlank()
            .doesNotStartWith("The ").doesNotStartWith("A "));
    }

    @Test
    void booleansStartWithWhether() {
        properties.values().stream().filter((entry) -> "java.lang.Boolean".equals(entry.get("type")))
            .forEach((entry) -> assertThat((String) entry.get("description")).as((String) entry.get("name"))
                .startsWith("Whether"));
    }

    @Test
    void everyServerPropertyHasItsDefaultInTheMetadataOrSaysWhatUnsetMeans() {
        // no value of their own, and the words of their description that say what happens then
        Map<String, String> documentedExceptions = Map.of("rpma.server.address", "required",
                "rpma.server.connection.cq-size", "Unset: that sum on an endpoint with message handlers, else"
                        + " librpma's default",
                "rpma.server.connection.sq-size", "Unset: send-slots on an endpoint with message handlers, else"
                        + " librpma's default",
                "rpma.server.connection.rq-size", "Unset: receive-slots on an endpoint with message handlers, else"
                        + " librpma's default",
                "rpma.server.limits.requests-per-second", "Unset: no limit",
                "rpma.server.limits.request-burst", "Unset: requests-per-second rounded up",
                "rpma.server.admission.keys", "Empty: requests need no token");
        List<String> leaves = properties.keySet().stream().filter((name) -> name.startsWith("rpma.server."))
            .filter((name) -> !((String) properties.get(name).get("type")).startsWith("java.util.Map<")).toList();
        assertThat(leaves).containsAll(documentedExceptions.keySet()).hasSizeGreaterThan(30);
        for (String leaf : leaves) {
            if (documentedExceptions.containsKey(leaf)) {
                assertThat(properties.get(leaf)).as(leaf).doesNotContainKey("defaultValue");
                assertThat(description(leaf)).contains(documentedExceptions.get(leaf));
            }
            else {
                assertThat(properties.get(leaf)).as(leaf).containsKey("defaultValue");
            }
        }
    }

    @Test
    void defaultsAreThoseOfTheServerCore() {
        RpmaEndpointSettings.Acceptor acceptor = RpmaEndpointSettings.Acceptor.DEFAULTS;
        RpmaEndpointSettings.Messages messages = RpmaEndpointSettings.Messages.DEFAULTS;
        RpmaEndpointSettings.Limits limits = RpmaEndpointSettings.Limits.DEFAULTS;
        assertThat(defaultValue("rpma.server.port")).isEqualTo(7204);
        assertThat(defaultValue("rpma.server.enabled")).isEqualTo(true);
        assertThat(defaultValue("rpma.server.acceptor.queue-capacity")).isEqualTo(acceptor.queueCapacity());
        assertThat(defaultValue("rpma.server.acceptor.handler-threads")).isEqualTo(acceptor.handlerThreads());
        assertThat(defaultValue("rpma.server.acceptor.request-deadline")).isEqualTo(acceptor.requestDeadline());
        assertThat(defaultValue("rpma.server.acceptor.poll-interval")).isEqualTo(acceptor.pollInterval());
        assertThat(defaultValue("rpma.server.acceptor.max-consecutive-errors"))
            .isEqualTo(acceptor.maxConsecutiveErrors());
        assertThat(defaultValue("rpma.server.acceptor.inline-handler")).isEqualTo(acceptor.inlineHandler());
        assertThat(defaultValue("rpma.server.acceptor.handler-batch-scheduling")).isEqualTo(acceptor.batchScheduling());
        assertThat(defaultValue("rpma.server.acceptor.handler-spin-looks")).isEqualTo(acceptor.spinLooks());
        assertThat(defaultValue("rpma.server.acceptor.on-event-loop")).isEqualTo(acceptor.onEventLoop());
        assertThat(defaultValue("rpma.server.messages.mode")).isEqualTo(messages.mode());
        assertThat(defaultValue("rpma.server.messages.receive-slots")).isEqualTo(messages.receiveSlots());
        assertThat(defaultValue("rpma.server.messages.send-slots")).isEqualTo(messages.sendSlots());
        assertThat(defaultValue("rpma.server.messages.max-message-size")).isEqualTo(messages.maxMessageSize());
        assertThat(defaultValue("rpma.server.messages.dispatch")).isEqualTo(messages.dispatch());
        assertThat(defaultValue("rpma.server.messages.dispatch-threads")).isEqualTo(messages.dispatchThreads());
        assertThat(defaultValue("rpma.server.messages.send-queue-limit")).isEqualTo(messages.sendQueueLimit());
        assertThat(defaultValue("rpma.server.messages.shared-receive-slots")).isEqualTo(messages.sharedReceiveSlots());
        assertThat(defaultValue("rpma.server.limits.max-connections")).isEqualTo(limits.maxConnections());
        assertThat(defaultValue("rpma.server.limits.idle-timeout")).isEqualTo(limits.idleTimeout());
        assertThat(defaultValue("rpma.server.admission.max-clock-skew"))
            .isEqualTo(RpmaTokenAdmission.DEFAULT_MAX_CLOCK_SKEW);
        assertThat(defaultValue("rpma.server.admission.replay-capacity"))
            .isEqualTo(RpmaTokenAdmission.DEFAULT_REPLAY_CAPACITY);
        assertThat(defaultValue("rpma.server.event-loops.count")).isEqualTo(0);
        assertThat(defaultValue("rpma.server.event-loops.busy-poll")).isEqualTo(RpmaServerSettings.DEFAULT_BUSY_POLL);
        assertThat(defaultValue("rpma.server.shutdown.grace-period")).isEqualTo(RpmaServerSettings.DEFAULT_GRACE_PERIOD);
        assertThat(defaultValue("rpma.server.shutdown.timeout")).isEqualTo(RpmaServerSettings.DEFAULT_SHUTDOWN_TIMEOUT);
        // librpma's own defaults, now set explicitly
        assertThat(defaultValue("rpma.server.connection.rcq-size")).isEqualTo(0);
        assertThat(defaultValue("rpma.server.connection.timeout")).isEqualTo(Duration.ofMillis(1000));
        assertThat(defaultValue("rpma.server.connection.shared-completion-channel")).isEqualTo(false);
    }

    @Test
    void descriptionsAreOneOrTwoSentencesForUsers() {
        properties.forEach((name, entry) -> {
            String description = (String) entry.get("description");
            assertThat(description.split("(?<=[a-z0-9')])\\. ")).as(name).hasSizeLessThanOrEqualTo(2);
            assertThat(description).as(name).doesNotContainPattern("docs/|\\.md\\b|\\(default: ");
        });
        assertThat(description("rpma.server.address")).contains("Loopback and wildcard addresses do not work");
        assertThat(description("rpma.server.shutdown.grace-period")).contains("negative waits forever")
            .contains("zero does not wait");
        assertThat(description("rpma.server.acceptor.inline-handler")).contains("Not inherited by named endpoints")
            .contains("a promise about one endpoint's handler");
        assertThat(description("rpma.server.messages.shared-receive-slots"))
            .contains("the performance page of the documentation");
    }

    /** The metadata's default, converted as Spring Boot converts the property's value. */
    private static Object defaultValue(String property) {
        Map<String, Object> entry = properties.get(property);
        assertThat(entry).as(property).containsKey("defaultValue");
        try {
            Class<?> type = ClassUtils.forName((String) entry.get("type"), null);
            return ApplicationConversionService.getSharedInstance().convert(String.valueOf(entry.get("defaultValue")),
                    type);
        }
        catch (ClassNotFoundException ex) {
            throw new IllegalStateException(ex);
        }
    }

    private static String description(String property) {
        return (String) properties.get(property).get("description");
    }
}
