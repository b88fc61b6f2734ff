package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

import dev.rpma.jna.MemoryUsage;
import dev.rpma.server.RpmaMessageDispatch;
import dev.rpma.server.RpmaWireMode;

/**
 * Configuration of the RDMA server: the default endpoint under {@code rpma.server}, more named
 * endpoints under {@code rpma.server.endpoints.<name>}, the event loops of the data path, and the
 * memory exposed to clients under {@code rpma.server.regions.<name>}.
 *
 * <p>Long because every property group (acceptor, messages, limits, connection, event loops,
 * regions, shutdown) is a nested class here, as Spring Boot's own properties classes do, so that
 * the configuration metadata carries each property with its description and default.
 */
@ConfigurationProperties("rpma.server")
public class RpmaProperties {

    /**
     * Whether to start the RDMA server.
     */
    private boolean enabled = true;

    /**
     * IP address of the RDMA-capable interface to listen on. Loopback and wildcard addresses do not
     * work with RDMA.
     */
    private String address;

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

    private final Shutdown shutdown = new Shutdown();

    private final EventLoops eventLoops = new EventLoops();

    /**
     * More endpoints by name; settings they leave unset are taken from the default endpoint.
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

    public String getAddress() {
        return this.address;
    }

    public void setAddress(String address) {
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

    public Shutdown getShutdown() {
        return this.shutdown;
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
     * Queue sizes and timeouts of each accepted connection. Unset values of a named endpoint come from
     * the default endpoint's; else, for an endpoint with message handlers, the sizes its slots need, and
     * librpma's defaults otherwise.
     */
    public static class Connection {

        /**
         * Completion queue size, at least 1; with message handlers at least receive-slots + send-slots
         * (default: that sum, or librpma's 10).
         */
        private Integer cqSize;

        /**
         * Receive completion queue size; 0 completes receives on the main completion queue, which an endpoint
         * with message handlers needs (librpma's default: 0).
         */
        private Integer rcqSize;

        /**
         * Send queue size; with message handlers at least send-slots (default: send-slots, or librpma's 10).
         */
        private Integer sqSize;

        /**
         * Receive queue size; with message handlers at least receive-slots (default: receive-slots, or
         * librpma's 10).
         */
        private Integer rqSize;

        /**
         * Connection set-up timeout (librpma's default: 1000ms; used by the client side).
         */
        private Duration timeout;

        /**
         * Whether the main and receive completion queues share one completion channel (librpma's default: false).
         */
        private Boolean sharedCompletionChannel;

        public Integer getCqSize() {
            return this.cqSize;
        }

        public void setCqSize(Integer cqSize) {
            this.cqSize = cqSize;
        }

        public Integer getRcqSize() {
            return this.rcqSize;
        }

        public void setRcqSize(Integer rcqSize) {
            this.rcqSize = rcqSize;
        }

        public Integer getSqSize() {
            return this.sqSize;
        }

        public void setSqSize(Integer sqSize) {
            this.sqSize = sqSize;
        }

        public Integer getRqSize() {
            return this.rqSize;
        }

        public void setRqSize(Integer rqSize) {
            this.rqSize = rqSize;
        }

        public Duration getTimeout() {
            return this.timeout;
        }

        public void setTimeout(Duration timeout) {
            this.timeout = timeout;
        }

        public Boolean getSharedCompletionChannel() {
            return this.sharedCompletionChannel;
        }

        public void setSharedCompletionChannel(Boolean sharedCompletionChannel) {
            this.sharedCompletionChannel = sharedCompletionChannel;
        }
    }

    /**
     * How the acceptor hands requests to the handlers. Unset values of a named endpoint come from the
     * default endpoint's, else from the defaults below.
     */
    public static class Acceptor {

        /**
         * Requests waiting for a handler thread, at most 4096; further requests are rejected at once
         * (default: 64).
         */
        private Integer queueCapacity;

        /**
         * Handler threads, i.e. requests handled at once (default: 4).
         */
        private Integer handlerThreads;

        /**
         * Time a handler has to connect or reject a request before it is rejected (default: 5s).
         */
        private Duration requestDeadline;

        /**
         * Longest wait between two looks at the endpoint when no event wakes the acceptor (default: 1s).
         */
        private Duration pollInterval;

        /**
         * Transient errors in a row (provider errors, out of memory) after which the endpoint is given up
         * (default: 10).
         */
        private Integer maxConsecutiveErrors;

        /**
         * Whether the endpoint's handler runs on the acceptor thread instead of a handler thread, which
         * saves two thread hand-offs per connection. Only for handlers that connect or reject at once and
         * never block: a blocked handler stops the endpoint's event loop. Queue capacity and handler threads
         * then do not apply. Not inherited by named endpoints.
         */
        private boolean inlineHandler;

        /**
         * Whether the handler threads run under Linux's SCHED_BATCH scheduling policy: a handler thread woken
         * for a request then never preempts the acceptor thread on its CPU, and keeps its nice value and CPU
         * share (default: true). Where the policy cannot be set (a seccomp profile that forbids
         * sched_setscheduler), the threads keep the default policy and a warning is logged.
         */
        private Boolean handlerBatchScheduling;

        /**
         * How many times an idle handler thread looks for the next request, yielding its CPU between looks,
         * before it parks (default: 256, about 0.1 ms on a current x86 server). A thread still looking when
         * a request comes needs no wake-up from the acceptor; a thread whose looks found nothing looks half
         * as many times the next time, so an idle server spends nothing on them, while one that gets requests
         * faster than the looks last may keep every handler thread looking. 0 parks at once.
         */
        private Integer handlerSpinLooks;

        public Integer getQueueCapacity() {
            return this.queueCapacity;
        }

        public void setQueueCapacity(Integer queueCapacity) {
            this.queueCapacity = queueCapacity;
        }

        public Integer getHandlerThreads() {
            return this.handlerThreads;
        }

        public void setHandlerThreads(Integer handlerThreads) {
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

        public Integer getMaxConsecutiveErrors() {
            return this.maxConsecutiveErrors;
        }

        public void setMaxConsecutiveErrors(Integer maxConsecutiveErrors) {
            this.maxConsecutiveErrors = maxConsecutiveErrors;
        }

        public boolean isInlineHandler() {
            return this.inlineHandler;
        }

        public void setInlineHandler(boolean inlineHandler) {
            this.inlineHandler = inlineHandler;
        }

        public Boolean getHandlerBatchScheduling() {
            return this.handlerBatchScheduling;
        }

        public void setHandlerBatchScheduling(Boolean handlerBatchScheduling) {
            this.handlerBatchScheduling = handlerBatchScheduling;
        }

        public Integer getHandlerSpinLooks() {
            return this.handlerSpinLooks;
        }

        public void setHandlerSpinLooks(Integer handlerSpinLooks) {
            this.handlerSpinLooks = handlerSpinLooks;
        }
    }

    /**
     * The messages of an endpoint's sessions, when it has @RpmaMessageHandler methods. Unset values of a
     * named endpoint come from the default endpoint's, else from the defaults below.
     */
    public static class Messages {

        /**
         * How messages travel: 'raw' (one message per receive, as clients written against librpma alone send
         * them; one message handler) or 'framed' (the starter's framing: routes, correlated replies, credits)
         * (default: framed).
         */
        private RpmaWireMode mode;

        /**
         * Receives posted per session: the most messages a client may have in flight towards the server
         * (default: 8).
         */
        private Integer receiveSlots;

        /**
         * Messages a session has in flight towards its client, at most 64; more wait in its send queue
         * (default: 8).
         */
        private Integer sendSlots;

        /**
         * Largest message (its payload, in framed mode); a larger one ends its session (default: 4096).
         */
        private Integer maxMessageSize;

        /**
         * Where message handlers run: 'loop' (on the session's event loop; they must not block) or 'pool' (on
         * the endpoint's message threads, for handlers that block) (default: loop).
         */
        private RpmaMessageDispatch dispatch;

        /**
         * Message threads of the endpoint when dispatch is 'pool' (default: 4).
         */
        private Integer dispatchThreads;

        /**
         * Messages a session may have waiting for a send slot or credits; one more ends the session as too
         * slow a client (default: 1024).
         */
        private Integer sendQueueLimit;

        /**
         * Slots of a shared receive queue per event loop, through which all the endpoint's sessions on that
         * loop receive, in raw mode only; 0 gives each session receive-slots receives of its own. A shared
         * queue serves many concurrent clients with less memory and CPU, one client with a longer round trip
         * (see docs/performance.md); receive-slots then bounds the messages of one session waiting for the
         * message pool (default: 0).
         */
        private Integer sharedReceiveSlots;

        public RpmaWireMode getMode() {
            return this.mode;
        }

        public void setMode(RpmaWireMode mode) {
            this.mode = mode;
        }

        public Integer getReceiveSlots() {
            return this.receiveSlots;
        }

        public void setReceiveSlots(Integer receiveSlots) {
            this.receiveSlots = receiveSlots;
        }

        public Integer getSendSlots() {
            return this.sendSlots;
        }

        public void setSendSlots(Integer sendSlots) {
            this.sendSlots = sendSlots;
        }

        public Integer getMaxMessageSize() {
            return this.maxMessageSize;
        }

        public void setMaxMessageSize(Integer maxMessageSize) {
            this.maxMessageSize = maxMessageSize;
        }

        public RpmaMessageDispatch getDispatch() {
            return this.dispatch;
        }

        public void setDispatch(RpmaMessageDispatch dispatch) {
            this.dispatch = dispatch;
        }

        public Integer getDispatchThreads() {
            return this.dispatchThreads;
        }

        public void setDispatchThreads(Integer dispatchThreads) {
            this.dispatchThreads = dispatchThreads;
        }

        public Integer getSendQueueLimit() {
            return this.sendQueueLimit;
        }

        public void setSendQueueLimit(Integer sendQueueLimit) {
            this.sendQueueLimit = sendQueueLimit;
        }

        public Integer getSharedReceiveSlots() {
            return this.sharedReceiveSlots;
        }

        public void setSharedReceiveSlots(Integer sharedReceiveSlots) {
            this.sharedReceiveSlots = sharedReceiveSlots;
        }
    }

    /**
     * What one endpoint takes at most. Unset values of a named endpoint come from the default endpoint's,
     * else from the defaults below.
     */
    public static class Limits {

        /**
         * Connections at once, counting requests being decided; past it requests are rejected as 'capacity'
         * (default: 1024).
         */
        private Integer maxConnections;

        /**
         * Time without a message after which a session is disconnected; 0 never (default: 0). Clients
         * that only read or write the exposed memory send no messages.
         */
        private Duration idleTimeout;

        public Integer getMaxConnections() {
            return this.maxConnections;
        }

        public void setMaxConnections(Integer maxConnections) {
            this.maxConnections = maxConnections;
        }

        public Duration getIdleTimeout() {
            return this.idleTimeout;
        }

        public void setIdleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
        }
    }

    /** The event loops that serve every endpoint's sessions. */
    public static class EventLoops {

        /**
         * How many; 0 sizes them for the machine (one per two CPUs, at least one).
         */
        private int count = 0;

        /**
         * How long a loop keeps polling its sessions' completion queues after work before it sleeps; lower
         * latency for a CPU kept busy meanwhile. 0 sleeps at once.
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

    /** Memory exposed to clients. */
    public static class Region {

        /**
         * Size of the region; the application fills it through the RpmaRegions bean.
         */
        private DataSize size;

        /**
         * What clients may do with it: read-src, write-dst, flush-type-visibility, flush-type-persistent.
         */
        private List<MemoryUsage> usage = new ArrayList<>(List.of(MemoryUsage.READ_SRC));

        /**
         * The endpoints whose connections may reach it; empty: all.
         */
        private List<String> endpoints = new ArrayList<>();

        public DataSize getSize() {
            return this.size;
        }

        public void setSize(DataSize size) {
            this.size = size;
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

    /** Graceful shutdown. */
    public static class Shutdown {

        /**
         * How long stopping waits for the sessions to end by themselves before disconnecting them; negative
         * waits forever, zero does not wait. Keep it below 'spring.lifecycle.timeout-per-shutdown-phase'.
         */
        private Duration gracePeriod = Duration.ofSeconds(20);

        public Duration getGracePeriod() {
            return this.gracePeriod;
        }

        public void setGracePeriod(Duration gracePeriod) {
            this.gracePeriod = gracePeriod;
        }
    }

    /** A named endpoint. */
    public static class Endpoint {

        /**
         * IP address to listen on; the default endpoint's when unset.
         */
        private String address;

        /**
         * Port to listen on.
         */
        private Integer port;

        private final Connection connection = new Connection();

        private final Acceptor acceptor = new Acceptor();

        private final Messages messages = new Messages();

        private final Limits limits = new Limits();

        public String getAddress() {
            return this.address;
        }

        public void setAddress(String address) {
            this.address = address;
        }

        public Integer getPort() {
            return this.port;
        }

        public void setPort(Integer port) {
            this.port = port;
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
    }
}
