package dev.rpma.spring.boot.autoconfigure;

import org.jspecify.annotations.Nullable;

/** An {@code rpma.*} property has a value the server cannot use. */
public class InvalidRpmaPropertyException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String property;

    private final @Nullable Object value;

    private final String reason;

    private final @Nullable String action;

    public InvalidRpmaPropertyException(String property, @Nullable Object value, String reason) {
        this(property, value, reason, null);
    }

    /**
     * @param value the value, or {@code null} when it is missing or must not be shown (a secret)
     * @param reason what is wrong with the value
     * @param action what to do, when there is more to say than to update the property; may be {@code null}
     */
    public InvalidRpmaPropertyException(String property, @Nullable Object value, String reason, @Nullable String action) {
        super(((value != null) ? "Invalid value '" + value + "' of property '" : "Invalid property '") + property + "': "
                + reason
                + ((action != null) ? ". " + action : ""));
        this.property = property;
        this.value = value;
        this.reason = reason;
        this.action = action;
    }

    public String property() {
        return this.property;
    }

    /** The value, or {@code null} when it is missing or must not be shown. */
    public @Nullable Object value() {
        return this.value;
    }

    public String reason() {
        return this.reason;
    }

    /** What to do, or {@code null} when it is just to update the property. */
    public @Nullable String action() {
        return this.action;
    }
}
