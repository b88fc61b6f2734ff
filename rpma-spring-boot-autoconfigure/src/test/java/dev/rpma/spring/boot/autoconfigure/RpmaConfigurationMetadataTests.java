package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.boot.json.JsonParserFactory;

import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaServerSettings;

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
        for (URL url : Collections.list(RpmaConfigurationMetadataTests.class.getClassLoader()
            .getResources("META-INF/spring-configuration-metadata.json"))) {
            String json;
            try (InputStream in = url.openStream()) {
                json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            Map<String, Object> metadata = JsonParserFactory.getJsonParser().parseMap(json);
            List<Map<String, Object>> entries = (List<Map<String, Object>>) metadata.get("properties");
            if (entries.stream().anyMatch((entry) -> "rpma.server.address".equals(entry.get("name")))) {
                properties = new LinkedHashMap<>();
                entries.forEach((entry) -> properties.put((String) entry.get("name"), entry));
            }
        }
        assertThat(properties).as("generated metadata with rpma.server.address on the class path").isNotNull();
    }

    @Test
    void everyPropertyOfTheIssueIsDescribed() {
        assertThat(properties).containsKeys("rpma.server.enabled", "rpma.server.address", "rpma.server.port",
                "rpma.server.log-to-slf4j", "rpma.server.connection.cq-size", "rpma.server.connection.rcq-size",
                "rpma.server.connection.sq-size", "rpma.server.connection.rq-size", "rpma.server.connection.timeout",
                "rpma.server.connection.shared-completion-channel", "rpma.server.acceptor.queue-capacity",
                "rpma.server.acceptor.handler-threads", "rpma.server.acceptor.request-deadline",
                "rpma.server.acceptor.poll-interval", "rpma.server.acceptor.max-consecutive-errors",
                "rpma.server.shutdown.grace-period", "rpma.server.endpoints", "rpma.server.messages.mode",
                "rpma.server.messages.receive-slots", "rpma.server.messages.send-slots",
                "rpma.server.messages.max-message-size", "rpma.server.messages.dispatch",
                "rpma.server.messages.dispatch-threads", "rpma.server.messages.send-queue-limit",
                "rpma.server.messages.shared-receive-slots",
                "rpma.server.limits.max-connections", "rpma.server.limits.idle-timeout",
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
    void defaultsAreThoseTheServerApplies() {
        assertThat(properties.get("rpma.server.port").get("defaultValue")).isEqualTo(7204);
        assertThat(properties.get("rpma.server.enabled").get("defaultValue")).isEqualTo(true);
        assertThat(properties.get("rpma.server.shutdown.grace-period").get("defaultValue")).isEqualTo("20s");
        // acceptor values are null fields so that named endpoints can inherit: their defaults are in the text
        assertThat(description("rpma.server.acceptor.queue-capacity"))
            .contains("(default: " + RpmaEndpointSettings.Acceptor.DEFAULT_QUEUE_CAPACITY + ")");
        assertThat(description("rpma.server.acceptor.handler-threads"))
            .contains("(default: " + RpmaEndpointSettings.Acceptor.DEFAULT_HANDLER_THREADS + ")");
        assertThat(description("rpma.server.acceptor.request-deadline"))
            .contains("(default: " + RpmaEndpointSettings.Acceptor.DEFAULT_REQUEST_DEADLINE.toSeconds() + "s)");
        assertThat(description("rpma.server.acceptor.poll-interval"))
            .contains("(default: " + RpmaEndpointSettings.Acceptor.DEFAULT_POLL_INTERVAL.toSeconds() + "s)");
        assertThat(description("rpma.server.acceptor.max-consecutive-errors"))
            .contains("(default: " + RpmaEndpointSettings.Acceptor.DEFAULT_MAX_CONSECUTIVE_ERRORS + ")");
        assertThat(description("rpma.server.messages.receive-slots"))
            .contains("(default: " + RpmaEndpointSettings.Messages.DEFAULT_RECEIVE_SLOTS + ")");
        assertThat(description("rpma.server.messages.send-slots"))
            .contains("(default: " + RpmaEndpointSettings.Messages.DEFAULT_SEND_SLOTS + ")");
        assertThat(description("rpma.server.messages.max-message-size"))
            .contains("(default: " + RpmaEndpointSettings.Messages.DEFAULT_MAX_MESSAGE_SIZE + ")");
        assertThat(description("rpma.server.messages.dispatch-threads"))
            .contains("(default: " + RpmaEndpointSettings.Messages.DEFAULT_DISPATCH_THREADS + ")");
        assertThat(description("rpma.server.messages.send-queue-limit"))
            .contains("(default: " + RpmaEndpointSettings.Messages.DEFAULT_SEND_QUEUE_LIMIT + ")");
        assertThat(description("rpma.server.messages.shared-receive-slots")).contains("(default: 0)");
        assertThat(description("rpma.server.limits.max-connections"))
            .contains("(default: " + RpmaEndpointSettings.Limits.DEFAULT_MAX_CONNECTIONS + ")");
        assertThat(description("rpma.server.limits.idle-timeout")).contains("(default: 0)");
        assertThat(properties.get("rpma.server.event-loops.count").get("defaultValue")).isEqualTo(0);
        assertThat(DurationStyle.detectAndParse(
                (String) properties.get("rpma.server.event-loops.busy-poll").get("defaultValue")))
            .isEqualTo(RpmaServerSettings.DEFAULT_BUSY_POLL);
        assertThat(description("rpma.server.address")).contains("Loopback and wildcard addresses do not work");
        assertThat(description("rpma.server.shutdown.grace-period")).contains("negative waits forever")
            .contains("zero does not wait");
    }

    private static String description(String property) {
        return (String) properties.get(property).get("description");
    }
}
