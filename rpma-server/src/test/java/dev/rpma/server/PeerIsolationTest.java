package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.internal.NativeMemory;
import dev.rpma.binding.testing.FakeCall;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeRequest;

/**
 * Endpoints on one address share a peer, so one protection domain, unless one names a peer of its
 * own: then it listens on another {@code rpma_peer_new} of the same device, the regions it serves are
 * registered again on that peer, and the descriptor its clients get is of that registration, whose key
 * the other endpoints' connections cannot use. Everything is freed once, each peer last.
 */
class PeerIsolationTest {

    private static final int TENANT_PORT = ServerHarness.PORT + 1;

    private final ServerHarness harness = new ServerHarness();

    @AfterEach
    void close() {
        this.harness.closeAndAssertNothingLeaked();
    }

    @Test
    void endpointsOnOneAddressShareOnePeerByDefault() {
        this.harness.moreEndpoints.add(tenant(null));
        startWithCatalog();
        assertThat(this.harness.fake.calls("rpma_peer_new")).isOne();
        assertThat(this.harness.fake.calls("rpma_mr_reg")).isOne();
        FakeEndpoint tenant = this.harness.fake.endpointAt(ServerHarness.ADDRESS, TENANT_PORT);
        assertThat(tenant.peer()).isEqualTo(this.harness.endpoint.peer());
        assertThat(descriptor(tenant)).isEqualTo(descriptor(this.harness.endpoint));
    }

    @Test
    void anEndpointWithAPeerOfItsOwnHasItsOwnProtectionDomainAndRegistration() {
        this.harness.moreEndpoints.add(tenant("tenant"));
        startWithCatalog();
        FakeEndpoint tenant = this.harness.fake.endpointAt(ServerHarness.ADDRESS, TENANT_PORT);
        long shared = this.harness.endpoint.peer();

        assertThat(this.harness.fake.calls("rpma_peer_new")).isEqualTo(2);
        assertThat(this.harness.fake.calls("rpma_utils_get_ibv_context")).as("the same device, asked twice")
            .isEqualTo(2);
        assertThat(tenant.peer()).isNotEqualTo(shared);
        assertThat(this.harness.fake.callLog("rpma_mr_reg")).extracting((FakeCall call) -> call.args()[0])
            .as("the region registered once on each peer").containsExactlyInAnyOrder(shared, tenant.peer());

        byte[] theirs = descriptor(tenant);
        byte[] ours = descriptor(this.harness.endpoint);
        assertThat(theirs).isNotEqualTo(ours);
        assertThat(this.harness.fake.peerOfRegion(theirs)).isEqualTo(tenant.peer());
        assertThat(this.harness.fake.peerOfRegion(ours)).isEqualTo(shared);
        assertThat(this.harness.server.regions().registration("catalog", "tenant").descriptor()).isEqualTo(theirs);

        this.harness.stop();
        assertThat(this.harness.fake.calls("rpma_mr_dereg")).isEqualTo(2);
        assertThat(this.harness.fake.calls("rpma_peer_delete")).isEqualTo(2);
        List<FakeCall> calls = this.harness.fake.callLog();
        long lastDereg = calls.stream().filter((call) -> call.function().equals("rpma_mr_dereg"))
            .mapToLong(FakeCall::sequence).max().orElseThrow();
        assertThat(calls.stream().filter((call) -> call.function().equals("rpma_peer_delete")))
            .allSatisfy((call) -> assertThat(call.sequence()).isGreaterThan(lastDereg));
    }

    @Test
    void endpointsNamingTheSamePeerShareIt() {
        this.harness.moreEndpoints.add(tenant("tenant"));
        this.harness.moreEndpoints.add(new RpmaEndpointSettings("tenant-admin", ServerHarness.ADDRESS, TENANT_PORT + 1,
                this.harness.acceptor, this.harness.messages, this.harness.limits, "tenant"));
        startWithCatalog();
        assertThat(this.harness.fake.calls("rpma_peer_new")).isEqualTo(2);
        Set<Long> peers = this.harness.fake.endpoints().stream().map(FakeEndpoint::peer).collect(Collectors.toSet());
        assertThat(peers).hasSize(2);
        FakeEndpoint tenant = this.harness.fake.endpointAt(ServerHarness.ADDRESS, TENANT_PORT);
        FakeEndpoint admin = this.harness.fake.endpointAt(ServerHarness.ADDRESS, TENANT_PORT + 1);
        assertThat(admin.peer()).isEqualTo(tenant.peer());
        assertThat(descriptor(admin)).isEqualTo(descriptor(tenant));
    }

    private RpmaEndpointSettings tenant(String peer) {
        return new RpmaEndpointSettings("tenant", ServerHarness.ADDRESS, TENANT_PORT, this.harness.acceptor,
                this.harness.messages, this.harness.limits, peer);
    }

    private void startWithCatalog() {
        this.harness.regions.add(RpmaRegionDefinition.readOnly("catalog", NativeMemory.allocate(64)));
        this.harness.start((request) -> request.connect(RpmaCommonData.of(request.regionDescriptor("catalog")).encode()));
    }

    /** The region's descriptor a client of {@code endpoint} gets in the accept. */
    private byte[] descriptor(FakeEndpoint endpoint) {
        FakeRequest request = endpoint.queueRequest(new byte[] { 1 });
        this.harness.await("the connect", () -> request.state() == FakeRequest.State.CONNECTED);
        return RpmaCommonData.decode(request.connectPrivateData()).memoryRegionDescriptor();
    }
}
