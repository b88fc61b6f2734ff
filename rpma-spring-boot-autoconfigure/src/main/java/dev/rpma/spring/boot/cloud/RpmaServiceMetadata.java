package dev.rpma.spring.boot.cloud;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;

import dev.rpma.client.RpmaServerAddress;
import dev.rpma.server.RpmaEndpointSettings;

/**
 * The keys under which a server instance publishes an endpoint in its service registration's metadata:
 * {@code rpma-<endpoint>-address} and {@code rpma-<endpoint>-port}. Hyphens rather than dots, because
 * some registries take nothing else in a key (Consul: letters, digits, {@code -} and {@code _}).
 */
public final class RpmaServiceMetadata {

    private RpmaServiceMetadata() {
    }

    /** The key of the IP address of {@code endpoint}. */
    public static String addressKey(String endpoint) {
        return "rpma-" + endpoint + "-address";
    }

    /** The key of the port of {@code endpoint}. */
    public static String portKey(String endpoint) {
        return "rpma-" + endpoint + "-port";
    }

    /** The metadata that publishes {@code endpoints}, in their order. */
    static Map<String, String> of(List<RpmaEndpointSettings> endpoints) {
        Map<String, String> metadata = new LinkedHashMap<>();
        for (RpmaEndpointSettings endpoint : endpoints) {
            metadata.put(addressKey(endpoint.name()), endpoint.address());
            metadata.put(portKey(endpoint.name()), Integer.toString(endpoint.port()));
        }
        return metadata;
    }

    /** Where {@code instance} serves {@code endpoint}, or {@code null} when its metadata does not say (in full). */
    static @Nullable RpmaServerAddress addressOf(ServiceInstance instance, String endpoint) {
        Map<String, String> metadata = instance.getMetadata();
        if (metadata == null) {
            return null;
        }
        String address = metadata.get(addressKey(endpoint));
        String port = metadata.get(portKey(endpoint));
        if (address == null || address.isBlank() || port == null) {
            return null;
        }
        try {
            return new RpmaServerAddress(address.trim(), Integer.parseInt(port.trim()));
        }
        catch (IllegalArgumentException ex) {
            // a port that is no number or out of range: the instance cannot be called
            return null;
        }
    }
}
