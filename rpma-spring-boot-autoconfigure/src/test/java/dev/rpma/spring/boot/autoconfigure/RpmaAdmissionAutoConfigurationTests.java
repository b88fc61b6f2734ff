package dev.rpma.spring.boot.autoconfigure;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.server.RejectReason;
import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;
import dev.rpma.spring.annotation.RpmaConnectionHandler;
import dev.rpma.spring.boot.actuate.FakeRpmaServer;

import static dev.rpma.spring.boot.autoconfigure.RpmaAdmissionsTests.HELLO_SERVER;
import static dev.rpma.spring.boot.autoconfigure.RpmaAdmissionsTests.SECRET_1;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The admission step wired into the auto-configured server over the scripted fake: the token from the
 * properties, the application's {@link RpmaAdmission} beans, the request-rate limit, and a start that
 * fails on a bad key without showing it.
 */
class RpmaAdmissionAutoConfigurationTests {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private static final RpmaAdmissionKey KEY = RpmaAdmissionKey.of(1, SECRET_1);

    private final FakeLibRpma fake = new FakeLibRpma().requireNonBlockingEndpointFd(true);

    private final ApplicationContextRunner runner = FakeRpmaServer.runner(this.fake)
        .withPropertyValues("rpma.server.event-loops.count=1")
        .withBean(Recorder.class);

    @AfterEach
    void nothingNativeLeakedOrMisused() {
        this.fake.assertCleanAndClose();
    }

    @Test
    void withKeysOnlyRequestsWithATokenReachTheHandlerWhichSeesTheDataBehindIt() {
        this.runner
            .withPropertyValues("rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + SECRET_1)
            .run((context) -> {
                FakeRequest stranger = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                    .queueRequest(HELLO_SERVER);
                assertThat(stranger.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
                FakeRequest member = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                    .queueRequest(RpmaAdmissionToken.issue(KEY, HELLO_SERVER));
                assertThat(member.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);

                assertThat(context.getBean(Recorder.class).seen).containsExactly(HELLO_SERVER);
                RpmaEndpointStatistics statistics = statistics(context.getBean(RpmaServer.class));
                assertThat(statistics.rejected(RejectReason.UNAUTHENTICATED)).isOne();
                // counted by the acceptor once rpma_conn_req_connect returned, a moment after the fake said CONNECTED
                assertThat(this.fake.await(WAIT, () -> statistics.accepted() == 1)).as("accepted once").isTrue();
            });
    }

    @Test
    void theApplicationsAdmissionBeansRunInOrderOnTheAcceptorThread() {
        this.runner.withUserConfiguration(AdmissionSteps.class).run((context) -> {
            FakeRequest refused = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                .queueRequest("nope".getBytes(StandardCharsets.US_ASCII));
            assertThat(refused.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);
            FakeRequest admitted = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                .queueRequest(HELLO_SERVER);
            assertThat(admitted.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);

            AdmissionSteps steps = context.getBean(AdmissionSteps.class);
            assertThat(steps.calls).containsExactly("first", "first", "second");
            assertThat(steps.threads).containsOnly("rpma-acceptor-default");
            assertThat(statistics(context.getBean(RpmaServer.class)).rejected(RejectReason.UNAUTHENTICATED)).isOne();
        });
    }

    @Test
    void theRequestRateFromThePropertiesRejectsTheRestAsRateLimited() {
        this.runner.withPropertyValues("rpma.server.limits.requests-per-second=0.001", "rpma.server.limits.request-burst=1")
            .run((context) -> {
                FakeRequest first = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                    .queueRequest(HELLO_SERVER);
                assertThat(first.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.CONNECTED);
                FakeRequest second = this.fake.endpointAt(FakeRpmaServer.ADDRESS, FakeRpmaServer.PORT)
                    .queueRequest(HELLO_SERVER);
                assertThat(second.awaitConsumed(WAIT)).isEqualTo(FakeRequest.State.DELETED);

                assertThat(statistics(context.getBean(RpmaServer.class)).rejected(RejectReason.RATE_LIMITED)).isOne();
                assertThat(context.getBean(Recorder.class).seen).hasSize(1);
            });
    }

    @Test
    void aShortSecretFailsTheStartNamingThePropertyButNotTheSecret() {
        String weak = "password123";
        this.runner.withPropertyValues("rpma.server.admission.keys[0].id=1", "rpma.server.admission.keys[0].secret=" + weak)
            .run((context) -> {
                assertThat(context).hasFailed();
                assertThat(context.getStartupFailure()).rootCause().isInstanceOf(InvalidRpmaPropertyException.class)
                    .hasMessageContaining("rpma.server.admission.keys[0].secret")
                    .hasMessageContaining("at least 32 bytes")
                    .hasMessageNotContaining(weak);
                assertThat(this.fake.liveHandles(FakeLibRpma.Kind.PEER)).as("nothing native was made").isEmpty();
            });
    }

    private static RpmaEndpointStatistics statistics(RpmaServer server) {
        return server.endpoint("default").statistics();
    }

    /** Connects every request of the default endpoint, recording the private data it saw. */
    static class Recorder {

        final List<byte[]> seen = new CopyOnWriteArrayList<>();

        @RpmaConnectionHandler
        void handle(RpmaIncomingRequest request) {
            this.seen.add(request.privateData());
            request.connect();
        }
    }

    /** Two admission beans: the first refuses what does not start with "Hello", the second admits all. */
    @Configuration(proxyBeanMethods = false)
    static class AdmissionSteps {

        final List<String> calls = new CopyOnWriteArrayList<>();

        final List<String> threads = new CopyOnWriteArrayList<>();

        @Bean
        @Order(2)
        RpmaAdmission second() {
            return (endpoint, data) -> {
                this.calls.add("second");
                this.threads.add(Thread.currentThread().getName());
                return RpmaAdmission.Decision.ADMIT;
            };
        }

        @Bean
        @Order(1)
        RpmaAdmission first() {
            return (endpoint, data) -> {
                this.calls.add("first");
                this.threads.add(Thread.currentThread().getName());
                return new String(data, StandardCharsets.US_ASCII).startsWith("Hello") ? RpmaAdmission.Decision.ADMIT
                        : RpmaAdmission.Decision.UNAUTHENTICATED;
            };
        }
    }
}
