package dev.rpma.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import org.jspecify.annotations.Nullable;

import dev.rpma.server.RpmaAdmission;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaEndpointStatistics;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;

/**
 * A real {@link RpmaServer} of one endpoint on a {@link FakeLibRpma#loopback()}, built without Spring
 * as an application's configuration would build it, for tests that drive a real {@link RpmaClient}
 * against it over the same fake.
 */
final class LoopbackServer implements AutoCloseable {

    static final String ADDRESS = "192.0.2.1";

    static final String ENDPOINT = "test";

    static final Duration WAIT = Duration.ofSeconds(10);

    final FakeLibRpma fake;

    final Rpma rpma;

    final RpmaServer server;

    private final int port;

    private LoopbackServer(FakeLibRpma fake, RpmaServer server, int port) {
        this.fake = fake;
        this.rpma = Rpma.using(fake);
        this.server = server;
        this.port = port;
    }

    /**
     * Listens and accepts on {@code port} of {@code fake}, with {@code loops} event loops that sleep at
     * once (no busy poll: the machine's CPUs are shared), no grace period on close.
     */
    static LoopbackServer start(FakeLibRpma fake, int port, int loops, RpmaEndpointSettings.Messages messages,
            RpmaRequestHandler handler, Map<String, RpmaMessageListener> listeners, List<RpmaRegionDefinition> regions) {
        return start(fake, port, loops, messages, handler, listeners, regions, null);
    }

    /** {@link #start} with {@code admission} as the endpoint's admission step ({@code null}: none). */
    static LoopbackServer start(FakeLibRpma fake, int port, int loops, RpmaEndpointSettings.Messages messages,
            RpmaRequestHandler handler, Map<String, RpmaMessageListener> listeners, List<RpmaRegionDefinition> regions,
            @Nullable RpmaAdmission admission) {
        RpmaEndpointSettings endpoint = new RpmaEndpointSettings(ENDPOINT, ADDRESS, port).withMessages(messages);
        RpmaServerSettings settings = RpmaServerSettings.of(List.of(endpoint))
            .withEventLoops(loops, Duration.ZERO)
            .withGracePeriod(Duration.ZERO)
            .withRegions(regions);
        RpmaServer server = RpmaServer.listen(Rpma.using(fake), settings, new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String name) {
                return handler;
            }

            @Override
            public Map<String, RpmaMessageListener> messageListeners(String name) {
                return listeners;
            }

            @Override
            public @Nullable RpmaAdmission admission(String endpoint) {
                return admission;
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed) {
                return rpma.newConnectionConfig().cqSize(needed.cq()).sqSize(needed.sq()).rqSize(needed.rq());
            }
        });
        server.start();
        return new LoopbackServer(fake, server, port);
    }

    /** A client of this server with the settings every test shares: {@code name}, the address and port. */
    RpmaClientBuilder client(String name) {
        return RpmaClient.builder(this.rpma).name(name).address(ADDRESS).port(this.port);
    }

    RpmaEndpointStatistics statistics() {
        return this.server.endpoint(ENDPOINT).statistics();
    }

    void await(String what, BooleanSupplier condition) {
        if (!this.fake.await(WAIT, condition)) {
            throw new AssertionError("Waited " + WAIT + " for " + what);
        }
    }

    /** Stops the server (its sessions are ended at once); the fake stays open for the test's checks. */
    @Override
    public void close() {
        this.server.close();
    }
}
