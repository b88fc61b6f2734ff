package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeConnection;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.server.admission.RpmaTokenAdmission;

/**
 * A client with an admission key against the real server with token admission over one
 * {@link FakeLibRpma#loopback()}: every connection of the pool and every reconnect is admitted, which
 * takes a token of its own each (the server admits a token once), and the handler sees the
 * application's private data behind it; a client without the key, or with another secret, is rejected
 * as unauthenticated; and the application data behind a token is limited to what still fits.
 */
class RpmaClientAdmissionTest {

    private static final int PORT = 7410;

    private static final RpmaAdmissionKey KEY = RpmaAdmissionKey.of(3, "a-secret-of-at-least-thirty-two-bytes!");

    private static final RpmaAdmissionKey WRONG_KEY = RpmaAdmissionKey.of(3, "not-the-secret-the-server-was-given!!");

    private static final byte[] TENANT = "acme".getBytes(StandardCharsets.US_ASCII);

    private final FakeLibRpma fake = FakeLibRpma.loopback();

    /** The private data the handler saw, behind the token. */
    private final List<String> handled = new CopyOnWriteArrayList<>();

    private final LoopbackServer server = LoopbackServer.start(this.fake, PORT, 1, RpmaEndpointSettings.Messages.DEFAULTS,
            recordingHandler(), Map.of("echo", (message, session) -> message), List.of(),
            new RpmaTokenAdmission(List.of(KEY)));

    private RpmaClient client;

    @AfterEach
    void everythingIsFreed() {
        if (this.client != null) {
            this.client.close();
        }
        this.server.close();
        this.fake.assertNoViolations();
        this.fake.assertAllFreed();
        this.fake.close();
    }

    private RpmaRequestHandler recordingHandler() {
        return (request) -> {
            this.handled.add(new String(request.privateData(), StandardCharsets.US_ASCII));
            request.connect();
        };
    }

    private RpmaClientBuilder builder() {
        return this.server.client("admitted").backoff(Duration.ofMillis(1), 2.0, Duration.ofMillis(4));
    }

    /** The private data the client's connects sent, in the order they were made. */
    private List<byte[]> sentPrivateData() {
        return this.fake.connections().stream().filter((connection) -> !connection.request().isServerSide())
            .map((connection) -> connection.request().connectPrivateData()).toList();
    }

    private long established() {
        return this.client.connectionStates().get(RpmaClientConnectionState.ESTABLISHED);
    }

    @Test
    void everyConnectionOfThePoolAndEveryReconnectPresentsAFreshTokenAndIsAdmitted() throws Exception {
        this.client = builder().poolSize(2).privateData(TENANT).admissionKey(KEY).build();
        this.server.await("both pooled connections established", () -> established() == 2);
        FakeConnection serverSide = this.fake.connections().stream()
            .filter((connection) -> connection.request().isServerSide()).findFirst().orElseThrow();

        serverSide.lose();
        this.server.await("connected again", () -> this.client.reconnects() == 1 && established() == 2);

        assertThat(this.client.request("echo", new byte[] { 7 }).get(10, TimeUnit.SECONDS)).containsExactly(7);
        assertThat(this.server.statistics().accepted()).isEqualTo(3);
        assertThat(this.server.statistics().rejectedTotal()).as("not one refused as a replay").isZero();
        assertThat(this.handled).as("the application's data, without the token").containsExactly("acme", "acme", "acme");
        List<byte[]> sent = sentPrivateData();
        assertThat(sent).hasSize(3).allSatisfy((data) -> assertThat(data)
            .hasSize(RpmaAdmissionToken.LENGTH + TENANT.length).startsWith(RpmaAdmissionToken.VERSION, (byte) KEY.id()));
        assertThat(sent.stream().map(java.util.Arrays::toString).distinct()).as("a token of its own each").hasSize(3);
    }

    @Test
    void withoutTheKeyOrWithAnotherSecretTheServerRejectsTheClientAsUnauthenticated() {
        RpmaClient withoutKey = builder().name("without-key").privateData(TENANT)
            .backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        try (withoutKey) {
            assertThatThrownBy(() -> withoutKey.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RpmaConnectRejectedException.class);
        }
        RpmaClient wrongKey = builder().name("wrong-key").privateData(TENANT).admissionKey(WRONG_KEY)
            .backoff(Duration.ofHours(1), 2.0, Duration.ofHours(1)).build();
        try (wrongKey) {
            assertThatThrownBy(() -> wrongKey.request("echo", new byte[1]).get(10, TimeUnit.SECONDS)).cause()
                .isInstanceOf(RpmaConnectRejectedException.class);
        }
        assertThat(this.server.statistics().rejected(RejectReason.UNAUTHENTICATED)).isEqualTo(2);
        assertThat(this.handled).as("refused before the handler").isEmpty();
    }

    @Test
    void theApplicationDataBehindATokenIsLimitedToWhatStillFitsInAConnect() {
        byte[] tooLong = new byte[RpmaAdmissionToken.MAX_APPLICATION_DATA + 1];
        assertThatThrownBy(() -> builder().privateData(tooLong).admissionKey(KEY).build())
            .isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("private data is at most 25 bytes with an admission key")
            .hasMessageContaining("the token takes 31 of the 56 bytes")
            .hasMessageContaining("got 26");
        this.client = builder().privateData(new byte[RpmaAdmissionToken.MAX_APPLICATION_DATA]).admissionKey(KEY).build();
        this.server.await("the longest data that fits admitted", () -> established() == 1);
        assertThat(this.handled).singleElement().asString().hasSize(RpmaAdmissionToken.MAX_APPLICATION_DATA);
    }
}
