package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.testing.FakeRequest;

/**
 * The kernel CM ids librpma leaves behind on the passive side (the fake models librpma 1.2/1.3, which
 * never destroy the id of a rejected request or of one whose accept failed): the binding destroys
 * each once librpma is done with the request, and leaves alone those of a librpma laid out otherwise.
 */
class PassiveCmIdsTest {

    private final FakeRig rig = new FakeRig();

    @AfterEach
    void close() {
        this.rig.close();
    }

    @Test
    void aRejectedRequestsCmIdIsDestroyedAfterLibrpmaRejectedIt() {
        for (int i = 0; i < 5; i++) {
            this.rig.request(new byte[] { (byte) i }).reject();
        }

        assertThat(this.rig.fake.cmIdsLeftBehind()).isZero();
        assertThat(this.rig.fake.requests()).extracting(FakeRequest::cmIdState).containsOnly(FakeRequest.CmId.DESTROYED);
        assertThat(this.rig.fake.violations()).isEmpty();
    }

    @Test
    void aRequestWithoutPrivateDataIsFoundToo() {
        this.rig.request(new byte[0]).reject();

        assertThat(this.rig.fake.requests().get(0).cmIdState()).isEqualTo(FakeRequest.CmId.DESTROYED);
    }

    @Test
    void theCmIdOfARequestWhoseAcceptFailedIsDestroyed() {
        this.rig.script.queueRequest(new byte[] { 1 }).failConnect(RpmaError.PROVIDER.code(), Errno.ECONNRESET);
        RpmaConnectionRequest request = this.rig.track(this.rig.endpoint.nextConnectionRequest());

        assertThatThrownBy(request::connect).isInstanceOf(RpmaException.class);

        assertThat(this.rig.fake.requests().get(0).cmIdState()).isEqualTo(FakeRequest.CmId.DESTROYED);
        assertThat(this.rig.fake.violations()).isEmpty();
    }

    @Test
    void anAcceptedRequestsCmIdGoesToItsConnection() {
        this.rig.track(this.rig.request(new byte[] { 1 }).connect());

        assertThat(this.rig.fake.requests().get(0).cmIdState()).isEqualTo(FakeRequest.CmId.WITH_CONNECTION);
    }

    @Test
    void withAnotherLayoutTheIdsAreLeftToLibrpmaAndTheEndpointReleasesThem() {
        this.rig.fake.librpmaLayout(false);
        this.rig.request(new byte[] { 1 }).reject();
        this.rig.request(new byte[] { 2 }).reject();

        assertThat(this.rig.fake.cmIdsLeftBehind()).isEqualTo(2);
        this.rig.endpoint.close();
        assertThat(this.rig.fake.cmIdsLeftBehind()).as("released with the endpoint's channel").isZero();
        assertThat(this.rig.fake.violations()).isEmpty();
    }

    @Test
    void aClientsRequestHasNoIdToDestroy() {
        RpmaConnectionRequest request = this.rig.peer.newConnectionRequest("198.18.0.1", 7204, null);
        request.reject();

        assertThat(this.rig.fake.requests()).singleElement()
            .satisfies((scripted) -> assertThat(scripted.cmIdState()).isEqualTo(FakeRequest.CmId.NONE));
        assertThat(this.rig.fake.violations()).as("no id looked up or destroyed").isEmpty();
    }
}
