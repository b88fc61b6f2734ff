package dev.rpma.binding;

/** The events of a connection ({@code enum rpma_conn_event}). */
public enum RpmaConnectionEvent {

    /** {@code RPMA_CONN_UNDEFINED}. */
    UNDEFINED(-1),
    /** {@code RPMA_CONN_ESTABLISHED}: the connection is ready for the data path. */
    ESTABLISHED(0),
    /** {@code RPMA_CONN_CLOSED}: the other side disconnected; may arrive twice. */
    CLOSED(1),
    /** {@code RPMA_CONN_LOST}: a connection error or device removal. */
    LOST(2),
    /** {@code RPMA_CONN_REJECTED}: the server rejected the request. */
    REJECTED(3),
    /** {@code RPMA_CONN_UNREACHABLE}: the server could not be reached. */
    UNREACHABLE(4);

    private final int code;

    RpmaConnectionEvent(int code) {
        this.code = code;
    }

    /** The C value. */
    public int code() {
        return this.code;
    }

    static RpmaConnectionEvent of(int code) {
        return switch (code) {
            case 0 -> ESTABLISHED;
            case 1 -> CLOSED;
            case 2 -> LOST;
            case 3 -> REJECTED;
            case 4 -> UNREACHABLE;
            default -> UNDEFINED;
        };
    }
}
