package dev.rpma.spring.boot.actuate;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.testing.FakeEndpoint;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.spring.boot.autoconfigure.RpmaAutoConfiguration;
import dev.rpma.server.RpmaEndpointStatistics;

/** The auto-configured server over the scripted fake, and what the tests do with it. */
public final class FakeRpmaServer {

    public static final String ADDRESS = "198.18.0.1";

    public static final int PORT = 7204;

    private FakeRpmaServer() {
    }

    /**
     * The server's auto-configuration with librpma replaced by {@code fake} (the bean
     * {@code fakeRpma}), listening on {@value #ADDRESS} at the port the properties default to;
     * stopping does not wait for connections.
     */
    public static ApplicationContextRunner runnerOnDefaultPort(FakeLibRpma fake) {
        return new ApplicationContextRunner().withConfiguration(AutoConfigurations.of(RpmaAutoConfiguration.class))
            .withBean("fakeRpma", Rpma.class, () -> Rpma.using(fake))
            .withPropertyValues("rpma.server.address=" + ADDRESS, "rpma.server.shutdown.grace-period=0s");
    }

    /** {@link #runnerOnDefaultPort} with the port set to {@value #PORT}. */
    public static ApplicationContextRunner runner(FakeLibRpma fake) {
        return runnerOnDefaultPort(fake).withPropertyValues("rpma.server.port=" + PORT);
    }

    /** Requests that were decided one way or another. */
    public static long decided(RpmaEndpointStatistics statistics) {
        return statistics.accepted() + statistics.rejectedTotal() + statistics.failedToConnect();
    }

    /** Queues one request and waits until the server decided it, so the next one meets an idle handler. */
    public static void submit(FakeEndpoint endpoint, RpmaEndpointStatistics statistics, String action) {
        long before = decided(statistics);
        endpoint.queueRequest(ScriptedHandler.data(action));
        Await.until("request '" + action + "' decided", () -> decided(statistics) == before + 1);
    }
}
