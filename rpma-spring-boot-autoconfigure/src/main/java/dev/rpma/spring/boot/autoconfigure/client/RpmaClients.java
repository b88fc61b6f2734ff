package dev.rpma.spring.boot.autoconfigure.client;

import java.util.List;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientBuilder;
import dev.rpma.client.RpmaClientObserver;
import dev.rpma.client.RpmaRequestObserver;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.spring.boot.autoconfigure.InvalidRpmaPropertyException;

/**
 * Makes RDMA clients with the application's librpma, codecs, metrics and observations: the configured servers'
 * ({@code rpma.client.servers.<name>}, made as beans), and servers known only at run time
 * ({@link #builder(String)}; the caller closes those).
 */
public final class RpmaClients {

    /** Asked only when a client is made: an application without clients needs no librpma for this bean. */
    private final Supplier<Rpma> rpma;

    private final List<RpmaMessageCodec> codecs;

    private final RpmaClientObserver observer;

    private final RpmaRequestObserver requestObserver;

    private final RpmaClientProperties properties;

    private final List<Listener> listeners;

    private final @Nullable RpmaServiceDiscovery discovery;

    /** Told of each client {@link #create} makes (metrics bind its gauges). */
    @FunctionalInterface
    public interface Listener {

        void created(RpmaClient client);
    }

    /**
     * @param discovery finds the servers of the clients configured with a service id; {@code null}
     *     without Spring Cloud Commons, and such clients fail to be made
     */
    public RpmaClients(Supplier<Rpma> rpma, List<RpmaMessageCodec> codecs, RpmaClientObserver observer,
            RpmaRequestObserver requestObserver, RpmaClientProperties properties, List<Listener> listeners,
            @Nullable RpmaServiceDiscovery discovery) {
        this.rpma = rpma;
        this.codecs = List.copyOf(codecs);
        this.observer = observer;
        this.requestObserver = requestObserver;
        this.properties = properties;
        this.listeners = List.copyOf(listeners);
        this.discovery = discovery;
    }

    /** A builder for a client named {@code name}, with the application's codecs, metrics and observations. */
    public RpmaClientBuilder builder(String name) {
        RpmaClientBuilder builder = RpmaClient.builder(this.rpma.get()).name(name).observer(this.observer)
            .requestObserver(this.requestObserver);
        this.codecs.forEach(builder::codec);
        return builder;
    }

    /**
     * The client of {@code rpma.client.servers.<name>}, built now (the bean of that name is one such
     * client; each call makes another, which the caller closes).
     */
    public RpmaClient create(String name) {
        RpmaClientProperties.Server server = this.properties.getServers().get(name);
        if (server == null) {
            throw new IllegalArgumentException("No server '" + name + "' under rpma.client.servers; configured: "
                    + this.properties.getServers().keySet());
        }
        RpmaClientBuilder builder = server.applyTo(builder(name), name);
        String serviceId = server.getServiceId();
        if (serviceId != null && !serviceId.isBlank()) {
            if (this.discovery == null) {
                throw new InvalidRpmaPropertyException("rpma.client.servers." + name + ".service-id", serviceId,
                        "needs a service registry client, and Spring Cloud Commons is not on the class path",
                        "Add Spring Cloud Commons and a DiscoveryClient (org.springframework.cloud:spring-cloud-commons"
                                + " with the registry's starter), or set rpma.client.servers." + name + ".address");
            }
            builder.servers(this.discovery.locator(serviceId, server.getEndpoint(), server.getConnectTimeout()));
        }
        RpmaClient client = builder.build();
        this.listeners.forEach((listener) -> listener.created(client));
        return client;
    }
}
