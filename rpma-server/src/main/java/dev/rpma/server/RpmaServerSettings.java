package dev.rpma.server;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import dev.rpma.server.loop.RpmaEventLoopGroup;

/**
 * Everything a server needs besides its handlers.
 *
 * @param eventLoops the event loops of the data path, shared by every endpoint's sessions
 * @param busyPoll how long a loop keeps polling its sessions' completion queues after work before it
 *     sleeps; zero sleeps as soon as the queues are empty
 * @param gracePeriod how long a stop waits for the sessions to end by themselves before it ends them;
 *     negative waits forever, zero not at all
 * @param shutdownTimeout how long a stop waits, once the grace period is over, for what still runs
 *     (connection handler threads, sessions being disconnected, the acceptors and event loops) before
 *     it leaves it to the process's exit, logs what it left, and ends; positive
 * @param endpoints the endpoints, the default one first
 * @param regions the memory exposed to clients
 * @param deviceRecovery after the RDMA device of an endpoint was lost (and all the server had on it
 *     released), the longest pause between two looks for it, after which the endpoint listens again;
 *     zero: no recovery, the endpoint stays FAILED
 */
public record RpmaServerSettings(int eventLoops, Duration busyPoll, Duration gracePeriod, Duration shutdownTimeout,
        List<RpmaEndpointSettings> endpoints, List<RpmaRegionDefinition> regions, Duration deviceRecovery) {

    /** How long at most between two looks for a lost device, unless told otherwise. */
    public static final Duration DEFAULT_DEVICE_RECOVERY = Duration.ofSeconds(5);

    /** How long a loop busy-polls after work unless told otherwise. */
    public static final Duration DEFAULT_BUSY_POLL = Duration.ofNanos(50_000);

    public static final Duration DEFAULT_GRACE_PERIOD = Duration.ofSeconds(20);

    /**
     * With the default grace period, a stop ends within Spring's default timeout per shutdown phase
     * (30 s) even when something never returns.
     */
    public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(10);

    public RpmaServerSettings {
        Objects.requireNonNull(busyPoll, "busyPoll");
        Objects.requireNonNull(gracePeriod, "gracePeriod");
        Objects.requireNonNull(shutdownTimeout, "shutdownTimeout");
        Objects.requireNonNull(deviceRecovery, "deviceRecovery");
        if (deviceRecovery.isNegative()) {
            throw new IllegalArgumentException("deviceRecovery must not be negative, not " + deviceRecovery);
        }
        if (eventLoops < 1) {
            throw new IllegalArgumentException("eventLoops must be at least 1, not " + eventLoops);
        }
        if (busyPoll.isNegative()) {
            throw new IllegalArgumentException("busyPoll must not be negative, not " + busyPoll);
        }
        if (shutdownTimeout.isNegative() || shutdownTimeout.isZero()) {
            throw new IllegalArgumentException("shutdownTimeout must be positive, not " + shutdownTimeout);
        }
        endpoints = List.copyOf(endpoints);
        regions = List.copyOf(regions);
    }

    /** Settings with the default device recovery. */
    public RpmaServerSettings(int eventLoops, Duration busyPoll, Duration gracePeriod, Duration shutdownTimeout,
            List<RpmaEndpointSettings> endpoints, List<RpmaRegionDefinition> regions) {
        this(eventLoops, busyPoll, gracePeriod, shutdownTimeout, endpoints, regions, DEFAULT_DEVICE_RECOVERY);
    }

    /**
     * The endpoints with loops sized for the machine, the default busy poll, grace period and shutdown
     * timeout, no regions.
     */
    public static RpmaServerSettings of(List<RpmaEndpointSettings> endpoints) {
        return new RpmaServerSettings(RpmaEventLoopGroup.defaultSize(), DEFAULT_BUSY_POLL, DEFAULT_GRACE_PERIOD,
                DEFAULT_SHUTDOWN_TIMEOUT, endpoints, List.of());
    }

    public RpmaServerSettings withGracePeriod(Duration gracePeriod) {
        return new RpmaServerSettings(this.eventLoops, this.busyPoll, gracePeriod, this.shutdownTimeout,
                this.endpoints, this.regions, this.deviceRecovery);
    }

    public RpmaServerSettings withShutdownTimeout(Duration shutdownTimeout) {
        return new RpmaServerSettings(this.eventLoops, this.busyPoll, this.gracePeriod, shutdownTimeout,
                this.endpoints, this.regions, this.deviceRecovery);
    }

    public RpmaServerSettings withEventLoops(int eventLoops, Duration busyPoll) {
        return new RpmaServerSettings(eventLoops, busyPoll, this.gracePeriod, this.shutdownTimeout, this.endpoints,
                this.regions, this.deviceRecovery);
    }

    public RpmaServerSettings withRegions(List<RpmaRegionDefinition> regions) {
        return new RpmaServerSettings(this.eventLoops, this.busyPoll, this.gracePeriod, this.shutdownTimeout,
                this.endpoints, regions, this.deviceRecovery);
    }

    public RpmaServerSettings withDeviceRecovery(Duration deviceRecovery) {
        return new RpmaServerSettings(this.eventLoops, this.busyPoll, this.gracePeriod, this.shutdownTimeout,
                this.endpoints, this.regions, deviceRecovery);
    }
}
