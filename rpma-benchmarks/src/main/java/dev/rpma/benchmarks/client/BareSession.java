package dev.rpma.benchmarks.client;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.CompletionMode;
import dev.rpma.binding.MemoryUsage;
import dev.rpma.binding.PeerRole;
import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaCompletionQueue;
import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.binding.RpmaMemoryRegion;
import dev.rpma.binding.RpmaOpcode;
import dev.rpma.binding.RpmaPeer;
import dev.rpma.binding.io.Epoll;

/**
 * The one connection of a bare load client ({@link BarePingPongClient}, {@link BareLoopPingPongClient})
 * as {@code load_client.c} makes it: its peer, one send and one receive slot of 8 bytes registered for
 * exactly that use, the receive posted on the request, the connection established. Closing it
 * disconnects and waits for CLOSED (or LOST), unless one came already, and releases everything in
 * reverse order. One thread at a time.
 */
final class BareSession implements AutoCloseable {

    /** The token of the connection's event fd in the bare clients' {@link Epoll}s. */
    static final long EVENTS = 1;

    /** The connection was rejected, unreachable or otherwise not established. */
    static final class NotEstablished extends IllegalStateException {

        private static final long serialVersionUID = 1L;

        NotEstablished(RpmaConnectionEvent event) {
            super("the connection was not established: " + event);
        }
    }

    private final RpmaPeer peer;

    private final ByteBuffer sendSlot = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);

    private final ByteBuffer receiveSlot = ByteBuffer.allocateDirect(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);

    private final RpmaMemoryRegion sendRegion;

    private final RpmaMemoryRegion receiveRegion;

    private final RpmaConnection connection;

    /** Waits for the connection's events while no round runs. */
    private final Epoll events = new Epoll(1);

    /** CLOSED or LOST came: the connection needs no disconnect. */
    private boolean ended;

    /** The completions the round in progress still waits for: its send's and its receive's. */
    private int sends;

    private int receives;

    private BareSession(RpmaPeer peer, String address, int port) {
        this.peer = peer;
        try {
            this.sendRegion = peer.register(this.sendSlot, MemoryUsage.SEND);
            try {
                this.receiveRegion = peer.register(this.receiveSlot, MemoryUsage.RECV);
                try (RpmaConnectionRequest request = peer.newConnectionRequest(address, port, null)) {
                    request.receive(this.receiveRegion, 0, Long.BYTES, 0);
                    this.connection = request.connect(null);
                }
                catch (RuntimeException ex) {
                    this.receiveRegion.close();
                    throw ex;
                }
            }
            catch (RuntimeException ex) {
                this.sendRegion.close();
                throw ex;
            }
        }
        catch (RuntimeException ex) {
            this.events.close();
            throw ex;
        }
    }

    /**
     * Connects to the server at {@code address} and {@code port} and waits until the connection is
     * established; nothing is left open when it fails.
     *
     * @throws NotEstablished when the server rejected it or was unreachable
     */
    static BareSession open(Rpma rpma, String address, int port) {
        RpmaPeer peer = rpma.openPeer(address, PeerRole.CLIENT);
        BareSession session;
        try {
            session = new BareSession(peer, address, port);
        }
        catch (RuntimeException ex) {
            peer.close();
            throw ex;
        }
        try {
            session.connection.configureEventsBlocking(false);
            session.events.add(session.connection.eventFd(), EVENTS);
            RpmaConnectionEvent event = session.nextEvent();
            if (event != RpmaConnectionEvent.ESTABLISHED) {
                throw new NotEstablished(event);
            }
            return session;
        }
        catch (RuntimeException ex) {
            session.release();
            throw ex;
        }
    }

    RpmaCompletionQueue completionQueue() {
        return this.connection.completionQueue();
    }

    int eventFd() {
        return this.connection.eventFd();
    }

    /** Puts {@code value}, little-endian, into the send slot. */
    void put(long value) {
        this.sendSlot.putLong(0, value);
    }

    /** Sends the send slot ({@code rpma_send}, a completion always): a round begins. */
    void send() {
        this.sends = 1;
        this.receives = 1;
        this.connection.send(this.sendRegion, 0, Long.BYTES, CompletionMode.ALWAYS, 0);
    }

    /** Counts the first {@code count} completions of {@code batch} to the round; why the round failed, or null. */
    @Nullable String take(RpmaCompletions batch, int count) {
        for (int i = 0; i < count; i++) {
            if (!batch.isSuccess(i)) {
                return "a completion failed: status " + batch.status(i);
            }
            RpmaOpcode opcode = batch.opcode(i);
            if (opcode == RpmaOpcode.SEND) {
                this.sends--;
            }
            else if (opcode == RpmaOpcode.RECV) {
                this.receives--;
            }
        }
        return null;
    }

    /** Whether the round's send and receive both completed. */
    boolean answered() {
        return this.sends <= 0 && this.receives <= 0;
    }

    /** The value in the receive slot. */
    long received() {
        return this.receiveSlot.getLong(0);
    }

    /** Posts the receive slot again ({@code rpma_recv}). */
    void repost() {
        this.connection.receive(this.receiveRegion, 0, Long.BYTES, 0);
    }

    /** The connection's next event, waiting for it (its event fd is non-blocking). */
    RpmaConnectionEvent nextEvent() {
        RpmaConnectionEvent event;
        while ((event = pollEvent()) == null) {
            this.events.await(-1);
        }
        return event;
    }

    /** The connection's next event if one came, else {@code null}. */
    @Nullable RpmaConnectionEvent pollEvent() {
        RpmaConnectionEvent event = this.connection.nextEvent();
        this.ended |= event == RpmaConnectionEvent.CLOSED || event == RpmaConnectionEvent.LOST;
        return event;
    }

    @Override
    public void close() {
        try {
            if (!this.ended) {
                this.connection.disconnect();
                while (!this.ended) {
                    nextEvent();
                }
            }
        }
        finally {
            release();
        }
    }

    private void release() {
        try (this.peer; this.sendRegion; this.receiveRegion; this.connection; this.events) {
            // closed in reverse order: the epoll, the connection, the regions, the peer last
        }
    }
}
