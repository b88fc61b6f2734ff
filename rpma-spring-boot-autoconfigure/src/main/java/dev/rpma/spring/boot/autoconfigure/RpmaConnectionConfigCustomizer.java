package dev.rpma.spring.boot.autoconfigure;

import dev.rpma.binding.RpmaConnectionConfig;

/** Adjusts the connection configuration of an endpoint's requests after the properties were applied. */
@FunctionalInterface
public interface RpmaConnectionConfigCustomizer {

    void customize(String endpointName, RpmaConnectionConfig config);
}
