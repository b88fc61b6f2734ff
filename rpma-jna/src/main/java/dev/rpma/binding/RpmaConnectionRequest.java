package dev.rpma.binding;

import java.util.Arrays;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.rpma.binding.internal.NativeMemory;

/**
 * A connection request ({@code struct rpma_conn_req}): on a server, obtained from
 * {@link RpmaEndpoint#nextConnectionRequest}; on a client, from
 * {@link RpmaPeer#newConnectionRequest}. It is consumed exactly once, by {@link #connect} or
 * {@link #reject()}; a second attempt fails with {@link IllegalStateException}.
 *
 * <p>Thread-safety: {@link #connect} and {@link #receive} may be called on any thread (librpma's
 * {@code rpma_conn_req_connect} is thread-safe per request); {@link #reject()}
 * ({@code rpma_conn_req_delete}) is not thread-safe and runs only on the endpoint's owner thread (the
 * creating thread for a client's request).
 */
public final class RpmaConnectionRequest extends NativeHandle implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(RpmaConnectionRequest.class);

    /** librpma's limit: the length is a {@code uint8_t}. */
    public static final int MAX_PRIVATE_DATA = 255;

    /** What a server's accept carries over RoCE/InfiniBand (RDMA_PS_TCP). */
    public static final int MAX_ACCEPT_PRIVATE_DATA = 196;

    /** What a client's connect carries over RoCE/InfiniBand (RDMA_PS_TCP). */
    public static final int MAX_CONNECT_PRIVATE_DATA = 56;

    private final RpmaPeer peer;

    private final @Nullable RpmaEndpoint endpoint;

    /** The creating thread of a client's request; {@code null} for an endpoint's, which its endpoint owns. */
    private final @Nullable Thread owner;

    private final boolean serverSide;

    private final byte[] privateData;

    /**
     * The kernel CM id of a server-side request, which librpma leaves alive when it rejects the
     * request or fails to accept it ({@link dev.rpma.binding.internal.PassiveCmIds}); 0 when unknown.
     */
    private final long cmId;

    private RpmaConnectionRequest(RpmaPeer peer, long pointer, @Nullable RpmaEndpoint endpoint, @Nullable Thread owner,
            boolean serverSide, byte[] privateData, long cmId) {
        super(peer.rpma, pointer);
        this.peer = peer;
        this.endpoint = endpoint;
        this.owner = owner;
        this.serverSide = serverSide;
        this.privateData = privateData;
        this.cmId = cmId;
    }

    static RpmaConnectionRequest obtainedOnEndpoint(RpmaPeer peer, long pointer, RpmaEndpoint endpoint) {
        return obtained(peer, pointer, endpoint, null, true);
    }

    static RpmaConnectionRequest obtained(RpmaPeer peer, long pointer, Thread owner, boolean serverSide) {
        return obtained(peer, pointer, null, owner, serverSide);
    }

    /**
     * Wraps a request librpma just handed out, copying its private data at once (librpma's pointer
     * dies with the request). If that fails, the request is rejected so that nothing leaks.
     */
    private static RpmaConnectionRequest obtained(RpmaPeer peer, long pointer, @Nullable RpmaEndpoint endpoint,
            @Nullable Thread owner, boolean serverSide) {
        Rpma rpma = peer.rpma;
        byte[] privateData;
        long cmId = 0;
        try {
            privateData = serverSide ? readPrivateData(rpma, pointer) : new byte[0];
            if (serverSide) {
                Scratch scratch = Scratch.get();
                cmId = rpma.cmIds().cmIdOf(pointer, peer.pointerWhileOpen(), peer.ibvContext(),
                        scratch.buffer.getLong(Scratch.PDATA_STRUCT),
                        Byte.toUnsignedInt(scratch.buffer.get(Scratch.PDATA_STRUCT + 8)));
            }
        }
        catch (RuntimeException ex) {
            rpma.lib().rpma_conn_req_delete(Scratch.get().pointerSlot(pointer));
            throw ex;
        }
        if (endpoint != null) {
            // requests from an endpoint count as the peer's children from here on
            peer.childAdopted();
        }
        return new RpmaConnectionRequest(peer, pointer, endpoint, owner, serverSide, privateData, cmId);
    }

    private static byte[] readPrivateData(Rpma rpma, long request) {
        Scratch scratch = Scratch.get();
        rpma.check(rpma.lib().rpma_conn_req_get_private_data(request, scratch.at(Scratch.PDATA_STRUCT)),
                "rpma_conn_req_get_private_data");
        return copyPrivateData(scratch);
    }

    /** Copies the {@code struct rpma_conn_private_data} librpma just filled in the scratch memory. */
    static byte[] copyPrivateData(Scratch scratch) {
        long data = scratch.buffer.getLong(Scratch.PDATA_STRUCT);
        int length = Byte.toUnsignedInt(scratch.buffer.get(Scratch.PDATA_STRUCT + 8));
        return (data == 0) ? new byte[0] : NativeMemory.copyOut(data, length);
    }

    @Override
    String kind() {
        return "connection request (already connected or rejected)";
    }

    /**
     * The private data that came with the request (server side), copied when it was obtained. Over
     * RoCE it may carry trailing zero padding up to the transport's length.
     */
    public byte[] privateData() {
        // not clone(): code compiled by C1, the JIT's first tier, calls into the JVM for it (1.6 % of a
        // connection's CPU, measured with -XX:TieredStopAtLevel=1)
        return Arrays.copyOf(this.privateData, this.privateData.length);
    }

    /** The endpoint this request came from, {@code null} for a client's request. */
    public @Nullable RpmaEndpoint endpoint() {
        return this.endpoint;
    }

    /** Whether it is still waiting for {@link #connect} or {@link #reject()}. */
    public boolean isPending() {
        return !isClosed();
    }

    /**
     * Posts a receive before the connection exists ({@code rpma_conn_req_recv}), so the first
     * message of the other side has a buffer. Any thread.
     */
    public void receive(RpmaMemoryRegion destination, long offset, long length, long context) {
        long req = acquire();
        try {
            long mr = destination.acquire();
            try {
                this.rpma.check(this.rpma.lib().rpma_conn_req_recv(req, mr, offset, length, context), "rpma_conn_req_recv");
            }
            finally {
                destination.release();
            }
        }
        finally {
            release();
        }
    }

    /** Connects without private data. */
    public RpmaConnection connect() {
        return connect(null);
    }

    /**
     * Accepts (server) or sends (client) the request with {@code privateData}
     * ({@code rpma_conn_req_connect}). Consumes the request whatever the outcome. The connection is
     * usable once {@link RpmaConnection#nextEvent()} reports
     * {@link RpmaConnectionEvent#ESTABLISHED}. Any thread.
     *
     * @throws IllegalArgumentException when the private data is longer than the transport carries
     *     ({@value #MAX_ACCEPT_PRIVATE_DATA} bytes for an accept, {@value #MAX_CONNECT_PRIVATE_DATA}
     *     for a client's connect); the request is then still pending
     */
    public RpmaConnection connect(byte @Nullable [] privateData) {
        int limit = this.serverSide ? MAX_ACCEPT_PRIVATE_DATA : MAX_CONNECT_PRIVATE_DATA;
        if (privateData != null && privateData.length > limit) {
            throw new IllegalArgumentException("Private data of " + privateData.length + " bytes is too long: "
                    + (this.serverSide ? "an accept" : "a connect") + " carries at most " + limit
                    + " bytes over RoCE/InfiniBand; send larger data after the connection is established");
        }
        long req = consume("connect");
        Scratch scratch = Scratch.get();
        long pdata = scratch.privateData(privateData);
        scratch.buffer.putLong(Scratch.OUT2, req);
        int rc = this.rpma.lib().rpma_conn_req_connect(scratch.at(Scratch.OUT2), pdata, scratch.at(Scratch.OUT));
        if (rc != 0) {
            // rpma_conn_req_connect consumed (freed) the request even though it failed, leaving its CM id
            RpmaException failure = this.rpma.failure(rc, "rpma_conn_req_connect", null);
            if (this.cmId != 0) {
                reportLeftBehind(this.rpma.cmIds().destroyAfterFailedAccept(this.cmId), "a request whose accept failed");
            }
            this.peer.childClosed();
            throw failure;
        }
        return RpmaConnection.connected(this.peer, scratch.outPointer());
    }

    /**
     * Rejects (server) or abandons (client) the request ({@code rpma_conn_req_delete}); the client
     * sees {@link RpmaConnectionEvent#REJECTED}. Owner thread only.
     */
    public void reject() {
        checkOwner("reject");
        long req = consume("reject");
        try {
            this.rpma.check(this.rpma.lib().rpma_conn_req_delete(Scratch.get().pointerSlot(req)), "rpma_conn_req_delete");
        }
        finally {
            if (this.cmId != 0) {
                // rpma_conn_req_delete rejected and freed the request, and left its CM id
                reportLeftBehind(this.rpma.cmIds().destroyRejected(this.cmId), "a rejected request");
            }
            this.peer.childClosed();
        }
    }

    private static void reportLeftBehind(int errno, String what) {
        if (errno != 0) {
            logger.warn("rdma_destroy_id of {} failed with errno {}: its kernel CM id stays until the endpoint closes", what,
                        errno);
        }
    }

    /** Rejects the request if it is still pending (owner thread); does nothing once consumed. */
    @Override
    public void close() {
        if (isPending()) {
            reject();
        }
    }

    /** Whether the calling thread may {@link #reject()} this request. */
    public boolean isOwnedByCurrentThread() {
        return (this.endpoint != null) ? this.endpoint.isOwnedByCurrentThread() : this.owner == Thread.currentThread();
    }

    private void checkOwner(String method) {
        if (this.endpoint != null) {
            this.endpoint.checkOwner("RpmaConnectionRequest", method);
        }
        else if (this.owner != Thread.currentThread()) {
            throw new IllegalStateException("RpmaConnectionRequest." + method + "() must be called on the thread that created"
                    + " the request ('" + this.owner.getName() + "'): rpma_conn_req_delete is not thread-safe");
        }
    }

    private long consume(String method) {
        long req = beginClose();
        if (req == 0) {
            throw new IllegalStateException("Cannot " + method + " this connection request: it was already connected"
                    + " or rejected (a request is consumed exactly once)");
        }
        return req;
    }
}
