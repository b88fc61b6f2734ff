package dev.rpma.sample.e2e;

/** {@link SampleAppClientEndToEndTests} with the app on one end of the veth pair (198.18.3.2) and the client on the other. */
class VethSampleAppClientEndToEndTests extends SampleAppClientEndToEndTests {

    @Override
    Topology topology() {
        return Topology.VETH;
    }
}
