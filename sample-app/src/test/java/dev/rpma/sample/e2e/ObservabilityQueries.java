package dev.rpma.sample.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The PromQL queries users are given: the three of {@code docs/observability.md} (as written there)
 * and every one of the Grafana dashboard {@code docs/grafana/rpma-dashboard.json}.
 */
final class ObservabilityQueries {

    static final String NOT_ACCEPTED = "sum by (endpoint) (rate(rpma_requests_total{outcome!=\"accepted\"}[5m]))"
            + " / sum by (endpoint) (rate(rpma_requests_total[5m]))";

    static final String HANDLER_P99 = "histogram_quantile(0.99, sum by (endpoint, le)"
            + " (rate(rpma_handler_duration_seconds_bucket[5m])))";

    static final String QUEUE_NEARLY_FULL = "max by (endpoint) (rpma_request_queue_size_requests"
            + " / rpma_request_queue_capacity_requests) > 0.8";

    static final List<String> DOCUMENTED = List.of(NOT_ACCEPTED, HANDLER_P99, QUEUE_NEARLY_FULL);

    /** Grafana's range variable in the dashboard's queries. */
    static final String RATE_INTERVAL = "$__rate_interval";

    private ObservabilityQueries() {
    }

    /** The repository's root: the first directory up from the working directory with {@code docs/}. */
    static Path repository() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isRegularFile(dir.resolve("docs/observability.md"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("No docs/observability.md above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    static String observabilityPage() throws IOException {
        return Files.readString(repository().resolve("docs/observability.md"));
    }

    /** Every {@code expr} of the dashboard's panels, as written there. */
    static List<String> dashboard() throws IOException {
        JsonNode dashboard = JsonMapper.builder().build()
            .readTree(Files.readString(repository().resolve("docs/grafana/rpma-dashboard.json")));
        List<String> queries = new ArrayList<>();
        for (JsonNode panel : dashboard.get("panels")) {
            for (JsonNode target : panel.get("targets")) {
                queries.add(target.get("expr").asString());
            }
        }
        return queries;
    }

    /** A dashboard query as Prometheus takes it: Grafana's range variable replaced by {@code range} (e.g. {@code 5m}). */
    static String withRange(String query, String range) {
        return query.replace(RATE_INTERVAL, range);
    }
}
