package dev.rpma.server;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.binding.RpmaEndpoint;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * Makes a server's endpoints: each one listening on its peer with what it needs besides (the request
 * configurations its queues need, its slots, its shared receive queues on the loops, its message pool,
 * its counters), fully or not at all. At listen, and again for the endpoints of a device that came back.
 */
final class EndpointFactory {

    private final Rpma rpma;

    private final RpmaServer.Components components;

    private final RpmaRegions regions;

    private final RpmaEventLoopGroup loops;

    private final RpmaCompletions[] batches;

    private final Consumer<RpmaServedEndpoint> deviceLossListener;

    EndpointFactory(Rpma rpma, RpmaServer.Components components, RpmaRegions regions, RpmaEventLoopGroup loops,
            RpmaCompletions[] batches, Consumer<RpmaServedEndpoint> deviceLossListener) {
        this.rpma = rpma;
        this.components = components;
        this.regions = regions;
        this.loops = loops;
        this.batches = batches;
        this.deviceLossListener = deviceLossListener;
    }

    /**
     * An endpoint listening on {@code peer}, not accepting yet; its counters are {@code statistics}
     * when it is created anew after its device came back, else new ones.
     */
    RpmaServedEndpoint create(RpmaEndpointSettings settings, RpmaPeer peer, @Nullable RpmaEndpointStatistics statistics) {
        Rpma rpma = this.rpma;
        RpmaServer.Components components = this.components;
        RpmaEventLoopGroup loops = this.loops;
        Map<String, RpmaMessageListener> messageHandlers = components.messageListeners(settings.name());
        RpmaEndpointSettings.Messages messages = settings.messages();
        boolean dataPath = !messageHandlers.isEmpty();
        RpmaQueueSizes needed = dataPath ? RpmaQueueSizes.of(messages) : RpmaQueueSizes.NONE;
        RpmaEndpoint endpoint;
        try {
            endpoint = peer.listen(settings.address(), settings.port());
        }
        catch (RpmaException ex) {
            throw new RpmaListenException(settings.name(), settings.address(), settings.port(), ex);
        }
        RpmaConnectionConfig config = null;
        @Nullable RpmaConnectionConfig[] configs = null;
        EndpointContext context = null;
        BufferPool buffers = null;
        HandlerPool messagePool = null;
        boolean shares = dataPath && messages.sharesReceives();
        try {
            config = components.requestConfig(rpma, settings, needed);
            // one per loop with a shared receive queue (each names its loop's queue), else just this one
            configs = new RpmaConnectionConfig[shares ? loops.loops().size() : 1];
            configs[0] = config;
            checkQueues(settings, config, needed);
            if (shares && config.sharedCompletionChannel()) {
                throw new IllegalArgumentException("The connections of endpoint '" + settings.name() + "' share a"
                        + " completion channel, which librpma refuses with a shared receive queue (RPMA_E_INVAL at each"
                        + " request): turn shared-completion-channel off, or shared-receive-slots");
            }
            List<String> routes = new ArrayList<>(messageHandlers.keySet());
            RpmaMessageListener[] handlers = dataPath
                    ? routes.stream().map(messageHandlers::get).toArray(RpmaMessageListener[]::new) : null;
            if (dataPath) {
                int slot = MemoryLockBudget.slotSize(messages);
                int payloadOffset = (messages.mode() == RpmaWireMode.RAW) ? 0 : FramedWire.HEADER_SIZE;
                // with a shared receive queue a session's block holds its send slots only
                buffers = new BufferPool(peer, slot, payloadOffset, shares ? 0 : messages.receiveSlots(),
                        messages.sendSlots());
                if (messages.dispatch() == RpmaMessageDispatch.POOL) {
                    // one task per session at a time: the queue never holds more than the connection limit
                    messagePool = new HandlerPool("rpma-" + settings.name() + "-messages", messages.dispatchThreads(),
                            settings.limits().maxConnections(), settings.acceptor().spinLooks(),
                            settings.acceptor().batchScheduling(), dev.rpma.binding.io.ThreadScheduling::batchCurrentThread);
                }
            }
            if (statistics == null) {
                statistics = new RpmaEndpointStatistics((error) -> components.observer().error(settings.name(), error));
            }
            context = new EndpointContext(settings, statistics, components.observer(),
                    List.copyOf(components.sessionListeners(settings.name())),
                    new ConnectionRegistry(settings.limits().maxConnections()), loops, handlers, routes, buffers,
                    messagePool, rpma, this.regions, needed.readsInFlight(config));
            if (context.shared != null) {
                for (int i = 0; i < context.shared.length; i++) {
                    if (i > 0) {
                        configs[i] = components.requestConfig(rpma, settings, needed);
                    }
                    context.shared[i] = SharedReceives.create(context, loops.loop(i), rpma, peer, configs[i],
                            messages.sharedReceiveSlots(), messages.maxMessageSize());
                }
            }
            return new RpmaServedEndpoint(context, endpoint, configs, components.handler(settings.name()),
                    components.admission(settings.name()), this.regions, this.batches, this.deviceLossListener);
        }
        catch (RuntimeException ex) {
            if (context != null) {
                context.closeSharedReceives();
            }
            if (configs != null) {
                RpmaServedEndpoint.closeConfigs(configs);
            }
            else if (config != null) {
                config.close();
            }
            if (buffers != null) {
                buffers.close();
            }
            if (messagePool != null) {
                messagePool.shutdown();
            }
            endpoint.close();
            throw ex;
        }
    }

    private static void checkQueues(RpmaEndpointSettings settings, @Nullable RpmaConnectionConfig config,
            RpmaQueueSizes needed) {
        if (!needed.isNeeded()) {
            return;
        }
        if (config == null) {
            throw new IllegalArgumentException("Endpoint '" + settings.name() + "' has message handlers, so its"
                    + " connections need queues of at least " + needed + "; the request configuration is missing");
        }
        if (config.cqSize() < needed.cq() || config.sqSize() < needed.sq() || config.rqSize() < needed.rq()) {
            throw new IllegalArgumentException("The connections of endpoint '" + settings.name() + "' have queues cq "
                    + config.cqSize() + ", sq " + config.sqSize() + ", rq " + config.rqSize() + ", but its "
                    + settings.messages().receiveSlots() + " receive and " + settings.messages().sendSlots()
                    + " send slots need cq >= " + needed.cq() + ", sq >= " + needed.sq() + ", rq >= " + needed.rq());
        }
        if (config.rcqSize() > 0) {
            throw new IllegalArgumentException("The connections of endpoint '" + settings.name() + "' have a receive"
                    + " completion queue (rcq size " + config.rcqSize() + "), but the data path takes every completion"
                    + " from the main queue: leave the rcq size at 0");
        }
    }
}
