package dev.rpma.spring.annotation;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.rpma.server.RpmaIncomingRequest;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaMessageListener;
import dev.rpma.server.RpmaRequestHandler;
import dev.rpma.server.RpmaSessionListener;
import dev.rpma.server.RpmaWireMode;

/**
 * The handlers found in the context ({@link RpmaHandlerBeanPostProcessor}), by endpoint: one
 * {@link RpmaConnectionHandler} method per endpoint (an endpoint with message handlers may have none,
 * and then accepts every request); {@link RpmaMessageHandler} methods, one per route
 * (a raw endpoint takes one, without a route); {@link RpmaSessionEvent} methods. {@link #resolve}
 * checks them against the configured endpoints and makes the message handlers with the codecs, before
 * the server listens; afterwards the server asks for each endpoint's handlers.
 */
public class RpmaHandlerRegistry {

    /** A message handler method as discovered, made into a listener once the codecs are known. */
    private record MessageHandlerDefinition(Object bean, String beanName, Method method, String endpoint, String route) {
    }

    /** What an endpoint with message handlers and no connection handler does with a request. */
    static final RpmaRequestHandler ACCEPT_ALL = new RpmaRequestHandler() {

        @Override
        public void handle(RpmaIncomingRequest request) {
            request.connect();
        }

        @Override
        public String name() {
            return "accept-all";
        }
    };

    private final Map<String, List<RpmaConnectionHandlerMethod>> connectionHandlers = new LinkedHashMap<>();

    private final List<MessageHandlerDefinition> messageDefinitions = new ArrayList<>();

    private final Map<String, Map<String, RpmaMessageHandlerMethod>> messageHandlers = new LinkedHashMap<>();

    private final Map<String, List<RpmaSessionEventMethod>> sessionEvents = new LinkedHashMap<>();

    synchronized void register(RpmaConnectionHandlerMethod handler) {
        this.connectionHandlers.computeIfAbsent(handler.endpoint(), (endpoint) -> new ArrayList<>()).add(handler);
    }

    synchronized void registerMessageHandler(Object bean, String beanName, Method method, String endpoint, String route) {
        this.messageDefinitions.add(new MessageHandlerDefinition(bean, beanName, method, endpoint, route));
    }

    synchronized void register(RpmaSessionEventMethod method) {
        this.sessionEvents.computeIfAbsent(method.endpoint(), (endpoint) -> new ArrayList<>()).add(method);
    }

    /** Every connection handler. */
    public synchronized List<RpmaConnectionHandlerMethod> connectionHandlers() {
        return this.connectionHandlers.values().stream().flatMap(List::stream).toList();
    }

    /**
     * Checks the handlers against the endpoints (by name, with their wire modes) and makes the message
     * handlers with {@code codecs}: no handler may name an unknown endpoint (checked first, since a
     * misspelt name also leaves its endpoint without a handler); each endpoint has one connection
     * handler, or none when it has message handlers; a framed endpoint's message handlers have distinct routes; a raw endpoint
     * has at most one, without a route.
     *
     * @throws RpmaHandlerConfigurationException naming the method and what to do
     */
    public synchronized void resolve(Map<String, RpmaWireMode> endpoints, List<RpmaMessageCodec> codecs) {
        checkKnown(endpoints, this.connectionHandlers.keySet(), "@RpmaConnectionHandler",
                (endpoint) -> this.connectionHandlers.get(endpoint).get(0).toString());
        checkKnown(endpoints, this.messageDefinitions.stream().map(MessageHandlerDefinition::endpoint).toList(),
                "@RpmaMessageHandler", (endpoint) -> this.messageDefinitions.stream()
                    .filter((definition) -> definition.endpoint().equals(endpoint)).findFirst()
                    .map((definition) -> nameOf(definition.method())).orElse(""));
        checkKnown(endpoints, this.sessionEvents.keySet(), "@RpmaSessionEvent",
                (endpoint) -> this.sessionEvents.get(endpoint).get(0).toString());
        Set<String> withMessages = this.messageDefinitions.stream().map(MessageHandlerDefinition::endpoint)
            .collect(Collectors.toSet());
        for (String endpoint : endpoints.keySet()) {
            checkConnectionHandler(endpoint, this.connectionHandlers.getOrDefault(endpoint, List.of()),
                    withMessages.contains(endpoint));
        }
        this.messageHandlers.clear();
        for (MessageHandlerDefinition definition : this.messageDefinitions) {
            RpmaWireMode mode = endpoints.get(definition.endpoint());
            Map<String, RpmaMessageHandlerMethod> routes = this.messageHandlers.computeIfAbsent(definition.endpoint(),
                    (endpoint) -> new LinkedHashMap<>());
            if (mode == RpmaWireMode.RAW && (!definition.route().isEmpty() || !routes.isEmpty())) {
                throw new RpmaHandlerConfigurationException("RDMA endpoint '" + definition.endpoint() + "' is raw, so its"
                        + " messages carry no route and it takes one message handler, but " + nameOf(definition.method())
                        + (definition.route().isEmpty() ? " is another one" : " has route '" + definition.route() + "'"),
                        definition.endpoint(), RpmaHandlerConfigurationException.Problem.ROUTE_ON_RAW_ENDPOINT);
            }
            RpmaMessageHandlerMethod method = new RpmaMessageHandlerMethod(definition.bean(), definition.beanName(),
                    definition.method(), definition.endpoint(), definition.route(), codecs);
            RpmaMessageHandlerMethod other = routes.putIfAbsent(definition.route(), method);
            if (other != null) {
                throw new RpmaHandlerConfigurationException("RDMA endpoint '" + definition.endpoint() + "' has two"
                        + " message handlers for route '" + definition.route() + "': " + other + " and " + method,
                        definition.endpoint(), RpmaHandlerConfigurationException.Problem.CONFLICTING_ROUTES);
            }
        }
    }

    private static void checkKnown(Map<String, RpmaWireMode> endpoints, Iterable<String> named, String annotation,
            java.util.function.Function<String, String> example) {
        for (String endpoint : named) {
            if (!endpoints.containsKey(endpoint)) {
                throw new RpmaHandlerConfigurationException(annotation + " " + example.apply(endpoint) + " names endpoint '"
                        + endpoint + "', which is not configured; configured: " + endpoints.keySet(), endpoint,
                        RpmaHandlerConfigurationException.Problem.UNKNOWN_ENDPOINT);
            }
        }
    }

    private static void checkConnectionHandler(String endpoint, List<RpmaConnectionHandlerMethod> found,
            boolean hasMessageHandlers) {
        if (found.isEmpty() && !hasMessageHandlers) {
            throw new RpmaHandlerConfigurationException("RDMA endpoint '" + endpoint + "' has no"
                    + " @RpmaConnectionHandler method, so every request to it would be rejected", endpoint,
                    RpmaHandlerConfigurationException.Problem.NO_HANDLER);
        }
        if (found.size() > 1) {
            throw new RpmaHandlerConfigurationException("RDMA endpoint '" + endpoint + "' has " + found.size()
                    + " @RpmaConnectionHandler methods: " + found.stream().map(RpmaConnectionHandlerMethod::toString)
                        .collect(Collectors.joining(", ")) + "; each endpoint takes exactly one", endpoint,
                    RpmaHandlerConfigurationException.Problem.CONFLICTING_HANDLERS);
        }
    }

    /**
     * The connection handler of an endpoint, once {@link #resolve} passed; for an endpoint that has
     * message handlers and no connection handler, one that accepts every request.
     */
    public synchronized RpmaRequestHandler connectionHandler(String endpoint) {
        List<RpmaConnectionHandlerMethod> found = this.connectionHandlers.get(endpoint);
        return (found != null) ? found.get(0) : ACCEPT_ALL;
    }

    /** The message handlers of an endpoint by route, once {@link #resolve} passed; empty when it has none. */
    public synchronized Map<String, RpmaMessageListener> messageListeners(String endpoint) {
        return Map.copyOf(this.messageHandlers.getOrDefault(endpoint, Map.of()));
    }

    /** The session event methods of an endpoint. */
    public synchronized List<RpmaSessionListener> sessionListeners(String endpoint) {
        return List.copyOf(this.sessionEvents.getOrDefault(endpoint, List.of()));
    }

    /** {@code Class.method} for logs, metrics and traces. */
    static String nameOf(Method method) {
        return method.getDeclaringClass().getSimpleName() + "." + method.getName();
    }
}
