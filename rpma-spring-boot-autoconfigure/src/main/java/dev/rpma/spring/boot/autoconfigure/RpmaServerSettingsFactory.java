package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.server.RpmaBackingStore;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaRegionDefinition;
import dev.rpma.server.RpmaRegionStoreException;
import dev.rpma.server.RpmaServerSettings;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * Turns {@link RpmaProperties} (and the application's {@link RpmaRegionDefinition} beans) into
 * validated {@link RpmaServerSettings}: the endpoints, the default one first with the values of the
 * {@code rpma.server} groups, each named one with its own values where it sets them and those
 * groups' values elsewhere; the event loops; the regions. Every invalid value fails with
 * {@link InvalidRpmaPropertyException} naming the property.
 */
final class RpmaServerSettingsFactory {

    private RpmaServerSettingsFactory() {
    }

    static RpmaServerSettings create(RpmaProperties properties, List<RpmaRegionDefinition> regionBeans) {
        List<RpmaEndpointSettings> endpoints = endpoints(properties);
        RpmaProperties.EventLoops loops = properties.getEventLoops();
        if (loops.getCount() < 0) {
            throw new InvalidRpmaPropertyException("rpma.server.event-loops.count", loops.getCount(),
                    "must be at least 0 (0 sizes them for the machine)");
        }
        Duration busyPoll = loops.getBusyPoll();
        if (busyPoll == null || busyPoll.isNegative()) {
            throw new InvalidRpmaPropertyException("rpma.server.event-loops.busy-poll", busyPoll,
                    "must be 0 or positive");
        }
        Duration grace = properties.getShutdown().getGracePeriod();
        if (grace == null) {
            throw new InvalidRpmaPropertyException("rpma.server.shutdown.grace-period", null, "must be set");
        }
        Duration timeout = properties.getShutdown().getTimeout();
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new InvalidRpmaPropertyException("rpma.server.shutdown.timeout", timeout, "must be positive");
        }
        RpmaProperties.DeviceRecovery recovery = properties.getDeviceRecovery();
        Duration recoveryInterval = recovery.getMaxInterval();
        if (recovery.isEnabled() && (recoveryInterval == null || recoveryInterval.isNegative()
                || recoveryInterval.toMillis() == 0)) {
            throw new InvalidRpmaPropertyException("rpma.server.device-recovery.max-interval", recoveryInterval,
                    "must be at least 1ms; to turn recovery off, set rpma.server.device-recovery.enabled=false");
        }
        int count = (loops.getCount() == 0) ? RpmaEventLoopGroup.defaultSize() : loops.getCount();
        return new RpmaServerSettings(count, busyPoll, grace, timeout, endpoints,
                regions(properties, regionBeans, endpoints), recovery.isEnabled() ? recoveryInterval : Duration.ZERO);
    }

    private static List<RpmaEndpointSettings> endpoints(RpmaProperties properties) {
        List<RpmaEndpointSettings> settings = new ArrayList<>();
        settings.add(endpoint("rpma.server", RpmaEndpointSettings.DEFAULT_ENDPOINT, properties.getAddress(),
                properties.getPort(), RpmaProperties.Endpoint.NOTHING_SET, properties.getAcceptor().isInlineHandler(),
                properties));
        Set<String> addresses = new HashSet<>();
        addresses.add(settings.get(0).address() + ":" + settings.get(0).port());
        for (Map.Entry<String, RpmaProperties.Endpoint> entry : properties.getEndpoints().entrySet()) {
            String name = entry.getKey();
            String prefix = "rpma.server.endpoints." + name;
            if (RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(name)) {
                throw new InvalidRpmaPropertyException(prefix, name, "'default' names the endpoint configured"
                        + " under rpma.server itself; choose another name");
            }
            RpmaProperties.Endpoint endpoint = entry.getValue();
            if (endpoint.port() == null) {
                throw new InvalidRpmaPropertyException(prefix + ".port", null, "each named endpoint needs its own port");
            }
            // not inherited: it is a promise about one endpoint's handler, that it never blocks
            boolean inline = endpoint.acceptor().inlineHandler();
            RpmaEndpointSettings named = endpoint(prefix, name, inherit(endpoint.address(), properties.getAddress()),
                    endpoint.port(), endpoint, inline, properties);
            if (!addresses.add(named.address() + ":" + named.port())) {
                throw new InvalidRpmaPropertyException(prefix + ".port", named.port(), "another endpoint already listens on "
                        + named.address() + ":" + named.port());
            }
            settings.add(named);
        }
        return settings;
    }

    private static RpmaEndpointSettings endpoint(String prefix, String name, @Nullable String address, int port,
            RpmaProperties.Endpoint own, boolean inlineHandler, RpmaProperties server) {
        RpmaAddresses.validate(prefix + ".address", address);
        if (port < 1 || port > 65535) {
            throw new InvalidRpmaPropertyException(prefix + ".port", port, "must be between 1 and 65535");
        }
        // not inherited: a peer of its own is what sets one endpoint apart from the others
        String peer = own.peer();
        if (peer != null && peer.isBlank()) {
            throw new InvalidRpmaPropertyException(prefix + ".peer", peer, "must name a peer, or be left unset for the"
                    + " address's shared one");
        }
        return new RpmaEndpointSettings(name, address.trim(), port,
                acceptor(prefix, own.acceptor(), inlineHandler, server.getAcceptor()),
                messages(prefix, own.messages(), server.getMessages()), limits(prefix, own.limits(), server.getLimits()),
                (peer != null) ? peer.trim() : null);
    }

    private static RpmaEndpointSettings.Acceptor acceptor(String prefix, RpmaProperties.EndpointAcceptor own,
            boolean inlineHandler, RpmaProperties.Acceptor server) {
        int queueCapacity = inherit(own.queueCapacity(), server.getQueueCapacity());
        positive(prefix + ".acceptor.queue-capacity", queueCapacity);
        if (queueCapacity > RpmaEndpointSettings.Acceptor.MAX_QUEUE_CAPACITY) {
            throw new InvalidRpmaPropertyException(prefix + ".acceptor.queue-capacity", queueCapacity, "must be at most "
                    + RpmaEndpointSettings.Acceptor.MAX_QUEUE_CAPACITY);
        }
        int handlerThreads = inherit(own.handlerThreads(), server.getHandlerThreads());
        positive(prefix + ".acceptor.handler-threads", handlerThreads);
        Duration deadline = inherit(own.requestDeadline(), server.getRequestDeadline());
        positive(prefix + ".acceptor.request-deadline", deadline);
        Duration pollInterval = inherit(own.pollInterval(), server.getPollInterval());
        positive(prefix + ".acceptor.poll-interval", pollInterval);
        int maxErrors = inherit(own.maxConsecutiveErrors(), server.getMaxConsecutiveErrors());
        positive(prefix + ".acceptor.max-consecutive-errors", maxErrors);
        boolean batch = inherit(own.handlerBatchScheduling(), server.isHandlerBatchScheduling());
        int spinLooks = inherit(own.handlerSpinLooks(), server.getHandlerSpinLooks());
        if (spinLooks < 0) {
            throw new InvalidRpmaPropertyException(prefix + ".acceptor.handler-spin-looks", spinLooks,
                    "must be at least 0 (0 parks an idle handler thread at once)");
        }
        boolean onEventLoop = inherit(own.onEventLoop(), server.isOnEventLoop());
        return new RpmaEndpointSettings.Acceptor(queueCapacity, handlerThreads, deadline, pollInterval, maxErrors,
                inlineHandler, batch, spinLooks, onEventLoop);
    }

    private static RpmaEndpointSettings.Messages messages(String prefix, RpmaProperties.EndpointMessages own,
            RpmaProperties.Messages server) {
        RpmaWireMode mode = inherit(own.mode(), server.getMode());
        int receiveSlots = inherit(own.receiveSlots(), server.getReceiveSlots());
        positive(prefix + ".messages.receive-slots", receiveSlots);
        if (mode == RpmaWireMode.FRAMED && receiveSlots < RpmaEndpointSettings.Messages.MIN_FRAMED_RECEIVE_SLOTS) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.receive-slots", receiveSlots, "must be at least "
                    + RpmaEndpointSettings.Messages.MIN_FRAMED_RECEIVE_SLOTS + " in framed mode (credits keep one for"
                    + " a credit frame)");
        }
        if (receiveSlots > 4096) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.receive-slots", receiveSlots, "must be at most 4096");
        }
        int sendSlots = inherit(own.sendSlots(), server.getSendSlots());
        positive(prefix + ".messages.send-slots", sendSlots);
        if (sendSlots > 64) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.send-slots", sendSlots, "must be at most 64");
        }
        int maxMessageSize = inherit(own.maxMessageSize(), server.getMaxMessageSize());
        positive(prefix + ".messages.max-message-size", maxMessageSize);
        RpmaMessageDispatch dispatch = inherit(own.dispatch(), server.getDispatch());
        int threads = inherit(own.dispatchThreads(), server.getDispatchThreads());
        positive(prefix + ".messages.dispatch-threads", threads);
        int sendQueueLimit = inherit(own.sendQueueLimit(), server.getSendQueueLimit());
        if (sendQueueLimit < 0) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.send-queue-limit", sendQueueLimit,
                    "must be at least 0");
        }
        int shared = inherit(own.sharedReceiveSlots(), server.getSharedReceiveSlots());
        if (shared < 0 || shared > RpmaEndpointSettings.Messages.MAX_SHARED_RECEIVE_SLOTS) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.shared-receive-slots", shared, "must be 0 (a"
                    + " session's receives are its own) to " + RpmaEndpointSettings.Messages.MAX_SHARED_RECEIVE_SLOTS);
        }
        if (shared > 0 && mode != RpmaWireMode.RAW) {
            throw new InvalidRpmaPropertyException(prefix + ".messages.shared-receive-slots", shared, "needs mode 'raw':"
                    + " in framed mode the credits a session grants are receives of its own (set the mode to raw, or"
                    + " leave shared-receive-slots at 0)");
        }
        return new RpmaEndpointSettings.Messages(mode, receiveSlots, sendSlots, maxMessageSize, dispatch, threads,
                sendQueueLimit, shared);
    }

    private static RpmaEndpointSettings.Limits limits(String prefix, RpmaProperties.EndpointLimits own,
            RpmaProperties.Limits server) {
        int maxConnections = inherit(own.maxConnections(), server.getMaxConnections());
        positive(prefix + ".limits.max-connections", maxConnections);
        Duration idle = inherit(own.idleTimeout(), server.getIdleTimeout());
        if (idle.isNegative()) {
            throw new InvalidRpmaPropertyException(prefix + ".limits.idle-timeout", idle, "must be 0 (never) or positive");
        }
        return new RpmaEndpointSettings.Limits(maxConnections, idle,
                requestRate(prefix, inherit(own.requestsPerSecond(), server.getRequestsPerSecond()),
                        inherit(own.requestBurst(), server.getRequestBurst())));
    }

    private static RpmaEndpointSettings.@Nullable RequestRate requestRate(String prefix, @Nullable Double perSecond,
            @Nullable Integer burst) {
        if (perSecond == null) {
            if (burst != null) {
                throw new InvalidRpmaPropertyException(prefix + ".limits.request-burst", burst, "applies to a request"
                        + " rate, and requests-per-second is not set");
            }
            return null;
        }
        if (!(perSecond > 0) || perSecond.isInfinite()) {
            throw new InvalidRpmaPropertyException(prefix + ".limits.requests-per-second", perSecond, "must be positive;"
                    + " leave it unset for no limit");
        }
        if (burst == null) {
            return RpmaEndpointSettings.RequestRate.perSecond(perSecond);
        }
        positive(prefix + ".limits.request-burst", burst);
        return new RpmaEndpointSettings.RequestRate(perSecond, burst);
    }

    private static List<RpmaRegionDefinition> regions(RpmaProperties properties, List<RpmaRegionDefinition> beans,
            List<RpmaEndpointSettings> endpoints) {
        List<RpmaRegionDefinition> regions = new ArrayList<>();
        Set<String> endpointNames = new LinkedHashSet<>();
        endpoints.forEach((endpoint) -> endpointNames.add(endpoint.name()));
        for (Map.Entry<String, RpmaProperties.Region> entry : properties.getRegions().entrySet()) {
            String prefix = "rpma.server.regions." + entry.getKey();
            RpmaProperties.Region region = entry.getValue();
            if (region.getSize() == null || region.getSize().toBytes() < 1 || region.getSize().toBytes() > Integer.MAX_VALUE) {
                throw new InvalidRpmaPropertyException(prefix + ".size", region.getSize(),
                        "must be set, from 1 byte to 2GB");
            }
            if (region.getUsage() == null || region.getUsage().isEmpty()) {
                throw new InvalidRpmaPropertyException(prefix + ".usage", region.getUsage(),
                        "must name at least one of " + RpmaRegionDefinition.REMOTE_USAGES);
            }
            for (MemoryUsage usage : region.getUsage()) {
                if (!RpmaRegionDefinition.REMOTE_USAGES.contains(usage)) {
                    throw new InvalidRpmaPropertyException(prefix + ".usage", usage, "is not for exposed memory; choose"
                            + " from read-src, write-dst, flush-type-visibility, flush-type-persistent");
                }
            }
            for (String endpoint : region.getEndpoints()) {
                if (!endpointNames.contains(endpoint)) {
                    throw new InvalidRpmaPropertyException(prefix + ".endpoints", endpoint, "is not a configured"
                            + " endpoint; configured: " + endpointNames);
                }
            }
            regions.add(new RpmaRegionDefinition(entry.getKey(), store(prefix, region), EnumSet.copyOf(region.getUsage()),
                    Set.copyOf(region.getEndpoints()), region.isDirectWriteToPmem()));
        }
        regions.addAll(beans);
        return regions;
    }

    /**
     * Checks what the region promises against its store before anything is mapped (so that a refused
     * region creates no file), then maps it.
     */
    private static RpmaBackingStore store(String prefix, RpmaProperties.Region region) {
        RpmaBackingStore.Kind kind = region.getStore();
        if (kind != RpmaBackingStore.Kind.DAX) {
            if (region.getUsage().contains(MemoryUsage.FLUSH_TYPE_PERSISTENT)) {
                throw new InvalidRpmaPropertyException(prefix + ".usage", region.getUsage(), "flush-type-persistent"
                        + " promises clients that a flushed write is persistent, which only a 'dax' store gives, not '"
                        + kind.name().toLowerCase(Locale.ROOT) + "'", "Set '" + prefix + ".store' to 'dax' on"
                        + " persistent memory, or replace flush-type-persistent in '" + prefix + ".usage' by"
                        + " flush-type-visibility and make written ranges durable on the server (RpmaRegions.makeDurable)");
            }
            if (region.isDirectWriteToPmem()) {
                throw new InvalidRpmaPropertyException(prefix + ".direct-write-to-pmem", true, "only a 'dax' store is"
                        + " persistent memory, not '" + kind.name().toLowerCase(Locale.ROOT) + "'");
            }
        }
        int size = (int) region.getSize().toBytes();
        if (kind == RpmaBackingStore.Kind.VOLATILE) {
            if (region.getPath() != null) {
                throw new InvalidRpmaPropertyException(prefix + ".path", region.getPath(), "is only for store 'file'"
                        + " or 'dax'; this region's store is 'volatile'");
            }
            return RpmaBackingStore.allocate(size);
        }
        if (region.getPath() == null) {
            throw new InvalidRpmaPropertyException(prefix + ".path", "", "must be set for store '"
                    + kind.name().toLowerCase(Locale.ROOT) + "'");
        }
        try {
            return (kind == RpmaBackingStore.Kind.DAX)
                    ? RpmaBackingStore.mapDax(region.getPath(), size, region.isCreateIfMissing())
                    : RpmaBackingStore.mapFile(region.getPath(), size, region.isCreateIfMissing());
        }
        catch (RpmaRegionStoreException ex) {
            throw new InvalidRpmaPropertyException(prefix + ".path", region.getPath(), ex.getMessage());
        }
    }

    /** A named endpoint's own value where it sets one, else the rpma.server group's. */
    static <T> T inherit(@Nullable T own, T server) {
        return (own != null) ? own : server;
    }

    private static void positive(String property, int value) {
        if (value < 1) {
            throw new InvalidRpmaPropertyException(property, value, "must be at least 1");
        }
    }

    private static void positive(String property, Duration value) {
        if (value.isZero() || value.isNegative()) {
            throw new InvalidRpmaPropertyException(property, value, "must be positive");
        }
    }
}
