package dev.rpma.sample.e2e;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The queries the container end-to-end tests run against a real Prometheus are the ones the docs and
 * the dashboard give users (fast: no RDMA, no Prometheus).
 */
class ObservabilityQueriesTests {

    @Test
    void theDocumentedQueriesAreTheTestedOnes() throws Exception {
        String page = ObservabilityQueries.observabilityPage();
        for (String query : ObservabilityQueries.DOCUMENTED) {
            assertThat(page).contains("\n" + query + "\n");
        }
    }

    @Test
    void theDashboardShowsTheDocumentedQueries() throws Exception {
        List<String> dashboard = ObservabilityQueries.dashboard().stream()
            .map((query) -> ObservabilityQueries.withRange(query, "5m"))
            .toList();
        assertThat(dashboard).hasSize(10)
            .contains(ObservabilityQueries.NOT_ACCEPTED, ObservabilityQueries.HANDLER_P99)
            .contains(ObservabilityQueries.QUEUE_NEARLY_FULL.replace(" > 0.8", ""));
    }
}
