package dev.rpma.sample.e2e;

/** Server and client on one address of one device ({@code rxe0}, 198.18.0.1 in the VM). */
class SameIpEndToEndTests extends SampleAppEndToEndTests {

    @Override
    String serverAddress() {
        return E2eEnvironment.address(E2eEnvironment.SAME_IP);
    }

    @Override
    String topology() {
        return "same-ip";
    }
}
