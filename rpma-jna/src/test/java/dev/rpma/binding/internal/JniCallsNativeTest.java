package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToIntFunction;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The JNI calls against the real librpma.so.0 and libc: they are built into the jar and used, their
 * calls answer as JNA's do and pass their arguments in order, a failed call's errno reaches
 * {@link LibRpma#lastErrno()} (and {@link LibC#errno()}), and they can be turned off.
 */
@EnabledIf(value = "dev.rpma.binding.NativeToolchain#canBuildJni",
        disabledReason = "gcc or the JDK's include/jni.h is missing, so the build made no JNI library")
class JniCallsNativeTest {

    private static final int INVAL = -100004;

    private static final int EBADF = 9;

    private static final int EFAULT = 14;

    private static final long PATTERN = 0xA5A5_A5A5_A5A5_A5A5L;

    private static final NativeLibrary LIBRPMA = NativeLibrary.getInstance("librpma.so.0");

    private static final NativeLibrary LIBC = NativeLibrary.getInstance("c");

    private final Memory memory = new Memory(16);

    private final long out = Pointer.nativeValue(this.memory);

    private final long out2 = this.out + 8;

    @AfterEach
    void free() {
        this.memory.close();
    }

    /** Every call {@link JnaLibRpma} routes through JNI, on NULL objects (librpma answers RPMA_E_INVAL). */
    private Map<String, ToIntFunction<JnaLibRpma>> routedCalls(long object) {
        Map<String, ToIntFunction<JnaLibRpma>> calls = new LinkedHashMap<>();
        calls.put("rpma_cq_get_wc", (lib) -> lib.rpma_cq_get_wc(object, 1, this.out, this.out2));
        calls.put("rpma_cq_wait", (lib) -> lib.rpma_cq_wait(object));
        calls.put("rpma_send", (lib) -> lib.rpma_send(object, this.out, 0, 8, 3, 0));
        calls.put("rpma_recv", (lib) -> lib.rpma_recv(object, this.out, 0, 8, 0));
        calls.put("rpma_srq_recv", (lib) -> lib.rpma_srq_recv(object, this.out, 0, 8, 0));
        calls.put("rpma_ep_next_conn_req", (lib) -> lib.rpma_ep_next_conn_req(object, 0, this.out));
        calls.put("rpma_conn_req_get_private_data", (lib) -> lib.rpma_conn_req_get_private_data(object, this.out));
        calls.put("rpma_conn_req_connect", (lib) -> lib.rpma_conn_req_connect(object, 0, this.out));
        calls.put("rpma_conn_req_recv", (lib) -> lib.rpma_conn_req_recv(object, this.out, 0, 8, 0));
        calls.put("rpma_conn_req_delete", (lib) -> lib.rpma_conn_req_delete(object));
        calls.put("rpma_conn_get_event_fd", (lib) -> lib.rpma_conn_get_event_fd(object, this.out));
        calls.put("rpma_conn_next_event", (lib) -> lib.rpma_conn_next_event(object, this.out));
        calls.put("rpma_conn_disconnect", (lib) -> lib.rpma_conn_disconnect(object));
        calls.put("rpma_conn_delete", (lib) -> lib.rpma_conn_delete(object));
        return calls;
    }

    @Test
    void theLoaderBindsThroughJni() {
        assertThat(JniCalls.unavailableReason()).isNull();
        assertThat(((JnaLibRpma) RpmaLibraryLoader.load()).usesJni()).isTrue();
        assertThat(JniCalls.LIBC).isTrue();
    }

    @Test
    void jniAndJnaGiveTheSameAnswersAndLeaveTheOutParametersAlone() {
        JnaLibRpma jni = new JnaLibRpma(LIBRPMA, JniCalls.bind(LIBRPMA));
        JnaLibRpma jna = new JnaLibRpma(LIBRPMA, null);
        assertThat(jni.usesJni()).isTrue();
        assertThat(jna.usesJni()).isFalse();
        routedCalls(0).forEach((name, call) -> {
            for (JnaLibRpma lib : new JnaLibRpma[] { jni, jna }) {
                this.memory.setLong(0, PATTERN);
                this.memory.setLong(8, PATTERN);
                assertThat(call.applyAsInt(lib)).as(name).isEqualTo(INVAL);
                assertThat(this.memory.getLong(0)).as(name).isEqualTo(PATTERN);
                assertThat(this.memory.getLong(8)).as(name).isEqualTo(PATTERN);
            }
        });
    }

    @Test
    void pointerArgumentsArriveInOrder() {
        // libc functions whose answer depends on each argument, in place of librpma's
        long strlen = address(LIBC, "strlen");
        long strcmp = address(LIBC, "strcmp");
        long memcmp = address(LIBC, "memcmp");
        try (Memory a = new Memory(8); Memory b = new Memory(8)) {
            a.setString(0, "abc");
            b.setString(0, "abd");
            long pa = Pointer.nativeValue(a);
            long pb = Pointer.nativeValue(b);
            assertThat(JniCalls.call1(strlen, pa)).isEqualTo(3);
            assertThat(JniCalls.call2(strcmp, pa, pb)).isNegative();
            assertThat(JniCalls.call2(strcmp, pb, pa)).isPositive();
            assertThat(JniCalls.call3(memcmp, pa, pb, 2)).isZero();
            assertThat(JniCalls.call3(memcmp, pb, pa, 3)).isPositive();
        }
    }

    @Test
    void aFailedCallsErrnoIsTheLastErrno() {
        // libc's close(-1) in place of each librpma function: it fails with EBADF, as a provider error would carry an errno
        long close = address(LIBC, "close");
        JnaLibRpma lib = new JnaLibRpma(LIBRPMA, new JniCalls((function) -> close));
        routedCalls(-1).forEach((name, call) -> {
            // a JNA call that fails without errno, so lastErrno is whatever it was unless the JNI call's errno replaces it
            assertThat(lib.rpma_conn_cfg_delete(0)).isEqualTo(INVAL);
            Native.setLastError(0);
            assertThat(call.applyAsInt(lib)).as(name).isEqualTo(-1);
            assertThat(lib.lastErrno()).as(name).isEqualTo(EBADF);
        });
    }

    @Test
    void libcPollAndFcntlGoThroughJniAndKeepTheirErrno() {
        Native.setLastError(0);
        assertThat(LibC.fcntl(-1, LibC.F_GETFL, 0)).isEqualTo(-1);
        assertThat(LibC.errno()).isEqualTo(EBADF);
        Native.setLastError(0);
        // one pollfd at address 8: unreadable memory
        assertThat(LibC.poll(8, 1, 0)).isEqualTo(-1);
        assertThat(LibC.errno()).isEqualTo(EFAULT);
        int fd = LibC.eventfd(0, LibC.EFD_CLOEXEC);
        try {
            int flags = LibC.fcntl(fd, LibC.F_GETFL, 0);
            assertThat(flags & LibC.O_NONBLOCK).isZero();
            assertThat(LibC.fcntl(fd, LibC.F_SETFL, flags | LibC.O_NONBLOCK)).isZero();
            assertThat(LibC.fcntl(fd, LibC.F_GETFL, 0) & LibC.O_NONBLOCK).isEqualTo(LibC.O_NONBLOCK);
        }
        finally {
            LibC.close(fd);
        }
    }

    @Test
    void theSystemPropertyTurnsItOff() {
        System.setProperty(JniCalls.PROPERTY, "false");
        try {
            assertThat(JniCalls.bind(LIBRPMA)).isNull();
            assertThat(JniCalls.unavailableReason()).contains(JniCalls.PROPERTY);
        }
        finally {
            System.clearProperty(JniCalls.PROPERTY);
        }
        assertThat(JniCalls.bind(LIBRPMA)).isNotNull();
    }

    private static long address(NativeLibrary library, String function) {
        return Pointer.nativeValue(library.getFunction(function));
    }
}
