package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.function.Consumer;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import dev.rpma.binding.io.FdPoller;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;

/** {@link RpmaEndpoint} over the scripted fake: every outcome of rpma_ep_next_conn_req, ownership, close. */
class RpmaEndpointTest {

    private final FakeRig rig = new FakeRig();

    @AfterEach
    void close() {
        this.rig.close();
    }

    @Test
    void requestCarriesItsPrivateDataCopiedIntoAnArray() {
        byte[] sent = "Hello server!\0".getBytes();
        FakeRequest scripted = this.rig.script.queueRequest(sent);

        RpmaConnectionRequest request = this.rig.track(this.rig.endpoint.nextConnectionRequest());

        assertThat(request.privateData()).containsExactly(sent);
        assertThat(request.endpoint()).isSameAs(this.rig.endpoint);
        assertThat(request.isPending()).isTrue();
        assertThat(this.rig.peer.openChildren()).as("endpoint and request").isEqualTo(2);
        request.privateData()[0] = 'X';
        assertThat(request.privateData()).as("a copy each time").containsExactly(sent);

        request.reject(); // the fake scribbles over librpma's private data when the request is freed
        assertThat(scripted.state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(request.privateData()).as("still the copy taken when it was obtained").containsExactly(sent);
        assertThat(this.rig.peer.openChildren()).isOne();
    }

    @Test
    void requestWithoutPrivateDataHasAnEmptyArray() {
        this.rig.script.queueRequest(new byte[0]);
        RpmaConnectionRequest request = this.rig.track(this.rig.endpoint.nextConnectionRequest());
        assertThat(request.privateData()).isEmpty();
    }

    @Test
    void configurationSizesTheRequestsQueues() {
        try (RpmaConnectionConfig config = this.rig.rpma.newConnectionConfig().cqSize(64).rcqSize(32).sqSize(16)
                .rqSize(8)) {
            FakeRequest scripted = this.rig.script.queueRequest(new byte[] { 1 });
            this.rig.track(this.rig.endpoint.nextConnectionRequest(config));
            assertThat(scripted.config()).isEqualTo(new FakeLibRpma.ConnectionConfigValues(1000, 64, 32, 16, 8, false, 0));
        }
    }

    @Test
    void noEventMeansNull() {
        this.rig.script.queueNoEvent();
        assertNothingObtained(this.rig.endpoint.nextConnectionRequest());
    }

    @Test
    void emptyQueueOnANonBlockingFdMeansNull() {
        // the fake answers RPMA_E_PROVIDER with errno EAGAIN, as librpma does on an O_NONBLOCK fd
        assertNothingObtained(this.rig.endpoint.nextConnectionRequest());
        assertThat(this.rig.fake.lastErrno()).isEqualTo(Errno.EAGAIN);
    }

    @Test
    void providerEagainMeansNull() {
        this.rig.script.queueProviderError(Errno.EAGAIN);
        assertNothingObtained(this.rig.endpoint.nextConnectionRequest());
    }

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of("unexpected event", (Consumer<FakeEndpoint>) FakeEndpoint::queueUnexpectedEvent,
                        RpmaError.INVAL, 0),
                Arguments.of("EBADF", (Consumer<FakeEndpoint>) s -> s.queueProviderError(Errno.EBADF), RpmaError.PROVIDER,
                        Errno.EBADF),
                Arguments.of("EINTR", (Consumer<FakeEndpoint>) s -> s.queueProviderError(Errno.EINTR), RpmaError.PROVIDER,
                        Errno.EINTR),
                Arguments.of("out of memory", (Consumer<FakeEndpoint>) FakeEndpoint::queueOutOfMemory, RpmaError.NOMEM, 0));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("failures")
    void failureThrowsWithCodeFunctionAndErrnoAndNeverUsesTheOutPointer(String name, Consumer<FakeEndpoint> script,
            RpmaError error, int errno) {
        script.accept(this.rig.script);
        int poisonBefore = this.rig.fake.poisonWrites();

        assertThatThrownBy(this.rig.endpoint::nextConnectionRequest).isInstanceOfSatisfying(RpmaException.class, ex -> {
            assertThat(ex.error()).isEqualTo(error);
            assertThat(ex.returnCode()).isEqualTo(error.code());
            assertThat(ex.function()).isEqualTo("rpma_ep_next_conn_req");
            assertThat(ex.errno()).isEqualTo(errno);
            assertThat(ex.getMessage()).startsWith("rpma_ep_next_conn_req() failed with " + error.cName() + " ("
                    + error.code() + "): ");
            if (errno != 0) {
                assertThat(ex.getMessage()).contains("errno " + errno + " (" + Errno.name(errno) + ")");
            }
        });

        assertThat(this.rig.fake.poisonWrites()).as("the fake poisoned *req_ptr").isEqualTo(poisonBefore + 1);
        assertNothingObtained(null);
        // the endpoint stays usable after a transient failure
        this.rig.script.queueRequest(new byte[] { 42 });
        assertThat(this.rig.track(this.rig.endpoint.nextConnectionRequest()).privateData()).containsExactly(42);
    }

    @Test
    void failNextOfAnyFunctionIsReportedToo() {
        this.rig.fake.failNext("rpma_ep_next_conn_req", RpmaError.PROVIDER.code(), Errno.EIO);
        assertThatThrownBy(this.rig.endpoint::nextConnectionRequest)
                .isInstanceOfSatisfying(RpmaException.class, ex -> assertThat(ex.errno()).isEqualTo(Errno.EIO));
    }

    private void assertNothingObtained(RpmaConnectionRequest request) {
        assertThat(request).isNull();
        this.rig.fake.assertNoViolations();
        assertThat(this.rig.fake.liveHandles(FakeLibRpma.Kind.CONN_REQ)).isEmpty();
        assertThat(this.rig.peer.openChildren()).as("only the endpoint").isOne();
        assertThat(this.rig.fake.calls("rpma_conn_req_get_private_data")).isZero();
    }

    @Test
    void fdIsTheEndpointsAndPollableWhileRequestsWait() {
        int fd = this.rig.endpoint.fd();
        assertThat(fd).isEqualTo(this.rig.script.fd());
        this.rig.endpoint.configureBlocking(false);
        assertThat(FileDescriptors.isBlocking(fd)).isFalse();
        this.rig.endpoint.configureBlocking(true);
        assertThat(FileDescriptors.isBlocking(fd)).isTrue();

        try (FdPoller poller = new FdPoller(1)) {
            int[] fds = { fd };
            assertThat(poller.await(fds, 1, 0)).isZero();
            this.rig.script.queueRequest(new byte[] { 1 });
            assertThat(poller.await(fds, 1, 1000)).isOne();
            assertThat(poller.isReadable(0)).isTrue();
            this.rig.track(this.rig.endpoint.nextConnectionRequest());
            assertThat(poller.await(fds, 1, 0)).isZero();
        }
    }

    @Test
    void ownerThreadIsTheListeningThread() throws Exception {
        assertThat(this.rig.endpoint.owner()).isSameAs(Thread.currentThread());
        assertThat(this.rig.endpoint.isOwnedByCurrentThread()).isTrue();
        int before = this.rig.fake.totalCalls();
        String owner = Thread.currentThread().getName();

        Throwable next = FakeRig.onThread("intruder", this.rig.endpoint::nextConnectionRequest);
        Throwable close = FakeRig.onThread("intruder", this.rig.endpoint::close);
        Throwable blocking = FakeRig.onThread("intruder", () -> this.rig.endpoint.configureBlocking(false));
        Throwable handOff = FakeRig.onThread("intruder", () -> this.rig.endpoint.handOffTo(new Thread(() -> { })));

        for (Throwable thrown : new Throwable[] { next, close, blocking, handOff }) {
            assertThat(thrown).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("owner thread '" + owner + "'").hasMessageContaining("not on 'intruder'");
        }
        assertThat(next).hasMessageStartingWith("RpmaEndpoint.nextConnectionRequest()");
        assertThat(this.rig.fake.totalCalls()).as("no native call").isEqualTo(before);
        assertThat(this.rig.endpoint.isClosed()).isFalse();
    }

    @Test
    void rejectRunsOnlyOnTheOwnerThread() throws Exception {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        Throwable reject = FakeRig.onThread("intruder", request::reject);
        Throwable close = FakeRig.onThread("intruder", request::close);
        assertThat(reject).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("RpmaConnectionRequest.reject()").hasMessageContaining("'intruder'");
        assertThat(close).isInstanceOf(IllegalStateException.class);
        assertThat(request.isPending()).isTrue();
        assertThat(this.rig.fake.calls("rpma_conn_req_delete")).isZero();
        // connect may run on any thread
        assertThat(FakeRig.onThread("handler", () -> this.rig.track(request.connect()))).isNull();
        assertThat(request.isPending()).isFalse();
    }

    @Test
    void handOffMovesOwnershipToTheAcceptor() throws Exception {
        this.rig.script.queueRequest(new byte[] { 5 });
        Thread acceptor = new Thread(() -> {
            RpmaConnectionRequest request = this.rig.endpoint.nextConnectionRequest();
            request.reject();
            this.rig.endpoint.close();
        }, "acceptor");
        this.rig.endpoint.handOffTo(acceptor);
        assertThat(this.rig.endpoint.owner()).isSameAs(acceptor);
        assertThat(this.rig.endpoint.isOwnedByCurrentThread()).isFalse();
        assertThatThrownBy(this.rig.endpoint::nextConnectionRequest).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("owner thread 'acceptor'");

        acceptor.start();
        acceptor.join(10_000);

        assertThat(this.rig.endpoint.isClosed()).isTrue();
        assertThat(this.rig.fake.threadsCalling("rpma_ep_next_conn_req")).containsExactly("acceptor");
        assertThat(this.rig.fake.threadsCalling("rpma_conn_req_delete")).containsExactly("acceptor");
        assertThat(this.rig.fake.threadsCalling("rpma_ep_shutdown")).containsExactly("acceptor");
        assertThat(this.rig.script.owner()).isSameAs(acceptor);
    }

    @Test
    void closeShutsDownOnceAndEverythingAfterwardsFailsWithoutANativeCall() {
        this.rig.endpoint.close();
        this.rig.endpoint.close();
        assertThat(this.rig.fake.calls("rpma_ep_shutdown")).isOne();
        assertThat(this.rig.script.isShutDown()).isTrue();
        assertThat(this.rig.peer.openChildren()).isZero();
        assertThat(this.rig.endpoint).hasToString("RpmaEndpoint[198.18.0.1:7204, closed]");

        int before = this.rig.fake.totalCalls();
        assertThatThrownBy(this.rig.endpoint::fd).isInstanceOf(IllegalStateException.class)
                .hasMessage("This endpoint is closed; create a new one");
        assertThatThrownBy(this.rig.endpoint::nextConnectionRequest).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> this.rig.endpoint.configureBlocking(false)).isInstanceOf(IllegalStateException.class);
        assertThat(this.rig.fake.totalCalls()).isEqualTo(before);
    }

    @Test
    void requestsSurviveTheEndpoint() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        this.rig.endpoint.close();
        assertThat(this.rig.peer.openChildren()).isOne();
        RpmaConnection connection = this.rig.track(request.connect());
        assertThat(connection.isClosed()).isFalse();
    }

    @Test
    void listenFailureExplainsAPortInUse() {
        this.rig.fake.failNext("rpma_ep_listen", RpmaError.PROVIDER.code(), Errno.EADDRINUSE);
        assertThatThrownBy(() -> this.rig.peer.listen(FakeRig.ADDRESS, 7205))
                .isInstanceOfSatisfying(RpmaException.class, ex -> {
                    assertThat(ex.function()).isEqualTo("rpma_ep_listen");
                    assertThat(ex.errno()).isEqualTo(Errno.EADDRINUSE);
                    assertThat(ex.getMessage()).contains("Port 7205 on 198.18.0.1 is in use");
                    assertThat(ex.hint()).isEqualTo(RpmaFailureKind.PORT_IN_USE.hint(FakeRig.ADDRESS, 7205));
                });
        assertThat(this.rig.peer.openChildren()).as("the failed endpoint is not counted").isOne();
    }

    @Test
    void listenRejectsABadPortWithoutANativeCall() {
        int before = this.rig.fake.totalCalls();
        assertThatThrownBy(() -> this.rig.peer.listen(FakeRig.ADDRESS, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> this.rig.peer.listen(FakeRig.ADDRESS, 65536)).isInstanceOf(IllegalArgumentException.class);
        assertThat(this.rig.fake.totalCalls()).isEqualTo(before);
    }

    @Test
    void shutdownFailureStillReleasesTheEndpoint() {
        this.rig.fake.failNext("rpma_ep_shutdown", RpmaError.PROVIDER.code(), Errno.EBUSY);
        assertThatThrownBy(this.rig.endpoint::close).isInstanceOf(RpmaException.class);
        assertThat(this.rig.endpoint.isClosed()).isTrue();
        assertThat(this.rig.peer.openChildren()).isZero();
    }
}
