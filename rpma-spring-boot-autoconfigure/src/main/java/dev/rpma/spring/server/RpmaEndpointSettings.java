package dev.rpma.spring.server;

import java.time.Duration;
import java.util.Objects;

/**
 * Everything one listening endpoint needs, independent of how it was configured.
 *
 * @param name the endpoint's name; handlers bind to it
 * @param address IP address of an RDMA-capable interface
 * @param port TCP port of the RDMA CM service
 * @param queueCapacity requests waiting for a handler thread; more are rejected at once
 * @param handlerThreads handler threads (how many requests are handled at once)
 * @param requestDeadline how long a handler may take to connect or reject a request before it is rejected
 * @param pollInterval longest wait between two looks at the endpoint, even without a wake-up
 * @param gracePeriod how long a stop waits for handlers and connections; negative waits forever, zero not at all
 * @param maxConsecutiveErrors transient acceptor errors in a row after which the endpoint is given up
 * @param inlineHandler whether the handler runs on the acceptor thread instead of a handler thread
 *     ({@code queueCapacity} and {@code handlerThreads} then do not apply): for handlers that decide at
 *     once and never block, since a handler that blocks there stops the endpoint's event loop
 * @param batchHandlerThreads whether the handler threads run under Linux's {@code SCHED_BATCH} policy, so
 *     that waking one for a request never preempts the acceptor thread on its CPU
 * @param handlerSpinLooks how many times an idle handler thread looks for the next request, yielding its
 *     CPU in between, before it parks; half as many after looks that found nothing, all of them again
 *     after a look that found one; 0 parks it at once
 */
public record RpmaEndpointSettings(String name, String address, int port, int queueCapacity, int handlerThreads,
        Duration requestDeadline, Duration pollInterval, Duration gracePeriod, int maxConsecutiveErrors,
        boolean inlineHandler, boolean batchHandlerThreads, int handlerSpinLooks) {

    /** The name of the endpoint configured under {@code rpma.server} itself. */
    public static final String DEFAULT_ENDPOINT = "default";

    /**
     * The largest useful queue capacity: an endpoint holds at most this many requests and connections
     * together, and turns further requests away as if its queue were full.
     */
    public static final int MAX_QUEUE_CAPACITY = RpmaAcceptor.MAX_CONNECTIONS;

    /** Looks of an idle handler thread before it parks, unless configured otherwise. */
    public static final int DEFAULT_HANDLER_SPIN_LOOKS = 256;

    public RpmaEndpointSettings {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
        Objects.requireNonNull(requestDeadline, "requestDeadline");
        Objects.requireNonNull(pollInterval, "pollInterval");
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        if (handlerSpinLooks < 0) {
            throw new IllegalArgumentException("handlerSpinLooks must be at least 0, not " + handlerSpinLooks);
        }
    }

    /**
     * Settings with batch-scheduled handler threads that look {@value #DEFAULT_HANDLER_SPIN_LOOKS} times
     * before they park.
     */
    public RpmaEndpointSettings(String name, String address, int port, int queueCapacity, int handlerThreads,
            Duration requestDeadline, Duration pollInterval, Duration gracePeriod, int maxConsecutiveErrors,
            boolean inlineHandler) {
        this(name, address, port, queueCapacity, handlerThreads, requestDeadline, pollInterval, gracePeriod,
                maxConsecutiveErrors, inlineHandler, true, DEFAULT_HANDLER_SPIN_LOOKS);
    }

    /** Settings whose handler runs on batch-scheduled handler threads, with the default looks. */
    public RpmaEndpointSettings(String name, String address, int port, int queueCapacity, int handlerThreads,
            Duration requestDeadline, Duration pollInterval, Duration gracePeriod, int maxConsecutiveErrors) {
        this(name, address, port, queueCapacity, handlerThreads, requestDeadline, pollInterval, gracePeriod,
                maxConsecutiveErrors, false, true, DEFAULT_HANDLER_SPIN_LOOKS);
    }
}
