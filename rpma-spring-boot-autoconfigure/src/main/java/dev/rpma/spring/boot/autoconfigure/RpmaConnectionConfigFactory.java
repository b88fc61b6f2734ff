package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Function;

import dev.rpma.jna.Rpma;
import dev.rpma.jna.RpmaConnectionConfig;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaQueueSizes;

/**
 * Builds an endpoint's {@link RpmaConnectionConfig} from its properties and the customizers, its
 * queues sized for the endpoint's data path where the properties leave them unset. The properties are
 * checked when the factory is created and when the sizes the slots need are known, before anything
 * native exists, so an invalid value names its property instead of surfacing as a provider error at
 * the first request.
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

    RpmaConnectionConfig create(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed) {
        boolean isDefault = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(settings.name());
        RpmaProperties.Connection own = isDefault ? this.properties.getConnection()
                : this.properties.getEndpoints().get(settings.name()).getConnection();
        RpmaProperties.Connection inherited = this.properties.getConnection();
        String prefix = isDefault ? "rpma.server.connection" : "rpma.server.endpoints." + settings.name() + ".connection";
        Integer cq = sized(prefix + ".cq-size", own, inherited, RpmaProperties.Connection::getCqSize, needed.cq(), needed);
        Integer sq = sized(prefix + ".sq-size", own, inherited, RpmaProperties.Connection::getSqSize, needed.sq(), needed);
        Integer rq = sized(prefix + ".rq-size", own, inherited, RpmaProperties.Connection::getRqSize, needed.rq(), needed);
        Integer rcq = pick(own, inherited, RpmaProperties.Connection::getRcqSize);
        if (needed.isNeeded() && rcq != null && rcq > 0) {
            throw new InvalidRpmaPropertyException(prefix + ".rcq-size", rcq, "must be 0 for an endpoint with message"
                    + " handlers: its data path takes every completion from the main completion queue");
        }
        Boolean sharedChannel = pick(own, inherited, RpmaProperties.Connection::getSharedCompletionChannel);
        if (needed.isNeeded() && settings.messages().sharesReceives() && Boolean.TRUE.equals(sharedChannel)) {
            throw new InvalidRpmaPropertyException(prefix + ".shared-completion-channel", true, "must be false with"
                    + " a shared receive queue (messages.shared-receive-slots): librpma refuses every request with"
                    + " RPMA_E_INVAL when the queue has a receive completion queue of its own");
        }
        RpmaConnectionConfig config = rpma.newConnectionConfig();
        try {
            if (cq != null) {
                config.cqSize(cq);
            }
            if (sq != null) {
                config.sqSize(sq);
            }
            if (rq != null) {
                config.rqSize(rq);
            }
            apply(own, inherited, RpmaProperties.Connection::getRcqSize, config::rcqSize);
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

    /**
     * A queue size: the property's, checked against what the data path needs, else what it needs
     * ({@code null}: librpma's default, for an endpoint without message handlers).
     */
    private static Integer sized(String property, RpmaProperties.Connection own, RpmaProperties.Connection inherited,
            Function<RpmaProperties.Connection, Integer> getter, int needed, RpmaQueueSizes sizes) {
        Integer value = pick(own, inherited, getter);
        if (value == null) {
            return sizes.isNeeded() ? needed : null;
        }
        if (value < needed) {
            throw new InvalidRpmaPropertyException(property, value, "must be at least " + needed + " for the endpoint's"
                    + " receive and send slots (rpma.server.messages.receive-slots and send-slots); leave it unset to"
                    + " have it sized for them");
        }
        return value;
    }

    private static <T> T pick(RpmaProperties.Connection own, RpmaProperties.Connection inherited,
            Function<RpmaProperties.Connection, T> getter) {
        T value = getter.apply(own);
        return (value != null) ? value : getter.apply(inherited);
    }

    private static <T> void apply(RpmaProperties.Connection own, RpmaProperties.Connection inherited,
            Function<RpmaProperties.Connection, T> getter, Consumer<T> setter) {
        T value = pick(own, inherited, getter);
        if (value != null) {
            setter.accept(value);
        }
    }
}
