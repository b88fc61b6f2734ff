package dev.rpma.binding.internal;

import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import org.jspecify.annotations.Nullable;
import org.slf4j.LoggerFactory;

/**
 * {@link LibRpma} over JNA direct mapping ({@link DirectLibRpma}, whose methods the build generates
 * from {@link LibRpma}; direct mapping converts {@code long} to a 64-bit pointer argument on LP64),
 * except the per-message and per-connection calls, which go through JNI when its library is loaded.
 */
final class JnaLibRpma extends DirectLibRpma {

    private static final int RPMA_E_NO_COMPLETION = -100005;

    private static final int RPMA_E_NO_EVENT = -100006;

    /**
     * The calls of the data path and of every connection through JNI ({@link JniCalls}); {@code null}:
     * through JNA.
     */
    private final @Nullable JniCalls jni;

    JnaLibRpma(NativeLibrary library) {
        this(library, JniCalls.bind(library));
        LoggerFactory.getLogger(JnaLibRpma.class).info("librpma's per-message and per-connection calls: {}",
                (this.jni != null) ? "through JNI" : "through JNA, " + JniCalls.unavailableReason());
    }

    JnaLibRpma(NativeLibrary library, @Nullable JniCalls jni) {
        Native.register(Direct.class, library);
        this.jni = jni;
    }

    /** Whether the per-message and per-connection calls go through JNI rather than JNA. */
    boolean usesJni() {
        return this.jni != null;
    }

    /**
     * A JNI call's errno is where {@link #lastErrno()} finds a JNA call's (errors only: a look at an
     * empty queue or an event queue without an event is none).
     */
    private static int keepErrno(int rc) {
        if (rc != 0 && rc != RPMA_E_NO_COMPLETION && rc != RPMA_E_NO_EVENT) {
            JniCalls.passErrnoToJna();
        }
        return rc;
    }

    @Override
    public int lastErrno() {
        return Native.getLastError();
    }

    @Override
    public int rpma_conn_get_event_fd(long conn, long fd) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connGetEventFd, conn, fd));
        }
        return Direct.rpma_conn_get_event_fd(conn, fd);
    }

    @Override
    public int rpma_conn_next_event(long conn, long event) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connNextEvent, conn, event));
        }
        return Direct.rpma_conn_next_event(conn, event);
    }

    @Override
    public int rpma_conn_disconnect(long conn) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connDisconnect, conn));
        }
        return Direct.rpma_conn_disconnect(conn);
    }

    @Override
    public int rpma_conn_delete(long connPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connDelete, connPtr));
        }
        return Direct.rpma_conn_delete(connPtr);
    }

    @Override
    public int rpma_conn_req_delete(long reqPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.connReqDelete, reqPtr));
        }
        return Direct.rpma_conn_req_delete(reqPtr);
    }

    @Override
    public int rpma_conn_req_connect(long reqPtr, long pdata, long connPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call3(jni.connReqConnect, reqPtr, pdata, connPtr));
        }
        return Direct.rpma_conn_req_connect(reqPtr, pdata, connPtr);
    }

    @Override
    public int rpma_conn_req_recv(long req, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.connReqRecv, req, dst, offset, len, opContext));
        }
        return Direct.rpma_conn_req_recv(req, dst, offset, len, opContext);
    }

    @Override
    public int rpma_ep_next_conn_req(long ep, long cfg, long reqPtr) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call3(jni.epNextConnReq, ep, cfg, reqPtr));
        }
        return Direct.rpma_ep_next_conn_req(ep, cfg, reqPtr);
    }

    @Override
    public int rpma_conn_req_get_private_data(long req, long pdata) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call2(jni.connReqGetPrivateData, req, pdata));
        }
        return Direct.rpma_conn_req_get_private_data(req, pdata);
    }

    @Override
    public int rpma_srq_recv(long srq, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.srqRecv, srq, dst, offset, len, opContext));
        }
        return Direct.rpma_srq_recv(srq, dst, offset, len, opContext);
    }

    @Override
    public int rpma_send(long conn, long src, long offset, long len, int flags, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.send(jni.send, conn, src, offset, len, flags, opContext));
        }
        return Direct.rpma_send(conn, src, offset, len, flags, opContext);
    }

    @Override
    public int rpma_recv(long conn, long dst, long offset, long len, long opContext) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.recv(jni.recv, conn, dst, offset, len, opContext));
        }
        return Direct.rpma_recv(conn, dst, offset, len, opContext);
    }

    @Override
    public int rpma_cq_get_wc(long cq, int numEntries, long wc, long numEntriesGot) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.getWc(jni.getWc, cq, numEntries, wc, numEntriesGot));
        }
        return Direct.rpma_cq_get_wc(cq, numEntries, wc, numEntriesGot);
    }

    @Override
    public int rpma_cq_wait(long cq) {
        JniCalls jni = this.jni;
        if (jni != null) {
            return keepErrno(JniCalls.call1(jni.cqWait, cq));
        }
        return Direct.rpma_cq_wait(cq);
    }
}
