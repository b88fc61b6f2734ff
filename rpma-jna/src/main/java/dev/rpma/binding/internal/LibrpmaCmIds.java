package dev.rpma.binding.internal;

import java.util.concurrent.atomic.AtomicBoolean;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link PassiveCmIds} for the installed librpma 1.2/1.3 and librdmacm.
 *
 * <p>librpma's {@code struct rpma_conn_req} on LP64: {@code int is_passive} at 0, {@code struct rdma_cm_id *id}
 * at 8, three pointers (two CQs, a completion channel), {@code struct rpma_conn_private_data data}
 * ({@code void *ptr} at 40, {@code uint8_t len} at 48) and {@code struct rpma_peer *peer} at 56. A
 * request is read only when every field that can be checked holds what is known of it: it is passive,
 * its peer is the endpoint's, its private data is what {@code rpma_conn_req_get_private_data} returned;
 * only then is its id dereferenced, and taken when the id's first field ({@code struct ibv_context *verbs},
 * librdmacm's public layout) is the peer's device context and it has a queue pair. A request that does
 * not pass is left to librpma, and the first such is reported once.
 */
public final class LibrpmaCmIds implements PassiveCmIds {

    private static final Logger logger = LoggerFactory.getLogger(LibrpmaCmIds.class);

    static final int REQ_IS_PASSIVE = 0;

    static final int REQ_ID = 8;

    static final int REQ_DATA_PTR = 40;

    static final int REQ_DATA_LEN = 48;

    static final int REQ_PEER = 56;

    static final int REQ_SIZE = 64;

    static final int ID_VERBS = 0;

    static final int ID_QP = 24;

    /** {@code struct rdma_event_channel}: {@code int fd} first. */
    private static final int CHANNEL_FD = 0;

    private final AtomicBoolean reported = new AtomicBoolean();

    /** Binds librdmacm (which librpma itself links to), or returns {@link PassiveCmIds#NONE} with a warning. */
    public static PassiveCmIds bind() {
        try {
            RdmaCm.bind();
            return new LibrpmaCmIds();
        }
        catch (UnsatisfiedLinkError | NoClassDefFoundError ex) {
            logger.warn("librdmacm could not be bound ({}): each rejected connection request leaves a kernel CM id"
                    + " behind until its endpoint closes, as librpma does", ex.getMessage());
            return NONE;
        }
    }

    LibrpmaCmIds() {
    }

    @Override
    public long cmIdOf(long request, long peer, long ibvContext, long privateData, int privateDataLength) {
        long id = check(request, peer, ibvContext, privateData, privateDataLength);
        if (id == 0 && this.reported.compareAndSet(false, true)) {
            logger.warn("librpma's connection request is not laid out as in librpma 1.2 and 1.3: rejected requests"
                    + " leave a kernel CM id behind until their endpoint closes (librpma's rpma_conn_req_delete never"
                    + " destroys it); use librpma 1.2 or 1.3");
        }
        return id;
    }

    /** The request's CM id when every checked field holds, else 0; reads nothing past a failed check. */
    static long check(long request, long peer, long ibvContext, long privateData, int privateDataLength) {
        if (request == 0 || (request & 7) != 0) {
            return 0;
        }
        // plain reads, on the acceptor thread for every request: no direct buffer wrapped around them
        Pointer req = new Pointer(request);
        if (req.getInt(REQ_IS_PASSIVE) != 1 || req.getLong(REQ_PEER) != peer
                || req.getLong(REQ_DATA_PTR) != privateData
                || Byte.toUnsignedInt(req.getByte(REQ_DATA_LEN)) != privateDataLength) {
            return 0;
        }
        long id = req.getLong(REQ_ID);
        if (id == 0 || (id & 7) != 0) {
            return 0;
        }
        Pointer cmId = new Pointer(id);
        if (cmId.getLong(ID_VERBS) != ibvContext || cmId.getLong(ID_QP) == 0) {
            return 0;
        }
        return id;
    }

    @Override
    public int destroyRejected(long cmId) {
        return (RdmaCm.rdma_destroy_id(cmId) == 0) ? 0 : Native.getLastError();
    }

    @Override
    public int destroyAfterFailedAccept(long cmId) {
        long channel = RdmaCm.rdma_create_event_channel();
        if (channel == 0) {
            return Native.getLastError();
        }
        try {
            if (RdmaCm.rdma_migrate_id(cmId, channel) != 0) {
                return Native.getLastError();
            }
            int fd = new Pointer(channel).getInt(CHANNEL_FD);
            LibC.fcntl(fd, LibC.F_SETFL, LibC.fcntl(fd, LibC.F_GETFL, 0) | LibC.O_NONBLOCK);
            try (com.sun.jna.Memory event = new com.sun.jna.Memory(Long.BYTES)) {
                while (RdmaCm.rdma_get_cm_event(channel, Pointer.nativeValue(event)) == 0) {
                    RdmaCm.rdma_ack_cm_event(event.getLong(0));
                }
            }
            return (RdmaCm.rdma_destroy_id(cmId) == 0) ? 0 : Native.getLastError();
        }
        finally {
            RdmaCm.rdma_destroy_event_channel(channel);
        }
    }

    /** librdmacm, direct-mapped. */
    static final class RdmaCm {

        private static volatile boolean bound;

        static synchronized void bind() {
            if (!bound) {
                Native.register(RdmaCm.class, NativeLibrary.getInstance("librdmacm.so.1"));
                bound = true;
            }
        }

        static native int rdma_destroy_id(long id);

        static native long rdma_create_event_channel();

        static native void rdma_destroy_event_channel(long channel);

        static native int rdma_migrate_id(long id, long channel);

        static native int rdma_get_cm_event(long channel, long event);

        static native int rdma_ack_cm_event(long event);

        private RdmaCm() {
        }
    }
}
