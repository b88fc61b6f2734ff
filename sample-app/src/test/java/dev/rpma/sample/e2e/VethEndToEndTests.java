package dev.rpma.sample.e2e;

/**
 * The server on one end of a veth pair ({@code rxeB}, 198.18.3.2 in the VM), the client on the
 * other ({@code rxeA}, 198.18.3.1): every packet crosses the wire between two devices, as between
 * two hosts.
 */
class VethEndToEndTests extends SampleAppEndToEndTests {

    @Override
    String serverAddress() {
        return E2eEnvironment.address(E2eEnvironment.SERVER_IP);
    }

    @Override
    String topology() {
        return "veth";
    }
}
