package dev.rpma.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.rpma.sampleclient.SampleClient;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaEndpointState;
import dev.rpma.server.RpmaServer;
import dev.rpma.spring.boot.test.AutoConfigureRpmaLoopback;
import dev.rpma.spring.boot.test.RpmaLoopback;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The sample app's actuator over real HTTP, as its own {@code application.yml} configures it, on the
 * in-JVM loopback of librpma: anyone who reaches the port can read {@code /actuator/rpma}, but nothing
 * there lets an unauthenticated caller stop the app ({@code shutdown} is not exposed) or turn its
 * clients away (the {@code rpma} endpoint's pause is not served, its access being read-only).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "rpma.server.shutdown.grace-period=0")
@AutoConfigureRpmaLoopback
class SampleAppActuatorAccessTests {

    /** The soft-RoCE VM's address, as the e2e tests dial it: on the loopback any address reaches the app. */
    private static final String SERVER = "198.18.0.1";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @DynamicPropertySource
    static void persistentRegionInATemporaryFile(DynamicPropertyRegistry registry) throws IOException {
        Path directory = Files.createTempDirectory("sample-app-actuator");
        directory.toFile().deleteOnExit();
        Path region = directory.resolve("persistent.region");
        region.toFile().deleteOnExit();
        registry.add("rpma.server.regions.persistent.path", region::toString);
    }

    @Value("${local.server.port}")
    int port;

    @Autowired
    ConfigurableApplicationContext context;

    @Autowired
    RpmaServer server;

    @Autowired
    RpmaLoopback loopback;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

    @Test
    void theRpmaEndpointIsReadable() throws Exception {
        HttpResponse<String> response = get("/actuator/rpma");
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).contains("\"default\"").contains("\"echo\"").contains("\"RUNNING\"");
        assertThat(get("/actuator/rpma/default").statusCode()).isEqualTo(200);
    }

    @Test
    void shutdownIsNotServedAndTheAppKeepsRunning() throws Exception {
        HttpResponse<String> response = post("/actuator/shutdown", "");
        assertThat(response.statusCode()).as(response.body()).isIn(404, 405);
        assertThat(response.body()).doesNotContain("Shutting down");
        assertThat(this.context.isActive()).isTrue();
        assertThat(this.context.isRunning()).isTrue();
        assertThat(get("/actuator/health").statusCode()).isEqualTo(200);
        assertThat(this.server.endpoint("default").state()).isEqualTo(RpmaEndpointState.RUNNING);
    }

    @Test
    void pausingAnEndpointIsNotServedAndItKeepsAccepting() throws Exception {
        // the body and content type of the write operation RpmaActuatorEndpoint#accepting(name, action)
        HttpResponse<String> response = post("/actuator/rpma/default", "{\"action\":\"pause\"}");
        assertThat(response.statusCode()).as(response.body()).isIn(404, 405);
        assertThat(this.server.endpoint("default").state()).isEqualTo(RpmaEndpointState.RUNNING);
        assertThat(get("/actuator/rpma/default").body()).contains("\"RUNNING\"").doesNotContain("\"PAUSED\"");
        try (SampleClient client = SampleClient.open(this.loopback.rpma(), SERVER, TIMEOUT)) {
            assertThat(client.hello(ExampleProtocols.HELLO_PORT)).as("the endpoint still accepts")
                .isEqualTo(ExampleProtocols.SERVER_GREETING);
        }
        this.loopback.assertNoViolations();
    }

    @Test
    void theDefaultConfigurationAllowsNoWrites() {
        // the sample has no profile that changes these: writes would need an explicit setting here
        assertThat(this.context.getEnvironment().getActiveProfiles()).isEmpty();
        assertThat(this.context.getEnvironment().getProperty("management.endpoint.rpma.access")).isNull();
        assertThat(this.context.getEnvironment().getProperty("management.endpoint.shutdown.access")).isNull();
        assertThat(this.context.getEnvironment().getProperty("management.endpoints.access.default")).isNull();
        assertThat(this.context.getEnvironment().getProperty("management.endpoints.web.exposure.include"))
            .contains("rpma").doesNotContain("shutdown").doesNotContain("*");
    }

    private HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return this.http.send(HttpRequest.newBuilder(uri(path)).timeout(TIMEOUT).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
        return this.http.send(HttpRequest.newBuilder(uri(path))
            .timeout(TIMEOUT)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(), HttpResponse.BodyHandlers.ofString());
    }

    private URI uri(String path) {
        // the app's HTTP listens on loopback only (server.address)
        return URI.create("http://127.0.0.1:" + this.port + path);
    }
}
