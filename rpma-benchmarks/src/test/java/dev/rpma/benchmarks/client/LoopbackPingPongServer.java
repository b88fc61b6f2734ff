package dev.rpma.benchmarks.client;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaQueueSizes;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaServer;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;

/** The load clients' server in their tests: a raw ping-pong endpoint of this JVM, over a fake's loopback. */
final class LoopbackPingPongServer {

    private LoopbackPingPongServer() {
    }

    /** Started; answers each little-endian counter with the counter plus {@code step}. */
    static RpmaServer listen(Rpma rpma, String address, int port, int step) {
        RpmaEndpointSettings endpoint = new RpmaEndpointSettings("pingpong", address, port)
            .withMessages(RpmaEndpointSettings.Messages.DEFAULTS.withMode(RpmaWireMode.RAW).withSlots(16, 16)
                .withMaxMessageSize(Long.BYTES));
        RpmaMessageListener pong = (message, session) -> session.newMessage().putLong(message.getLong(0) + step).flip();
        RpmaServer server = RpmaServer.listen(rpma, RpmaServerSettings.of(List.of(endpoint))
            .withEventLoops(1, Duration.ZERO)
            .withGracePeriod(Duration.ZERO), new RpmaServer.Components() {

                @Override
                public RpmaRequestHandler handler(String name) {
                    return RpmaIncomingRequest::connect;
                }

                @Override
                public Map<String, RpmaMessageListener> messageListeners(String name) {
                    return Map.of("", pong);
                }

                @Override
                public RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings,
                        RpmaQueueSizes needed) {
                    return rpma.newConnectionConfig().cqSize(needed.cq()).sqSize(needed.sq()).rqSize(needed.rq());
                }
            });
        server.start();
        return server;
    }
}
