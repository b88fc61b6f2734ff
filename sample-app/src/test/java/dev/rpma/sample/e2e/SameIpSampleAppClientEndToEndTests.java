package dev.rpma.sample.e2e;

/** {@link SampleAppClientEndToEndTests} with the app and the client on one address ({@code rxe0}, 198.18.0.1 in the VM). */
class SameIpSampleAppClientEndToEndTests extends SampleAppClientEndToEndTests {

    @Override
    Topology topology() {
        return Topology.SAME_IP;
    }
}
