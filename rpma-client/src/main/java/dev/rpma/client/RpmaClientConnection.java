package dev.rpma.client;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.FlushType;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.server.RpmaCommonData;

/**
 * One pooled connection of an {@link RpmaClient}, for one-sided access to the memory region the server
 * described in its accept's private data ({@link RpmaCommonData}, the layout of librpma's examples).
 *
 * <p>The operations are posted on the connection's event loop and their futures complete there when
 * their completions arrive: no thread waits per operation. The caller's region is registered with
 * {@link RpmaClient#register} (the client's peer) and must stay registered until the future completed.
 * Offsets in the server's region are from its start (the server's data starts at
 * {@link RpmaCommonData#dataOffset()}). An operation on a connection that is not established
 * fails with {@link RpmaClientException}; one in flight when the connection ends fails with
 * {@link RpmaConnectionLostException}. Thread-safe.
 */
public interface RpmaClientConnection {

    /** Its place in the pool, from 0. */
    int index();

    RpmaClientConnectionState state();

    /** The accept's private data of the current connection (a copy; empty before it is established). */
    byte[] privateData();

    /** The accept's private data read as {@code struct common_data}, or {@code null} when it is not one. */
    @Nullable RpmaCommonData commonData();

    /**
     * Size in bytes of the server's region that {@link #commonData()} describes ({@code rpma_mr_remote_get_size}),
     * 0 when there is none.
     */
    long remoteRegionSize();

    /** Requests (and one-sided operations) given to it and not completed. */
    int inFlight();

    /** Reads {@code length} bytes of the server's region at {@code remoteOffset} into {@code destination} ({@code rpma_read}). */
    CompletableFuture<Void> read(RpmaMemoryRegion destination, long destinationOffset, long remoteOffset, long length);

    /** Writes {@code length} bytes of {@code source} into the server's region at {@code remoteOffset} ({@code rpma_write}). */
    CompletableFuture<Void> write(long remoteOffset, RpmaMemoryRegion source, long sourceOffset, long length);

    /** Writes 8 bytes atomically, little-endian, at {@code remoteOffset} ({@code rpma_atomic_write}). */
    CompletableFuture<Void> atomicWrite(long remoteOffset, long value);

    /**
     * The flush that makes a write durable on the server: {@link FlushType#PERSISTENT} when the accept's
     * {@code common_data} carries a peer configuration declaring direct write to persistent memory (the
     * client applied it to the connection, {@code rpma_conn_apply_remote_peer_cfg}), else
     * {@link FlushType#VISIBILITY}, after which the server makes the data durable itself (librpma's
     * general-purpose server persistency method).
     */
    FlushType flushType();

    /** Makes earlier writes of the range visible or persistent ({@code rpma_flush}). */
    CompletableFuture<Void> flush(long remoteOffset, long length, FlushType type);
}
