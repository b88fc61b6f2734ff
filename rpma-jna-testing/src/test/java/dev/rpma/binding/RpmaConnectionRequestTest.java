package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Arrays;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.binding.testing.FakeRequest;
import dev.rpma.binding.testing.PostedOperation;

/** {@link RpmaConnectionRequest} over the scripted fake: consumed exactly once, private data limits, owners. */
class RpmaConnectionRequestTest {

    private final FakeRig rig = new FakeRig();

    @AfterEach
    void close() {
        this.rig.close();
    }

    private static final String CONSUMED = "already connected or rejected (a request is consumed exactly once)";

    @Test
    void connectThenRejectFails() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        this.rig.track(request.connect());
        assertThat(request.isPending()).isFalse();

        int before = this.rig.fake.totalCalls();
        assertThatThrownBy(request::reject).isInstanceOf(IllegalStateException.class)
                .hasMessage("Cannot reject this connection request: it was " + CONSUMED);
        assertThat(this.rig.fake.totalCalls()).as("no native call").isEqualTo(before);
    }

    @Test
    void rejectTwiceFails() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        request.reject();
        assertThatThrownBy(request::reject).isInstanceOf(IllegalStateException.class)
                .hasMessage("Cannot reject this connection request: it was " + CONSUMED);
        assertThat(this.rig.fake.calls("rpma_conn_req_delete")).isOne();
        request.close(); // close after consumption is a no-op
        assertThat(this.rig.fake.calls("rpma_conn_req_delete")).isOne();
    }

    @Test
    void connectTwiceFails() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        this.rig.track(request.connect());
        assertThatThrownBy(request::connect).isInstanceOf(IllegalStateException.class)
                .hasMessage("Cannot connect this connection request: it was " + CONSUMED);
        assertThat(this.rig.fake.calls("rpma_conn_req_connect")).isOne();
    }

    @Test
    void failedConnectStillConsumesTheRequest() {
        this.rig.script.queueRequest(new byte[] { 1 }).failConnect(RpmaError.PROVIDER.code(), Errno.ECONNREFUSED);
        RpmaConnectionRequest request = this.rig.track(this.rig.endpoint.nextConnectionRequest());
        FakeRequest scripted = this.rig.fake.requests().get(0);

        assertThatThrownBy(() -> request.connect(new byte[] { 9 })).isInstanceOfSatisfying(RpmaException.class, ex -> {
            assertThat(ex.function()).isEqualTo("rpma_conn_req_connect");
            assertThat(ex.error()).isEqualTo(RpmaError.PROVIDER);
            assertThat(ex.errno()).isEqualTo(Errno.ECONNREFUSED);
        });

        assertThat(scripted.state()).isEqualTo(FakeRequest.State.CONNECT_FAILED);
        assertThat(request.isPending()).isFalse();
        assertThat(this.rig.peer.openChildren()).as("only the endpoint").isOne();
        assertThat(this.rig.fake.liveHandles(FakeLibRpma.Kind.CONN)).isEmpty();
        assertThatThrownBy(request::reject).isInstanceOf(IllegalStateException.class).hasMessageContaining(CONSUMED);
        assertThat(this.rig.fake.calls("rpma_conn_req_delete")).as("never deleted after connect consumed it").isZero();
    }

    @Test
    void acceptCarriesAtMost196BytesAndTooMuchLeavesTheRequestPending() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        int before = this.rig.fake.totalCalls();

        assertThatThrownBy(() -> request.connect(new byte[197])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("197 bytes is too long").hasMessageContaining("an accept carries at most 196");
        assertThat(request.isPending()).isTrue();
        assertThat(this.rig.fake.totalCalls()).as("no native call").isEqualTo(before);

        byte[] data = new byte[196];
        Arrays.fill(data, (byte) 0x5A);
        this.rig.track(request.connect(data));
        assertThat(this.rig.fake.requests().get(0).connectPrivateData()).containsExactly(data);
    }

    @Test
    void clientConnectCarriesAtMost56Bytes() {
        RpmaConnectionRequest request = this.rig.track(this.rig.peer.newConnectionRequest("198.18.0.2", 7204, null));
        assertThat(request.privateData()).isEmpty();
        assertThat(request.endpoint()).isNull();
        assertThatThrownBy(() -> request.connect(new byte[57])).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a connect carries at most 56");
        assertThat(request.isPending()).isTrue();

        this.rig.track(request.connect(new byte[56]));
        FakeRequest scripted = this.rig.fake.requests().get(0);
        assertThat(scripted.isServerSide()).isFalse();
        assertThat(scripted.address()).isEqualTo("198.18.0.2");
        assertThat(scripted.port()).isEqualTo("7204");
        assertThat(scripted.connectPrivateData()).hasSize(56);
    }

    @Test
    void clientRequestIsRejectedOnlyOnItsCreatingThread() throws Exception {
        RpmaConnectionRequest request = this.rig.track(this.rig.peer.newConnectionRequest("198.18.0.2", 7204, null));
        assertThat(FakeRig.onThread("intruder", request::reject)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("created the request ('" + Thread.currentThread().getName() + "')");
        request.reject();
        assertThat(this.rig.fake.requests().get(0).state()).isEqualTo(FakeRequest.State.DELETED);
    }

    @Test
    void clientRequestGetsItsConfiguration() {
        try (RpmaConnectionConfig config = this.rig.rpma.newConnectionConfig().timeout(java.time.Duration.ofMillis(250))
                .rcqSize(4)) {
            RpmaConnectionRequest request = this.rig.track(this.rig.peer.newConnectionRequest("198.18.0.2", 7204, config));
            assertThat(this.rig.fake.requests().get(0).config().timeoutMs()).isEqualTo(250);
            RpmaConnection connection = this.rig.track(request.connect());
            assertThat(connection.receiveCompletionQueue()).isNotNull();
        }
    }

    @Test
    void noPrivateDataIsPassedAsNull() {
        this.rig.track(this.rig.request(new byte[] { 1 }).connect());
        this.rig.track(this.rig.request(new byte[] { 2 }).connect(new byte[0]));
        assertThat(this.rig.fake.requests()).extracting(FakeRequest::connectPrivateData).containsExactly(null, null);
    }

    @Test
    void receivePostedBeforeAccept() {
        RpmaMemoryRegion region = this.rig.region(64, MemoryUsage.RECV);
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        request.receive(region, 8, 16, 42);

        assertThat(this.rig.fake.requests().get(0).receives()).singleElement().satisfies(receive -> {
            assertThat(receive.localOffset()).isEqualTo(8);
            assertThat(receive.length()).isEqualTo(16);
            assertThat(receive.context()).isEqualTo(42);
        });
        this.rig.track(request.connect());
        int before = this.rig.fake.totalCalls();
        assertThatThrownBy(() -> request.receive(region, 0, 8, 1)).isInstanceOf(IllegalStateException.class);
        assertThat(this.rig.fake.totalCalls()).isEqualTo(before);
        assertThat(this.rig.fake.requests().get(0).receives()).extracting(PostedOperation::context).containsExactly(42L);
    }

    @Test
    void closeRejectsAPendingRequest() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        request.close();
        assertThat(this.rig.fake.requests().get(0).state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(this.rig.fake.requests().get(0).consumedOnThread()).isEqualTo(Thread.currentThread().getName());
    }

    @Test
    void privateDataFailureRejectsTheRequestSoNothingLeaks() {
        this.rig.script.queueRequest(new byte[] { 1 });
        this.rig.fake.failNext("rpma_conn_req_get_private_data", RpmaError.INVAL);

        assertThatThrownBy(this.rig.endpoint::nextConnectionRequest).isInstanceOfSatisfying(RpmaException.class,
                ex -> assertThat(ex.function()).isEqualTo("rpma_conn_req_get_private_data"));

        assertThat(this.rig.fake.requests().get(0).state()).isEqualTo(FakeRequest.State.DELETED);
        assertThat(this.rig.peer.openChildren()).isOne();
    }

    @Test
    void rejectFailureStillConsumes() {
        RpmaConnectionRequest request = this.rig.request(new byte[] { 1 });
        this.rig.fake.failNext("rpma_conn_req_delete", RpmaError.PROVIDER.code(), Errno.EIO);
        assertThatThrownBy(request::reject).isInstanceOf(RpmaException.class);
        assertThat(request.isPending()).isFalse();
        assertThat(this.rig.peer.openChildren()).isOne();
    }
}
