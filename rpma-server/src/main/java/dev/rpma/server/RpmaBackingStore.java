package dev.rpma.server;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.pmem.PmemMapping;

import jdk.nio.mapmode.ExtendedMapMode;

/**
 * The memory behind an exposed region and what a write that reaches it is worth:
 *
 * <ul>
 * <li>{@link Kind#VOLATILE}: native memory of the process, lost when it exits;
 * <li>{@link Kind#FILE}: a file mapped shared ({@code FileChannel.map}, {@code MAP_SHARED}); what
 * reaches the memory is in the page cache, survives a kill of the process, and is on the disk
 * after {@link #makeDurable(int, int)} ({@code msync});
 * <li>{@link Kind#DAX}: persistent memory itself, no page cache in between: a file on a DAX file
 * system mapped with {@code MAP_SYNC} ({@code ExtendedMapMode.READ_WRITE_SYNC}, JEP 352), which fails
 * on any other file and is how the starter tells persistent memory from plain memory; or a device
 * DAX ({@code /dev/daxX.Y}) mapped through libpmem ({@link PmemMapping}), which only the kernel's dax
 * subsystem provides.
 * </ul>
 *
 * <p>Made only by the factories below, so that {@link Kind#DAX} always means memory the kernel
 * mapped as persistent memory. The mapping lasts as long as its buffer is reachable: Java offers
 * no unmap that is safe while anyone may still hold the buffer, so a region's file is unmapped when
 * the buffer is collected, after the server has deregistered it and written it back.
 */
public final class RpmaBackingStore {

    /** Where the memory lives. */
    public enum Kind {

        /** Process memory. */
        VOLATILE,
        /** A file mapped shared, through the page cache. */
        FILE,
        /** A file on a DAX file system mapped with {@code MAP_SYNC}, or a device DAX: persistent memory. */
        DAX
    }

    /** The granularity of dirty tracking; mappings start at a page boundary (offset 0 of the file). */
    private static final int PAGE_SIZE = 4096;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final Kind kind;

    private final ByteBuffer memory;

    private final @Nullable Path path;

    /** The device DAX's mapping, whose {@code persist} makes ranges durable; null for any other store. */
    private final @Nullable PmemMapping device;

    private RpmaBackingStore(Kind kind, ByteBuffer memory, @Nullable Path path) {
        this(kind, memory, path, null);
    }

    private RpmaBackingStore(Kind kind, ByteBuffer memory, @Nullable Path path, @Nullable PmemMapping device) {
        this.kind = kind;
        this.memory = memory;
        this.path = path;
        this.device = device;
    }

    /** {@code size} bytes of zeroed process memory, little-endian. */
    public static RpmaBackingStore allocate(int size) {
        if (size < 1) {
            throw new IllegalArgumentException("A region needs at least one byte, not " + size);
        }
        return new RpmaBackingStore(Kind.VOLATILE, ByteBuffer.allocateDirect(size).order(ByteOrder.LITTLE_ENDIAN), null);
    }

    /**
     * Process memory the application allocated.
     *
     * @throws IllegalArgumentException when it is a heap buffer, which has no fixed address to register
     */
    public static RpmaBackingStore of(ByteBuffer memory) {
        if (!memory.isDirect()) {
            throw new IllegalArgumentException("A region needs native memory: a direct ByteBuffer"
                    + " (ByteBuffer.allocateDirect), not a heap buffer");
        }
        return new RpmaBackingStore(Kind.VOLATILE, memory, null);
    }

    /**
     * The first {@code size} bytes of {@code path}, mapped shared. A shorter file is extended with
     * zeros; a longer one keeps its tail, unexposed.
     *
     * @param create whether a missing file is created; if not, a missing file fails
     * @throws RpmaRegionStoreException when the file cannot be opened or mapped
     */
    public static RpmaBackingStore mapFile(Path path, long size, boolean create) {
        return new RpmaBackingStore(Kind.FILE, map(path, size, create, FileChannel.MapMode.READ_WRITE, Kind.FILE), path);
    }

    /**
     * Like {@link #mapFile}, for a file on a DAX file system ({@code mount -o dax}), mapped with
     * {@code MAP_SYNC}; or the first {@code size} bytes of a device DAX ({@code /dev/daxX.Y}, a
     * character device), mapped whole through libpmem. A device is never created: {@code create}
     * applies to files, and a missing path under {@code /dev} fails.
     *
     * @throws RpmaRegionStoreException when the file is not on DAX (the kernel refuses
     *     {@code MAP_SYNC}), the character device is not a device DAX or is smaller than {@code size},
     *     libpmem is missing, or the file cannot be opened or mapped
     */
    public static RpmaBackingStore mapDax(Path path, long size, boolean create) {
        Objects.requireNonNull(path, "path");
        boolean exists = Files.exists(path);
        if (exists && !Files.isRegularFile(path)) {
            return mapDeviceDax(path, size);
        }
        if (!exists && path.toAbsolutePath().normalize().startsWith("/dev")) {
            throw new RpmaRegionStoreException(path, Kind.DAX, "there is no such device. A device DAX is made from a"
                    + " persistent memory namespace with 'ndctl create-namespace --mode=devdax'; a container needs it"
                    + " passed in (docker run --device " + path + ")", null);
        }
        return new RpmaBackingStore(Kind.DAX, map(path, size, create, ExtendedMapMode.READ_WRITE_SYNC, Kind.DAX), path);
    }

    private static RpmaBackingStore mapDeviceDax(Path path, long size) {
        checkSize(path, size);
        PmemMapping device;
        try {
            device = PmemMapping.mapDeviceDax(path);
        }
        catch (IOException | UnsatisfiedLinkError ex) {
            throw new RpmaRegionStoreException(path, Kind.DAX, ex.getMessage(), ex);
        }
        if (device.length() < size) {
            throw new RpmaRegionStoreException(path, Kind.DAX, "the device DAX has " + device.length()
                    + " bytes, fewer than the region's size of " + size, null);
        }
        ByteBuffer memory = device.memory().slice(0, (int) size).order(ByteOrder.LITTLE_ENDIAN);
        return new RpmaBackingStore(Kind.DAX, memory, path, device);
    }

    private static void checkSize(Path path, long size) {
        if (size < 1 || size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("A region mapped from " + path + " needs from 1 byte to 2GB, not " + size);
        }
    }

    /**
     * Process memory that claims to be persistent: for the tests over the scripted fake, which has no
     * DAX file system to map.
     */
    static RpmaBackingStore assumedPersistentForTests(ByteBuffer memory, Path path) {
        return new RpmaBackingStore(Kind.DAX, memory, path);
    }

    private static MappedByteBuffer map(Path path, long size, boolean create, FileChannel.MapMode mode, Kind kind) {
        Objects.requireNonNull(path, "path");
        checkSize(path, size);
        Set<StandardOpenOption> options = EnumSet.of(StandardOpenOption.READ, StandardOpenOption.WRITE);
        if (create) {
            options.add(StandardOpenOption.CREATE);
        }
        // the mapping outlives the channel, so the channel (and its descriptor) is closed at once
        try (FileChannel channel = FileChannel.open(path, options)) {
            MappedByteBuffer buffer = channel.map(mode, 0, size);
            buffer.order(ByteOrder.LITTLE_ENDIAN);
            return buffer;
        }
        catch (NoSuchFileException ex) {
            throw new RpmaRegionStoreException(path, kind, "the file does not exist and create-if-missing is off", ex);
        }
        catch (UnsupportedOperationException ex) {
            throw new RpmaRegionStoreException(path, kind, "this JDK cannot map with MAP_SYNC on this platform", ex);
        }
        catch (IOException ex) {
            if (kind == Kind.DAX && Files.exists(path)) {
                throw new RpmaRegionStoreException(path, kind, "the kernel refused MAP_SYNC (" + ex.getMessage()
                        + "): the file is not on a DAX file system; mount it with -o dax on persistent memory"
                        + " (an ext4 with 4 KiB blocks, or xfs), or use the file store", ex);
            }
            throw new RpmaRegionStoreException(path, kind, ex.toString(), ex);
        }
    }

    public Kind kind() {
        return this.kind;
    }

    /** Whether the memory is a device DAX rather than a file: a device registers without on-demand paging. */
    boolean deviceDax() {
        return this.device != null;
    }

    /** The memory, whole; the same buffer every time. */
    public ByteBuffer memory() {
        return this.memory;
    }

    /** The mapped file; empty for process memory. */
    public Optional<Path> path() {
        return Optional.ofNullable(this.path);
    }

    /**
     * Whether data is persistent once it reaches the memory, with no call of the server's: only
     * {@link Kind#DAX}. This is what {@code FLUSH_TYPE_PERSISTENT} and a peer configuration's direct
     * write to PMem promise a client.
     */
    public boolean persistentOnArrival() {
        return this.kind == Kind.DAX;
    }

    /**
     * Makes {@code length} bytes from {@code index} durable: {@code MappedByteBuffer.force}, which is
     * {@code msync}; on DAX the kernel writes the CPU caches' lines back to the medium, on a file it
     * writes the dirty pages to the disk; on a device DAX, which has no {@code msync},
     * {@code pmem_persist} writes the lines back. Nothing for process memory, which cannot be made durable:
     * its callers learn that from {@link #kind()}. Thread-safe; blocks while the kernel writes.
     *
     * <p>{@code msync} writes only pages the kernel knows to be dirty, and a write by the RDMA device
     * marks nothing dirty (it does not go through the process's page tables). So each page of the
     * range is first written by the CPU with an atomic add of zero to one aligned long in it: the
     * page becomes dirty, and a write of the device into those bytes at the same moment is kept,
     * not overwritten with an older value.
     *
     * @throws IndexOutOfBoundsException when the range is not inside the memory
     */
    public void makeDurable(int index, int length) {
        Objects.checkFromIndexSize(index, length, this.memory.capacity());
        if (this.device != null) {
            this.device.persist(index, length);
            return;
        }
        if (this.memory instanceof MappedByteBuffer mapped && this.kind != Kind.VOLATILE && length > 0) {
            int capacity = mapped.capacity();
            for (int page = index - index % PAGE_SIZE; page < index + length; page += PAGE_SIZE) {
                if (page + Long.BYTES <= capacity) {
                    LONGS.getAndAdd(mapped, page, 0L);
                }
            }
            mapped.force(index, length);
        }
    }

    @Override
    public String toString() {
        if (this.path == null) {
            return this.kind.toString();
        }
        return this.kind + ((this.device != null) ? " device " : " ") + this.path;
    }
}
