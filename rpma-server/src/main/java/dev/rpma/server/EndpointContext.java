package dev.rpma.server;

import java.util.List;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.Rpma;
import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * What every session of one endpoint shares: its settings, counters, handlers, listeners, registry,
 * buffers, message pool, the server's regions and how many reads a session may have in flight. Built by {@link RpmaServedEndpoint}; read by its sessions on their loops.
 */
final class EndpointContext {

    private static final Logger logger = LoggerFactory.getLogger(ServerSession.class);

    final RpmaEndpointSettings settings;

    final RpmaEndpointStatistics statistics;

    final RpmaServerObserver observer;

    final List<RpmaSessionListener> listeners;

    final ConnectionRegistry registry;

    final RpmaEventLoopGroup loops;

    /** Handlers by route index (raw mode: one, index 0); {@code null} when the endpoint has no data path. */
    final RpmaMessageListener @Nullable [] handlers;

    /** The routes of {@link #handlers}, same order. */
    final List<String> routes;

    final @Nullable BufferPool buffers;

    /**
     * The shared receive queue of each data-path loop, by loop index, when the endpoint's sessions
     * share one ({@code messages.shared-receive-slots}); else {@code null}. Filled once the context
     * exists, before the endpoint starts.
     */
    final SharedReceives @Nullable [] shared;

    /** The threads of message handlers in {@link RpmaMessageDispatch#POOL} mode, else {@code null}. */
    final @Nullable HandlerPool messagePool;

    final Rpma rpma;

    /** The regions a session reads into ({@link RpmaSession#read}). */
    final RpmaRegions regions;

    /** Reads a session has in flight at most: what its queues have room for ({@link RpmaQueueSizes#readsInFlight}). */
    final int readsInFlight;

    final RateLimitedLog warnings = new RateLimitedLog(logger);

    EndpointContext(RpmaEndpointSettings settings, RpmaEndpointStatistics statistics, RpmaServerObserver observer,
            List<RpmaSessionListener> listeners, ConnectionRegistry registry, RpmaEventLoopGroup loops,
            RpmaMessageListener @Nullable [] handlers, List<String> routes, @Nullable BufferPool buffers,
            @Nullable HandlerPool messagePool, Rpma rpma, RpmaRegions regions, int readsInFlight) {
        this.shared = (handlers != null && settings.messages().sharesReceives())
                ? new SharedReceives[loops.loops().size()] : null;
        this.settings = settings;
        this.statistics = statistics;
        this.observer = observer;
        this.listeners = listeners;
        this.registry = registry;
        this.loops = loops;
        this.handlers = handlers;
        this.routes = routes;
        this.buffers = buffers;
        this.messagePool = messagePool;
        this.rpma = rpma;
        this.regions = regions;
        this.readsInFlight = readsInFlight;
    }

    String name() {
        return this.settings.name();
    }

    boolean hasDataPath() {
        return this.handlers != null;
    }

    /** The shared receive queue of loop {@code index}, or {@code null} when sessions have receives of their own. */
    @Nullable SharedReceives shared(int index) {
        return (this.shared != null) ? this.shared[index] : null;
    }

    /** Bytes of registered memory of the sessions' slots and the shared receive queues. */
    long registeredBytes() {
        return ((this.buffers != null) ? this.buffers.registeredBytes() : 0)
                + sumOverSharedReceives(SharedReceives::registeredBytes);
    }

    /** Receives posted on the shared receive queues; 0 without. */
    int sharedReceivesPosted() {
        return (int) sumOverSharedReceives(SharedReceives::postedReceives);
    }

    private long sumOverSharedReceives(java.util.function.ToLongFunction<SharedReceives> value) {
        long sum = 0;
        if (this.shared != null) {
            for (SharedReceives queue : this.shared) {
                if (queue != null) {
                    sum += value.applyAsLong(queue);
                }
            }
        }
        return sum;
    }

    /**
     * Deletes the shared receive queues made so far; once no loop takes their completions any more
     * (the loops ended, or never ran) and no connection made with them is left. Idempotent.
     */
    void closeSharedReceives() {
        if (this.shared != null) {
            for (SharedReceives queue : this.shared) {
                if (queue != null) {
                    queue.close();
                }
            }
        }
    }

    /** A new wire format for one session. */
    WireFormat newWire() {
        RpmaEndpointSettings.Messages messages = this.settings.messages();
        return (messages.mode() == RpmaWireMode.RAW) ? new RawWire(messages.maxMessageSize())
                : new FramedWire(messages.maxMessageSize(), messages.receiveSlots(), this.routes);
    }

    void notifyEstablished(RpmaSession session) {
        for (RpmaSessionListener listener : this.listeners) {
            try {
                listener.sessionEstablished(session);
            }
            catch (RuntimeException ex) {
                this.warnings.warn("session-listener", "Session listener " + listener + " failed on an established"
                        + " session of endpoint '" + name() + "'", ex);
            }
        }
    }

    void notifyEnded(RpmaSession session, RpmaSessionEnd end) {
        for (RpmaSessionListener listener : this.listeners) {
            try {
                listener.sessionEnded(session, end);
            }
            catch (RuntimeException ex) {
                this.warnings.warn("session-listener", "Session listener " + listener + " failed on an ended session"
                        + " of endpoint '" + name() + "'", ex);
            }
        }
    }
}
