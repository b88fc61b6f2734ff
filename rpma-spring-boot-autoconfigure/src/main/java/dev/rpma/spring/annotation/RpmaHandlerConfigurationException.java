package dev.rpma.spring.annotation;

/** Handlers do not match the endpoints: one is missing, two conflict, or a method's signature is wrong. */
public class RpmaHandlerConfigurationException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String endpoint;

    public RpmaHandlerConfigurationException(String message, String endpoint) {
        super(message);
        this.endpoint = endpoint;
    }

    /** The endpoint concerned. */
    public String endpoint() {
        return this.endpoint;
    }
}
