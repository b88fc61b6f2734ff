package dev.rpma.jna.raw;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import com.sun.jna.Memory;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

/**
 * The JNI data path against the real librpma.so.0 and libc: it is built into the jar and used, its
 * calls answer as JNA's do, a failed call's errno reaches {@link LibRpma#lastErrno()}, and it can be
 * turned off.
 */
class JniDataPathNativeTest {

    private static final int INVAL = -100004;

    private static final int EBADF = 9;

    private static final long PATTERN = 0xA5A5_A5A5_A5A5_A5A5L;

    private static final NativeLibrary LIBRPMA = NativeLibrary.getInstance("librpma.so.0");

    private final Memory memory = new Memory(16);

    private final long wc = Pointer.nativeValue(this.memory);

    private final long count = this.wc + 8;

    @AfterEach
    void free() {
        this.memory.close();
    }

    @Test
    void theLoaderBindsTheDataPathThroughJni() {
        assertThat(JniDataPath.unavailableReason()).isNull();
        assertThat(((JnaLibRpma) RpmaLibraryLoader.load()).jniDataPath()).isTrue();
    }

    @Test
    void jniAndJnaGiveTheSameAnswersAndLeaveTheOutParametersAlone() {
        JnaLibRpma jni = new JnaLibRpma(LIBRPMA, JniDataPath.bind(LIBRPMA));
        JnaLibRpma jna = new JnaLibRpma(LIBRPMA, null);
        assertThat(jni.jniDataPath()).isTrue();
        assertThat(jna.jniDataPath()).isFalse();
        for (JnaLibRpma lib : new JnaLibRpma[] { jni, jna }) {
            this.memory.setLong(0, PATTERN);
            this.memory.setLong(8, PATTERN);
            assertThat(lib.rpma_cq_get_wc(0, 1, this.wc, this.count)).isEqualTo(INVAL);
            assertThat(lib.rpma_send(0, this.wc, 0, 8, 3, 0)).isEqualTo(INVAL);
            assertThat(lib.rpma_recv(0, this.wc, 0, 8, 0)).isEqualTo(INVAL);
            assertThat(this.memory.getLong(0)).isEqualTo(PATTERN);
            assertThat(this.memory.getLong(8)).isEqualTo(PATTERN);
        }
    }

    @Test
    void aFailedCallsErrnoIsTheLastErrno() {
        // libc's close(-1) in place of each librpma function: it fails with EBADF, as a provider error would carry an errno
        long close = Pointer.nativeValue(NativeLibrary.getInstance("c").getFunction("close"));
        JnaLibRpma lib = new JnaLibRpma(LIBRPMA, new JniDataPath(close, close, close));
        for (int call = 0; call < 3; call++) {
            // a JNA call that succeeds, so lastErrno is whatever it left unless the JNI call's errno replaces it
            assertThat(lib.rpma_conn_cfg_delete(0)).isEqualTo(INVAL);
            int rc = switch (call) {
                case 0 -> lib.rpma_cq_get_wc(-1, 1, this.wc, this.count);
                case 1 -> lib.rpma_send(-1, this.wc, 0, 8, 3, 0);
                default -> lib.rpma_recv(-1, this.wc, 0, 8, 0);
            };
            assertThat(rc).isEqualTo(-1);
            assertThat(lib.lastErrno()).as("call %d", call).isEqualTo(EBADF);
        }
    }

    @Test
    void theSystemPropertyTurnsItOff() {
        System.setProperty(JniDataPath.PROPERTY, "false");
        try {
            assertThat(JniDataPath.bind(LIBRPMA)).isNull();
            assertThat(JniDataPath.unavailableReason()).contains(JniDataPath.PROPERTY);
        }
        finally {
            System.clearProperty(JniDataPath.PROPERTY);
        }
        assertThat(JniDataPath.bind(LIBRPMA)).isNotNull();
    }
}
