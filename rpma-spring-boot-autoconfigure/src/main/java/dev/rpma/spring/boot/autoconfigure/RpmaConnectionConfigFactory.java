package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionConfig;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaQueueSizes;

import static dev.rpma.spring.boot.autoconfigure.RpmaServerSettingsFactory.inherit;

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
        RpmaProperties.Connection server = properties.getConnection();
        validate("rpma.server.connection", server.getCqSize(), server.getRcqSize(), server.getSqSize(),
                server.getRqSize(), server.getTimeout());
        for (Map.Entry<String, RpmaProperties.Endpoint> entry : properties.getEndpoints().entrySet()) {
            RpmaProperties.EndpointConnection own = entry.getValue().connection();
            validate("rpma.server.endpoints." + entry.getKey() + ".connection", own.cqSize(), own.rcqSize(),
                    own.sqSize(), own.rqSize(), own.timeout());
        }
    }

    private static void validate(String prefix, @Nullable Integer cqSize, @Nullable Integer rcqSize,
            @Nullable Integer sqSize, @Nullable Integer rqSize, @Nullable Duration timeout) {
        // ibv_create_cq refuses 0 entries; librpma would only fail at the first request
        atLeast(prefix + ".cq-size", cqSize, 1);
        atLeast(prefix + ".rcq-size", rcqSize, 0);
        atLeast(prefix + ".sq-size", sqSize, 0);
        atLeast(prefix + ".rq-size", rqSize, 0);
        if (timeout != null && (timeout.isNegative() || timeout.toMillis() > Integer.MAX_VALUE)) {
            throw new InvalidRpmaPropertyException(prefix + ".timeout", timeout,
                    "must be between 0 and " + Integer.MAX_VALUE + " ms");
        }
    }

    private static void atLeast(String property, @Nullable Integer value, int minimum) {
        if (value != null && value < minimum) {
            throw new InvalidRpmaPropertyException(property, value, "must be at least " + minimum);
        }
    }

    RpmaConnectionConfig create(Rpma rpma, RpmaEndpointSettings settings, RpmaQueueSizes needed) {
        boolean isDefault = RpmaEndpointSettings.DEFAULT_ENDPOINT.equals(settings.name());
        RpmaProperties.Endpoint endpoint = isDefault ? RpmaProperties.Endpoint.NOTHING_SET
                : this.properties.getEndpoints().get(settings.name());
        RpmaProperties.EndpointConnection own = endpoint.connection();
        RpmaProperties.Connection server = this.properties.getConnection();
        String prefix = isDefault ? "rpma.server.connection" : "rpma.server.endpoints." + settings.name() + ".connection";
        Integer cq = sized(prefix + ".cq-size", inherit(own.cqSize(), server.getCqSize()), needed.cq(), needed);
        Integer sq = sized(prefix + ".sq-size", inherit(own.sqSize(), server.getSqSize()), needed.sq(), needed);
        Integer rq = sized(prefix + ".rq-size", inherit(own.rqSize(), server.getRqSize()), needed.rq(), needed);
        int rcq = inherit(own.rcqSize(), server.getRcqSize());
        if (needed.isNeeded() && rcq > 0) {
            throw new InvalidRpmaPropertyException(prefix + ".rcq-size", rcq, "must be 0 for an endpoint with message"
                    + " handlers: its data path takes every completion from the main completion queue");
        }
        boolean sharedChannel = inherit(own.sharedCompletionChannel(), server.isSharedCompletionChannel());
        if (needed.isNeeded() && settings.messages().sharesReceives() && sharedChannel) {
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
            config.rcqSize(rcq);
            config.timeout(inherit(own.timeout(), server.getTimeout()));
            config.sharedCompletionChannel(sharedChannel);
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
    private static @Nullable Integer sized(String property, @Nullable Integer value, int needed, RpmaQueueSizes sizes) {
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
}
