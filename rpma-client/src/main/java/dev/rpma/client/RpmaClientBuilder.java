package dev.rpma.client;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.jspecify.annotations.Nullable;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaConnectionRequest;
import dev.rpma.server.RpmaEndpointSettings;
import dev.rpma.server.RpmaMessageCodec;
import dev.rpma.server.RpmaStringCodec;
import dev.rpma.server.RpmaWireMode;
import dev.rpma.server.admission.RpmaAdmissionKey;
import dev.rpma.server.admission.RpmaAdmissionToken;

/**
 * Builds an {@link RpmaClient}; every setting has a default but where the server is: an address and a
 * port, or a {@link RpmaServerLocator} for many instances. Not thread-safe.
 */
public final class RpmaClientBuilder {

    private final Rpma rpma;

    private String name = "default";

    private @Nullable String address;

    private int port = -1;

    private @Nullable RpmaServerLocator servers;

    private byte[] privateData = new byte[0];

    private @Nullable RpmaAdmissionKey admissionKey;

    private int poolSize = 1;

    private Duration connectTimeout = Duration.ofSeconds(5);

    private Duration requestTimeout = Duration.ofSeconds(10);

    private int receiveSlots = 16;

    private int sendSlots = 16;

    private int maxMessageSize = 4096;

    private RpmaWireMode mode = RpmaWireMode.FRAMED;

    private int rawWindow = 1;

    private int oneSidedDepth = 16;

    private Duration initialBackoff = Duration.ofMillis(100);

    private Duration maxBackoff = Duration.ofSeconds(10);

    private double backoffMultiplier = 2.0;

    private int maxRetries = 1;

    private int eventLoops = 1;

    private Duration busyPoll = Duration.ZERO;

    private final List<RpmaMessageCodec> codecs = new ArrayList<>();

    private RpmaClientObserver observer = RpmaClientObserver.NONE;

    private RpmaRequestObserver requestObserver = RpmaRequestObserver.NONE;

    private @Nullable RpmaClientMessageListener messageListener;

    private RpmaClientConnectionListener connectionListener = RpmaClientConnectionListener.NONE;

    RpmaClientBuilder(Rpma rpma) {
        this.rpma = rpma;
    }

    /** The client's name, in thread names, metrics and messages (default {@code default}). */
    public RpmaClientBuilder name(String name) {
        this.name = name;
        return this;
    }

    /** The server's IP address, reachable over RDMA (this or {@link #servers}). */
    public RpmaClientBuilder address(String address) {
        this.address = address;
        return this;
    }

    /** The server's port (required with {@link #address}). */
    public RpmaClientBuilder port(int port) {
        this.port = port;
        return this;
    }

    /**
     * The servers, chosen by {@code locator} before each connection attempt, in place of
     * {@link #address} and {@link #port}. The client's peer is then opened at the first attempt, on the
     * RDMA device that routes to the first server: every server must be reachable through that device.
     */
    public RpmaClientBuilder servers(RpmaServerLocator locator) {
        this.servers = locator;
        return this;
    }

    /**
     * The private data of each connection request, at most 56 bytes, or
     * {@value RpmaAdmissionToken#MAX_APPLICATION_DATA} behind an {@link #admissionKey admission token}
     * (default none).
     */
    public RpmaClientBuilder privateData(byte[] privateData) {
        this.privateData = privateData.clone();
        return this;
    }

    /**
     * The key of the admission token that servers with token admission want (default none: no token).
     * Every connection attempt, for each pooled connection, each reconnect and each retry, puts a token
     * issued at that moment with a random nonce in front of the {@link #privateData private data}: a
     * server admits a token once, so a token of its own is what lets the next connection in. The server
     * checks the token's time against its clock, within its maximum clock skew (30 s by default): keep
     * the clocks of both in step (NTP).
     */
    public RpmaClientBuilder admissionKey(@Nullable RpmaAdmissionKey admissionKey) {
        this.admissionKey = admissionKey;
        return this;
    }

    /** Connections kept open to the server (default 1). */
    public RpmaClientBuilder poolSize(int poolSize) {
        this.poolSize = poolSize;
        return this;
    }

    /** Longest wait for a connection to be established (default 5 s). */
    public RpmaClientBuilder connectTimeout(Duration connectTimeout) {
        this.connectTimeout = connectTimeout;
        return this;
    }

    /** Longest wait for a reply, from the call on (default 10 s). */
    public RpmaClientBuilder requestTimeout(Duration requestTimeout) {
        this.requestTimeout = requestTimeout;
        return this;
    }

    /** Receives posted per connection, at least 3 in framed mode and 2 in raw mode (default 16). */
    public RpmaClientBuilder receiveSlots(int receiveSlots) {
        this.receiveSlots = receiveSlots;
        return this;
    }

    /** Sends in flight per connection, at most 64 (default 16). */
    public RpmaClientBuilder sendSlots(int sendSlots) {
        this.sendSlots = sendSlots;
        return this;
    }

    /** The largest payload sent or received, which the server's max-message-size must match (default 4096). */
    public RpmaClientBuilder maxMessageSize(int maxMessageSize) {
        this.maxMessageSize = maxMessageSize;
        return this;
    }

    /** The server's wire mode (default framed). */
    public RpmaClientBuilder mode(RpmaWireMode mode) {
        this.mode = mode;
        return this;
    }

    /** Raw mode: exchanges awaiting their reply per connection, at most (default 1, as the examples' ping-pong). */
    public RpmaClientBuilder rawWindow(int rawWindow) {
        this.rawWindow = rawWindow;
        return this;
    }

    /** One-sided operations in flight per connection, at most; more wait (default 16). */
    public RpmaClientBuilder oneSidedDepth(int oneSidedDepth) {
        this.oneSidedDepth = oneSidedDepth;
        return this;
    }

    /** Back-off between connection attempts after failures in a row (default 100 ms, times 2, at most 10 s). */
    public RpmaClientBuilder backoff(Duration initial, double multiplier, Duration max) {
        this.initialBackoff = initial;
        this.backoffMultiplier = multiplier;
        this.maxBackoff = max;
        return this;
    }

    /** How often an idempotent request is sent again after its connection was lost (default 1). */
    public RpmaClientBuilder maxRetries(int maxRetries) {
        this.maxRetries = maxRetries;
        return this;
    }

    /** Event loops of the client's connections (default 1). */
    public RpmaClientBuilder eventLoops(int eventLoops) {
        this.eventLoops = eventLoops;
        return this;
    }

    /**
     * How long a loop keeps polling after work before it sleeps (default 0: sleeps as soon as its
     * completion queues are empty).
     */
    public RpmaClientBuilder busyPoll(Duration busyPoll) {
        this.busyPoll = busyPoll;
        return this;
    }

    /** A codec for {@link RpmaClient#request(String, Object, Class)}, asked before the built-in String codec. */
    public RpmaClientBuilder codec(RpmaMessageCodec codec) {
        this.codecs.add(codec);
        return this;
    }

    /** What the client reports, for metrics (default nothing). */
    public RpmaClientBuilder observer(RpmaClientObserver observer) {
        this.observer = observer;
        return this;
    }

    /** Observes each request and gives the trace context its frame carries (default nothing). */
    public RpmaClientBuilder requestObserver(RpmaRequestObserver requestObserver) {
        this.requestObserver = requestObserver;
        return this;
    }

    /** Gets the messages no request waits for: framed MESSAGE frames, raw messages without an exchange. */
    public RpmaClientBuilder messageListener(RpmaClientMessageListener listener) {
        this.messageListener = listener;
        return this;
    }

    /** Told when a pooled connection is established and when it ends (default nothing). */
    public RpmaClientBuilder connectionListener(RpmaClientConnectionListener listener) {
        this.connectionListener = listener;
        return this;
    }

    /**
     * Opens the client's peer on the device that routes to the address, starts its event loops and its
     * connections, and returns without waiting for them: requests made meanwhile wait for a connection.
     *
     * @throws IllegalArgumentException when a setting is out of range, or both or neither of an address
     *     and a locator are set
     * @throws dev.rpma.binding.RpmaException when no RDMA device serves the address
     */
    public RpmaClient build() {
        boolean hasAddress = this.address != null && !this.address.isBlank();
        if (hasAddress == (this.servers != null)) {
            throw new IllegalArgumentException("An RpmaClient needs either the server's address or a locator of its"
                    + " servers, " + (hasAddress ? "not both" : "got neither"));
        }
        RpmaServerLocator locator = this.servers;
        if (locator == null) {
            check(this.port >= 1 && this.port <= 65535, "port must be 1 to 65535, got " + this.port);
            locator = new FixedServerLocator(new RpmaServerAddress(this.address, this.port));
        }
        check(this.privateData.length <= RpmaConnectionRequest.MAX_CONNECT_PRIVATE_DATA, "private data is at most "
                + RpmaConnectionRequest.MAX_CONNECT_PRIVATE_DATA + " bytes over RoCE/InfiniBand, got " + this.privateData.length);
        check(this.admissionKey == null || this.privateData.length <= RpmaAdmissionToken.MAX_APPLICATION_DATA,
                "private data is at most " + RpmaAdmissionToken.MAX_APPLICATION_DATA + " bytes with an admission key,"
                        + " since the token takes " + RpmaAdmissionToken.LENGTH + " of the "
                        + RpmaAdmissionToken.MAX_PRIVATE_DATA + " bytes a connect carries over RoCE/InfiniBand; got "
                        + this.privateData.length + ": shorten it");
        check(this.poolSize >= 1, "pool-size must be at least 1, got " + this.poolSize);
        // framed: a message needs two credits, one kept for a CREDIT frame, and a CREDIT frame grants two
        // receives; with two slots each side can end up holding one credit of the other's for good
        int minReceiveSlots = (this.mode == RpmaWireMode.FRAMED) ? RpmaEndpointSettings.Messages.MIN_FRAMED_RECEIVE_SLOTS
                : 2;
        check(this.receiveSlots >= minReceiveSlots, "receive-slots must be at least " + minReceiveSlots + " in "
                + this.mode + " mode, got " + this.receiveSlots);
        check(this.sendSlots >= 2 && this.sendSlots <= 64, "send-slots must be 2 to 64, got " + this.sendSlots);
        check(this.maxMessageSize >= 8, "max-message-size must be at least 8, got " + this.maxMessageSize);
        check(this.rawWindow >= 1, "raw-window must be at least 1, got " + this.rawWindow);
        check(this.oneSidedDepth >= 1, "one-sided-depth must be at least 1, got " + this.oneSidedDepth);
        check(this.maxRetries >= 0, "max-retries must not be negative, got " + this.maxRetries);
        check(this.eventLoops >= 1, "event-loops must be at least 1, got " + this.eventLoops);
        check(positive(this.connectTimeout) && positive(this.requestTimeout), "the timeouts must be positive");
        List<RpmaMessageCodec> allCodecs = new ArrayList<>(this.codecs);
        allCodecs.add(new RpmaStringCodec());
        RpmaClientSettings settings = new RpmaClientSettings(this.name, locator, this.privateData,
                this.poolSize, this.connectTimeout, this.requestTimeout, this.receiveSlots, this.sendSlots,
                this.maxMessageSize, this.mode, this.rawWindow, this.oneSidedDepth,
                new Backoff(this.initialBackoff, this.maxBackoff, this.backoffMultiplier), this.maxRetries, this.eventLoops,
                this.busyPoll, List.copyOf(allCodecs), this.admissionKey);
        return RpmaClient.start(this.rpma, settings, this.observer, this.requestObserver, this.messageListener,
                this.connectionListener);
    }

    private static boolean positive(Duration duration) {
        return !duration.isNegative() && !duration.isZero();
    }

    private static void check(boolean condition, String message) {
        if (!condition) {
            throw new IllegalArgumentException("RpmaClient: " + message);
        }
    }
}
