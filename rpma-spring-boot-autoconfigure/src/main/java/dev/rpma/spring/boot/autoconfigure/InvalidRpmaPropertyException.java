package dev.rpma.spring.boot.autoconfigure;

/** An {@code rpma.*} property has a value the server cannot use. */
public class InvalidRpmaPropertyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String property;

    private final Object value;

    private final String reason;

    public InvalidRpmaPropertyException(String property, Object value, String reason) {
        super("Invalid value '" + value + "' of property '" + property + "': " + reason);
        this.property = property;
        this.value = value;
        this.reason = reason;
    }

    public String property() {
        return this.property;
    }

    public Object value() {
        return this.value;
    }

    public String reason() {
        return this.reason;
    }
}
