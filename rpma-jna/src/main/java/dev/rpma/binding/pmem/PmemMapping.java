package dev.rpma.binding.pmem;

import java.io.IOException;
import java.lang.ref.Cleaner;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;

import com.sun.jna.Pointer;

import dev.rpma.binding.internal.LibPmem;

/**
 * Persistent memory mapped through libpmem: a device DAX ({@code /dev/daxX.Y}) whole, with the
 * call that writes CPU caches back to it ({@code pmem_persist}).
 *
 * <p>Why not {@code FileChannel.map}: the JDK sizes a mapping by the file's length and extends a
 * shorter file, and a character device has no length and cannot be extended, so the JDK cannot map a
 * device DAX; nor can Java write cache lines back to memory outside a {@code MAP_SYNC}
 * {@code MappedByteBuffer}.
 *
 * <p>The mapping is released ({@code pmem_unmap}) exactly once, by a {@link Cleaner}, when
 * {@link #memory()} and every view made of it are unreachable, as the JDK releases a
 * {@code MappedByteBuffer}: an explicit unmap while anyone still held a view would turn that view's
 * next access into a crash of the process.
 */
public final class PmemMapping {

    private static final Cleaner CLEANER = Cleaner.create();

    /** {@code S_IFMT} and {@code S_IFCHR} of {@code st_mode}. */
    private static final int S_IFMT = 0170000;

    private static final int S_IFCHR = 0020000;

    private final Path path;

    private final Pointer address;

    private final long length;

    private final boolean pmem;

    private final ByteBuffer memory;

    private PmemMapping(Path path, Pointer address, long length, boolean pmem) {
        this.path = path;
        this.address = address;
        this.length = length;
        this.pmem = pmem;
        this.memory = address.getByteBuffer(0, Math.min(length, Integer.MAX_VALUE));
        CLEANER.register(this.memory, new Unmap(address, length));
    }

    /**
     * Maps the device DAX at {@code device} whole ({@code pmem_map_file}).
     *
     * @throws NoSuchFileException when there is no such file
     * @throws IOException when it is not a device DAX (the message says how to make one) or libpmem
     *     refuses it (with libpmem's message)
     * @throws UnsatisfiedLinkError when libpmem is not installed (the message says what to install)
     */
    public static PmemMapping mapDeviceDax(Path device) throws IOException {
        Objects.requireNonNull(device, "device");
        int mode = (Integer) Files.getAttribute(device, "unix:mode");
        if ((mode & S_IFMT) != S_IFCHR || !isDeviceDax((Long) Files.getAttribute(device, "unix:rdev"))) {
            throw new IOException(device + " is not a device DAX (a character device of the kernel's dax"
                    + " subsystem): make one from a persistent memory namespace with 'ndctl create-namespace"
                    + " --mode=devdax', or give a file on a file system mounted with -o dax");
        }
        return map(device, 0, 0);
    }

    /**
     * Maps {@code length} bytes of a file through libpmem, creating it when missing: for tests on
     * machines without persistent memory, where the mapping is not persistent memory and
     * {@link #persist} writes back with {@code msync}.
     */
    static PmemMapping mapFile(Path file, long length) throws IOException {
        return map(file, length, LibPmem.PMEM_FILE_CREATE);
    }

    private static PmemMapping map(Path path, long length, int flags) throws IOException {
        LibPmem.requireLoaded();
        long[] mappedLength = new long[1];
        int[] isPmem = new int[1];
        Pointer address = LibPmem.pmem_map_file(path.toString(), length, flags, 0600, mappedLength, isPmem);
        if (address == null) {
            throw new IOException("pmem_map_file of " + path + " failed: " + LibPmem.pmem_errormsg());
        }
        return new PmemMapping(path, address, mappedLength[0], isPmem[0] != 0);
    }

    /**
     * Whether {@code rdev} names a device of the kernel's dax subsystem: the last element of
     * {@code /sys/dev/char/<major>:<minor>/subsystem}, a link to {@code /sys/bus/dax} or
     * {@code /sys/class/dax}.
     */
    private static boolean isDeviceDax(long rdev) throws IOException {
        // the kernel's new_encode_dev, undone (glibc's major() and minor())
        long major = ((rdev >>> 8) & 0xfff) | ((rdev >>> 32) & ~0xfffL);
        long minor = (rdev & 0xff) | ((rdev >>> 12) & ~0xffL);
        Path subsystem = Path.of("/sys/dev/char", major + ":" + minor, "subsystem");
        if (!Files.exists(subsystem, LinkOption.NOFOLLOW_LINKS)) {
            return false;
        }
        Path target = subsystem.toRealPath().getFileName();
        return target != null && target.toString().equals("dax");
    }

    /** The memory, whole (up to 2 GiB): a direct buffer in the platform's byte order. */
    public ByteBuffer memory() {
        return this.memory;
    }

    /** Bytes mapped. */
    public long length() {
        return this.length;
    }

    /** Whether libpmem found the mapping to be persistent memory: always so for a device DAX. */
    public boolean isPmem() {
        return this.pmem;
    }

    /**
     * Makes {@code length} bytes from {@code offset} persistent: {@code pmem_persist} (the range's
     * cache lines written back, then a fence) on persistent memory, {@code msync} otherwise.
     * Thread-safe.
     *
     * @throws IndexOutOfBoundsException when the range is not inside the mapping
     * @throws IllegalStateException when {@code msync} fails
     */
    public void persist(long offset, long length) {
        Objects.checkFromIndexSize(offset, length, this.length);
        if (length == 0) {
            return;
        }
        Pointer start = this.address.share(offset);
        try {
            if (this.pmem) {
                LibPmem.pmem_persist(start, length);
            }
            else if (LibPmem.pmem_msync(start, length) != 0) {
                throw new IllegalStateException("pmem_msync of " + this.path + " failed: " + LibPmem.pmem_errormsg());
            }
        }
        finally {
            // the mapping must outlive the native call even when this object is unused after its start
            Reference.reachabilityFence(this.memory);
        }
    }

    @Override
    public String toString() {
        return this.path + " (" + this.length + " bytes" + (this.pmem ? ", persistent memory)" : ")");
    }

    /** The Cleaner's action: holds the address, never the buffer, so that the buffer can become unreachable. */
    private record Unmap(Pointer address, long length) implements Runnable {

        @Override
        public void run() {
            LibPmem.pmem_unmap(this.address, this.length);
        }
    }
}
