package dev.rpma.client;

import java.util.concurrent.CompletableFuture;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.FlushType;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaRemoteMemoryRegion;

/** One read, write, atomic write or flush on a connection's loop, from its post to its completion. */
final class OneSidedOperation {

    enum Kind {
        READ("rpma_read"), WRITE("rpma_write"), ATOMIC_WRITE("rpma_atomic_write"), FLUSH("rpma_flush");

        final String function;

        Kind(String function) {
            this.function = function;
        }
    }

    final Kind kind;

    final @Nullable RpmaMemoryRegion local;

    final long localOffset;

    final long remoteOffset;

    final long length;

    /** The atomic write's value, or the flush type's code. */
    final long value;

    final CompletableFuture<Void> future = new CompletableFuture<>();

    OneSidedOperation(Kind kind, @Nullable RpmaMemoryRegion local, long localOffset, long remoteOffset, long length,
            long value) {
        this.kind = kind;
        this.local = local;
        this.localOffset = localOffset;
        this.remoteOffset = remoteOffset;
        this.length = length;
        this.value = value;
    }

    /** Posts it, signaled, with {@code context} as its work request id. */
    void post(RpmaConnection connection, RpmaRemoteMemoryRegion remote, long context) {
        switch (this.kind) {
            case READ -> connection.read(local(), this.localOffset, remote, this.remoteOffset, this.length,
                    CompletionMode.ALWAYS, context);
            case WRITE -> connection.write(remote, this.remoteOffset, local(), this.localOffset, this.length,
                    CompletionMode.ALWAYS, context);
            case ATOMIC_WRITE -> connection.atomicWrite(remote, this.remoteOffset, this.value, CompletionMode.ALWAYS,
                    context);
            case FLUSH -> connection.flush(remote, this.remoteOffset, this.length,
                    (this.value == 0) ? FlushType.PERSISTENT : FlushType.VISIBILITY, CompletionMode.ALWAYS, context);
        }
    }

    private RpmaMemoryRegion local() {
        if (this.local == null) {
            throw new IllegalStateException(this.kind + " without a local region");
        }
        return this.local;
    }
}
