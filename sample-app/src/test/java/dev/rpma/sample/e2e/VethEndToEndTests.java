package dev.rpma.sample.e2e;

/**
 * The server on one end of a veth pair ({@code rxeB}, 198.18.3.2 in the VM), the client on the
 * other ({@code rxeA}, 198.18.3.1): every packet crosses the wire between two devices, as between
 * two hosts. The app is stopped with SIGTERM, as a service manager or Kubernetes stops it: the same
 * graceful stop runs in Spring's shutdown hook, and the JVM then exits with 143 (128 + SIGTERM), its
 * convention for a process ended by that signal. The ping-pong endpoint's sessions receive through a
 * shared receive queue here ({@code messages.shared-receive-slots}), through receive slots of their
 * own in {@link SameIpEndToEndTests}: every test of the data path runs against both designs.
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

    @Override
    int stop(SampleAppProcess app) {
        app.terminate();
        return 143;
    }

    @Override
    String stopHow() {
        return "SIGTERM";
    }

    @Override
    String[] appArguments() {
        // more than the 64 ping-pong clients of the 256-connection test keep in flight
        return new String[] { "--rpma.server.endpoints.pingpong.messages.shared-receive-slots=128" };
    }
}
