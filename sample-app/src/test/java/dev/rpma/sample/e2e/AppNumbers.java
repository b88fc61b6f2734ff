package dev.rpma.sample.e2e;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import tools.jackson.databind.JsonNode;

/**
 * The app's counters as {@code /actuator/rpma} ("rpma ...") and {@code /actuator/prometheus}
 * ("prometheus ...") report them at one moment, and what {@code /actuator/health} says; tests
 * compare the changes between two snapshots with {@link Expected#changes()}.
 */
record AppNumbers(Map<String, Long> counters, Map<String, Long> established, Map<String, Long> active,
        JsonNode health) {

    static final List<String> SOURCES = List.of("rpma", "prometheus");

    static AppNumbers read(SampleAppProcess app) throws IOException, InterruptedException {
        JsonNode rpma = app.json("/actuator/rpma").path("endpoints");
        Prometheus prometheus = app.prometheus();
        JsonNode health = app.json("/actuator/health");
        Map<String, Long> counters = new TreeMap<>();
        Map<String, Long> active = new TreeMap<>();
        Map<String, Long> established = new TreeMap<>();
        for (String name : Expected.ENDPOINTS) {
            JsonNode endpoint = rpma.path(name);
            if (endpoint.isMissingNode()) {
                throw new AssertionError("/actuator/rpma has no endpoint '" + name + "': " + rpma);
            }
            JsonNode requests = endpoint.path("requests");
            JsonNode events = endpoint.path("connectionEvents");
            counters.put("rpma " + name + " obtained", requests.path("obtained").asLong());
            counters.put("rpma " + name + " accepted", requests.path("accepted").asLong());
            counters.put("rpma " + name + " failed-to-connect", requests.path("failedToConnect").asLong());
            counters.put("rpma " + name + " closed+lost", events.path("closed").asLong() + events.path("lost").asLong());
            counters.put("prometheus " + name + " accepted",
                    prometheus.count("rpma_requests_total", "endpoint", name, "outcome", "accepted"));
            counters.put("prometheus " + name + " closed+lost",
                    prometheus.count("rpma_connection_events_total", "endpoint", name, "type", "closed")
                            + prometheus.count("rpma_connection_events_total", "endpoint", name, "type", "lost"));
            for (String reason : Expected.REJECT_REASONS) {
                counters.put("rpma " + name + " rejected " + reason, requests.path("rejected").path(reason).asLong());
                counters.put("prometheus " + name + " rejected " + reason, prometheus.count("rpma_requests_total",
                        "endpoint", name, "outcome", "rejected", "reason", reason));
            }
            established.put("rpma " + name, events.path("established").asLong());
            established.put("prometheus " + name,
                    prometheus.count("rpma_connection_events_total", "endpoint", name, "type", "established"));
            JsonNode sessions = endpoint.path("sessions");
            long ended = 0;
            for (String reason : Expected.END_REASONS) {
                long rpmaCount = sessions.path("ended").path(reason).asLong();
                ended += rpmaCount;
                counters.put("rpma " + name + " ended " + reason, rpmaCount);
                counters.put("prometheus " + name + " ended " + reason,
                        prometheus.count("rpma_sessions_ended_sessions_total", "endpoint", name, "reason", reason));
            }
            counters.put("rpma " + name + " ended", ended);
            for (String reason : Expected.BAD_MESSAGES) {
                counters.put("prometheus " + name + " bad " + reason,
                        prometheus.count("rpma_messages_bad_messages_total", "endpoint", name, "reason", reason));
            }
            active.put("rpma " + name, sessions.path("active").asLong());
            active.put("prometheus " + name, prometheus.count("rpma_sessions_active_sessions", "endpoint", name));
            active.put("health " + name, health.path("components").path("rpma").path("components").path(name)
                .path("details").path("activeSessions").asLong(-1));
        }
        counters.put("prometheus sample_pingpong_rounds", prometheus.count("sample_pingpong_rounds_total"));
        long doneOrClosed = 0;
        for (String outcome : List.of("done", "closed", "failed")) {
            long count = prometheus.count("sample_pingpong_sessions_total", "outcome", outcome);
            counters.put("prometheus sample_pingpong_sessions " + outcome, count);
            doneOrClosed += outcome.equals("failed") ? 0 : count;
        }
        counters.put("prometheus sample_pingpong_sessions done+closed", doneOrClosed);
        return new AppNumbers(counters, established, active, health);
    }

    /** Each counter's change since {@code before}. */
    Map<String, Long> changesSince(AppNumbers before) {
        Map<String, Long> changes = new TreeMap<>();
        this.counters.forEach((key, value) -> changes.put(key, value - before.counters.getOrDefault(key, 0L)));
        return changes;
    }

    /** ESTABLISHED events counted since {@code before}, by source and endpoint ("rpma default"). */
    Map<String, Long> establishedSince(AppNumbers before) {
        Map<String, Long> changes = new TreeMap<>();
        this.established.forEach((key, value) -> changes.put(key, value - before.established.getOrDefault(key, 0L)));
        return changes;
    }

    /** Active sessions of an endpoint, as {@code /actuator/rpma} reports them. */
    long activeSessions(String endpoint) {
        return this.active.get("rpma " + endpoint);
    }
}
