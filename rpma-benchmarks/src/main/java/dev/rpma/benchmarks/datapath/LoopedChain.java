package dev.rpma.benchmarks.datapath;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;

import dev.rpma.client.RpmaClient;

/**
 * Requests one after the other over {@link DataPathStub}, each made in the previous reply's callback
 * on the client's loop, as the Java load client of the comparison against C makes them; each reply
 * must carry its request's 8-byte value (the stand-in echoes it).
 */
final class LoopedChain implements BiConsumer<byte[], Throwable> {

    private static final VarHandle LITTLE_ENDIAN_LONG = MethodHandles.byteArrayViewVarHandle(long[].class,
            ByteOrder.LITTLE_ENDIAN);

    private final RpmaClient client;

    private final boolean framed;

    /** The client copies or posts it in the call: one array serves every request. */
    private final byte[] payload = new byte[Long.BYTES];

    private final CompletableFuture<Void> done = new CompletableFuture<>();

    private int left;

    private long value;

    /** {@code count} requests ({@code request(route, payload)} when framed, else {@code exchange}), valued from {@code firstValue}. */
    LoopedChain(RpmaClient client, boolean framed, long firstValue, int count) {
        this.client = client;
        this.framed = framed;
        this.value = firstValue - 1;
        this.left = count;
    }

    /** Makes the first request and waits for the last reply. */
    void run() {
        next();
        this.done.join();
    }

    private void next() {
        this.value++;
        LITTLE_ENDIAN_LONG.set(this.payload, 0, this.value);
        CompletableFuture<byte[]> reply = this.framed ? this.client.request("bench", this.payload)
                : this.client.exchange(this.payload);
        reply.whenComplete(this);
    }

    @Override
    public void accept(byte[] reply, Throwable failure) {
        if (failure != null) {
            this.done.completeExceptionally(failure);
            return;
        }
        long got = (long) LITTLE_ENDIAN_LONG.get(reply, 0);
        if (got != this.value) {
            this.done.completeExceptionally(new IllegalStateException("the reply carried " + got + ", not " + this.value));
        }
        else if (--this.left == 0) {
            this.done.complete(null);
        }
        else {
            next();
        }
    }
}
