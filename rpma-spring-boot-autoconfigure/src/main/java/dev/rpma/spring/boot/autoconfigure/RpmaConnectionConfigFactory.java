package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.spring.server.RpmaEndpointSettings;

/**
 * Builds an endpoint's {@link RpmaConnectionConfig} from its properties and the customizers. The
 * properties are checked when the factory is created, before anything native exists, so an invalid
 * value names its property instead of surfacing as a provider error at the first request.
 */
final class RpmaConnectionConfigFactory {

    private final RpmaProperties properties;

    private final List<RpmaConnectionConfigCustomizer> customizers;

    RpmaConnectionConfigFactory(RpmaProperties properties, List<RpmaConnectionConfigCustomizer> customizers) {
        this.properties = properties;
        this.customizers = customizers;
        validate("rpma.server.connection", properties.getConnection());
        for (Map.Entry<String, RpmaProperties.Endpoint> entry : properties.getEndpoints().entrySet()) {
            validate("rpma.server.endpoints." + entry.getKey() + ".connection", entry.getValue().getConnection());
        }
    }

    private static void validate(String prefix, RpmaProperties.Connection connection) {
        // ibv_create_cq refuses 0 entries; librpma would only fail at the first request
        atLeast(prefix + ".cq-size", connection.getCqSize(), 1);
        atLeast(prefix + ".rcq-size", connection.getRcqSize(), 0);
        atLeast(prefix + ".sq-size", connection.getSqSize(), 0);
        atLeast(prefix + ".rq-size", connection.getRqSize(), 0);
        Duration timeout = connection.getTimeout();
        if (timeout != null && (timeout.isNegative() || timeout.toMillis() > Integer.MAX_VALUE)) {
            throw new InvalidRpmaPropertyException(prefix + ".timeout", timeout,
                    "must be between 0 and " + Integer.MAX_VALUE + " ms");
        }
    }

    private static void atLeast(String property, Integer value, int minimum) {
        if (value != null && value < minimum) {
            throw new InvalidRpmaPropertyException(property, value, "must be at least " + minimum);
        }
    }

    RpmaConnectionConfig create(Rpma rpma, RpmaEndpointSettings settings) {
        RpmaProperties.Connection own = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(settings.name())
                ? this.properties.getConnection()
                : this.properties.getEndpoints().get(settings.name()).getConnection();
        RpmaProperties.Connection inherited = this.properties.getConnection();
        RpmaConnectionConfig config = rpma.newConnectionConfig();
        try {
            apply(own, inherited, RpmaProperties.Connection::getCqSize, config::cqSize);
            apply(own, inherited, RpmaProperties.Connection::getRcqSize, config::rcqSize);
            apply(own, inherited, RpmaProperties.Connection::getSqSize, config::sqSize);
            apply(own, inherited, RpmaProperties.Connection::getRqSize, config::rqSize);
            apply(own, inherited, RpmaProperties.Connection::getTimeout, config::timeout);
            apply(own, inherited, RpmaProperties.Connection::getSharedCompletionChannel, config::sharedCompletionChannel);
            for (RpmaConnectionConfigCustomizer customizer : this.customizers) {
                customizer.customize(settings.name(), config);
            }
            return config;
        }
        catch (RuntimeException ex) {
            config.close();
            throw ex;
        }
    }

    private static <T> void apply(RpmaProperties.Connection own, RpmaProperties.Connection inherited,
            Function<RpmaProperties.Connection, T> getter, Consumer<T> setter) {
        T value = getter.apply(own);
        if (value == null) {
            value = getter.apply(inherited);
        }
        if (value != null) {
            setter.accept(value);
        }
    }
}
