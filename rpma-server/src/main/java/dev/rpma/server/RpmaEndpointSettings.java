package dev.rpma.server;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Everything one listening endpoint needs, independent of how it was configured.
 *
 * @param name the endpoint's name; handlers bind to it
 * @param address IP address of an RDMA-capable interface
 * @param port TCP port of the RDMA CM service
 * @param acceptor how connection requests reach the connection handler
 * @param messages the data path of its sessions, for an endpoint that has message handlers
 * @param limits what one endpoint takes at most
 * @param peer the name of a peer of its own, and so a protection domain of its own, shared only with
 *     the endpoints on the same address that name the same peer: the keys of the regions registered
 *     for it are useless on the other endpoints' connections, and theirs on its; {@code null} for the
 *     address's shared peer
 */
public record RpmaEndpointSettings(String name, String address, int port, Acceptor acceptor, Messages messages,
        Limits limits, @Nullable String peer) {

    /** The name of the endpoint configured under {@code rpma.server} itself. */
    public static final String DEFAULT_ENDPOINT = "default";

    public RpmaEndpointSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(acceptor, "acceptor");
        Objects.requireNonNull(messages, "messages");
        Objects.requireNonNull(limits, "limits");
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port must be 1 to 65535, not " + port);
        }
        if (peer != null && peer.isBlank()) {
            throw new IllegalArgumentException("a peer's name must not be blank; leave it null for the shared peer");
        }
    }

    /** An endpoint on its address's shared peer. */
    public RpmaEndpointSettings(String name, String address, int port, Acceptor acceptor, Messages messages,
            Limits limits) {
        this(name, address, port, acceptor, messages, limits, null);
    }

    /** An endpoint with the default acceptor, messages and limits, on its address's shared peer. */
    public RpmaEndpointSettings(String name, String address, int port) {
        this(name, address, port, Acceptor.DEFAULTS, Messages.DEFAULTS, Limits.DEFAULTS, null);
    }

    public RpmaEndpointSettings withAcceptor(Acceptor acceptor) {
        return new RpmaEndpointSettings(this.name, this.address, this.port, acceptor, this.messages, this.limits,
                this.peer);
    }

    public RpmaEndpointSettings withMessages(Messages messages) {
        return new RpmaEndpointSettings(this.name, this.address, this.port, this.acceptor, messages, this.limits,
                this.peer);
    }

    public RpmaEndpointSettings withLimits(Limits limits) {
        return new RpmaEndpointSettings(this.name, this.address, this.port, this.acceptor, this.messages, limits,
                this.peer);
    }

    /** The endpoint on a peer of its own named {@code peer}; {@code null}: the address's shared peer. */
    public RpmaEndpointSettings withPeer(@Nullable String peer) {
        return new RpmaEndpointSettings(this.name, this.address, this.port, this.acceptor, this.messages, this.limits,
                peer);
    }

    /**
     * Which peer the endpoint's objects are created on: one per address and peer name, the address
     * alone for its shared peer.
     */
    String peerKey() {
        return (this.peer == null) ? this.address : this.address + " (peer '" + this.peer + "')";
    }

    /**
     * How connection requests reach the connection handler.
     *
     * @param queueCapacity requests waiting for a handler thread; more are rejected at once as queue-full
     * @param handlerThreads handler threads (how many requests are handled at once)
     * @param requestDeadline how long a handler may take to connect or reject a request before it is rejected
     * @param pollInterval longest wait between two looks at the endpoint, even without an event
     * @param maxConsecutiveErrors acceptor errors of no known cause ({@code RPMA_E_PROVIDER} with an errno
     *     that names no shortage of resources) in a row after which the endpoint is given up; a shortage of
     *     resources never counts, the endpoint is degraded until it passes
     * @param inlineHandler whether the handler runs on the acceptor thread instead of a handler thread
     *     ({@code queueCapacity} and {@code handlerThreads} then do not apply): for handlers that decide at
     *     once and never block, since a handler that blocks there stops the endpoint's acceptor
     * @param batchScheduling whether the handler threads run under Linux's {@code SCHED_BATCH} policy, so
     *     that waking one for a request never preempts the acceptor thread on its CPU
     * @param spinLooks how many times an idle handler thread looks for the next request, yielding its
     *     CPU in between, before it parks; 0 parks it at once
     * @param onEventLoop whether the acceptor runs on the server's first event loop instead of a thread
     *     of its own: a session the loop serves then starts without a thread hand-off and wake-up, at
     *     the cost of the loop's time (taking a request, an inline handler) for its other sessions
     */
    public record Acceptor(int queueCapacity, int handlerThreads, Duration requestDeadline, Duration pollInterval,
            int maxConsecutiveErrors, boolean inlineHandler, boolean batchScheduling, int spinLooks,
            boolean onEventLoop) {

        /** The largest queue capacity: the ring's slots are allocated up front. */
        public static final int MAX_QUEUE_CAPACITY = 4096;

        public static final int DEFAULT_QUEUE_CAPACITY = 64;

        public static final int DEFAULT_HANDLER_THREADS = 4;

        public static final Duration DEFAULT_REQUEST_DEADLINE = Duration.ofSeconds(5);

        public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);

        public static final int DEFAULT_MAX_CONSECUTIVE_ERRORS = 10;

        public static final int DEFAULT_SPIN_LOOKS = 256;

        public static final Acceptor DEFAULTS = new Acceptor(DEFAULT_QUEUE_CAPACITY, DEFAULT_HANDLER_THREADS,
                DEFAULT_REQUEST_DEADLINE, DEFAULT_POLL_INTERVAL, DEFAULT_MAX_CONSECUTIVE_ERRORS, false, true,
                DEFAULT_SPIN_LOOKS, false);

        public Acceptor {
            Objects.requireNonNull(requestDeadline, "requestDeadline");
            Objects.requireNonNull(pollInterval, "pollInterval");
            if (queueCapacity < 1 || queueCapacity > MAX_QUEUE_CAPACITY) {
                throw new IllegalArgumentException("queueCapacity must be 1 to " + MAX_QUEUE_CAPACITY + ", not "
                        + queueCapacity);
            }
            if (handlerThreads < 1) {
                throw new IllegalArgumentException("handlerThreads must be at least 1, not " + handlerThreads);
            }
            if (spinLooks < 0) {
                throw new IllegalArgumentException("spinLooks must be at least 0, not " + spinLooks);
            }
        }

        /** An acceptor on a thread of its own. */
        public Acceptor(int queueCapacity, int handlerThreads, Duration requestDeadline, Duration pollInterval,
                int maxConsecutiveErrors, boolean inlineHandler, boolean batchScheduling, int spinLooks) {
            this(queueCapacity, handlerThreads, requestDeadline, pollInterval, maxConsecutiveErrors, inlineHandler,
                    batchScheduling, spinLooks, false);
        }

        public Acceptor withInlineHandler(boolean inline) {
            return new Acceptor(this.queueCapacity, this.handlerThreads, this.requestDeadline, this.pollInterval,
                    this.maxConsecutiveErrors, inline, this.batchScheduling, this.spinLooks, this.onEventLoop);
        }

        public Acceptor withOnEventLoop(boolean onEventLoop) {
            return new Acceptor(this.queueCapacity, this.handlerThreads, this.requestDeadline, this.pollInterval,
                    this.maxConsecutiveErrors, this.inlineHandler, this.batchScheduling, this.spinLooks, onEventLoop);
        }
    }

    /**
     * The data path of the endpoint's sessions (used when it has message handlers).
     *
     * @param mode raw receives, or the starter's framing
     * @param receiveSlots receives posted per session (before accept, and again after each message is
     *     handled): the most messages a client may have in flight towards the server
     * @param sendSlots messages a session has in flight towards the client; more wait in its send queue
     * @param maxMessageSize bytes of one message (its payload, in framed mode); a larger one ends its session
     * @param dispatch whether handlers are called on the event loop or on a pool of message threads
     * @param dispatchThreads threads of that pool
     * @param sendQueueLimit sends that may wait for a slot or credits; one more ends the session
     * @param sharedReceiveSlots 0: each session has {@code receiveSlots} receives of its own; more (raw
     *     mode only): the endpoint's sessions on one event loop receive through one shared receive queue
     *     of this many slots, and {@code receiveSlots} does not apply
     */
    public record Messages(RpmaWireMode mode, int receiveSlots, int sendSlots, int maxMessageSize,
            RpmaMessageDispatch dispatch, int dispatchThreads, int sendQueueLimit, int sharedReceiveSlots) {

        public static final int DEFAULT_RECEIVE_SLOTS = 8;

        public static final int DEFAULT_SEND_SLOTS = 8;

        public static final int DEFAULT_MAX_MESSAGE_SIZE = 4096;

        public static final int DEFAULT_DISPATCH_THREADS = 4;

        public static final int DEFAULT_SEND_QUEUE_LIMIT = 1024;

        /** The most slots of one shared receive queue; a device may take fewer ({@code rpma_srq_new} then fails). */
        public static final int MAX_SHARED_RECEIVE_SLOTS = 16384;

        /** Framing needs room for a credit frame besides the data: see docs/wire-protocol.md. */
        public static final int MIN_FRAMED_RECEIVE_SLOTS = 3;

        public static final Messages DEFAULTS = new Messages(RpmaWireMode.FRAMED, DEFAULT_RECEIVE_SLOTS,
                DEFAULT_SEND_SLOTS, DEFAULT_MAX_MESSAGE_SIZE, RpmaMessageDispatch.LOOP, DEFAULT_DISPATCH_THREADS,
                DEFAULT_SEND_QUEUE_LIMIT, 0);

        public Messages {
            Objects.requireNonNull(mode, "mode");
            Objects.requireNonNull(dispatch, "dispatch");
            if (receiveSlots < 1 || sendSlots < 1 || maxMessageSize < 1 || dispatchThreads < 1 || sendQueueLimit < 0) {
                throw new IllegalArgumentException("slots, message size and threads must be at least 1, the send queue"
                        + " limit at least 0: " + this);
            }
            if (mode == RpmaWireMode.FRAMED && receiveSlots < MIN_FRAMED_RECEIVE_SLOTS) {
                throw new IllegalArgumentException("framed mode needs at least " + MIN_FRAMED_RECEIVE_SLOTS
                        + " receive slots, not " + receiveSlots);
            }
            if (sendSlots > 64 || receiveSlots > 4096) {
                throw new IllegalArgumentException("at most 64 send slots and 4096 receive slots per session: " + this);
            }
            if (sharedReceiveSlots < 0 || sharedReceiveSlots > MAX_SHARED_RECEIVE_SLOTS) {
                throw new IllegalArgumentException("sharedReceiveSlots must be 0 (off) to " + MAX_SHARED_RECEIVE_SLOTS
                        + ", not " + sharedReceiveSlots);
            }
            if (sharedReceiveSlots > 0 && mode != RpmaWireMode.RAW) {
                throw new IllegalArgumentException("a shared receive queue serves raw mode only: in framed mode the"
                        + " credits a session grants are receives of its own; " + this);
            }
        }

        /** Whether the sessions receive through a shared receive queue per event loop. */
        public boolean sharesReceives() {
            return this.sharedReceiveSlots > 0;
        }

        public Messages withMode(RpmaWireMode mode) {
            return new Messages(mode, this.receiveSlots, this.sendSlots, this.maxMessageSize, this.dispatch,
                    this.dispatchThreads, this.sendQueueLimit, this.sharedReceiveSlots);
        }

        public Messages withSlots(int receiveSlots, int sendSlots) {
            return new Messages(this.mode, receiveSlots, sendSlots, this.maxMessageSize, this.dispatch,
                    this.dispatchThreads, this.sendQueueLimit, this.sharedReceiveSlots);
        }

        public Messages withMaxMessageSize(int maxMessageSize) {
            return new Messages(this.mode, this.receiveSlots, this.sendSlots, maxMessageSize, this.dispatch,
                    this.dispatchThreads, this.sendQueueLimit, this.sharedReceiveSlots);
        }

        public Messages withDispatch(RpmaMessageDispatch dispatch, int threads) {
            return new Messages(this.mode, this.receiveSlots, this.sendSlots, this.maxMessageSize, dispatch, threads,
                    this.sendQueueLimit, this.sharedReceiveSlots);
        }

        public Messages withSharedReceiveSlots(int slots) {
            return new Messages(this.mode, this.receiveSlots, this.sendSlots, this.maxMessageSize, this.dispatch,
                    this.dispatchThreads, this.sendQueueLimit, slots);
        }

        public Messages withSendQueueLimit(int limit) {
            return new Messages(this.mode, this.receiveSlots, this.sendSlots, this.maxMessageSize, this.dispatch,
                    this.dispatchThreads, limit, this.sharedReceiveSlots);
        }
    }

    /**
     * What one endpoint takes at most.
     *
     * @param maxConnections connections at once, counting requests being decided; past it requests are
     *     rejected as {@link RejectReason#CAPACITY}
     * @param idleTimeout a session that received no message for this long is disconnected; zero: never
     * @param requestRate how many connection requests the endpoint lets through to the connection handler;
     *     past it requests are rejected at once as {@link RejectReason#RATE_LIMITED}; {@code null}: no limit
     */
    public record Limits(int maxConnections, Duration idleTimeout, @Nullable RequestRate requestRate) {

        public static final int DEFAULT_MAX_CONNECTIONS = 1024;

        public static final Limits DEFAULTS = new Limits(DEFAULT_MAX_CONNECTIONS, Duration.ZERO);

        public Limits {
            Objects.requireNonNull(idleTimeout, "idleTimeout");
            if (maxConnections < 1) {
                throw new IllegalArgumentException("maxConnections must be at least 1, not " + maxConnections);
            }
            if (idleTimeout.isNegative()) {
                throw new IllegalArgumentException("idleTimeout must not be negative, not " + idleTimeout);
            }
        }

        /** Limits without a request-rate limit. */
        public Limits(int maxConnections, Duration idleTimeout) {
            this(maxConnections, idleTimeout, null);
        }

        public Limits withRequestRate(@Nullable RequestRate requestRate) {
            return new Limits(this.maxConnections, this.idleTimeout, requestRate);
        }
    }

    /**
     * A token bucket of connection requests: it holds up to {@code burst} permits and gains
     * {@code perSecond} a second; a request takes one, and one that finds none is rejected as
     * {@link RejectReason#RATE_LIMITED}. Checked on the acceptor thread after the admission step
     * ({@link RpmaAdmission}), so that requests it refused use up no permits, and before anything is
     * reserved for the request.
     *
     * @param perSecond permits gained a second, positive
     * @param burst most permits held, so most requests let through at once after a quiet time; at least 1
     */
    public record RequestRate(double perSecond, int burst) {

        public RequestRate {
            if (!(perSecond > 0) || Double.isInfinite(perSecond)) {
                throw new IllegalArgumentException("perSecond must be positive and finite, not " + perSecond);
            }
            if (burst < 1) {
                throw new IllegalArgumentException("burst must be at least 1, not " + burst);
            }
        }

        /** {@code perSecond} with a burst of one second's permits (at least 1). */
        public static RequestRate perSecond(double perSecond) {
            return new RequestRate(perSecond, (int) Math.max(1, Math.min(Integer.MAX_VALUE, Math.ceil(perSecond))));
        }
    }
}
