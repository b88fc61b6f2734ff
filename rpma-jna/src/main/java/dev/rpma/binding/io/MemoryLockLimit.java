package dev.rpma.binding.io;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeMemory;

/**
 * How much memory this process may lock: registering memory for RDMA ({@code ibv_reg_mr}) pins its
 * pages, and the kernel counts every registration's pages against the soft {@code RLIMIT_MEMLOCK},
 * failing the one that would pass it with {@code ENOMEM}, unless the process holds
 * {@code CAP_IPC_LOCK}, which lifts the limit.
 *
 * @param softBytes the limit that applies, in bytes; {@link #UNLIMITED} for {@code RLIM_INFINITY}
 * @param hardBytes how far the process could raise the soft limit itself; {@link #UNLIMITED} likewise
 * @param ipcLockCapable whether the process holds {@code CAP_IPC_LOCK} in its effective set, so that
 *     the kernel does not apply the limit to registrations
 * @param pageSize bytes of a page: the kernel counts whole pages
 */
public record MemoryLockLimit(long softBytes, long hardBytes, boolean ipcLockCapable, int pageSize)
        implements java.io.Serializable {

    /** No limit ({@code RLIM_INFINITY}). */
    public static final long UNLIMITED = Long.MAX_VALUE;

    /** {@code CAP_IPC_LOCK}'s bit in the capability sets of {@code /proc/self/status}. */
    static final int CAP_IPC_LOCK = 14;

    private static final int DEFAULT_PAGE_SIZE = 4096;

    /** A process that may lock any amount; what a raw layer that registers no real memory reports. */
    public static final MemoryLockLimit NONE = new MemoryLockLimit(UNLIMITED, UNLIMITED, false, DEFAULT_PAGE_SIZE);

    public MemoryLockLimit {
        if (softBytes < 0 || hardBytes < 0 || pageSize < 1) {
            throw new IllegalArgumentException("limits must be at least 0 and the page size at least 1, not "
                    + softBytes + ", " + hardBytes + ", " + pageSize);
        }
    }

    /** A soft and hard limit of {@code bytes}, without {@code CAP_IPC_LOCK}, on 4 KiB pages; for tests. */
    public static MemoryLockLimit of(long bytes) {
        return new MemoryLockLimit(bytes, bytes, false, DEFAULT_PAGE_SIZE);
    }

    /**
     * This process's limit now: {@code getrlimit(RLIMIT_MEMLOCK)}, {@code CAP_IPC_LOCK} from the
     * {@code CapEff} line of {@code /proc/self/status}, and {@code sysconf(_SC_PAGESIZE)}.
     *
     * @throws IllegalStateException when {@code getrlimit} fails (it cannot for this resource on Linux)
     */
    public static MemoryLockLimit current() {
        ByteBuffer rlimit = NativeMemory.allocate(LibC.RLIMIT_SIZE);
        if (LibC.getrlimit(LibC.RLIMIT_MEMLOCK, NativeMemory.address(rlimit)) != 0) {
            throw new IllegalStateException("getrlimit(RLIMIT_MEMLOCK) failed with errno " + LibC.errno());
        }
        long pageSize = LibC.sysconf(LibC.SC_PAGESIZE);
        return new MemoryLockLimit(bytes(rlimit.getLong(0)), bytes(rlimit.getLong(8)),
                holdsIpcLock(procStatus()), (pageSize > 0) ? (int) pageSize : DEFAULT_PAGE_SIZE);
    }

    private static long bytes(long rlim) {
        // rlim_t is unsigned: RLIM_INFINITY, and anything past Long.MAX_VALUE, means no limit
        return (rlim == LibC.RLIM_INFINITY || rlim < 0) ? UNLIMITED : rlim;
    }

    private static @Nullable String procStatus() {
        try {
            return Files.readString(Path.of("/proc/self/status"));
        }
        catch (IOException | RuntimeException ex) {
            return null;
        }
    }

    /** Whether the {@code CapEff} line of a {@code /proc/<pid>/status} text has {@code CAP_IPC_LOCK}. */
    static boolean holdsIpcLock(@Nullable String procStatus) {
        if (procStatus == null) {
            return false;
        }
        for (String line : procStatus.split("\n")) {
            if (line.startsWith("CapEff:")) {
                try {
                    long effective = Long.parseUnsignedLong(line.substring("CapEff:".length()).trim(), 16);
                    return (effective & (1L << CAP_IPC_LOCK)) != 0;
                }
                catch (NumberFormatException ex) {
                    return false;
                }
            }
        }
        return false;
    }

    /** Whether no limit applies: {@code RLIM_INFINITY}, or {@code CAP_IPC_LOCK}. */
    public boolean isUnlimited() {
        return this.ipcLockCapable || this.softBytes == UNLIMITED;
    }

    /** Whether {@code bytes} of registrations (counted in {@link #pinnedBytes pages}) fit under the limit. */
    public boolean allows(long bytes) {
        return isUnlimited() || bytes <= this.softBytes;
    }

    /**
     * What the kernel counts for registering {@code bytes} that start anywhere in a page: its pages
     * rounded up, plus one, since memory from {@code ByteBuffer.allocateDirect} does not start on a
     * page boundary.
     */
    public long pinnedBytes(long bytes) {
        if (bytes <= 0) {
            return 0;
        }
        long pages = (bytes + this.pageSize - 1) / this.pageSize + 1;
        return pages * this.pageSize;
    }

    /** The soft limit as a person reads it ({@code 64 KiB}, {@code unlimited}). */
    public String describe() {
        if (this.ipcLockCapable) {
            return "unlimited (the process holds CAP_IPC_LOCK)";
        }
        return (this.softBytes == UNLIMITED) ? "unlimited" : size(this.softBytes);
    }

    /** {@code bytes} in the largest binary unit that keeps it readable ({@code 1.5 MiB}, {@code 512 bytes}). */
    public static String size(long bytes) {
        if (bytes == UNLIMITED) {
            return "unlimited";
        }
        String[] units = { "KiB", "MiB", "GiB", "TiB" };
        if (bytes < 1024) {
            return bytes + " bytes";
        }
        double value = bytes;
        int unit = -1;
        while (value >= 1024 && unit < units.length - 1) {
            value /= 1024;
            unit++;
        }
        String number = (value == Math.rint(value)) ? Long.toString((long) value)
                : String.format(java.util.Locale.ROOT, "%.1f", value);
        return number + " " + units[unit];
    }
}
