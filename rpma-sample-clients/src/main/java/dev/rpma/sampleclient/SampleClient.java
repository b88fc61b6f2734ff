package dev.rpma.sampleclient;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import dev.rpma.sampleclient.SampleClientException.Failure;
import dev.rpma.server.RpmaCommonData;
import dev.rpma.sampleclient.protocol.ExampleProtocols;
import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.CompletionStatus;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletion;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaOpcode;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.RpmaRemoteMemoryRegion;
import dev.rpma.binding.io.FdPoller;

/**
 * A client of librpma's examples 01-connection ({@link #hello}), 02-read-to-volatile
 * ({@link #read}) and 08-messages-ping-pong ({@link #pingPong}), for one server address. Each call
 * makes its own connection and tears it down as librpma requires of a client (disconnect, wait for
 * CLOSED, delete), so a failed call leaves nothing behind.
 *
 * <p>Every wait has the client's timeout: librpma's own waits ({@code rpma_conn_next_event},
 * {@code rpma_cq_wait}) have none, so this client polls their fds. Thread-safe: calls may come at
 * once on several threads (each makes its own connection; the peer is thread-safe).
 */
public final class SampleClient implements AutoCloseable {

    /** How long a client waits for the server by default. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private static final long RECV_CONTEXT = 0x5245_4356L;

    private static final long SEND_CONTEXT = 0x5345_4E44L;

    private static final long READ_CONTEXT = 0x5245_4144L;

    /** The 02-read-to-volatile client reads into a buffer of this size. */
    static final int READ_BUFFER_SIZE = 1024;

    /** How often a hold looks at its release latch. */
    private static final long HOLD_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);

    /** How often a wait for completions looks whether the server closed the connection. */
    private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final Rpma rpma;

    private final RpmaPeer peer;

    private final boolean ownsPeer;

    private final String server;

    private final Duration timeout;

    private SampleClient(Rpma rpma, RpmaPeer peer, boolean ownsPeer, String server, Duration timeout) {
        this.rpma = rpma;
        this.peer = peer;
        this.ownsPeer = ownsPeer;
        this.server = server;
        this.timeout = timeout;
    }

    /**
     * A client of the server at {@code server} (an IP address reachable over RDMA), with its own
     * peer on the device that routes there.
     */
    public static SampleClient open(Rpma rpma, String server, Duration timeout) {
        RpmaPeer peer = rpma.openPeer(server, PeerRole.CLIENT);
        return new SampleClient(rpma, peer, true, server, timeout);
    }

    /** A client that uses a peer the caller opened (with {@link PeerRole#CLIENT}) and closes. */
    public static SampleClient using(Rpma rpma, RpmaPeer peer, String server, Duration timeout) {
        return new SampleClient(rpma, peer, false, server, timeout);
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
     * server's greeting from the accept's private data once established, disconnects.
     *
     * @throws SampleClientException {@link Failure#REJECTED} when the server rejects the greeting
     */
    public String hello(int port, String greeting) {
        try (Session session = connect(port, ExampleProtocols.cString(greeting))) {
            return ExampleProtocols.fromCString(session.connection.privateData());
        }
    }

    /**
     * 02-read-to-volatile: takes the memory region from the accept's {@code struct common_data},
     * reads it with {@code rpma_read} and returns it as a C string.
     */
    public String read(int port) {
        ByteBuffer destination = ByteBuffer.allocateDirect(READ_BUFFER_SIZE);
        try (RpmaMemoryRegion local = this.peer.register(destination, MemoryUsage.READ_DST);
                Session session = connect(port, null)) {
            RpmaCommonData data = decode(session.connection.privateData());
            try (RpmaRemoteMemoryRegion remote = this.rpma.remoteMemoryRegion(data.memoryRegionDescriptor())) {
                long length = remote.size() - data.dataOffset();
                if (length <= 0 || length > READ_BUFFER_SIZE) {
                    throw new SampleClientException(Failure.PROTOCOL, "The server's memory region has " + length
                            + " bytes after offset " + data.dataOffset() + "; this client reads 1 to " + READ_BUFFER_SIZE);
                }
                session.connection.read(local, 0, remote, data.dataOffset(), length, CompletionMode.ALWAYS, READ_CONTEXT);
                RpmaCompletion completion = session.awaitOne("the completion of rpma_read");
                expect(completion, RpmaOpcode.RDMA_READ, READ_CONTEXT);
                byte[] bytes = new byte[(int) length];
                destination.get(0, bytes);
                return ExampleProtocols.fromCString(bytes);
            }
        }
    }

    /** 08-messages-ping-pong: {@code rounds} exchanges from {@code seed}. */
    public PingPongResult pingPong(int port, long seed, int rounds) {
        return pingPong(port, PingPongOptions.of(seed, rounds));
    }

    /**
     * 08-messages-ping-pong: for each round, posts a receive, sends the counter and waits for both
     * completions; the server's reply must be the counter plus one and becomes the next counter.
     * Then the optional hold, then {@code I_M_DONE}, whose send completion is awaited before
     * disconnecting (a disconnect flushes a send that has not left yet; the upstream client does not
     * wait, and its last message can be lost).
     *
     * @throws SampleClientException {@link Failure#CONNECTION_LOST} when the server ends the
     *     connection first, e.g. during the hold
     */
    public PingPongResult pingPong(int port, PingPongOptions options) {
        ByteBuffer received = ByteBuffer.allocateDirect(ExampleProtocols.MESSAGE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        ByteBuffer sent = ByteBuffer.allocateDirect(ExampleProtocols.MESSAGE_SIZE).order(ByteOrder.LITTLE_ENDIAN);
        try (RpmaMemoryRegion receiveRegion = this.peer.register(received, MemoryUsage.RECV);
                RpmaMemoryRegion sendRegion = this.peer.register(sent, MemoryUsage.SEND);
                Session session = connect(port, null)) {
            RpmaConnection connection = session.connection;
            long value = options.seed();
            long start = System.nanoTime();
            for (int round = 0; round < options.rounds(); round++) {
                connection.receive(receiveRegion, 0, ExampleProtocols.MESSAGE_SIZE, RECV_CONTEXT);
                sent.putLong(0, value);
                connection.send(sendRegion, 0, ExampleProtocols.MESSAGE_SIZE, CompletionMode.ALWAYS, SEND_CONTEXT);
                awaitSendAndReceive(session, round);
                long reply = received.getLong(0);
                if (reply != value + 1) {
                    throw new SampleClientException(Failure.PROTOCOL, "Round " + (round + 1) + ": sent " + value
                            + ", the server answered " + Long.toUnsignedString(reply) + " instead of " + (value + 1));
                }
                value = reply;
            }
            Duration exchange = Duration.ofNanos(System.nanoTime() - start);
            session.hold(options);
            sent.putLong(0, ExampleProtocols.I_M_DONE);
            connection.send(sendRegion, 0, ExampleProtocols.MESSAGE_SIZE, CompletionMode.ALWAYS, SEND_CONTEXT);
            session.awaitDoneSent();
            return new PingPongResult(options.rounds(), options.seed(), value, exchange);
        }
    }

    private void awaitSendAndReceive(Session session, int round) {
        boolean[] done = new boolean[2];
        session.awaitCompletions("round " + (round + 1) + " of the ping-pong", (completion) -> {
            if (completion.context() == SEND_CONTEXT) {
                expect(completion, RpmaOpcode.SEND, SEND_CONTEXT);
                done[0] = true;
            }
            else {
                expect(completion, RpmaOpcode.RECV, RECV_CONTEXT);
                if (completion.byteLength() != ExampleProtocols.MESSAGE_SIZE) {
                    throw new SampleClientException(Failure.PROTOCOL, "Round " + (round + 1) + ": received "
                            + completion.byteLength() + " bytes, a message is " + ExampleProtocols.MESSAGE_SIZE);
                }
                done[1] = true;
            }
        }, () -> done[0] && done[1]);
    }

    /** Sends the request and waits for ESTABLISHED; on any other outcome the connection is deleted. */
    private Session connect(int port, byte @Nullable [] privateData) {
        RpmaConnectionRequest request = this.peer.newConnectionRequest(this.server, port, null);
        RpmaConnection connection;
        try {
            connection = request.connect(privateData);
        }
        finally {
            request.close();
        }
        Session session;
        RpmaConnectionEvent event;
        try {
            connection.configureEventsBlocking(false);
            session = new Session(connection);
        }
        catch (RuntimeException ex) {
            connection.close();
            throw ex;
        }
        try {
            event = session.nextEvent(this.timeout);
        }
        catch (RuntimeException ex) {
            session.delete();
            throw ex;
        }
        if (event == RpmaConnectionEvent.ESTABLISHED) {
            return session;
        }
        session.delete();
        if (event == null) {
            throw timeout("the server at " + this.server + ":" + port + " to accept");
        }
        throw new SampleClientException(Failure.of(event), "The connection to " + this.server + ":" + port
                + " was not established: " + event);
    }

    /**
     * One established connection: its event fd and its completions, each waited for with the
     * client's timeout, in slices, so that a wait for completions notices the server closing the
     * connection (which completes nothing this side has posted).
     */
    private final class Session implements AutoCloseable {

        private final RpmaConnection connection;

        private final FdPoller events = new FdPoller(1);

        private final int[] eventFd;

        private @Nullable CompletionWaiter completions;

        /** CLOSED or LOST already read, so the teardown must not wait for it. */
        private boolean ended;

        Session(RpmaConnection connection) {
            this.connection = connection;
            this.eventFd = new int[] { connection.eventFd() };
        }

        /** The next connection event within {@code timeout}, or {@code null}. */
        @Nullable RpmaConnectionEvent nextEvent(Duration timeout) {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                RpmaConnectionEvent event = this.connection.nextEvent();
                if (event != null) {
                    if (event != RpmaConnectionEvent.ESTABLISHED) {
                        this.ended = true;
                    }
                    return event;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                this.events.await(this.eventFd, 1, millis(left));
            }
        }

        /** Fails with CONNECTION_LOST if the server has ended the connection. */
        void checkOpen(String what) {
            RpmaConnectionEvent event = nextEvent(Duration.ZERO);
            if (this.ended) {
                throw new SampleClientException(Failure.CONNECTION_LOST, "The server ended the connection (" + event
                        + ") while this client " + what);
            }
        }

        /** Hands completions to {@code consumer} until {@code done}; fails on timeout or a closed connection. */
        void awaitCompletions(String what, Consumer<RpmaCompletion> consumer,
                BooleanSupplier done) {
            if (this.completions == null) {
                this.completions = new CompletionWaiter(this.connection);
            }
            long deadline = System.nanoTime() + SampleClient.this.timeout.toNanos();
            while (!done.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw timeout(what);
                }
                if (this.completions.await(Duration.ofNanos(Math.min(left, SLICE_NANOS)), consumer) == 0) {
                    checkOpen("waited for " + what);
                }
            }
        }

        /**
         * Waits for the send completion of I_M_DONE. The server disconnects once it has received
         * I_M_DONE, and its CLOSED may arrive before the acknowledgement that completes the send
         * here (they travel on different queue pairs), so CLOSED ends the wait successfully too.
         */
        void awaitDoneSent() {
            if (this.completions == null) {
                this.completions = new CompletionWaiter(this.connection);
            }
            RpmaCompletion[] sent = new RpmaCompletion[1];
            long deadline = System.nanoTime() + SampleClient.this.timeout.toNanos();
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw timeout("the send completion of I_M_DONE");
                }
                this.completions.await(Duration.ofNanos(Math.min(left, SLICE_NANOS)), (completion) -> {
                    if (completion.context() == SEND_CONTEXT) {
                        sent[0] = completion;
                    }
                });
                if (sent[0] != null && sent[0].isSuccess()) {
                    expect(sent[0], RpmaOpcode.SEND, SEND_CONTEXT);
                    return;
                }
                nextEvent(Duration.ZERO);
                if (this.ended) {
                    return;
                }
                if (sent[0] != null) {
                    expect(sent[0], RpmaOpcode.SEND, SEND_CONTEXT);
                }
            }
        }

        RpmaCompletion awaitOne(String what) {
            RpmaCompletion[] first = new RpmaCompletion[1];
            awaitCompletions(what, (completion) -> {
                if (first[0] == null) {
                    first[0] = completion;
                }
            }, () -> first[0] != null);
            return first[0];
        }

        /** Keeps the connection until the hold ends, the release latch opens, or the server closes it. */
        void hold(PingPongOptions options) {
            if (options.hold().isZero()) {
                return;
            }
            if (options.onHold() != null) {
                options.onHold().run();
            }
            long deadline = System.nanoTime() + options.hold().toNanos();
            while (System.nanoTime() - deadline < 0) {
                if (options.release() != null && options.release().getCount() == 0) {
                    return;
                }
                nextEvent(Duration.ofNanos(Math.min(deadline - System.nanoTime(), HOLD_SLICE_NANOS)));
                if (this.ended) {
                    throw new SampleClientException(Failure.CONNECTION_LOST,
                            "The server ended the connection while this client held it");
                }
            }
        }

        /** The client's teardown: disconnect, wait for CLOSED (unless it came already), delete. */
        @Override
        public void close() {
            try {
                this.connection.disconnect();
                if (!this.ended) {
                    nextEvent(SampleClient.this.timeout);
                }
            }
            catch (RuntimeException ex) {
                // the connection is deleted below whatever happened; the caller's own outcome matters more
            }
            finally {
                delete();
            }
        }

        void delete() {
            try {
                if (this.completions != null) {
                    this.completions.close();
                }
                this.events.close();
            }
            finally {
                this.connection.close();
            }
        }
    }

    private static int millis(long nanos) {
        return (int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(nanos)));
    }

    private static void expect(RpmaCompletion completion, RpmaOpcode opcode, long context) {
        if (!completion.isSuccess()) {
            // named by what this client posted: verbs leaves a failed completion's opcode undefined (often SEND)
            throw new SampleClientException(Failure.CONNECTION_LOST, posted(completion.context()) + " completed with "
                    + CompletionStatus.describe(completion.status())
                    + ((completion.status() == CompletionStatus.WR_FLUSH_ERR) ? ": the connection was closed" : ""));
        }
        if (completion.opcode() != opcode || completion.context() != context) {
            throw new SampleClientException(Failure.PROTOCOL, "Expected a completion of " + opcode + ", got "
                    + completion.opcode() + " with context 0x" + Long.toHexString(completion.context()));
        }
    }

    /** The work request a completion's context names. */
    private static String posted(long context) {
        if (context == RECV_CONTEXT) {
            return "The receive";
        }
        if (context == SEND_CONTEXT) {
            return "The send";
        }
        if (context == READ_CONTEXT) {
            return "The rpma_read";
        }
        return "An operation with context 0x" + Long.toHexString(context);
    }

    private static RpmaCommonData decode(byte[] privateData) {
        try {
            return RpmaCommonData.decode(privateData);
        }
        catch (IllegalArgumentException ex) {
            throw new SampleClientException(Failure.PROTOCOL, ex.getMessage());
        }
    }

    private SampleClientException timeout(String what) {
        return new SampleClientException(Failure.TIMEOUT, "Waited " + this.timeout.toSeconds() + "s for " + what);
    }

    /** Deletes the peer if this client opened it. */
    @Override
    public void close() {
        if (this.ownsPeer) {
            this.peer.close();
        }
    }
}
