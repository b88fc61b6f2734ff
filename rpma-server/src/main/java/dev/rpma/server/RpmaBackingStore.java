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

import jdk.nio.mapmode.ExtendedMapMode;

/**
 * The memory behind an exposed region and what a write that reaches it is worth:
 *
 * <ul>
 * <li>{@link Kind#VOLATILE}: native memory of the process, lost when it exits;
 * <li>{@link Kind#FILE}: a file mapped shared ({@code FileChannel.map}, {@code MAP_SHARED}); what
 * reaches the memory is in the page cache, survives a kill of the process, and is on the disk
 * after {@link #makeDurable(int, int)} ({@code msync});
 * <li>{@link Kind#DAX}: a file on a DAX file system (or a device DAX) mapped with {@code MAP_SYNC}
 * ({@code ExtendedMapMode.READ_WRITE_SYNC}, JEP 352): the memory is the persistent medium itself, no
 * page cache in between; the mapping fails on any other file, which is how the starter tells
 * persistent memory from plain memory.
 * </ul>
 *
 * <p>Made only by the factories below, so that {@link Kind#DAX} always means a mapping the kernel
 * accepted with {@code MAP_SYNC}. The mapping lasts as long as its buffer is reachable: Java offers
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
        /** A file on a DAX file system mapped with {@code MAP_SYNC}: persistent memory. */
        DAX
    }

    /** The granularity of dirty tracking; mappings start at a page boundary (offset 0 of the file). */
    private static final int PAGE_SIZE = 4096;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());

    private final Kind kind;

    private final ByteBuffer memory;

    private final @Nullable Path path;

    private RpmaBackingStore(Kind kind, ByteBuffer memory, @Nullable Path path) {
        this.kind = kind;
        this.memory = memory;
        this.path = path;
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
     * Like {@link #mapFile}, for a file on a DAX file system ({@code mount -o dax}) or a device DAX,
     * mapped with {@code MAP_SYNC}.
     *
     * @throws RpmaRegionStoreException when the file is not on DAX (the kernel refuses
     *     {@code MAP_SYNC}), or cannot be opened or mapped
     */
    public static RpmaBackingStore mapDax(Path path, long size, boolean create) {
        return new RpmaBackingStore(Kind.DAX, map(path, size, create, ExtendedMapMode.READ_WRITE_SYNC, Kind.DAX), path);
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
        if (size < 1 || size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("A region mapped from " + path + " needs from 1 byte to 2GB, not " + size);
        }
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
     * writes the dirty pages to the disk. Nothing for process memory, which cannot be made durable:
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
        return (this.path != null) ? this.kind + " " + this.path : this.kind.toString();
    }
}
