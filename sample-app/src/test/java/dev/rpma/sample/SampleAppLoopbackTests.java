package dev.rpma.sample;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.rpma.sampleclient.PingPongResult;
import dev.rpma.sampleclient.SampleClient;
import dev.rpma.sampleclient.SampleClientException;
import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.spring.boot.test.RpmaLoopback;
import dev.rpma.spring.boot.test.RpmaTest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The whole sample app, with its own {@code application.yml}, on the in-JVM loopback of librpma: the
 * Java sample client speaks the three example protocols to it with the assertions of the soft-RoCE
 * end-to-end tests ({@code dev.rpma.sample.e2e.SampleAppEndToEndTests}), with no RDMA device. The
 * client dials the address the e2e tests use; on the loopback only the port decides.
 */
@RpmaTest(properties = "rpma.server.shutdown.grace-period=0")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SampleAppLoopbackTests {

    /** The soft-RoCE VM's address, as the e2e tests dial it: on the loopback any address reaches the app. */
    private static final String SERVER = "198.18.0.1";

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private static final int PING_PONG_ROUNDS = 10_000;

    @DynamicPropertySource
    static void persistentRegionInATemporaryFile(DynamicPropertyRegistry registry) throws IOException {
        // the context outlives the class (Spring caches it), so the file goes when the JVM exits
        Path directory = Files.createTempDirectory("sample-app-loopback");
        directory.toFile().deleteOnExit();
        Path region = directory.resolve("persistent.region");
        region.toFile().deleteOnExit();
        registry.add("rpma.server.regions.persistent.path", region::toString);
    }

    @Autowired
    RpmaLoopback loopback;

    @Autowired
    MeterRegistry meters;

    private SampleClient client;

    @BeforeAll
    void openTheClient() {
        this.client = SampleClient.open(this.loopback.rpma(), SERVER, TIMEOUT);
    }

    @AfterAll
    void closeTheClient() {
        this.client.close();
    }

    @AfterEach
    void noRuleOfLibrpmaWasBroken() {
        this.loopback.assertNoViolations();
    }

    @Test
    void helloExchangesTheExamplesGreetingsInThePrivateData() {
        assertThat(this.client.hello(ExampleProtocols.HELLO_PORT)).isEqualTo(ExampleProtocols.SERVER_GREETING);
    }

    @Test
    void helloRejectsAStrangersGreeting() {
        assertThatThrownBy(() -> this.client.hello(ExampleProtocols.HELLO_PORT, "Hello stranger!"))
            .isInstanceOfSatisfying(SampleClientException.class,
                    (ex) -> assertThat(ex.failure()).isEqualTo(Failure.REJECTED));
    }

    @Test
    void readGetsTheExposedRegion() {
        assertThat(this.client.read(ExampleProtocols.READ_PORT)).isEqualTo(ExampleProtocols.READ_CONTENT);
    }

    @Test
    void pingPongAnswersTenThousandRoundsEachWithTheCounterPlusOne() {
        double roundsBefore = this.meters.counter("sample.pingpong.rounds").count();
        double doneBefore = this.meters.counter("sample.pingpong.sessions", "outcome", "done").count();
        PingPongResult result = this.client.pingPong(ExampleProtocols.PING_PONG_PORT, 1000, PING_PONG_ROUNDS);
        assertThat(result.rounds()).isEqualTo(PING_PONG_ROUNDS);
        assertThat(result.lastReply()).isEqualTo(1000 + PING_PONG_ROUNDS);
        // the client's I_M_DONE reaches the handler before its disconnect: the session ends done
        assertThat(this.loopback.nativeLayer().await(TIMEOUT,
                () -> this.meters.counter("sample.pingpong.sessions", "outcome", "done").count() == doneBefore + 1))
            .as("the ping-pong session ended done").isTrue();
        assertThat(this.meters.counter("sample.pingpong.rounds").count()).isEqualTo(roundsBefore + PING_PONG_ROUNDS);
    }
}
