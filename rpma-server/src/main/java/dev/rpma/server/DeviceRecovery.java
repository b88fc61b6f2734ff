package dev.rpma.server;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a server does, on a thread of its own, when the RDMA device of one of its peers is gone
 * ({@code rdma link delete}, a driver unloaded): the kernel finishes removing a device only once every
 * process released all it opened on it, so until then the removal, and whoever asked for it, waits.
 *
 * <p>First the release: every endpoint of the peer is given up ({@link RpmaServedEndpoint#abandon}:
 * accepting stops, sessions end as lost and are deleted, queues, slots and configurations released),
 * then the regions registered on the peer and the peer itself, and librdmacm is made to forget the
 * device. Each wait is bounded by the shutdown timeout; what is then still open stays, with a log line
 * that says what, and the device's removal waits for the process's exit.
 *
 * <p>Then, with device recovery on, the recovery: it looks for the device at growing intervals (from
 * {@value #FIRST_LOOK_MILLIS} ms up to the configured maximum) and, once the address has a device again,
 * listens anew on every endpoint of the peer, with new registrations of the regions (clients must ask
 * for their descriptors again) and the endpoints' counters carried over. Health reports the endpoints
 * DOWN with {@link RpmaDeviceLostException} meanwhile. A stop of the server ends it.
 */
final class DeviceRecovery implements Runnable {

    private static final Logger logger = LoggerFactory.getLogger(DeviceRecovery.class);

    static final long FIRST_LOOK_MILLIS = 250;

    private final RpmaServer server;

    private final String peerKey;

    private final String address;

    private final RpmaDeviceLostException loss;

    DeviceRecovery(RpmaServer server, String peerKey, RpmaDeviceLostException loss) {
        this.server = server;
        this.peerKey = peerKey;
        this.address = loss.address();
        this.loss = loss;
    }

    @Override
    public void run() {
        try {
            List<RpmaServedEndpoint> lost = this.server.endpointsOn(this.peerKey);
            if (release(lost) && !this.server.isStopping()) {
                recover(lost);
            }
        }
        catch (InterruptedException ex) {
            // the server stops, and releases what is left itself
            Thread.currentThread().interrupt();
        }
        finally {
            this.server.recoveryEnded(this.peerKey);
        }
    }

    private boolean release(List<RpmaServedEndpoint> lost) throws InterruptedException {
        long deadline = System.nanoTime() + this.server.settings().shutdownTimeout().toNanos();
        boolean released = true;
        for (RpmaServedEndpoint endpoint : lost) {
            released &= endpoint.abandon(this.loss, deadline);
        }
        if (!released) {
            logger.error("RDMA device of {}: not all that the server opened on it could be released (see above); its"
                    + " peer stays open, so the device's removal waits until the process exits", this.address);
            return false;
        }
        try {
            this.server.releaseLostPeer(this.peerKey);
        }
        catch (RuntimeException ex) {
            logger.error("RDMA device of {}: deleting its peer failed; the device's removal waits until the process"
                    + " exits: {}", this.address, ex.getMessage());
            return false;
        }
        Duration most = this.server.settings().deviceRecovery();
        logger.warn("RDMA device of {} is gone: endpoint(s) {} stopped, their sessions were lost, and all the server had"
                + " on the device is released{}", this.address, lost.stream().map(RpmaServedEndpoint::name).toList(),
                most.isZero() ? "; device recovery is off: restart the application once the device is back"
                        : "; listening again once it is back (looking at most every " + most + ")");
        return true;
    }

    private void recover(List<RpmaServedEndpoint> lost) throws InterruptedException {
        long most = this.server.settings().deviceRecovery().toMillis();
        if (most <= 0) {
            return;
        }
        long pause = Math.min(FIRST_LOOK_MILLIS, most);
        while (!this.server.isStopping()) {
            TimeUnit.MILLISECONDS.sleep(pause);
            pause = Math.min(most, pause * 2);
            // a device that returns is new to librdmacm only once it read its list again
            this.server.rpma().forgetRemovedDevices();
            try {
                if (this.server.relisten(this.peerKey, this.address, lost)) {
                    logger.info("RDMA device of {} is back: endpoint(s) {} listen again", this.address,
                            lost.stream().map(RpmaServedEndpoint::name).toList());
                    return;
                }
            }
            catch (RuntimeException ex) {
                logger.warn("RDMA device of {} is back, but listening again failed (tried again in {} ms): {}",
                        this.address, pause, ex.getMessage());
            }
        }
    }
}
