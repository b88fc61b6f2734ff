package dev.rpma.sample.e2e;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A real Prometheus's HTTP API: instant queries, each series as its labels and value. */
final class PrometheusApi {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    private final int port;

    PrometheusApi(int port) {
        this.port = port;
    }

    /** One series of a vector result. */
    record Series(Map<String, String> labels, double value) {
    }

    /**
     * {@code GET /api/v1/query}: the series of the instant vector {@code query} gives now, by their
     * {@code endpoint} label (or all labels when there is none); fails unless Prometheus answers
     * {@code success} with a vector.
     */
    Map<String, Series> query(String query) throws IOException, InterruptedException {
        URI uri = URI.create("http://127.0.0.1:" + this.port + "/api/v1/query?query="
                + URLEncoder.encode(query, StandardCharsets.UTF_8));
        HttpResponse<String> response = this.http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).GET()
            .build(), HttpResponse.BodyHandlers.ofString());
        JsonNode body = JSON.readTree(response.body());
        if (response.statusCode() != 200 || !"success".equals(body.path("status").asString())
                || !"vector".equals(body.path("data").path("resultType").asString())) {
            throw new AssertionError("Prometheus answered " + response.statusCode() + " to " + query + ": "
                    + response.body());
        }
        Map<String, Series> series = new LinkedHashMap<>();
        for (JsonNode result : body.path("data").path("result")) {
            Map<String, String> labels = new LinkedHashMap<>();
            result.path("metric").properties().forEach((label) -> labels.put(label.getKey(), label.getValue().asString()));
            String value = result.path("value").get(1).asString();
            double number = switch (value) {
                case "NaN" -> Double.NaN;
                case "+Inf" -> Double.POSITIVE_INFINITY;
                case "-Inf" -> Double.NEGATIVE_INFINITY;
                default -> Double.parseDouble(value);
            };
            series.put(labels.getOrDefault("endpoint", labels.toString()), new Series(labels, number));
        }
        return series;
    }
}
