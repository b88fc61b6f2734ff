package dev.rpma.binding;

/** librpma's error codes ({@code RPMA_E_*}), as returned by every function of the library. */
public enum RpmaError {

    /** {@code RPMA_E_UNKNOWN}: an unknown error. */
    UNKNOWN(-100000),
    /** {@code RPMA_E_NOSUPP}: not supported. */
    NOSUPP(-100001),
    /** {@code RPMA_E_PROVIDER}: the RDMA provider failed; {@code errno} says why. */
    PROVIDER(-100002),
    /** {@code RPMA_E_NOMEM}: out of memory. */
    NOMEM(-100003),
    /** {@code RPMA_E_INVAL}: invalid argument, or an unexpected event. */
    INVAL(-100004),
    /** {@code RPMA_E_NO_COMPLETION}: no completion available. */
    NO_COMPLETION(-100005),
    /** {@code RPMA_E_NO_EVENT}: no next event available. */
    NO_EVENT(-100006),
    /** {@code RPMA_E_AGAIN}: temporary error, try again. */
    AGAIN(-100007),
    /** {@code RPMA_E_SHARED_CHANNEL}: completion channel is shared. */
    SHARED_CHANNEL(-100008),
    /** {@code RPMA_E_NOT_SHARED_CHNL}: completion channel is not shared. */
    NOT_SHARED_CHNL(-100009);

    private static final RpmaError[] BY_OFFSET = values();

    private final int code;

    RpmaError(int code) {
        this.code = code;
    }

    /** The C value, e.g. {@code -100004} for {@code RPMA_E_INVAL}. */
    public int code() {
        return this.code;
    }

    /** The C name, e.g. {@code RPMA_E_INVAL}. */
    public String cName() {
        return "RPMA_E_" + name();
    }

    /** The error of a C return value; codes librpma does not define map to {@link #UNKNOWN}. */
    public static RpmaError of(int code) {
        int offset = UNKNOWN.code - code;
        return (offset >= 0 && offset < BY_OFFSET.length) ? BY_OFFSET[offset] : UNKNOWN;
    }
}
