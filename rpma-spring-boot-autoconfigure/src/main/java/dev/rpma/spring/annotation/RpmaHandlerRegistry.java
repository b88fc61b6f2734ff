package dev.rpma.spring.annotation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import dev.rpma.spring.server.RpmaIncomingRequest;
import dev.rpma.spring.server.RpmaRequestHandler;

/**
 * The {@link RpmaConnectionHandler} methods found in the context, by endpoint. Each endpoint needs
 * exactly one; {@link #validate(Collection)} says which endpoint lacks one or has two.
 */
public class RpmaHandlerRegistry {

    private final Map<String, List<RpmaHandlerMethod>> handlers = new LinkedHashMap<>();

    /**
     * Changes with every registration (under the lock), so that a handler resolved before a later
     * registration (say, of a lazy bean) is looked up again rather than kept.
     */
    private volatile int generation;

    synchronized void register(RpmaHandlerMethod handler) {
        this.handlers.computeIfAbsent(handler.endpoint(), (endpoint) -> new ArrayList<>()).add(handler);
        this.generation++;
    }

    /** Every registered handler. */
    public synchronized List<RpmaHandlerMethod> handlers() {
        return this.handlers.values().stream().flatMap(List::stream).toList();
    }

    /**
     * Checks that no handler names an unknown endpoint (first, since a misspelt name also leaves its
     * endpoint without a handler) and that each endpoint has exactly one handler.
     */
    public synchronized void validate(Collection<String> endpoints) {
        for (Map.Entry<String, List<RpmaHandlerMethod>> entry : this.handlers.entrySet()) {
            if (!endpoints.contains(entry.getKey())) {
                throw new RpmaHandlerConfigurationException("@RpmaConnectionHandler " + entry.getValue().get(0)
                        + " names endpoint '" + entry.getKey() + "', which is not configured; configured: "
                        + endpoints, entry.getKey(), RpmaHandlerConfigurationException.Problem.UNKNOWN_ENDPOINT);
            }
        }
        for (String endpoint : endpoints) {
            check(endpoint, this.handlers.getOrDefault(endpoint, List.of()));
        }
    }

    private static void check(String endpoint, List<RpmaHandlerMethod> found) {
        if (found.isEmpty()) {
            throw new RpmaHandlerConfigurationException("RDMA endpoint '" + endpoint + "' has no"
                    + " @RpmaConnectionHandler method, so every request to it would be rejected", endpoint,
                    RpmaHandlerConfigurationException.Problem.NO_HANDLER);
        }
        if (found.size() > 1) {
            throw new RpmaHandlerConfigurationException("RDMA endpoint '" + endpoint + "' has "
                    + found.size() + " @RpmaConnectionHandler methods: " + found.stream()
                            .map(RpmaHandlerMethod::toString).collect(Collectors.joining(", "))
                    + "; each endpoint takes exactly one", endpoint,
                    RpmaHandlerConfigurationException.Problem.CONFLICTING_HANDLERS);
        }
    }

    /**
     * A handler that looks up the endpoint's method when it is first needed, so handlers may register
     * after the server. The method found (exactly one) is kept until the next registration: a request
     * then costs a volatile read, not the registry's lock and a copy of its list.
     */
    public RpmaRequestHandler handlerFor(String endpoint) {
        return new RpmaRequestHandler() {

            private volatile Resolved resolved;

            @Override
            public void handle(RpmaIncomingRequest request) throws Exception {
                method().handle(request);
            }

            @Override
            public String name() {
                RpmaHandlerMethod cached = cached();
                if (cached != null) {
                    return cached.name();
                }
                List<RpmaHandlerMethod> found = found();
                return found.isEmpty() ? "<no handler for '" + endpoint + "'>" : found.get(0).name();
            }

            /** The method resolved before, unless a registration came since. */
            private RpmaHandlerMethod cached() {
                Resolved current = this.resolved;
                return (current != null && current.generation == RpmaHandlerRegistry.this.generation)
                        ? current.method : null;
            }

            private RpmaHandlerMethod method() {
                RpmaHandlerMethod cached = cached();
                if (cached != null) {
                    return cached;
                }
                // the generation before the lookup: a registration in between only makes the next request look again
                int generation = RpmaHandlerRegistry.this.generation;
                List<RpmaHandlerMethod> found = found();
                check(endpoint, found);
                this.resolved = new Resolved(generation, found.get(0));
                return found.get(0);
            }

            private List<RpmaHandlerMethod> found() {
                synchronized (RpmaHandlerRegistry.this) {
                    return List.copyOf(RpmaHandlerRegistry.this.handlers.getOrDefault(endpoint, List.of()));
                }
            }
        };
    }

    /** The one method of an endpoint, as of a registry generation. */
    private record Resolved(int generation, RpmaHandlerMethod method) {
    }
}
