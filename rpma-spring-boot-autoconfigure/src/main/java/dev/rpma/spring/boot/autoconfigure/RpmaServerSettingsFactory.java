package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import dev.rpma.spring.server.RpmaEndpointSettings;

/**
 * Turns {@link RpmaProperties} into validated {@link RpmaEndpointSettings}, one per endpoint, the
 * default endpoint first. Every invalid value fails with {@link InvalidRpmaPropertyException} naming
 * the property.
 */
final class RpmaEndpointSettingsFactory {

    static final int DEFAULT_QUEUE_CAPACITY = 64;
    static final int DEFAULT_HANDLER_THREADS = 4;
    static final Duration DEFAULT_REQUEST_DEADLINE = Duration.ofSeconds(5);
    static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
    static final int DEFAULT_MAX_CONSECUTIVE_ERRORS = 10;

    private RpmaEndpointSettingsFactory() {
    }

    static List<RpmaEndpointSettings> create(RpmaProperties properties) {
        List<RpmaEndpointSettings> settings = new ArrayList<>();
        RpmaProperties.Acceptor defaults = properties.getAcceptor();
        settings.add(endpoint("rpma.server", RpmaEndpointSettings.DEFAULT_ENDPOINT, properties.getAddress(),
                properties.getPort(), defaults, new RpmaProperties.Acceptor(), properties));
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
            if (endpoint.getPort() == null) {
                throw new InvalidRpmaPropertyException(prefix + ".port", null, "each named endpoint needs its own port");
            }
            String address = (endpoint.getAddress() != null) ? endpoint.getAddress() : properties.getAddress();
            RpmaEndpointSettings named = endpoint(prefix, name, address, endpoint.getPort(), endpoint.getAcceptor(),
                    defaults, properties);
            if (!addresses.add(named.address() + ":" + named.port())) {
                throw new InvalidRpmaPropertyException(prefix + ".port", named.port(), "another endpoint already listens on "
                        + named.address() + ":" + named.port());
            }
            settings.add(named);
        }
        return settings;
    }

    private static RpmaEndpointSettings endpoint(String prefix, String name, String address, int port,
            RpmaProperties.Acceptor own, RpmaProperties.Acceptor inherited, RpmaProperties properties) {
        RpmaAddresses.validate(prefix + ".address", address);
        if (port < 1 || port > 65535) {
            throw new InvalidRpmaPropertyException(prefix + ".port", port, "must be between 1 and 65535");
        }
        int queueCapacity = pick(own, inherited, RpmaProperties.Acceptor::getQueueCapacity, DEFAULT_QUEUE_CAPACITY);
        positive(prefix + ".acceptor.queue-capacity", queueCapacity);
        if (queueCapacity > RpmaEndpointSettings.MAX_QUEUE_CAPACITY) {
            throw new InvalidRpmaPropertyException(prefix + ".acceptor.queue-capacity", queueCapacity, "must be at most "
                    + RpmaEndpointSettings.MAX_QUEUE_CAPACITY + ": an endpoint holds no more requests and connections together");
        }
        int handlerThreads = pick(own, inherited, RpmaProperties.Acceptor::getHandlerThreads, DEFAULT_HANDLER_THREADS);
        positive(prefix + ".acceptor.handler-threads", handlerThreads);
        Duration deadline = pick(own, inherited, RpmaProperties.Acceptor::getRequestDeadline, DEFAULT_REQUEST_DEADLINE);
        positive(prefix + ".acceptor.request-deadline", deadline);
        Duration pollInterval = pick(own, inherited, RpmaProperties.Acceptor::getPollInterval, DEFAULT_POLL_INTERVAL);
        positive(prefix + ".acceptor.poll-interval", pollInterval);
        int maxErrors = pick(own, inherited, RpmaProperties.Acceptor::getMaxConsecutiveErrors,
                DEFAULT_MAX_CONSECUTIVE_ERRORS);
        positive(prefix + ".acceptor.max-consecutive-errors", maxErrors);
        boolean batch = pick(own, inherited, RpmaProperties.Acceptor::getHandlerBatchScheduling, true);
        int spinLooks = pick(own, inherited, RpmaProperties.Acceptor::getHandlerSpinLooks,
                RpmaEndpointSettings.DEFAULT_HANDLER_SPIN_LOOKS);
        if (spinLooks < 0) {
            throw new InvalidRpmaPropertyException(prefix + ".acceptor.handler-spin-looks", spinLooks,
                    "must be at least 0 (0 parks an idle handler thread at once)");
        }
        Duration grace = properties.getShutdown().getGracePeriod();
        if (grace == null) {
            throw new InvalidRpmaPropertyException("rpma.server.shutdown.grace-period", null, "must be set");
        }
        // not inherited: it is a promise about one endpoint's handler, that it never blocks
        return new RpmaEndpointSettings(name, address.trim(), port, queueCapacity, handlerThreads, deadline,
                pollInterval, grace, maxErrors, own.isInlineHandler(), batch, spinLooks);
    }

    private static <T> T pick(RpmaProperties.Acceptor own, RpmaProperties.Acceptor inherited,
            Function<RpmaProperties.Acceptor, T> getter, T fallback) {
        T value = getter.apply(own);
        if (value == null) {
            value = getter.apply(inherited);
        }
        return (value != null) ? value : fallback;
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
