package dev.rpma.binding;

import org.jspecify.annotations.Nullable;

/**
 * What a failed librpma call means, from its {@code RPMA_E_*} code, the {@code errno} of a provider
 * error, and the function: whether trying again may succeed, and, for the failures a user fixes
 * (a busy port, an address without an RDMA device, the memory-lock limit), what is wrong and what to do. The hints of
 * {@link RpmaException}, the reasons of a failed listen and an acceptor's choice between retrying and
 * giving up all come from here.
 */
public enum RpmaFailureKind {

    /** Another process listens on the port ({@code EADDRINUSE}). */
    PORT_IN_USE(true),
    /**
     * No RDMA device serves the address: {@code ENODEV}, or any provider error while looking the device
     * up ({@code rpma_utils_get_ibv_context}) other than {@link #ADDRESS_NOT_AVAILABLE}. On a working
     * endpoint, its device went away.
     */
    NO_DEVICE(false),
    /** The address is not one of this machine's ({@code EADDRNOTAVAIL}). */
    ADDRESS_NOT_AVAILABLE(true),
    /** A signal interrupted the call ({@code EINTR}); call again at once. */
    INTERRUPTED(true),
    /** The object's file descriptor is gone ({@code EBADF}): the object is unusable. */
    CLOSED(false),
    /**
     * The provider ran out of something the call needs ({@code RPMA_E_PROVIDER} with {@code ENOMEM},
     * {@code ENOBUFS}, {@code EMFILE}, {@code ENFILE} or {@code EAGAIN}): memory or locked memory for
     * queues, file descriptors, or a resource that is unavailable for now. It passes once some are
     * freed; see {@link #isResourceShortage()}.
     */
    RESOURCES_EXHAUSTED(true),
    /** Any other provider error ({@code RPMA_E_PROVIDER}); it may pass. */
    PROVIDER(true),
    /** Out of memory ({@code RPMA_E_NOMEM}); it passes once memory is freed. */
    OUT_OF_MEMORY(true),
    /**
     * Registering memory failed with {@code ENOMEM} ({@code rpma_mr_reg}): the pages it would pin pass
     * the process's {@code RLIMIT_MEMLOCK}; it may pass once other registrations are gone.
     */
    MEMORY_LOCK_LIMIT(true),
    /** An invalid argument, or an event other than the one the call expects ({@code RPMA_E_INVAL}). */
    INVALID(false),
    /** Any other code. */
    OTHER(false);

    /** The function that finds the device of an address; every provider error of it means there is none. */
    static final String DEVICE_LOOKUP = "rpma_utils_get_ibv_context";

    /** The function that pins memory: its {@code ENOMEM} is the memory-lock limit. */
    static final String MEMORY_REGISTRATION = "rpma_mr_reg";

    /** What raises the memory-lock limit, wherever the process runs; for every message that gives the advice. */
    public static final String MEMORY_LOCK_ADVICE = "Raise the memory-lock limit of the process (RLIMIT_MEMLOCK), or"
            + " make it unlimited: 'ulimit -l unlimited' (or 'ulimit -l <KiB>') in the shell that starts the JVM;"
            + " 'docker run --ulimit memlock=-1:-1'; 'LimitMEMLOCK=infinity' in the [Service] section of a systemd"
            + " unit; in Kubernetes, add the IPC_LOCK capability to the container's securityContext (a process with"
            + " CAP_IPC_LOCK has no limit), or raise the container runtime's limit on the node. Or register less"
            + " memory: smaller regions, fewer or smaller message slots";

    private final boolean isTransient;

    RpmaFailureKind(boolean isTransient) {
        this.isTransient = isTransient;
    }

    /** The kind of a failure. */
    public static RpmaFailureKind classify(RpmaException failure) {
        return classify(failure.function(), failure.returnCode(), failure.errno());
    }

    /**
     * The kind of a failure of {@code function} that returned {@code returnCode}; {@code errno} counts
     * for {@link RpmaError#PROVIDER} only.
     */
    public static RpmaFailureKind classify(String function, int returnCode, int errno) {
        switch (RpmaError.of(returnCode)) {
            case PROVIDER:
                break;
            case NOMEM:
                return OUT_OF_MEMORY;
            case INVAL:
                return INVALID;
            default:
                return OTHER;
        }
        if (errno == Errno.EADDRNOTAVAIL) {
            return ADDRESS_NOT_AVAILABLE;
        }
        if (errno == Errno.ENODEV || DEVICE_LOOKUP.equals(function)) {
            return NO_DEVICE;
        }
        if (errno == Errno.ENOMEM && MEMORY_REGISTRATION.equals(function)) {
            return MEMORY_LOCK_LIMIT;
        }
        return switch (errno) {
            case Errno.EADDRINUSE -> PORT_IN_USE;
            case Errno.EINTR -> INTERRUPTED;
            case Errno.EBADF -> CLOSED;
            case Errno.ENOMEM, Errno.ENOBUFS, Errno.EMFILE, Errno.ENFILE, Errno.EAGAIN -> RESOURCES_EXHAUSTED;
            default -> PROVIDER;
        };
    }

    /**
     * Whether the same call may succeed later: a loop that takes events goes on after a transient
     * failure, and gives its object up after any other.
     */
    public boolean isTransient() {
        return this.isTransient;
    }

    /**
     * Whether the call failed for lack of resources ({@link #OUT_OF_MEMORY}, {@link #RESOURCES_EXHAUSTED}):
     * a loop that takes events waits for them to be freed, however long that takes, instead of giving
     * its object up.
     */
    public boolean isResourceShortage() {
        return this == OUT_OF_MEMORY || this == RESOURCES_EXHAUSTED;
    }

    /**
     * What is wrong, as a clause (e.g. {@code no RDMA device serves 198.18.0.1}), for the kinds a user
     * fixes; {@code null} for the others.
     *
     * @param address the address the call was given (or its peer's)
     * @param port the port it was given, {@code 0} when it takes none (only {@link #PORT_IN_USE} shows it)
     */
    public @Nullable String problem(String address, int port) {
        return switch (this) {
            case PORT_IN_USE -> "port " + port + " on " + address + " is in use";
            case NO_DEVICE -> "no RDMA device serves " + address;
            case ADDRESS_NOT_AVAILABLE -> "no interface of this machine has the address " + address;
            case MEMORY_LOCK_LIMIT -> "registering memory would pass the memory this process may lock"
                    + " (RLIMIT_MEMLOCK)";
            default -> null;
        };
    }

    /** What to do, as sentences without a final period, for the kinds that have a {@link #problem}; else {@code null}. */
    public @Nullable String advice(String address, int port) {
        return switch (this) {
            case PORT_IN_USE -> "Stop the other process that listens on " + address + ":" + port
                    + ", or choose another port";
            case NO_DEVICE -> "RDMA binds to the IP address of an RDMA-capable interface; 127.0.0.1 never works."
                    + " Use a machine with an RDMA network card, or, without one, create a soft-RoCE device on the"
                    + " interface that has " + address + " (as root, on a kernel with the rdma_rxe module:"
                    + " 'modprobe rdma_rxe', then 'rdma link add rxe0 type rxe netdev <interface>')";
            case ADDRESS_NOT_AVAILABLE -> "Use the IP address of one of this machine's RDMA-capable interfaces"
                    + " ('rdma link show' lists the RDMA devices and their interfaces, 'ip address' the interfaces'"
                    + " addresses)";
            case MEMORY_LOCK_LIMIT -> MEMORY_LOCK_ADVICE;
            default -> null;
        };
    }

    /**
     * The {@link #problem} and the {@link #advice} as the end of an exception message, or {@code null}
     * for the kinds without them.
     */
    public @Nullable String hint(String address, int port) {
        String problem = problem(address, port);
        if (problem == null) {
            return null;
        }
        return Character.toUpperCase(problem.charAt(0)) + problem.substring(1) + ". " + advice(address, port);
    }
}
