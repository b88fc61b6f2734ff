package dev.rpma.server;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.RpmaCompletions;
import dev.rpma.binding.RpmaConnection;
import dev.rpma.binding.RpmaConnectionEvent;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.io.FileDescriptors;
import dev.rpma.server.loop.RpmaEventLoop;

/**
 * One accepted connection and its state machine, owned by the event loop it was assigned to: the
 * loop reads its connection events, serves its data path ({@link SessionDataPath}) and its reads
 * ({@link SessionReads}), ends it, and deletes it; other threads only hand it work ({@link #send},
 * {@link #read}, {@link #close()}).
 *
 * <p>States move forward only ({@link RpmaSessionState}): ACCEPTED when the acceptor connected the
 * request; ESTABLISHED on the connection's ESTABLISHED, when the data path starts; CLOSING once an
 * end is decided; CLOSED once the connection is deleted. How it ends, as librpma requires of a
 * server: on the client's CLOSED (which may come twice, or without an ESTABLISHED before it) or a
 * LOST, it disconnects and deletes at once; when the server ends it (the application, the idle
 * timeout, a bad message, a stop), it disconnects and deletes on the CLOSED that follows, or after
 * {@link #DISCONNECT_TIMEOUT} without one. After the delete its slots go back to the pool and the
 * listeners are told, once. The loop never waits for another thread's native call on the connection:
 * while one is in flight the delete is tried again later.
 */
final class ServerSession implements RpmaSession, RpmaEventLoop.IoHandler {

    private static final Logger logger = LoggerFactory.getLogger(ServerSession.class);

    static final int KIND_EVENTS = 0;

    static final int KIND_COMPLETIONS = 1;

    /** How long a session the server ends waits for its CLOSED before it is deleted anyway. */
    static final Duration DISCONNECT_TIMEOUT = Duration.ofSeconds(3);

    /** How often a loop looks again whether a connection with a call in flight on another thread can be deleted. */
    static final Duration DELETE_RETRY = Duration.ofMillis(10);

    private static final AtomicLong IDS = new AtomicLong();

    // opaque: a plain store on the loop per message, with no fence, and a whole value for readers elsewhere
    private static final VarHandle RECEIVED;

    private static final VarHandle SENT;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            RECEIVED = lookup.findVarHandle(ServerSession.class, "received", long.class);
            SENT = lookup.findVarHandle(ServerSession.class, "sent", long.class);
        }
        catch (ReflectiveOperationException ex) {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final long id = IDS.incrementAndGet();

    private final EndpointContext endpoint;

    private final RpmaConnection connection;

    private final RpmaEventLoop loop;

    private final int loopIndex;

    private final byte[] privateData;

    private final Map<String, Object> attributes;

    private final @Nullable SessionDataPath data;

    private final SessionReads reads;

    private volatile RpmaSessionState state = RpmaSessionState.ACCEPTED;

    // owned by the loop
    private int eventFd = -1;

    private long eventRegistration;

    private boolean registered;

    private @Nullable RpmaSessionEnd end;

    private boolean deleted;

    /** The delete waits for a call in flight on another thread. */
    private boolean deleteDeferred;

    private RpmaEventLoop.@Nullable Timer disconnectTimer;

    /** Messages received; written by the loop only, read by any thread (through RECEIVED). */
    @SuppressWarnings("unused")
    private long received;

    /** Messages posted; written by the loop only, read by any thread (through SENT). */
    @SuppressWarnings("unused")
    private long sent;

    private long receivedAtLastLook;

    /** Frames received, the framing's own included: what the idle look watches; the loop's only, as is that look. */
    private long frames;

    private long lastActivityNanos;

    ServerSession(EndpointContext endpoint, RpmaConnection connection, int loopIndex, byte[] privateData,
            Map<String, Object> attributes, BufferPool.@Nullable Block block, RpmaCompletions batch) {
        this.endpoint = endpoint;
        this.connection = connection;
        this.loopIndex = loopIndex;
        this.loop = endpoint.loops.loop(loopIndex);
        this.privateData = privateData;
        // the copy constructor allocates a table even for no attributes, the common case
        this.attributes = attributes.isEmpty() ? new ConcurrentHashMap<>() : new ConcurrentHashMap<>(attributes);
        this.data = (block != null) ? new SessionDataPath(this, endpoint, connection, block,
                endpoint.shared(loopIndex), this.loop, batch) : null;
        this.reads = new SessionReads(this, endpoint, connection, this.loop, batch, block != null);
    }

    // ---------------------------------------------------------------- RpmaSession

    @Override
    public long id() {
        return this.id;
    }

    @Override
    public String endpointName() {
        return this.endpoint.name();
    }

    @Override
    public Map<String, Object> attributes() {
        return this.attributes;
    }

    @Override
    public byte[] privateData() {
        return Arrays.copyOf(this.privateData, this.privateData.length);
    }

    @Override
    public long messagesReceived() {
        return (long) RECEIVED.getOpaque(this);
    }

    @Override
    public long messagesSent() {
        return (long) SENT.getOpaque(this);
    }

    @Override
    public RpmaSessionState state() {
        return this.state;
    }

    @Override
    public void send(ByteBuffer message) {
        SessionDataPath path = dataPath();
        if (this.state != RpmaSessionState.ESTABLISHED) {
            throw new IllegalStateException("Session " + this.id + " of endpoint '" + endpointName() + "' is "
                    + this.state + "; only an established session sends");
        }
        if (this.loop.inLoop()) {
            path.send(message);
            return;
        }
        // checked here, where the caller sees the exception
        path.checkLength(message.remaining(), false);
        byte[] copy = new byte[message.remaining()];
        message.get(message.position(), copy);
        if (!this.loop.tryExecute(() -> path.sendCopied(copy))) {
            throw new IllegalStateException("Session " + this.id + " has ended: its event loop stopped");
        }
    }

    @Override
    public ByteBuffer newMessage() {
        SessionDataPath path = dataPath();
        if (this.loop.inLoop()) {
            return path.newMessage();
        }
        return ByteBuffer.allocate(this.endpoint.settings.messages().maxMessageSize())
            .order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public CompletableFuture<Void> read(byte[] remoteDescriptor, long remoteOffset, String region, int regionOffset,
            int length) {
        if (this.state != RpmaSessionState.ESTABLISHED) {
            throw new IllegalStateException("Session " + this.id + " of endpoint '" + endpointName() + "' is "
                    + this.state + "; only an established session reads");
        }
        return this.reads.read(remoteDescriptor, remoteOffset, region, regionOffset, length);
    }

    @Override
    public void close() {
        end(RpmaSessionEnd.of(RpmaSessionEnd.Reason.CLOSED_BY_SERVER, "closed by the application"));
    }

    private SessionDataPath dataPath() {
        if (this.data == null) {
            throw new IllegalStateException("Endpoint '" + endpointName() + "' has no message handlers, so its"
                    + " sessions have no data path: add a message handler (@RpmaMessageHandler) for it to send and receive");
        }
        return this.data;
    }

    // ---------------------------------------------------------------- the loop

    /** Starts watching the connection's events; on the loop, right after the acceptor connected it. */
    void attach() {
        if (this.end != null) {
            // ended before its loop took it (a stop): disconnected and deleted already
            return;
        }
        try {
            this.eventFd = this.connection.eventFd();
            FileDescriptors.setBlocking(this.eventFd, false);
            this.eventRegistration = this.loop.register(this.eventFd, this, KIND_EVENTS);
            this.registered = true;
        }
        catch (RuntimeException ex) {
            if (ex instanceof RpmaException rpma) {
                this.endpoint.statistics.recordError(rpma);
            }
            this.endpoint.warnings.error("watch", "Watching a new connection of endpoint '" + endpointName()
                    + "' failed; it is closed", ex);
            endNow(new RpmaSessionEnd(RpmaSessionEnd.Reason.ERROR, "its events could not be watched", ex));
        }
    }

    @Override
    public void onReadable(int kind) {
        if (kind == KIND_COMPLETIONS) {
            if (this.end != null) {
                return;
            }
            if (this.data != null) {
                this.data.onCompletionEvent();
            }
            else {
                this.reads.onCompletionEvent();
            }
            return;
        }
        readEvent();
    }

    /**
     * Reads one event: the fd is level-triggered, so more are read in the next rounds; reading until
     * there is none would end with a failed read that librpma logs at ERROR.
     */
    private void readEvent() {
        if (this.deleted) {
            return;
        }
        RpmaConnectionEvent event;
        try {
            event = this.connection.nextEvent();
        }
        catch (RpmaException ex) {
            this.endpoint.statistics.recordError(ex);
            endNow(new RpmaSessionEnd(RpmaSessionEnd.Reason.LOST, "reading its event failed: " + ex.getMessage(), ex));
            return;
        }
        if (event == null) {
            return;
        }
        this.endpoint.statistics.recordEvent(event);
        switch (event) {
            case ESTABLISHED -> established();
            case CLOSED -> {
                if (this.end == null) {
                    endOnEvent(RpmaSessionEnd.of(RpmaSessionEnd.Reason.CLOSED, "the client disconnected"));
                }
                else {
                    // the CLOSED that follows the server's own disconnect
                    delete();
                }
            }
            default -> endOnEvent(RpmaSessionEnd.of(RpmaSessionEnd.Reason.LOST, "the connection was " + event));
        }
    }

    /** The client's CLOSED or a LOST: what completed before it is handled first, then the session ends. */
    private void endOnEvent(RpmaSessionEnd how) {
        if (this.end == null && this.data != null) {
            this.data.drainBeforeEnd();
        }
        else if (this.end == null) {
            this.reads.drainBeforeEnd();
        }
        if (this.end == null) {
            endNow(how);
        }
        else {
            // a handler closed the session meanwhile: this event is the CLOSED its disconnect waits for
            delete();
        }
    }

    /**
     * A completion was flushed: the queue pair is in the error state. The connection's event says
     * why (the client's CLOSED, a LOST) when it is there already; otherwise the session is lost.
     */
    void queuePairFlushed(String what) {
        if (this.end != null) {
            return;
        }
        readEvent();
        if (this.end == null) {
            endNow(RpmaSessionEnd.of(RpmaSessionEnd.Reason.LOST, "the connection's queue pair failed: " + what
                    + " was flushed (IBV_WC_WR_FLUSH_ERR)"));
        }
    }

    private void established() {
        if (this.end != null || this.state != RpmaSessionState.ACCEPTED) {
            return;
        }
        this.state = RpmaSessionState.ESTABLISHED;
        if (this.data != null) {
            try {
                this.data.attach();
            }
            catch (RuntimeException ex) {
                this.endpoint.warnings.error("data-path", "Starting the data path of session " + this.id
                        + " of endpoint '" + endpointName() + "' failed; it is closed", ex);
                endNow(new RpmaSessionEnd(RpmaSessionEnd.Reason.ERROR, "its data path could not start", ex));
                return;
            }
        }
        Duration idle = this.endpoint.settings.limits().idleTimeout();
        if (!idle.isZero()) {
            this.lastActivityNanos = System.nanoTime();
            scheduleIdleLook(idle);
        }
        if (this.end == null) {
            this.endpoint.notifyEstablished(this);
            if (this.data != null) {
                this.data.releaseClaims();
            }
        }
    }

    /** The idle timeout is looked at four times per timeout: a silent session ends within 1.25 of it. */
    private void scheduleIdleLook(Duration idle) {
        Duration interval = idle.dividedBy(4);
        this.loop.schedule(() -> lookForIdle(idle), interval.isZero() ? Duration.ofMillis(1) : interval);
    }

    private void lookForIdle(Duration idle) {
        if (this.end != null) {
            return;
        }
        long now = System.nanoTime();
        long received = this.frames;
        if (received != this.receivedAtLastLook) {
            this.receivedAtLastLook = received;
            this.lastActivityNanos = now;
        }
        else if (now - this.lastActivityNanos >= idle.toNanos()) {
            endNow(RpmaSessionEnd.of(RpmaSessionEnd.Reason.IDLE, "no message for " + idle));
            return;
        }
        scheduleIdleLook(idle);
    }

    /** A frame arrived, a message or (not counted as one) the framing's own; by the data path. */
    void receivedOne(boolean message) {
        this.frames++;
        if (message) {
            RECEIVED.setOpaque(this, (long) RECEIVED.getOpaque(this) + 1);
        }
    }

    /** The session's reads, whose completions the data path hands over. */
    SessionReads reads() {
        return this.reads;
    }

    /** A message was posted to the client; by the data path. */
    void sentOne() {
        SENT.setOpaque(this, (long) SENT.getOpaque(this) + 1);
    }

    /** Ends the session; any thread (on another, the loop does it next). */
    void end(RpmaSessionEnd how) {
        if (this.loop.inLoop()) {
            endNow(how);
        }
        else if (!this.loop.tryExecute(() -> endNow(how))) {
            logger.debug("Session {} of endpoint '{}' not ended: its loop stopped", this.id, endpointName());
        }
    }

    /** Ends the session from its data path, on the loop. */
    void end(RpmaSessionEnd.Reason reason, String detail, @Nullable Throwable cause) {
        endNow(new RpmaSessionEnd(reason, detail, cause));
    }

    private void endNow(RpmaSessionEnd how) {
        if (this.end != null) {
            return;
        }
        this.end = how;
        this.state = RpmaSessionState.CLOSING;
        if (this.data != null) {
            this.data.stop();
        }
        this.reads.stop(how);
        try {
            this.connection.disconnect();
        }
        catch (RpmaException ex) {
            // the client may be gone already; the delete below releases the connection either way
            logger.debug("Disconnecting session {} of endpoint '{}' failed: {}", this.id, endpointName(), ex.getMessage());
        }
        RpmaSessionEnd.Reason reason = how.reason();
        if (!this.registered || reason == RpmaSessionEnd.Reason.CLOSED || reason == RpmaSessionEnd.Reason.LOST) {
            delete();
        }
        else {
            this.disconnectTimer = this.loop.schedule(this::delete, DISCONNECT_TIMEOUT);
        }
    }

    /** Deletes the connection, gives the slots back and tells the listeners; once. */
    private void delete() {
        if (this.deleted) {
            return;
        }
        this.deleted = true;
        if (this.disconnectTimer != null) {
            this.disconnectTimer.cancel();
        }
        if (this.registered) {
            // before the delete, which closes the fd
            this.loop.unregister(this.eventFd, this.eventRegistration);
            this.registered = false;
        }
        if (this.data != null) {
            this.data.beforeDelete();
        }
        deleteConnection();
    }

    /**
     * Deletes the connection unless another thread is inside a native call on it (a wait can last
     * as long as no event comes): the loop does not wait for that thread, but looks again every
     * {@link #DELETE_RETRY}, and the session ends, with its slots and its place under the limit,
     * once the connection is deleted.
     */
    private void deleteConnection() {
        boolean gone;
        try {
            gone = this.connection.closeIfIdle();
        }
        catch (RpmaException ex) {
            // rpma_conn_delete frees the connection even when it fails
            gone = true;
            this.endpoint.statistics.recordError(ex);
            this.endpoint.warnings.warn("delete", "Deleting session " + this.id + " of endpoint '" + endpointName()
                    + "' failed", ex);
        }
        if (!gone) {
            if (!this.deleteDeferred) {
                this.deleteDeferred = true;
                logger.debug("Session {} of endpoint '{}': a call on its connection is in flight on another thread;"
                        + " the connection is deleted once it returned", this.id, endpointName());
            }
            this.loop.schedule(this::deleteConnection, DELETE_RETRY);
            return;
        }
        this.state = RpmaSessionState.CLOSED;
        if (this.data != null) {
            this.data.release();
        }
        RpmaSessionEnd how = this.end;
        this.endpoint.statistics.recordSessionEnded(how.reason());
        this.endpoint.registry.removed(this);
        this.endpoint.loops.released(this.loopIndex);
        this.endpoint.notifyEnded(this, how);
    }

    @Override
    public String toString() {
        return "RpmaSession[" + this.id + ", " + endpointName() + ", " + this.state + "]";
    }
}
