package dev.rpma.benchmarks.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.testing.FakeLibRpma;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;

/**
 * The load clients' world in their tests: a fake librpma's loopback and the server of this JVM the
 * clients run against. Closing it closes the server and checks that the fake saw no misuse.
 */
final class Loopback implements AutoCloseable {

    final FakeLibRpma fake = FakeLibRpma.loopback();

    final Rpma rpma = Rpma.using(this.fake);

    private @Nullable RpmaServer server;

    /** Starts {@code server} and closes it with this. */
    void serve(RpmaServer server) {
        this.server = server;
        server.start();
    }

    /** A raw ping-pong endpoint that answers each little-endian counter with the counter plus {@code step}. */
    void listenPingPong(String address, int port, int step) {
        RpmaEndpointSettings endpoint = new RpmaEndpointSettings("pingpong", address, port)
            .withMessages(RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW).withSlots(16, 16)
                .withMaxMessageSize(Long.BYTES));
        RpmaMessageListener pong = (message, session) -> session.newMessage().putLong(message.getLong(0) + step).flip();
        serve(RpmaServer.listen(this.rpma, RpmaServerSettings.of(List.of(endpoint))
            .withEventLoops(1, Duration.ZERO)
            .withGracePeriod(Duration.ZERO), components(RpmaIncomingRequest::connect, Map.of("", pong))));
    }

    /** A server's parts: its one endpoint's request handler and message listeners, queues as it needs them. */
    static RpmaServer.Components components(RpmaRequestHandler handler, Map<String, RpmaMessageListener> listeners) {
        return new RpmaServer.Components() {

            @Override
            public RpmaRequestHandler handler(String name) {
                return handler;
            }

            @Override
            public Map<String, RpmaMessageListener> messageListeners(String name) {
                return listeners;
            }

            @Override
            public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed) {
                return rpma.newConnectionConfig().cqSize(needed.cq()).sqSize(needed.sq()).rqSize(needed.rq());
            }
        };
    }

    @Override
    public void close() {
        if (this.server != null) {
            this.server.close();
        }
        this.fake.assertNoViolations();
        this.fake.close();
    }
}
