package dev.rpma.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the RDMA server: the default endpoint under {@code rpma.server}, more named
 * endpoints under {@code rpma.server.endpoints.<name>}.
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

    private final Shutdown shutdown = new Shutdown();

    /**
     * More endpoints by name; settings they leave unset are taken from the default endpoint.
     */
    private final Map<String, Endpoint> endpoints = new LinkedHashMap<>();

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

    public Shutdown getShutdown() {
        return this.shutdown;
    }

    public Map<String, Endpoint> getEndpoints() {
        return this.endpoints;
    }

    /**
     * Queue sizes and timeouts of each accepted connection. Unset values of a named endpoint come from
     * the default endpoint's, else librpma's defaults apply.
     */
    public static class Connection {

        /**
         * Completion queue size, at least 1 (librpma's default: 10).
         */
        private Integer cqSize;

        /**
         * Receive completion queue size; 0 completes receives on the main completion queue (librpma's default: 0).
         */
        private Integer rcqSize;

        /**
         * Send queue size (librpma's default: 10).
         */
        private Integer sqSize;

        /**
         * Receive queue size (librpma's default: 10).
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

    /** Graceful shutdown. */
    public static class Shutdown {

        /**
         * How long stopping waits for handlers and open connections before disconnecting them; negative waits
         * forever, zero does not wait. Keep it below 'spring.lifecycle.timeout-per-shutdown-phase'.
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
    }
}
