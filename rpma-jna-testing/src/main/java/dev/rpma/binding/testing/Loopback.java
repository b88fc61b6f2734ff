package dev.rpma.binding.testing;

import java.util.ArrayDeque;
import java.util.List;

import com.sun.jna.Pointer;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaConnectionEvent;

/**
 * How a {@link FakeLibRpma#loopback() loopback} fake connects its clients to its endpoints and moves
 * their bytes. Every method runs under the fake's lock, inside the librpma call that caused it.
 *
 * <h2>Connecting</h2>
 * Every address is this JVM: a client's request for {@code (address, port)} reaches the endpoint
 * listening on {@code port}, whatever addresses the two name; a second endpoint on a port in use fails
 * its {@code rpma_ep_listen} with {@code RPMA_E_PROVIDER} and {@code EADDRINUSE}.
 * {@code rpma_conn_req_connect} on the client queues a request carrying the client's private data on
 * that endpoint and returns the client's connection, with no event yet. When the server accepts, both
 * sides get {@code ESTABLISHED} and the client's {@code rpma_conn_get_private_data} gives the server's
 * accept data; when it rejects ({@code rpma_conn_req_delete}), its accept fails, or its endpoint shuts
 * down with the request still queued, the client gets {@code REJECTED}. No endpoint on the port:
 * {@code REJECTED}, as RDMA CM reports a port nobody listens on. A client that deleted or disconnected
 * its connection before the accept makes the server's connection {@code LOST}.
 *
 * <h2>Messages</h2>
 * A send waits in its sender's send queue until the other side has a receive posted (on its queue pair,
 * or on its shared receive queue), then its bytes are copied into that receive and both sides complete:
 * {@code IBV_WC_SEND} on the sender (when signaled), {@code IBV_WC_RECV} with the length, the immediate
 * data and the sender's queue pair number on the receiver. Receiver not ready: the send waits for ever,
 * as librpma's {@code rnr_retry_count} of 7 makes a device retry for ever; nothing is dropped. Messages
 * from one connection arrive in the order they were sent. A message longer than the receive ends the
 * receive with {@code IBV_WC_LOC_LEN_ERR} and the send with {@code IBV_WC_REM_INV_REQ_ERR}.
 *
 * <h2>One-sided operations</h2>
 * {@code rpma_read}, {@code rpma_write} and {@code rpma_atomic_write} copy at once between the local
 * region and the remote region the descriptor names, which must be registered on the other side's peer
 * (protection domain), still registered, with the usage the operation needs, and large enough; otherwise
 * the operation completes with {@code IBV_WC_REM_ACCESS_ERR}. {@code rpma_flush} checks the same and
 * completes as a read (librpma flushes with one). An atomic write stores its 8 bytes at once. A local
 * region registered on another peer than the connection's (another protection domain), without the usage
 * the operation needs, or a local range outside it completes with {@code IBV_WC_LOC_PROT_ERR}.
 *
 * <h2>Failures</h2>
 * A queue pair in the error state takes the other side's with it (a device's peer would time out on
 * its next operation; here it is at once): their posted receives and waiting sends complete with
 * {@code IBV_WC_WR_FLUSH_ERR}. A disconnect or a delete gives the other side {@code CLOSED}. A removed
 * device ({@link FakeLibRpma#removeDevice}) gives both sides of its connections {@code LOST}, rejects the
 * clients whose requests its endpoints had not handed out, and leaves their ports without an endpoint.
 *
 * <h2>Unlike hardware</h2>
 * Completions are queued inside the call that causes them, so they come sooner than on a device and
 * never out of order between the two sides of one connection; connections do not interleave by timing;
 * there are no retries, timeouts or packet losses unless injected; atomicity holds because every call
 * runs under one lock.
 */
final class Loopback {

    /** Dial fault: the next request to the port is rejected before any endpoint sees it. */
    static final int REJECT = 1;

    /** Dial fault: the next request to the port ends in {@code UNREACHABLE}. */
    static final int UNREACHABLE = 2;

    private static final int IBV_WC_LOC_PROT_ERR = 4;

    private static final int IBV_WC_REM_ACCESS_ERR = 10;

    private static final int IBV_WC_RDMA_WRITE = 1;

    private static final int IBV_WC_RDMA_READ = 2;

    private static final int COMPLETION_ALWAYS = 3;

    private static final int READ_SRC = 1;

    private static final int READ_DST = 2;

    private static final int WRITE_SRC = 4;

    private static final int WRITE_DST = 8;

    private static final int FLUSH_PERSISTENT = 32;

    private static final int FLUSH_VISIBILITY = 16;

    private Loopback() {
    }

    /** The endpoint listening on {@code port} on a device still there, or {@code null}. */
    static FakeEndpoint listeningOn(FakeLibRpma fake, int port) {
        for (FakeEndpoint endpoint : fake.listeningEndpoints()) {
            if (endpoint.port() == port && endpoint.isListening() && !endpoint.deviceRemoved) {
                return endpoint;
            }
        }
        return null;
    }

    /** A client's connect: its request reaches the endpoint on the port, or the client is told why not. */
    static void dial(FakeLibRpma fake, FakeRequest request, FakeConnection client, byte[] privateData) {
        int port = Integer.parseInt(request.port());
        ArrayDeque<Integer> faults = fake.dialFaults.get(port);
        Integer fault = (faults != null) ? faults.poll() : null;
        if (fault != null && fault == UNREACHABLE) {
            client.events.add(RpmaConnectionEvent.UNREACHABLE.code());
            return;
        }
        FakeEndpoint endpoint = listeningOn(fake, port);
        if (endpoint == null || fault != null) {
            client.events.add(RpmaConnectionEvent.REJECTED.code());
            return;
        }
        FakeRequest toServer = endpoint.queueRequest((privateData != null) ? privateData : new byte[0]);
        toServer.dialer = client;
        client.dialed = toServer;
    }

    /** The server accepted {@code request}: the two connections are linked and both established. */
    static void accepted(FakeRequest request, FakeConnection server, byte[] acceptData) {
        FakeConnection client = request.dialer;
        request.dialer = null;
        client.dialed = null;
        if (client.deletedOn != null || client.broken) {
            server.events.removeLastOccurrence(RpmaConnectionEvent.ESTABLISHED.code());
            server.events.add(RpmaConnectionEvent.LOST.code());
            server.signal();
            return;
        }
        server.peer = client;
        client.peer = server;
        client.privateData = (acceptData != null) ? acceptData.clone() : new byte[0];
        client.privateDataMemory = null;
        client.events.add(RpmaConnectionEvent.ESTABLISHED.code());
        client.signal();
        client.pump();
        server.pump();
    }

    /** The server rejected {@code request} (delete, failed accept): its client gets {@code REJECTED}. */
    static void refused(FakeRequest request) {
        FakeConnection client = request.dialer;
        if (client == null) {
            return;
        }
        request.dialer = null;
        client.dialed = null;
        if (client.deletedOn == null) {
            client.events.add(RpmaConnectionEvent.REJECTED.code());
            client.signal();
        }
    }

    /** The endpoint shut down: the clients of the requests it never handed out are rejected. */
    static void shutDown(FakeEndpoint endpoint) {
        for (Object queued : endpoint.script) {
            if (queued instanceof FakeRequest request) {
                refused(request);
            }
        }
    }

    /** {@code connection} disconnected or was deleted: the other side gets {@code CLOSED} once. */
    static void gone(FakeConnection connection) {
        connection.peerGone = true;
        FakeConnection peer = connection.peer;
        if (peer == null || peer.peerGone || peer.deletedOn != null) {
            return;
        }
        peer.peerGone = true;
        peer.events.add(RpmaConnectionEvent.CLOSED.code());
        peer.signal();
    }

    /**
     * {@code connection} is deleted: its queue pair is gone without flushing into its freed queues, the
     * other side gets {@code CLOSED} (unless told already) and its queue pair fails. A server that accepts
     * the request of a client deleted meanwhile finds it gone ({@link #accepted}).
     */
    static void deleted(FakeConnection connection) {
        connection.broken = true;
        gone(connection);
        if (connection.peer != null) {
            connection.peer.breakQueuePair();
        }
    }

    /**
     * The device of {@code connections} was removed: each gets {@code LOST} on its own event channel (how
     * librpma reports {@code RDMA_CM_EVENT_DEVICE_REMOVAL} on a connection, whatever came before), so does
     * the other side of each in a loopback, unless told already; every queue pair fails.
     */
    static void deviceRemoved(List<FakeConnection> connections) {
        for (FakeConnection connection : connections) {
            connection.peerGone = true;
            connection.events.add(RpmaConnectionEvent.LOST.code());
            connection.signal();
        }
        for (FakeConnection connection : connections) {
            FakeConnection peer = connection.peer;
            if (peer != null && !connections.contains(peer) && peer.deletedOn == null && !peer.peerGone) {
                peer.peerGone = true;
                peer.events.add(RpmaConnectionEvent.LOST.code());
                peer.signal();
            }
            connection.breakQueuePair();
        }
    }

    /** The connection is lost on both sides: {@code LOST} on each, both queue pairs fail. */
    static void lose(FakeConnection connection) {
        for (FakeConnection side : new FakeConnection[] { connection, connection.peer }) {
            if (side != null && side.deletedOn == null && !side.peerGone) {
                side.peerGone = true;
                side.events.add(RpmaConnectionEvent.LOST.code());
                side.signal();
            }
        }
        connection.breakQueuePair();
    }

    /** A receive was posted on {@code srq}: the sends waiting for the connections that receive through it go. */
    static void receivePostedOn(FakeLibRpma fake, FakeSharedReceiveQueue srq) {
        for (FakeConnection connection : fake.allConnections()) {
            if (srq.receives.isEmpty()) {
                return;
            }
            if (connection.srq == srq && connection.peer != null && connection.deletedOn == null) {
                connection.peer.pump();
            }
        }
    }

    /**
     * An injected failure ({@link FakeConnection#failNextCompletion}) takes the work request posted now:
     * it completes with that status and the queue pair fails.
     */
    static boolean failInjected(FakeConnection connection, long context) {
        int status = connection.failNextStatus;
        if (status == 0) {
            return false;
        }
        connection.failNextStatus = 0;
        connection.sendSlotsInUse++;
        connection.failWorkRequest(context, status);
        return true;
    }

    /**
     * A read, write, atomic write or flush: done at once against the other side's memory.
     *
     * @param local the local region's handle ({@code null} for atomic write and flush)
     * @param value the 8 bytes of an atomic write, else {@code null}
     * @return 0, or the errno with which {@code ibv_post_send} refuses it ({@code ENOMEM}: send queue
     *     full; {@code EINVAL}: not connected)
     */
    static int oneSided(FakeLibRpma fake, FakeConnection connection, String function, FakeLibRpma.Handle local,
            long localOffset, FakeLibRpma.MrRemote remote, long remoteOffset, long length, int flags, long context,
            byte[] value) {
        if (connection.sendSlotsInUse >= connection.config.sq) {
            return Errno.ENOMEM;
        }
        if (connection.peer == null && !connection.broken) {
            return Errno.EINVAL;
        }
        if (failInjected(connection, context)) {
            return 0;
        }
        connection.sendSlotsInUse++;
        if (connection.broken) {
            connection.sendCompletion(connection.flushed(context), true);
            return 0;
        }
        boolean read = function.equals("rpma_read") || function.equals("rpma_flush");
        int status = check(fake, connection, function, local, localOffset, remote, remoteOffset, length);
        if (status != 0) {
            connection.failWorkRequest(context, status);
            return 0;
        }
        long target = remote.address() + remoteOffset;
        switch (function) {
            case "rpma_read" -> copy(target, region(local).ptr() + localOffset, length);
            case "rpma_write" -> copy(region(local).ptr() + localOffset, target, length);
            case "rpma_atomic_write" -> new Pointer(target).write(0, value, 0, 8);
            default -> {
                // a flush moves nothing here: the bytes are where the writes put them
            }
        }
        connection.sendCompletion(new FakeCompletionQueue.Completion(context, 0, read ? IBV_WC_RDMA_READ : IBV_WC_RDMA_WRITE,
                0, read ? (int) Math.min(length, Integer.MAX_VALUE) : 0, 0, connection.qpNumber, 0, 0),
                (flags & COMPLETION_ALWAYS) == COMPLETION_ALWAYS);
        return 0;
    }

    /** 0 when the device would do it, else the completion status it would end with. */
    private static int check(FakeLibRpma fake, FakeConnection connection, String function, FakeLibRpma.Handle local,
            long localOffset, FakeLibRpma.MrRemote remote, long remoteOffset, long length) {
        int localNeeds = function.equals("rpma_read") ? READ_DST : WRITE_SRC;
        // an lkey of another protection domain (a region of another peer) is a local protection error on a device
        if (local != null && !allows(fake, local, connection, localNeeds, region(local).ptr(), localOffset, length)) {
            return IBV_WC_LOC_PROT_ERR;
        }
        FakeConnection peer = connection.peer;
        int remoteNeeds = switch (function) {
            case "rpma_read" -> READ_SRC;
            case "rpma_flush" -> FLUSH_PERSISTENT | FLUSH_VISIBILITY;
            default -> WRITE_DST;
        };
        FakeLibRpma.Handle region = fake.regionByKey(remote.rkey());
        if (region == null || peer == null
                || !allows(fake, region, peer, remoteNeeds, remote.address(), remoteOffset, length)) {
            return IBV_WC_REM_ACCESS_ERR;
        }
        return 0;
    }

    /**
     * Whether {@code region} (registered at {@code start}) may serve {@code connection}'s operation:
     * registered on its peer (protection domain), with one of the {@code needs} usages, and holding the
     * range.
     */
    private static boolean allows(FakeLibRpma fake, FakeLibRpma.Handle region, FakeConnection connection, int needs,
            long start, long offset, long length) {
        FakeLibRpma.Mr mr = region(region);
        return region.parent != null && region.parent.address() == fake.peerOf(connection) && mr.ptr() == start
                && (mr.usage() & needs) != 0 && offset >= 0 && offset + length <= mr.size();
    }

    private static FakeLibRpma.Mr region(FakeLibRpma.Handle handle) {
        return (FakeLibRpma.Mr) handle.state;
    }

    private static void copy(long from, long to, long length) {
        if (length > 0) {
            byte[] bytes = new Pointer(from).getByteArray(0, (int) length);
            new Pointer(to).write(0, bytes, 0, bytes.length);
        }
    }
}
