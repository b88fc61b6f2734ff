package dev.rpma.spring.boot.autoconfigure;

import java.util.List;
import java.util.function.Function;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.spring.server.RpmaEndpointSettings;

/** Builds an endpoint's {@link RpmaConnectionConfig} from its properties and the customizers. */
final class RpmaConnectionConfigFactory {

    private final RpmaProperties properties;

    private final List<RpmaConnectionConfigCustomizer> customizers;

    RpmaConnectionConfigFactory(RpmaProperties properties, List<RpmaConnectionConfigCustomizer> customizers) {
        this.properties = properties;
        this.customizers = customizers;
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
        catch (IllegalArgumentException ex) {
            config.close();
            String prefix = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(settings.name()) ? "rpma.server"
                    : "rpma.server.endpoints." + settings.name();
            throw new InvalidRpmaPropertyException(prefix + ".connection", ex.getMessage(), ex.getMessage());
        }
        catch (RuntimeException ex) {
            config.close();
            throw ex;
        }
    }

    private static <T> void apply(RpmaProperties.Connection own, RpmaProperties.Connection inherited,
            Function<RpmaProperties.Connection, T> getter, java.util.function.Consumer<T> setter) {
        T value = getter.apply(own);
        if (value == null) {
            value = getter.apply(inherited);
        }
        if (value != null) {
            setter.accept(value);
        }
    }
}
