package dev.rpma.spring.annotation;

/**
 * Handlers do not match the endpoints: one is missing, two conflict, one names an endpoint that is
 * not configured, or a method's signature is wrong.
 */
public class RpmaHandlerConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** What is wrong; each has its own fix. */
    public enum Problem {
        /** A configured endpoint has no handler method. */
        NO_HANDLER,
        /** A configured endpoint has more than one handler method. */
        CONFLICTING_HANDLERS,
        /** A handler method names an endpoint that is not configured. */
        UNKNOWN_ENDPOINT,
        /** A handler method's parameters or return type are not what its annotation allows. */
        INVALID_SIGNATURE,
        /** A class is annotated, but none of its methods: the class-level annotation only sets their endpoint. */
        NO_HANDLER_METHOD,
        /** Two message handlers of an endpoint have the same route. */
        CONFLICTING_ROUTES,
        /** A raw endpoint has a routed message handler, or more than one. */
        ROUTE_ON_RAW_ENDPOINT,
        /** No message codec decodes a parameter's type, or encodes the return type. */
        NO_CODEC
    }

    private final String endpoint;

    private final Problem problem;

    public RpmaHandlerConfigurationException(String message, String endpoint, Problem problem) {
        super(message);
        this.endpoint = endpoint;
        this.problem = problem;
    }

    /** The endpoint concerned. */
    public String endpoint() {
        return this.endpoint;
    }

    public Problem problem() {
        return this.problem;
    }
}
