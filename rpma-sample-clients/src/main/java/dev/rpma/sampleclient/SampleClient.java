package dev.rpma.sampleclient;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.client.RpmaClient;
import dev.rpma.client.RpmaClientBuilder;
import dev.rpma.client.RpmaClientClosedException;
import dev.rpma.client.RpmaClientConnection;
import dev.rpma.client.RpmaClientConnectionListener;
import dev.rpma.client.RpmaClientException;
import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.server.RpmaWireMode;

/**
 * A client of librpma's examples 01-connection ({@link #hello}), 02-read-to-volatile
 * ({@link #read}) and 08-messages-ping-pong ({@link #pingPong}), for one server address, on
 * {@link RpmaClient} in raw mode. Each call makes its own connection, as the examples' clients do: an
 * {@link RpmaClient} of one connection that never connects again, closed when the call ends, so a
 * failed call leaves nothing behind.
 *
 * <p>Every wait has the client's timeout. Thread-safe: calls may come at once on several threads
 * (each makes its own connection); {@link #close()} ends the calls in progress.
 */
public final class SampleClient implements AutoCloseable {

    /** How long a client waits for the server by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** The 02-read-to-volatile client reads into a buffer of this size. */
    static final int READ_BUFFER_SIZE = 1024;

    /** Longer than any call: a call's connection is never made again, the call ends when it ends. */
    private static final Duration NEVER_AGAIN = Duration.ofDays(1);

    /** How often a hold looks at its release latch. */
    private static final long HOLD_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    private final Rpma rpma;

    private final String server;

    private final Duration timeout;

    private final Set<Call> calls = ConcurrentHashMap.newKeySet();

    private volatile boolean closed;

    private SampleClient(Rpma rpma, String server, Duration timeout) {
        this.rpma = rpma;
        this.server = server;
        this.timeout = timeout;
    }

    /**
     * A client of the server at {@code server} (an IP address reachable over RDMA); each call opens its
     * own peer on the device that routes there.
     */
    public static SampleClient open(Rpma rpma, String server, Duration timeout) {
        return new SampleClient(rpma, server, timeout);
    }

    public String server() {
        return this.server;
    }

    /** 01-connection with the example's greeting; returns the server's greeting. */
    public String hello(int port) {
        return hello(port, ExampleProtocols.CLIENT_GREETING);
    }

    /**
     * 01-connection: connects with {@code greeting} (NUL-terminated) as private data, reads the
     * server's greeting from the accept's private data, then waits for the server to disconnect, as
     * the example's client does.
     *
     * @throws SampleClientException {@link Failure#REJECTED} when the server rejects the greeting
     */
    public String hello(int port, String greeting) {
        try (Call call = connect("hello", port, ExampleProtocols.cString(greeting))) {
            String reply = ExampleProtocols.fromCString(call.established().privateData());
            call.awaitEnd("the server to disconnect");
            return reply;
        }
    }

    /**
     * 02-read-to-volatile: reads, with {@code rpma_read}, the memory region the accept's
     * {@code struct common_data} describes, from its data offset to its end, and returns it as a C
     * string; then disconnects.
     */
    public String read(int port) {
        ByteBuffer destination = ByteBuffer.allocateDirect(READ_BUFFER_SIZE);
        // the region before the client that owns its peer: the try closes it first
        try (Call call = connect("read", port, null);
                RpmaMemoryRegion local = call.client.register(destination, MemoryUsage.READ_DST)) {
            Accepted accepted = call.established();
            RpmaCommonData data = decode(accepted.privateData());
            long length = accepted.regionSize() - data.dataOffset();
            if (length <= 0 || length > READ_BUFFER_SIZE) {
                throw new SampleClientException(Failure.PROTOCOL, "The server's memory region has " + length
                        + " bytes after offset " + data.dataOffset() + "; this client reads 1 to " + READ_BUFFER_SIZE);
            }
            call.await(accepted.connection().read(local, 0, data.dataOffset(), length), "the completion of rpma_read");
            byte[] bytes = new byte[(int) length];
            destination.get(0, bytes);
            return ExampleProtocols.fromCString(bytes);
        }
    }

    /** 08-messages-ping-pong: {@code rounds} exchanges from {@code seed}. */
    public PingPongResult pingPong(int port, long seed, int rounds) {
        return pingPong(port, PingPongOptions.of(seed, rounds));
    }

    /**
     * 08-messages-ping-pong: each round sends the counter and takes the server's next message, which
     * must be the counter plus one and becomes the next counter. Then the optional hold, then
     * {@code I_M_DONE}, after which the call waits for the server to disconnect, as the example's
     * server does once it has it: disconnecting first could flush the message before it left (the
     * example's client does, and its last message can be lost).
     *
     * @throws SampleClientException {@link Failure#CONNECTION_LOST} when the server ends the
     *     connection first, e.g. during the hold
     */
    public PingPongResult pingPong(int port, PingPongOptions options) {
        try (Call call = connect("pingpong", port, null)) {
            call.established();
            long value = options.seed();
            long start = System.nanoTime();
            for (int round = 0; round < options.rounds(); round++) {
                String what = "round " + (round + 1) + " of the ping-pong";
                byte[] reply = call.await(call.client.exchange(message(value)), what);
                if (reply.length != ExampleProtocols.MESSAGE_SIZE) {
                    throw new SampleClientException(Failure.PROTOCOL, "Round " + (round + 1) + ": received "
                            + reply.length + " bytes, a message is " + ExampleProtocols.MESSAGE_SIZE);
                }
                long answer = ByteBuffer.wrap(reply).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
                if (answer != value + 1) {
                    throw new SampleClientException(Failure.PROTOCOL, "Round " + (round + 1) + ": sent " + value
                            + ", the server answered " + Long.toUnsignedString(answer) + " instead of " + (value + 1));
                }
                value = answer;
            }
            Duration exchange = Duration.ofNanos(System.nanoTime() - start);
            call.hold(options);
            call.await(call.client.send(message(ExampleProtocols.I_M_DONE)), "I_M_DONE to be posted");
            call.awaitEnd("the server to disconnect after I_M_DONE");
            return new PingPongResult(options.rounds(), options.seed(), value, exchange);
        }
    }

    /**
     * Ends the calls in progress: each fails with {@link Failure#CONNECTION_LOST} and its connection is
     * closed. Calls made afterwards fail at once.
     */
    @Override
    public void close() {
        this.closed = true;
        for (Call call : this.calls) {
            call.abort();
        }
    }

    /** Starts the call's client; its one connection is made on the client's event loop. */
    private Call connect(String protocol, int port, byte @Nullable [] privateData) {
        if (this.closed) {
            throw new SampleClientException(Failure.CONNECTION_LOST, "The sample client of " + this.server
                    + " is closed");
        }
        Events events = new Events();
        RpmaClientBuilder builder = RpmaClient.builder(this.rpma)
            .name(protocol)
            .address(this.server)
            .port(port)
            .mode(RpmaWireMode.RAW)
            // whole 8-byte messages, one in flight, as the examples' ping-pong; one rpma_read at a time
            .maxMessageSize(ExampleProtocols.MESSAGE_SIZE)
            .receiveSlots(2)
            .sendSlots(2)
            .oneSidedDepth(1)
            // this call's own wait ends first, as a TIMEOUT; the pool's timers only keep nothing waiting longer
            .connectTimeout(this.timeout.plusSeconds(1))
            .requestTimeout(this.timeout.plusSeconds(1))
            .backoff(NEVER_AGAIN, 1.0, NEVER_AGAIN)
            .connectionListener(events);
        if (privateData != null) {
            builder.privateData(privateData);
        }
        Call call = new Call(builder.build(), events, this.server + ":" + port);
        this.calls.add(call);
        if (this.closed) {
            call.close();
            throw new SampleClientException(Failure.CONNECTION_LOST, "The sample client of " + this.server
                    + " is closed");
        }
        return call;
    }

    private static byte[] message(long value) {
        return ByteBuffer.allocate(ExampleProtocols.MESSAGE_SIZE).order(ByteOrder.LITTLE_ENDIAN).putLong(0, value).array();
    }

    private static RpmaCommonData decode(byte[] privateData) {
        try {
            return RpmaCommonData.decode(privateData);
        }
        catch (IllegalArgumentException ex) {
            throw new SampleClientException(Failure.PROTOCOL, ex.getMessage());
        }
    }

    /** What the accept carried, taken when the connection was established. */
    private record Accepted(RpmaClientConnection connection, byte[] privateData, long regionSize) {
    }

    /** The life of a call's one connection, as its client's event loop tells it. */
    private static final class Events implements RpmaClientConnectionListener {

        final CompletableFuture<Accepted> established = new CompletableFuture<>();

        /** Completes, with why, when the connection ends or the call is aborted. */
        final CompletableFuture<RpmaClientException> ended = new CompletableFuture<>();

        @Override
        public void established(RpmaClientConnection connection) {
            // taken now: the server may end the connection at once (example 01's does), which clears them
            this.established.complete(new Accepted(connection, connection.privateData(), connection.remoteRegionSize()));
        }

        @Override
        public void ended(RpmaClientConnection connection, RpmaClientException why) {
            this.established.completeExceptionally(why);
            this.ended.complete(why);
        }
    }

    /** One call: its client, what its connection did, and the waits for both, with the client's timeout. */
    private final class Call implements AutoCloseable {

        final RpmaClient client;

        private final Events events;

        private final String target;

        Call(RpmaClient client, Events events, String target) {
            this.client = client;
            this.events = events;
            this.target = target;
        }

        Accepted established() {
            return await(this.events.established, "the server at " + this.target + " to accept");
        }

        /** Waits for {@code future}, failing as soon as the connection ends. */
        <T> T await(CompletableFuture<T> future, String what) {
            try {
                CompletableFuture.anyOf(future, this.events.ended).get(SampleClient.this.timeout.toNanos(),
                        TimeUnit.NANOSECONDS);
            }
            catch (ExecutionException ex) {
                // the future failed: told below
            }
            catch (TimeoutException ex) {
                throw new SampleClientException(Failure.TIMEOUT, "Waited " + SampleClient.this.timeout.toSeconds()
                        + "s for " + what);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new SampleClientException(Failure.CONNECTION_LOST, "Interrupted while waiting for " + what);
            }
            if (future.isDone()) {
                try {
                    return future.getNow(null);
                }
                catch (java.util.concurrent.CompletionException ex) {
                    throw failure(ex.getCause(), what);
                }
            }
            throw failure(this.events.ended.getNow(null), what);
        }

        /** Waits for the connection to end: the server disconnects (CLOSED; a LOST ends it as well). */
        void awaitEnd(String what) {
            RpmaClientException why = endWithin(SampleClient.this.timeout.toNanos(), what);
            if (why == null) {
                throw new SampleClientException(Failure.TIMEOUT, "Waited " + SampleClient.this.timeout.toSeconds()
                        + "s for " + what);
            }
            if (why instanceof RpmaClientClosedException) {
                throw failure(why, what);
            }
        }

        /** Why the connection ended, if it ends within {@code nanos}; else {@code null}. */
        private @Nullable RpmaClientException endWithin(long nanos, String what) {
            try {
                return this.events.ended.get(nanos, TimeUnit.NANOSECONDS);
            }
            catch (TimeoutException ex) {
                return null;
            }
            catch (ExecutionException ex) {
                throw new IllegalStateException("The end of a connection is told by a value", ex);
            }
            catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new SampleClientException(Failure.CONNECTION_LOST, "Interrupted while waiting for " + what);
            }
        }

        /** Keeps the connection until the hold ends, the release latch opens, or the server ends it. */
        void hold(PingPongOptions options) {
            if (options.hold().isZero()) {
                return;
            }
            if (options.onHold() != null) {
                options.onHold().run();
            }
            long deadline = System.nanoTime() + options.hold().toNanos();
            for (long left = options.hold().toNanos(); left > 0; left = deadline - System.nanoTime()) {
                if (options.release() != null && options.release().getCount() == 0) {
                    return;
                }
                RpmaClientException why = endWithin(Math.min(left, HOLD_SLICE_NANOS), "the end of the hold");
                if (why != null) {
                    throw failure(why, "the end of the hold");
                }
            }
        }

        void abort() {
            this.events.ended.complete(new RpmaClientClosedException(this.target));
            this.client.close();
        }

        /** Closes the client: an established connection is disconnected and deleted on its CLOSED. */
        @Override
        public void close() {
            SampleClient.this.calls.remove(this);
            this.client.close();
        }
    }

    /** {@code cause} as this client's failure, while it waited for {@code what}. */
    private static RuntimeException failure(@Nullable Throwable cause, String what) {
        if (cause instanceof RpmaClientException client) {
            return new SampleClientException(Failure.of(client), client.getMessage() + " (while waiting for " + what
                    + ")", client);
        }
        return (cause instanceof RuntimeException runtime) ? runtime : new IllegalStateException(cause);
    }
}
