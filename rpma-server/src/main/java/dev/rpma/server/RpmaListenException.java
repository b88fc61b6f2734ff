package dev.rpma.server;

import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;

/** An endpoint could not start listening; says which endpoint, where, and why. */
public class RpmaListenException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    /** Why listening failed, in the terms of the setting to change. */
    public enum Reason {
        /**
         * No RDMA device serves the address, or no interface has it ({@link RpmaFailureKind#NO_DEVICE},
         * {@link RpmaFailureKind#ADDRESS_NOT_AVAILABLE}).
         */
        NO_DEVICE,
        /** The port is taken ({@link RpmaFailureKind#PORT_IN_USE}). */
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
        return switch (RpmaFailureKind.classify(cause)) {
            case PORT_IN_USE -> Reason.PORT_IN_USE;
            case NO_DEVICE, ADDRESS_NOT_AVAILABLE -> Reason.NO_DEVICE;
            default -> Reason.OTHER;
        };
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
