package dev.rpma.spring.server;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import dev.rpma.jna.PeerRole;
import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.jna.RpmaEndpoint;
import dev.rpma.jna.RpmaException;
import dev.rpma.jna.RpmaPeer;

/**
 * All endpoints of an application: one peer per distinct address, one listening
 * {@link RpmaEndpointServer} per endpoint. Created fully listening but not accepting, or not at
 * all: if any endpoint fails, everything already created is released before the exception leaves.
 * {@link #stop(Runnable)} stops every endpoint and deletes the peers last.
 */
public final class RpmaServer {

    private static final Log logger = LogFactory.getLog(RpmaServer.class);

    private final Map<String, RpmaPeer> peers;

    private final Map<String, RpmaEndpointServer> endpoints;

    private RpmaServer(Map<String, RpmaPeer> peers, Map<String, RpmaEndpointServer> endpoints) {
        this.peers = peers;
        this.endpoints = endpoints;
    }

    /** What the server needs besides the settings. */
    public interface Components {

        /** The handler of an endpoint. */
        RpmaRequestHandler handler(String endpointName);

        /** The configuration for the requests of an endpoint, or {@code null} for librpma's defaults. */
        RpmaConnectionConfig requestConfig(Rpma rpma, RpmaEndpointSettings settings);

        /** Hooks around the dispatch path; none by default. */
        default RpmaServerObserver observer() {
            return RpmaServerObserver.NONE;
        }

        /** Who is told of the connections' events; nobody by default. */
        default List<RpmaConnectionEventListener> listeners() {
            return List.of();
        }
    }

    /** Opens the peers and listens on every endpoint. */
    public static RpmaServer listen(Rpma rpma, List<RpmaEndpointSettings> settings, Components components) {
        Map<String, RpmaPeer> peers = new LinkedHashMap<>();
        Map<String, RpmaEndpointServer> endpoints = new LinkedHashMap<>();
        try {
            for (RpmaEndpointSettings endpoint : settings) {
                endpoints.put(endpoint.name(), listen(rpma, endpoint, peers, components));
            }
            return new RpmaServer(peers, endpoints);
        }
        catch (RuntimeException ex) {
            endpoints.values().forEach(RpmaEndpointServer::closeUnstarted);
            closePeers(peers);
            throw ex;
        }
    }

    private static RpmaEndpointServer listen(Rpma rpma, RpmaEndpointSettings settings, Map<String, RpmaPeer> peers,
            Components components) {
        RpmaEndpoint endpoint;
        try {
            RpmaPeer peer = peers.get(settings.address());
            if (peer == null) {
                peer = rpma.openPeer(settings.address(), PeerRole.SERVER);
                peers.put(settings.address(), peer);
            }
            endpoint = peer.listen(settings.address(), settings.port());
        }
        catch (RpmaException ex) {
            throw new RpmaListenException(settings.name(), settings.address(), settings.port(), ex);
        }
        RpmaConnectionConfig config = null;
        try {
            config = components.requestConfig(rpma, settings);
            return new RpmaEndpointServer(settings, endpoint, config, components.handler(settings.name()),
                    components.observer(), components.listeners());
        }
        catch (RuntimeException ex) {
            if (config != null) {
                config.close();
            }
            endpoint.close();
            throw ex;
        }
    }

    /** The endpoints by name, in configuration order. */
    public Map<String, RpmaEndpointServer> endpoints() {
        return Collections.unmodifiableMap(this.endpoints);
    }

    public RpmaEndpointServer endpoint(String name) {
        return this.endpoints.get(name);
    }

    /** Starts accepting on every endpoint. */
    public void start() {
        this.endpoints.values().forEach(RpmaEndpointServer::start);
    }

    /** Stops every endpoint gracefully, deletes the peers, then runs {@code callback}. */
    public void stop(Runnable callback) {
        List<RpmaEndpointServer> servers = new ArrayList<>(this.endpoints.values());
        AtomicInteger remaining = new AtomicInteger(servers.size());
        Runnable whenAllStopped = () -> {
            if (remaining.decrementAndGet() == 0) {
                closePeers(this.peers);
                callback.run();
            }
        };
        if (servers.isEmpty()) {
            closePeers(this.peers);
            callback.run();
            return;
        }
        for (RpmaEndpointServer server : servers) {
            try {
                server.stop(whenAllStopped);
            }
            catch (RuntimeException ex) {
                // one endpoint that cannot be released must not keep the others and the peers from it
                logger.error("Stopping RDMA endpoint '" + server.name() + "' failed", ex);
                whenAllStopped.run();
            }
        }
    }

    /**
     * Stops like {@link #stop(Runnable)} and waits until everything is released; for bean
     * destruction, a no-op once the server was stopped.
     */
    public void close() {
        java.util.concurrent.CountDownLatch stopped = new java.util.concurrent.CountDownLatch(1);
        stop(stopped::countDown);
        try {
            stopped.await();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closePeers(Map<String, RpmaPeer> peers) {
        for (RpmaPeer peer : peers.values()) {
            try {
                peer.close();
            }
            catch (RuntimeException ex) {
                logger.warn("Closing the RDMA peer of " + peer.address() + " failed: " + ex.getMessage());
            }
        }
        peers.clear();
    }
}
