package dev.rpma.binding;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.internal.LibRpma;
import dev.rpma.binding.internal.LibrpmaCmIds;
import dev.rpma.binding.internal.LibrdmacmDevices;
import dev.rpma.binding.internal.PassiveCmIds;
import dev.rpma.binding.internal.RdmaDevices;
import dev.rpma.binding.internal.RpmaLibraryLoader;
import dev.rpma.binding.io.MemoryLockLimit;

/**
 * The entry point: librpma's availability, and the objects that need no peer (configurations,
 * remote memory regions, logging). Open a {@link RpmaPeer} to listen or connect.
 *
 * <p>{@link #get()} binds the installed library once per JVM. When it is missing,
 * {@link #isAvailable()} is false and {@link #unavailabilityCause()} says what was searched and how
 * to install it; {@link #get()} and {@link #ensureAvailable()} throw {@link RpmaUnavailableException}.
 * Thread-safe.
 */
public final class Rpma {

    private final LibRpma lib;

    private final PassiveCmIds cmIds;

    private final RdmaDevices devices;

    private final Supplier<MemoryLockLimit> memoryLockLimit;

    private Rpma(LibRpma lib, PassiveCmIds cmIds, RdmaDevices devices, Supplier<MemoryLockLimit> memoryLockLimit) {
        this.lib = lib;
        this.cmIds = cmIds;
        this.devices = devices;
        this.memoryLockLimit = memoryLockLimit;
    }

    /** Whether librpma is installed and bound. */
    public static boolean isAvailable() {
        return Default.CAUSE == null;
    }

    /** Throws {@link RpmaUnavailableException}, with what was searched and how to install it, when librpma is missing. */
    public static void ensureAvailable() {
        if (Default.CAUSE != null) {
            throw new RpmaUnavailableException(Default.CAUSE);
        }
    }

    /** Why librpma could not be bound, or {@code null} when it is available. */
    public static @Nullable Throwable unavailabilityCause() {
        return Default.CAUSE;
    }

    /** The installed librpma. */
    public static Rpma get() {
        ensureAvailable();
        return Default.INSTANCE;
    }

    /**
     * librpma through another implementation of the raw layer. Internal API: for the scripted fakes
     * of this project's tests; applications use {@link #get()}. The passive side's CM ids that librpma
     * leaves behind are released only when {@code lib} is also {@link PassiveCmIds}, and removed devices
     * forgotten only when it is {@link RdmaDevices} (the fake models both).
     */
    public static Rpma using(LibRpma lib) {
        return using(lib, MemoryLockLimit.NONE);
    }

    /**
     * librpma through another implementation of the raw layer, whose registrations count against
     * {@code memoryLockLimit}. Internal API: for tests that script the memory-lock limit.
     */
    public static Rpma using(LibRpma lib, MemoryLockLimit memoryLockLimit) {
        return new Rpma(lib, (lib instanceof PassiveCmIds cmIds) ? cmIds : PassiveCmIds.NONE,
                (lib instanceof RdmaDevices devices) ? devices : RdmaDevices.NONE, () -> memoryLockLimit);
    }

    /**
     * How much memory registrations may pin: the process's limit now for the installed library; for
     * another raw layer, what it was created with (none by default, since it registers no real memory).
     */
    public MemoryLockLimit memoryLockLimit() {
        return this.memoryLockLimit.get();
    }

    /**
     * Opens a peer on the RDMA device that serves {@code address} ({@code rpma_utils_get_ibv_context}
     * and {@code rpma_peer_new}). Servers pass the address they will listen on, with
     * {@link PeerRole#SERVER}; clients the address they will connect to, with {@link PeerRole#CLIENT}.
     */
    public RpmaPeer openPeer(String address, PeerRole role) {
        return RpmaPeer.open(this, address, role);
    }

    /**
     * Lets go of the RDMA devices that were removed: librdmacm keeps a removed device's context open
     * until it reads its device list again, and the kernel's removal waits for that. Call it once
     * everything opened on the device (peers, their endpoints, connections, memory regions and queues)
     * is closed; it costs a read of the device list. See {@link RpmaPeer#isDevicePresent()}.
     */
    public void forgetRemovedDevices() {
        this.devices.forgetRemoved();
    }

    /** A new connection configuration with librpma's defaults. */
    public RpmaConnectionConfig newConnectionConfig() {
        return RpmaConnectionConfig.create(this);
    }

    /** A new peer configuration with librpma's defaults. */
    public RpmaPeerConfig newPeerConfig() {
        return RpmaPeerConfig.create(this);
    }

    /** A peer configuration received from the other side ({@code rpma_peer_cfg_from_descriptor}). */
    public RpmaPeerConfig peerConfigFromDescriptor(byte[] descriptor) {
        return RpmaPeerConfig.fromDescriptor(this, descriptor);
    }

    /** A new shared receive queue configuration with librpma's defaults. */
    public RpmaSrqConfig newSrqConfig() {
        return RpmaSrqConfig.create(this);
    }

    /**
     * The other side's memory region from its descriptor ({@code rpma_mr_remote_from_descriptor});
     * a descriptor is {@value RpmaMemoryRegion#DESCRIPTOR_SIZE} bytes.
     */
    public RpmaRemoteMemoryRegion remoteMemoryRegion(byte[] descriptor) {
        return RpmaRemoteMemoryRegion.fromDescriptor(this, descriptor);
    }

    /** librpma's text for an error ({@code rpma_err_2str}). */
    public String errorText(RpmaError error) {
        return this.lib.rpma_err_2str(error.code());
    }

    /** librpma's name of a connection event ({@code rpma_utils_conn_event_2str}). */
    public String eventText(RpmaConnectionEvent event) {
        return this.lib.rpma_utils_conn_event_2str(event.code());
    }

    /** librpma's logging: thresholds, and routing its lines to SLF4J. */
    public RpmaLog log() {
        return new RpmaLog(this);
    }

    LibRpma lib() {
        return this.lib;
    }

    PassiveCmIds cmIds() {
        return this.cmIds;
    }

    /** Throws the {@link RpmaException} of a failed call. */
    void check(int rc, String function) {
        if (rc != 0) {
            throw failure(rc, function, null);
        }
    }

    /**
     * The exception for a failed call; errno is read first, before any other call into the
     * library can overwrite it.
     */
    RpmaException failure(int rc, String function, @Nullable String hint) {
        int errno = (rc == RpmaError.PROVIDER.code()) ? this.lib.lastErrno() : 0;
        return new RpmaException(function, rc, this.lib.rpma_err_2str(rc), errno, hint);
    }

    /**
     * The exception for a failed call on {@code address} and {@code port} ({@code 0} for a call that
     * takes no port), with the hint of its {@link RpmaFailureKind} where it has one.
     */
    RpmaException failure(int rc, String function, String address, int port) {
        int errno = (rc == RpmaError.PROVIDER.code()) ? this.lib.lastErrno() : 0;
        String hint = RpmaFailureKind.classify(function, rc, errno).hint(address, port);
        return new RpmaException(function, rc, this.lib.rpma_err_2str(rc), errno, hint);
    }

    /** Binds the installed library at most once, on first use. */
    private static final class Default {

        static final @Nullable Rpma INSTANCE;

        static final @Nullable Throwable CAUSE;

        static {
            Rpma instance = null;
            Throwable cause = null;
            try {
                instance = new Rpma(RpmaLibraryLoader.load(), LibrpmaCmIds.bind(), LibrdmacmDevices.bind(),
                        MemoryLockLimit::current);
            }
            catch (UnsatisfiedLinkError | NoClassDefFoundError ex) {
                cause = ex;
            }
            INSTANCE = instance;
            CAUSE = cause;
        }
    }
}
