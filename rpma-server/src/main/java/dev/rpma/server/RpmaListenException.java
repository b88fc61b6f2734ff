package dev.rpma.server;

import dev.rpma.jna.Errno;
import dev.rpma.jna.RpmaError;
import dev.rpma.jna.RpmaException;

/** An endpoint could not start listening; says which endpoint, where, and why. */
public class RpmaListenException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why listening failed. */
    public enum Reason {
        /** No RDMA device serves the address. */
        NO_DEVICE,
        /** The port is taken. */
        PORT_IN_USE,
        /** Anything else librpma reported. */
        OTHER
    }

    private final String endpointName;

    private final String address;

    private final int port;

    private final Reason reason;

    public RpmaListenException(String endpointName, String address, int port, RpmaException cause) {
        super("RDMA endpoint '" + endpointName + "' could not listen on " + address + ":" + port + ": "
                + cause.getMessage(), cause);
        this.endpointName = endpointName;
        this.address = address;
        this.port = port;
        this.reason = reasonOf(cause);
    }

    private static Reason reasonOf(RpmaException cause) {
        if (cause.error() != RpmaError.PROVIDER) {
            return Reason.OTHER;
        }
        if (cause.errno() == Errno.EADDRINUSE) {
            return Reason.PORT_IN_USE;
        }
        if ("rpma_utils_get_ibv_context".equals(cause.function()) || cause.errno() == Errno.ENODEV
                || cause.errno() == Errno.EADDRNOTAVAIL) {
            return Reason.NO_DEVICE;
        }
        return Reason.OTHER;
    }

    public String endpointName() {
        return this.endpointName;
    }

    public String address() {
        return this.address;
    }

    public int port() {
        return this.port;
    }

    public Reason reason() {
        return this.reason;
    }

    public RpmaException rpmaCause() {
        return (RpmaException) getCause();
    }
}
