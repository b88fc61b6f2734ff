package dev.rpma.spring.boot.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import dev.rpma.binding.MemoryUsage;
import dev.rpma.server.RpmaBackingStore;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaWireMode;

/**
 * Configuration of the RDMA server: the default endpoint under {@code rpma.server}, more named
 * endpoints under {@code rpma.server.endpoints.<name>}, the event loops of the data path, and the
 * memory exposed to clients under {@code rpma.server.regions.<name>}.
 *
 * <p>Long because every property group (acceptor, messages, limits, admission, connection, event
 * loops, regions, shutdown) is a nested class here, as Spring Boot's own properties classes do, so that
 * the configuration metadata carries each property with its description and default. The starter's
 * defaults are the fields' initial values (tests hold them equal to the core's, which an application
 * without Spring gets); a named endpoint's groups are records whose null components mark what the
 * endpoint inherits, which a field with a default could not tell.
 */
@ConfigurationProperties("rpma.server")
public class RpmaProperties {

    /**
     * Whether to start the RDMA server.
     */
    private boolean enabled = true;

    /**
     * IP address of the RDMA-capable interface to listen on; required. Loopback and wildcard addresses
     * do not work with RDMA.
     */
    private @Nullable String address;

    /**
     * Port of the RDMA connection manager service.
     */
    private int port = 7204;

    /**
     * Whether librpma's log lines go to SLF4J (logger 'dev.rpma.librpma') instead of syslog.
     */
    private boolean logToSlf4j = true;

    private final Connection connection = new Connection();

    private final Acceptor acceptor = new Acceptor();

    private final Messages messages = new Messages();

    private final Limits limits = new Limits();

    private final Admission admission = new Admission();

    private final Shutdown shutdown = new Shutdown();

    private final DeviceRecovery deviceRecovery = new DeviceRecovery();

    private final EventLoops eventLoops = new EventLoops();

    /**
     * More endpoints, by name, each with its own port; a property a named endpoint leaves unset is taken
     * from the same property under rpma.server, except acceptor.inline-handler.
     */
    private final Map<String, Endpoint> endpoints = new LinkedHashMap<>();

    /**
     * Memory exposed to clients for one-sided reads and writes, by name; registered when the server
     * starts, deregistered when it stops.
     */
    private final Map<String, Region> regions = new LinkedHashMap<>();

    public boolean isEnabled() {
        return this.enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public @Nullable String getAddress() {
        return this.address;
    }

    public void setAddress(@Nullable String address) {
        this.address = address;
    }

    public int getPort() {
        return this.port;
    }

    public void setPort(int port) {
        this.port = port;
    }

    public boolean isLogToSlf4j() {
        return this.logToSlf4j;
    }

    public void setLogToSlf4j(boolean logToSlf4j) {
        this.logToSlf4j = logToSlf4j;
    }

    public Connection getConnection() {
        return this.connection;
    }

    public Acceptor getAcceptor() {
        return this.acceptor;
    }

    public Messages getMessages() {
        return this.messages;
    }

    public Limits getLimits() {
        return this.limits;
    }

    public Admission getAdmission() {
        return this.admission;
    }

    public Shutdown getShutdown() {
        return this.shutdown;
    }

    public DeviceRecovery getDeviceRecovery() {
        return this.deviceRecovery;
    }

    public EventLoops getEventLoops() {
        return this.eventLoops;
    }

    public Map<String, Endpoint> getEndpoints() {
        return this.endpoints;
    }

    public Map<String, Region> getRegions() {
        return this.regions;
    }

    /**
     * Queue sizes and timeouts of each accepted connection, passed to librpma.
     */
    public static class Connection {

        /**
         * Completion queue size, at least 1, and at least receive-slots + send-slots on an endpoint with
         * message handlers. Unset: that sum on an endpoint with message handlers, else librpma's default of 10.
         */
        private @Nullable Integer cqSize;

        /**
         * Receive completion queue size; 0 completes receives on the main completion queue, which an endpoint
         * with message handlers needs.
         */
        private int rcqSize = 0;

        /**
         * Send queue size, at least send-slots on an endpoint with message handlers. Unset: send-slots on an
         * endpoint with message handlers, else librpma's default of 10.
         */
        private @Nullable Integer sqSize;

        /**
         * Receive queue size, at least receive-slots on an endpoint with message handlers. Unset: receive-slots
         * on an endpoint with message handlers, else librpma's default of 10.
         */
        private @Nullable Integer rqSize;

        /**
         * Connection set-up timeout; librpma applies it on the client side only.
         */
        private Duration timeout = Duration.ofSeconds(1);

        /**
         * Whether the main and receive completion queues share one completion channel; must stay false on an
         * endpoint with a shared receive queue.
         */
        private boolean sharedCompletionChannel = false;

        public @Nullable Integer getCqSize() {
            return this.cqSize;
        }

        public void setCqSize(@Nullable Integer cqSize) {
            this.cqSize = cqSize;
        }

        public int getRcqSize() {
            return this.rcqSize;
        }

        public void setRcqSize(int rcqSize) {
            this.rcqSize = rcqSize;
        }

        public @Nullable Integer getSqSize() {
            return this.sqSize;
        }

        public void setSqSize(@Nullable Integer sqSize) {
            this.sqSize = sqSize;
        }

        public @Nullable Integer getRqSize() {
            return this.rqSize;
        }

        public void setRqSize(@Nullable Integer rqSize) {
            this.rqSize = rqSize;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public boolean isSharedCompletionChannel() {
            return this.sharedCompletionChannel;
        }

        public void setSharedCompletionChannel(boolean sharedCompletionChannel) {
            this.sharedCompletionChannel = sharedCompletionChannel;
        }
    }

    /**
     * How an endpoint's acceptor hands connection requests to the connection handler.
     */
    public static class Acceptor {

        /**
         * Connection requests waiting for a handler thread, at most 4096; further requests are rejected at
         * once as 'queue-full'.
         */
        private int queueCapacity = 64;

        /**
         * Handler threads, that is, connection requests handled at once.
         */
        private int handlerThreads = 4;

        /**
         * Time a handler has to connect or reject a connection request before the request is rejected.
         */
        private Duration requestDeadline = Duration.ofSeconds(5);

        /**
         * Longest wait between two looks at the endpoint when no event wakes the acceptor.
         */
        private Duration pollInterval = Duration.ofSeconds(1);

        /**
         * Provider errors of no known cause in a row after which the endpoint is given up. A shortage of memory,
         * locked memory or file descriptors never counts: the endpoint is degraded and waits for it to pass.
         */
        private int maxConsecutiveErrors = 10;

        /**
         * Whether the connection handler runs on the acceptor thread instead of a handler thread (queue-capacity
         * and handler-threads then do not apply), saving two thread hand-offs per connection; only for a handler
         * that connects or rejects at once and never blocks, since a blocked handler stops the endpoint from
         * accepting (and, with on-event-loop, the loop's sessions). Not inherited by named endpoints, because it is a promise about one endpoint's handler: that
         * it never blocks.
         */
        private boolean inlineHandler = false;

        /**
         * Whether handler threads run under Linux's SCHED_BATCH policy, so that a handler thread woken for a
         * request waits for a CPU instead of interrupting the acceptor, which goes on taking requests on a host
         * with few CPUs. Where the policy is not allowed (a seccomp profile that forbids sched_setscheduler),
         * the threads keep the default policy and a warning is logged; set it to false not to try.
         */
        private boolean handlerBatchScheduling = true;

        /**
         * How many times an idle handler thread looks for the next connection request before it sleeps (256
         * take about 0.1 ms on a current x86 server): a thread still looking when a request comes takes it
         * without being woken, which speeds up bursts of requests at the cost of CPU time, and a thread whose
         * looks found nothing looks half as many times the next time, so an idle server spends none. 0 sleeps
         * at once, for a host where CPU time matters more than connection rate.
         */
        private int handlerSpinLooks = 256;

        /**
         * Whether the acceptor runs on the server's first event loop instead of a thread of its own. A session on
         * that loop then starts without a hand-off between two threads and a wake-up, which raises the rate of
         * short connections on a host with few CPUs; in exchange the loop's other sessions wait while it takes a
         * request (and runs an inline connection handler), so use it where connections come often and the loop
         * is not saturated by messages.
         */
        private boolean onEventLoop = false;

        public int getQueueCapacity() {
            return this.queueCapacity;
        }

        public void setQueueCapacity(int queueCapacity) {
            this.queueCapacity = queueCapacity;
        }

        public int getHandlerThreads() {
            return this.handlerThreads;
        }

        public void setHandlerThreads(int handlerThreads) {
            this.handlerThreads = handlerThreads;
        }

        public Duration getRequestDeadline() {
            return this.requestDeadline;
        }

        public void setRequestDeadline(Duration requestDeadline) {
            this.requestDeadline = requestDeadline;
        }

        public Duration getPollInterval() {
            return this.pollInterval;
        }

        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }

        public int getMaxConsecutiveErrors() {
            return this.maxConsecutiveErrors;
        }

        public void setMaxConsecutiveErrors(int maxConsecutiveErrors) {
            this.maxConsecutiveErrors = maxConsecutiveErrors;
        }

        public boolean isInlineHandler() {
            return this.inlineHandler;
        }

        public void setInlineHandler(boolean inlineHandler) {
            this.inlineHandler = inlineHandler;
        }

        public boolean isHandlerBatchScheduling() {
            return this.handlerBatchScheduling;
        }

        public void setHandlerBatchScheduling(boolean handlerBatchScheduling) {
            this.handlerBatchScheduling = handlerBatchScheduling;
        }

        public int getHandlerSpinLooks() {
            return this.handlerSpinLooks;
        }

        public void setHandlerSpinLooks(int handlerSpinLooks) {
            this.handlerSpinLooks = handlerSpinLooks;
        }

        public boolean isOnEventLoop() {
            return this.onEventLoop;
        }

        public void setOnEventLoop(boolean onEventLoop) {
            this.onEventLoop = onEventLoop;
        }
    }

    /**
     * The messages of an endpoint's sessions, when the endpoint has @RpmaMessageHandler methods.
     */
    public static class Messages {

        /**
         * How messages travel: 'framed' (the starter's framing: routes, correlated replies, credits) or 'raw'
         * (one message per receive, as clients written against librpma alone send them; one message handler).
         */
        private RpmaWireMode mode = RpmaWireMode.FRAMED;

        /**
         * Receives posted per session, which is the most messages a client may have in flight towards the
         * server; at least 3 in framed mode, at most 4096.
         */
        private int receiveSlots = 8;

        /**
         * Messages a session has in flight towards its client, at most 64; more wait in its send queue.
         */
        private int sendSlots = 8;

        /**
         * Largest message in bytes (its payload, in framed mode); a larger one ends its session.
         */
        private int maxMessageSize = 4096;

        /**
         * Where message handlers run: 'loop' (on the session's event loop; they must not block) or 'pool' (on
         * the endpoint's message threads, for handlers that block).
         */
        private RpmaMessageDispatch dispatch = RpmaMessageDispatch.LOOP;

        /**
         * Message threads of the endpoint when dispatch is 'pool'.
         */
        private int dispatchThreads = 4;

        /**
         * Messages a session may have waiting for a send slot or credits; one more ends the session as too
         * slow a client.
         */
        private int sendQueueLimit = 1024;

        /**
         * Slots of one receive queue per event loop that all the endpoint's sessions on that loop share, in raw
         * mode only; 0 gives each session receive-slots receives of its own, and with a shared queue
         * receive-slots instead caps one session's messages waiting for a message thread. A shared queue serves
         * many concurrent clients with less memory and CPU but one client with a longer round trip, as the
         * performance page of the documentation shows.
         */
        private int sharedReceiveSlots = 0;

        public RpmaWireMode getMode() {
            return this.mode;
        }

        public void setMode(RpmaWireMode mode) {
            this.mode = mode;
        }

        public int getReceiveSlots() {
            return this.receiveSlots;
        }

        public void setReceiveSlots(int receiveSlots) {
            this.receiveSlots = receiveSlots;
        }

        public int getSendSlots() {
            return this.sendSlots;
        }

        public void setSendSlots(int sendSlots) {
            this.sendSlots = sendSlots;
        }

        public int getMaxMessageSize() {
            return this.maxMessageSize;
        }

        public void setMaxMessageSize(int maxMessageSize) {
            this.maxMessageSize = maxMessageSize;
        }

        public RpmaMessageDispatch getDispatch() {
            return this.dispatch;
        }

        public void setDispatch(RpmaMessageDispatch dispatch) {
            this.dispatch = dispatch;
        }

        public int getDispatchThreads() {
            return this.dispatchThreads;
        }

        public void setDispatchThreads(int dispatchThreads) {
            this.dispatchThreads = dispatchThreads;
        }

        public int getSendQueueLimit() {
            return this.sendQueueLimit;
        }

        public void setSendQueueLimit(int sendQueueLimit) {
            this.sendQueueLimit = sendQueueLimit;
        }

        public int getSharedReceiveSlots() {
            return this.sharedReceiveSlots;
        }

        public void setSharedReceiveSlots(int sharedReceiveSlots) {
            this.sharedReceiveSlots = sharedReceiveSlots;
        }
    }

    /**
     * What one endpoint takes at most.
     */
    public static class Limits {

        /**
         * Connections at once, counting requests being decided; past it, requests are rejected as 'capacity'.
         */
        private int maxConnections = 1024;

        /**
         * Time without a message after which a session is disconnected; 0 never. Clients that only read or
         * write the exposed memory send no messages, so keep it 0 on their endpoint.
         */
        private Duration idleTimeout = Duration.ZERO;

        /**
         * Connection requests a second that the endpoint lets through to its connection handler, counting only
         * those its admission step (the token) admits; more are rejected at once as 'rate-limited'. Unset: no limit (a
         * named endpoint inherits it: give it a rate of its own to change it).
         */
        private @Nullable Double requestsPerSecond;

        /**
         * Requests let through at once after a quiet time, at least 1. Unset: requests-per-second rounded up.
         */
        private @Nullable Integer requestBurst;

        public int getMaxConnections() {
            return this.maxConnections;
        }

        public void setMaxConnections(int maxConnections) {
            this.maxConnections = maxConnections;
        }

        public Duration getIdleTimeout() {
            return this.idleTimeout;
        }

        public void setIdleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
        }

        public @Nullable Double getRequestsPerSecond() {
            return this.requestsPerSecond;
        }

        public void setRequestsPerSecond(@Nullable Double requestsPerSecond) {
            this.requestsPerSecond = requestsPerSecond;
        }

        public @Nullable Integer getRequestBurst() {
            return this.requestBurst;
        }

        public void setRequestBurst(@Nullable Integer requestBurst) {
            this.requestBurst = requestBurst;
        }
    }

    /**
     * The admission token: with keys, a connection request reaches the connection handler only when its
     * private data starts with a token made with one of them, and the handler sees the data after the token.
     */
    public static class Admission {

        /**
         * Keys of the admission token, each an id (0 to 255) and a secret shared with the clients (at least 32
         * bytes); at most two, so that clients can move from one key to the next. Empty: requests need no token.
         */
        private List<AdmissionKey> keys = new ArrayList<>();

        /**
         * How far the time in a token may be from the server's clock, either way, in whole seconds: a token is
         * refused that long after it was issued, and remembered until then so that it is admitted only once.
         */
        private Duration maxClockSkew = Duration.ofSeconds(30);

        /**
         * Tokens remembered so that none is admitted twice (about 100 bytes each); while that many admitted
         * tokens are still within the clock skew, further requests are rejected as 'rate-limited'.
         */
        private int replayCapacity = 65536;

        public List<AdmissionKey> getKeys() {
            return this.keys;
        }

        public void setKeys(List<AdmissionKey> keys) {
            this.keys = keys;
        }

        public Duration getMaxClockSkew() {
            return this.maxClockSkew;
        }

        public void setMaxClockSkew(Duration maxClockSkew) {
            this.maxClockSkew = maxClockSkew;
        }

        public int getReplayCapacity() {
            return this.replayCapacity;
        }

        public void setReplayCapacity(int replayCapacity) {
            this.replayCapacity = replayCapacity;
        }
    }

    /**
     * A key of the admission token. Its {@code toString()} hides the secret.
     *
     * @param id Id of the key, which the tokens made with it carry: 0 to 255.
     * @param secret Secret shared with the clients that use the key: at least 32 bytes of UTF-8, such as the
     *     output of 'openssl rand -base64 48'.
     */
    public record AdmissionKey(@Nullable Integer id, @Nullable String secret) {

        @Override
        public String toString() {
            return "AdmissionKey[id=" + this.id + ", secret=******]";
        }
    }

    /**
     * The event loops that serve the sessions of every endpoint.
     */
    public static class EventLoops {

        /**
         * How many event loops the server runs; 0 sizes them for the machine (one per two CPUs, at least one).
         */
        private int count = 0;

        /**
         * How long a loop keeps polling its sessions' completion queues after work before it sleeps: lower
         * latency, for a CPU kept busy meanwhile. 0 sleeps as soon as the queues are empty.
         */
        private Duration busyPoll = Duration.ofNanos(50_000);

        public int getCount() {
            return this.count;
        }

        public void setCount(int count) {
            this.count = count;
        }

        public Duration getBusyPoll() {
            return this.busyPoll;
        }

        public void setBusyPoll(Duration busyPoll) {
            this.busyPoll = busyPoll;
        }
    }

    /**
     * Memory exposed to clients, registered when the server starts and deregistered when it stops.
     */
    public static class Region {

        /**
         * Size of the region, from 1 byte to 2GB; required. The application fills it through the RpmaRegions
         * bean.
         */
        private @Nullable DataSize size;

        /**
         * Where the region's memory lives: 'volatile' (process memory, lost at exit), 'file' (the file at
         * 'path' mapped shared: survives the process, durable once the server makes a range durable) or 'dax'
         * (persistent memory: the file at 'path' on a DAX file system, mapped with MAP_SYNC, which fails on any
         * other file; or the device DAX at 'path', such as /dev/dax0.0, mapped through libpmem).
         */
        private RpmaBackingStore.Kind store = RpmaBackingStore.Kind.VOLATILE;

        /**
         * File behind a 'file' or 'dax' region, or the device DAX behind a 'dax' region; required for them. Its
         * content is what the region holds at start: it survives restarts.
         */
        private @Nullable Path path;

        /**
         * Whether a missing file is created (with zeros); if not, a missing file fails the start. A device is
         * never created.
         */
        private boolean createIfMissing = true;

        /**
         * Whether the peer configuration sent with the region declares direct write to PMem, so that
         * clients may flush with RPMA_FLUSH_TYPE_PERSISTENT; only for a 'dax' region.
         */
        private boolean directWriteToPmem = false;

        /**
         * What clients may do with the region: any of read-src, write-dst, flush-type-visibility,
         * flush-type-persistent.
         */
        private List<MemoryUsage> usage = new ArrayList<>(List.of(MemoryUsage.READ_SRC));

        /**
         * Names of the endpoints whose connections may reach the region ('default' for rpma.server's own);
         * empty: all.
         */
        private List<String> endpoints = new ArrayList<>();

        public @Nullable DataSize getSize() {
            return this.size;
        }

        public void setSize(@Nullable DataSize size) {
            this.size = size;
        }

        public RpmaBackingStore.Kind getStore() {
            return this.store;
        }

        public void setStore(RpmaBackingStore.Kind store) {
            this.store = store;
        }

        public @Nullable Path getPath() {
            return this.path;
        }

        public void setPath(@Nullable Path path) {
            this.path = path;
        }

        public boolean isCreateIfMissing() {
            return this.createIfMissing;
        }

        public void setCreateIfMissing(boolean createIfMissing) {
            this.createIfMissing = createIfMissing;
        }

        public boolean isDirectWriteToPmem() {
            return this.directWriteToPmem;
        }

        public void setDirectWriteToPmem(boolean directWriteToPmem) {
            this.directWriteToPmem = directWriteToPmem;
        }

        public List<MemoryUsage> getUsage() {
            return this.usage;
        }

        public void setUsage(List<MemoryUsage> usage) {
            this.usage = usage;
        }

        public List<String> getEndpoints() {
            return this.endpoints;
        }

        public void setEndpoints(List<String> endpoints) {
            this.endpoints = endpoints;
        }
    }

    /**
     * What the server does after the RDMA device of an endpoint was lost ('rdma link delete', the driver
     * unloaded): it always releases all it had on the device, so that the removal can finish, and reports the
     * endpoint DOWN.
     */
    public static class DeviceRecovery {

        /**
         * Whether the endpoints of a lost device listen again once the device is back; else they stay FAILED
         * until the application restarts.
         */
        private boolean enabled = true;

        /** Longest pause between two looks for a lost device (the first comes after 250 ms, then they double). */
        private Duration maxInterval = Duration.ofSeconds(5);

        public boolean isEnabled() {
            return this.enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public Duration getMaxInterval() {
            return this.maxInterval;
        }

        public void setMaxInterval(Duration maxInterval) {
            this.maxInterval = maxInterval;
        }
    }

    /**
     * Graceful shutdown.
     */
    public static class Shutdown {

        /**
         * How long stopping waits for the sessions to end by themselves before disconnecting them; negative
         * waits forever, zero does not wait. Keep it below 'spring.lifecycle.timeout-per-shutdown-phase'.
         */
        private Duration gracePeriod = Duration.ofSeconds(20);

        /**
         * How long stopping waits, once the grace period is over, for what still runs (connection handlers,
         * sessions being disconnected, event loops) before it leaves it to the process's exit, logs what it left,
         * and ends. With the grace period, keep it below 'spring.lifecycle.timeout-per-shutdown-phase'.
         */
        private Duration timeout = Duration.ofSeconds(10);

        public Duration getGracePeriod() {
            return this.gracePeriod;
        }

        public void setGracePeriod(Duration gracePeriod) {
            this.gracePeriod = gracePeriod;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }
    }

    /**
     * An endpoint besides the one configured under rpma.server itself. Its groups hold only what the
     * endpoint sets; what they leave null has the value of the same property under rpma.server.
     *
     * @param address IP address to listen on; rpma.server.address when unset.
     * @param port Port to listen on; required, and no other endpoint may listen on the same address and port.
     * @param connection Any property of rpma.server.connection, for this endpoint alone; each one left unset has
     *     its value under rpma.server.
     * @param acceptor Any property of rpma.server.acceptor, for this endpoint alone; each one left unset has its
     *     value under rpma.server, except inline-handler, which is false unless set here.
     * @param messages Any property of rpma.server.messages, for this endpoint alone; each one left unset has its
     *     value under rpma.server.
     * @param limits Any property of rpma.server.limits, for this endpoint alone; each one left unset has its value
     *     under rpma.server.
     * @param admission Any property of rpma.server.admission, for this endpoint alone; each one left unset has its
     *     value under rpma.server.
     * @param peer Name of a peer (RDMA protection domain) of the endpoint's own, shared only with the endpoints on
     *     its address that name the same peer: the keys of the regions its clients get are then useless on the other
     *     endpoints' connections, and theirs on its. Unset: the address's one shared peer. Not inherited.
     */
    public record Endpoint(@Nullable String address, @Nullable Integer port,
            @DefaultValue EndpointConnection connection, @DefaultValue EndpointAcceptor acceptor,
            @DefaultValue EndpointMessages messages, @DefaultValue EndpointLimits limits,
            @DefaultValue EndpointAdmission admission, @Nullable String peer) {

        /** Sets nothing of its own: the default endpoint, whose values are the server groups'. */
        static final Endpoint NOTHING_SET = new Endpoint(null, null,
                new EndpointConnection(null, null, null, null, null, null),
                new EndpointAcceptor(null, null, null, null, null, false, null, null, null),
                new EndpointMessages(null, null, null, null, null, null, null, null),
                new EndpointLimits(null, null, null, null), new EndpointAdmission(null, null, null), null);
    }

    /**
     * A named endpoint's own {@link Connection} values; null where it inherits.
     */
    public record EndpointConnection(@Nullable Integer cqSize, @Nullable Integer rcqSize, @Nullable Integer sqSize,
            @Nullable Integer rqSize, @Nullable Duration timeout, @Nullable Boolean sharedCompletionChannel) {
    }

    /**
     * A named endpoint's own {@link Acceptor} values; null where it inherits, except {@code inlineHandler},
     * which is never inherited.
     */
    public record EndpointAcceptor(@Nullable Integer queueCapacity, @Nullable Integer handlerThreads,
            @Nullable Duration requestDeadline, @Nullable Duration pollInterval, @Nullable Integer maxConsecutiveErrors,
            boolean inlineHandler, @Nullable Boolean handlerBatchScheduling, @Nullable Integer handlerSpinLooks,
            @Nullable Boolean onEventLoop) {
    }

    /**
     * A named endpoint's own {@link Messages} values; null where it inherits.
     */
    public record EndpointMessages(@Nullable RpmaWireMode mode, @Nullable Integer receiveSlots,
            @Nullable Integer sendSlots, @Nullable Integer maxMessageSize, @Nullable RpmaMessageDispatch dispatch,
            @Nullable Integer dispatchThreads, @Nullable Integer sendQueueLimit, @Nullable Integer sharedReceiveSlots) {
    }

    /**
     * A named endpoint's own {@link Limits} values; null where it inherits.
     */
    public record EndpointLimits(@Nullable Integer maxConnections, @Nullable Duration idleTimeout,
            @Nullable Double requestsPerSecond, @Nullable Integer requestBurst) {
    }

    /**
     * A named endpoint's own {@link Admission} values; null where it inherits (an empty list of keys: no token).
     */
    public record EndpointAdmission(@Nullable List<AdmissionKey> keys, @Nullable Duration maxClockSkew,
            @Nullable Integer replayCapacity) {
    }
}
