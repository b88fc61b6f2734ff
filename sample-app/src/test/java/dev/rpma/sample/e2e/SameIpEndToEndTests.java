package dev.rpma.sample.e2e;

/**
 * Server and client on one address of one device ({@code rxe0}, 198.18.0.1 in the VM); the app is
 * stopped with the actuator's shutdown endpoint, after which the JVM exits on its own with 0.
 */
class SameIpEndToEndTests extends SampleAppEndToEndTests {

    @Override
    String serverAddress() {
        return E2eEnvironment.address(E2eEnvironment.SAME_IP);
    }

    @Override
    String topology() {
        return "same-ip";
    }

    /** The app as shipped exposes no shutdown endpoint: this test stops it through one, enabled here. */
    @Override
    String[] appArguments() {
        return new String[] { "--management.endpoints.web.exposure.include=health,info,metrics,prometheus,rpma,shutdown",
                "--management.endpoint.shutdown.access=unrestricted" };
    }

    @Override
    int stop(SampleAppProcess app) throws Exception {
        app.requestShutdown();
        return 0;
    }

    @Override
    String stopHow() {
        return "POST /actuator/shutdown";
    }
}
