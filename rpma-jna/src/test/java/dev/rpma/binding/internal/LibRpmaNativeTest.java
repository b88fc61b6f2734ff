package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * The raw layer bound to the real librpma.so.0: every NULL-argument check librpma makes answers
 * {@code RPMA_E_INVAL} and leaves the caller's out-parameters untouched; C {@code bool} crosses as
 * exactly one byte.
 */
class LibRpmaNativeTest {

    private static final int INVAL = -100004;

    private static final long PATTERN = 0xA5A5_A5A5_A5A5_A5A5L;

    private static final LibRpma LIB = RpmaLibraryLoader.load();

    /** Eight out-parameter slots, pre-filled with {@link #PATTERN}. */
    private final Memory memory = new Memory(64);

    private final long base = Pointer.nativeValue(this.memory);

    private long slot(int index) {
        return this.base + 8L * index;
    }

    private void fill() {
        for (int i = 0; i < 8; i++) {
            this.memory.setLong(8L * i, PATTERN);
        }
    }

    private void assertUntouched() {
        for (int i = 0; i < 8; i++) {
            assertThat(this.memory.getLong(8L * i)).as("slot %d", i).isEqualTo(PATTERN);
        }
    }

    @AfterEach
    void free() {
        this.memory.close();
    }

    private record NullCase(String call, ToIntFunction<LibRpmaNativeTest> invoke, int expected) {
    }

    private static final List<NullCase> CASES = new ArrayList<>();

    private static void inval(String call, ToIntFunction<LibRpmaNativeTest> invoke) {
        CASES.add(new NullCase(call, invoke, INVAL));
    }

    static {
        inval("rpma_utils_get_ibv_context(NULL, LOCAL, &ctx)", t -> LIB.rpma_utils_get_ibv_context(null, 0, t.slot(0)));
        inval("rpma_utils_get_ibv_context(addr, LOCAL, NULL)", t -> LIB.rpma_utils_get_ibv_context("127.0.0.1", 0, 0));
        inval("rpma_utils_get_ibv_context(addr, 7, &ctx)", t -> LIB.rpma_utils_get_ibv_context("127.0.0.1", 7, t.slot(0)));
        inval("rpma_utils_ibv_context_is_odp_capable(NULL, &odp)", t -> LIB.rpma_utils_ibv_context_is_odp_capable(0, t.slot(0)));
        inval("rpma_peer_cfg_new(NULL)", t -> LIB.rpma_peer_cfg_new(0));
        inval("rpma_peer_cfg_delete(NULL)", t -> LIB.rpma_peer_cfg_delete(0));
        inval("rpma_peer_cfg_set_direct_write_to_pmem(NULL, true)", t -> LIB.rpma_peer_cfg_set_direct_write_to_pmem(0, (byte) 1));
        inval("rpma_peer_cfg_get_direct_write_to_pmem(NULL, &b)", t -> LIB.rpma_peer_cfg_get_direct_write_to_pmem(0, t.slot(0)));
        inval("rpma_peer_cfg_get_descriptor(NULL, desc)", t -> LIB.rpma_peer_cfg_get_descriptor(0, t.slot(0)));
        inval("rpma_peer_cfg_get_descriptor_size(NULL, &size)", t -> LIB.rpma_peer_cfg_get_descriptor_size(0, t.slot(0)));
        inval("rpma_peer_cfg_from_descriptor(NULL, 1, &pcfg)", t -> LIB.rpma_peer_cfg_from_descriptor(0, 1, t.slot(0)));
        inval("rpma_peer_cfg_from_descriptor(desc, 1, NULL)", t -> LIB.rpma_peer_cfg_from_descriptor(t.slot(1), 1, 0));
        inval("rpma_peer_new(NULL, &peer)", t -> LIB.rpma_peer_new(0, t.slot(0)));
        inval("rpma_peer_delete(NULL)", t -> LIB.rpma_peer_delete(0));
        inval("rpma_mr_reg(NULL, ptr, 8, READ_SRC, &mr)", t -> LIB.rpma_mr_reg(0, t.slot(1), 8, 1, t.slot(0)));
        inval("rpma_mr_dereg(NULL)", t -> LIB.rpma_mr_dereg(0));
        inval("rpma_mr_get_descriptor(NULL, desc)", t -> LIB.rpma_mr_get_descriptor(0, t.slot(0)));
        inval("rpma_mr_get_descriptor_size(NULL, &size)", t -> LIB.rpma_mr_get_descriptor_size(0, t.slot(0)));
        inval("rpma_mr_get_ptr(NULL, &ptr)", t -> LIB.rpma_mr_get_ptr(0, t.slot(0)));
        inval("rpma_mr_get_size(NULL, &size)", t -> LIB.rpma_mr_get_size(0, t.slot(0)));
        inval("rpma_mr_remote_from_descriptor(NULL, 21, &mr)", t -> LIB.rpma_mr_remote_from_descriptor(0, 21, t.slot(0)));
        inval("rpma_mr_remote_from_descriptor(desc, 21, NULL)", t -> LIB.rpma_mr_remote_from_descriptor(t.slot(1), 21, 0));
        inval("rpma_mr_remote_get_size(NULL, &size)", t -> LIB.rpma_mr_remote_get_size(0, t.slot(0)));
        inval("rpma_mr_remote_get_flush_type(NULL, &type)", t -> LIB.rpma_mr_remote_get_flush_type(0, t.slot(0)));
        inval("rpma_mr_remote_delete(NULL)", t -> LIB.rpma_mr_remote_delete(0));
        inval("rpma_conn_cfg_new(NULL)", t -> LIB.rpma_conn_cfg_new(0));
        inval("rpma_conn_cfg_delete(NULL)", t -> LIB.rpma_conn_cfg_delete(0));
        inval("rpma_conn_cfg_set_timeout(NULL, 1)", t -> LIB.rpma_conn_cfg_set_timeout(0, 1));
        inval("rpma_conn_cfg_get_timeout(NULL, &t)", t -> LIB.rpma_conn_cfg_get_timeout(0, t.slot(0)));
        inval("rpma_conn_cfg_set_cq_size(NULL, 1)", t -> LIB.rpma_conn_cfg_set_cq_size(0, 1));
        inval("rpma_conn_cfg_get_cq_size(NULL, &n)", t -> LIB.rpma_conn_cfg_get_cq_size(0, t.slot(0)));
        inval("rpma_conn_cfg_set_rcq_size(NULL, 1)", t -> LIB.rpma_conn_cfg_set_rcq_size(0, 1));
        inval("rpma_conn_cfg_get_rcq_size(NULL, &n)", t -> LIB.rpma_conn_cfg_get_rcq_size(0, t.slot(0)));
        inval("rpma_conn_cfg_set_sq_size(NULL, 1)", t -> LIB.rpma_conn_cfg_set_sq_size(0, 1));
        inval("rpma_conn_cfg_get_sq_size(NULL, &n)", t -> LIB.rpma_conn_cfg_get_sq_size(0, t.slot(0)));
        inval("rpma_conn_cfg_set_rq_size(NULL, 1)", t -> LIB.rpma_conn_cfg_set_rq_size(0, 1));
        inval("rpma_conn_cfg_get_rq_size(NULL, &n)", t -> LIB.rpma_conn_cfg_get_rq_size(0, t.slot(0)));
        inval("rpma_conn_cfg_set_compl_channel(NULL, true)", t -> LIB.rpma_conn_cfg_set_compl_channel(0, (byte) 1));
        inval("rpma_conn_cfg_get_compl_channel(NULL, &b)", t -> LIB.rpma_conn_cfg_get_compl_channel(0, t.slot(0)));
        inval("rpma_conn_cfg_set_srq(NULL, NULL)", t -> LIB.rpma_conn_cfg_set_srq(0, 0));
        inval("rpma_conn_cfg_get_srq(NULL, &srq)", t -> LIB.rpma_conn_cfg_get_srq(0, t.slot(0)));
        inval("rpma_conn_get_event_fd(NULL, &fd)", t -> LIB.rpma_conn_get_event_fd(0, t.slot(0)));
        inval("rpma_conn_next_event(NULL, &event)", t -> LIB.rpma_conn_next_event(0, t.slot(0)));
        inval("rpma_conn_get_private_data(NULL, &pdata)", t -> LIB.rpma_conn_get_private_data(0, t.slot(0)));
        inval("rpma_conn_apply_remote_peer_cfg(NULL, NULL)", t -> LIB.rpma_conn_apply_remote_peer_cfg(0, 0));
        inval("rpma_conn_get_qp_num(NULL, &qp)", t -> LIB.rpma_conn_get_qp_num(0, t.slot(0)));
        inval("rpma_conn_get_cq(NULL, &cq)", t -> LIB.rpma_conn_get_cq(0, t.slot(0)));
        inval("rpma_conn_get_rcq(NULL, &rcq)", t -> LIB.rpma_conn_get_rcq(0, t.slot(0)));
        inval("rpma_conn_get_compl_fd(NULL, &fd)", t -> LIB.rpma_conn_get_compl_fd(0, t.slot(0)));
        inval("rpma_conn_wait(NULL, 0, &cq, &is_rcq)", t -> LIB.rpma_conn_wait(0, 0, t.slot(0), t.slot(1)));
        inval("rpma_conn_disconnect(NULL)", t -> LIB.rpma_conn_disconnect(0));
        inval("rpma_conn_delete(NULL)", t -> LIB.rpma_conn_delete(0));
        inval("rpma_conn_req_new(NULL, addr, port, NULL, &req)",
                t -> LIB.rpma_conn_req_new(0, "127.0.0.1", "7204", 0, t.slot(0)));
        inval("rpma_conn_req_delete(NULL)", t -> LIB.rpma_conn_req_delete(0));
        inval("rpma_conn_req_connect(NULL, NULL, &conn)", t -> LIB.rpma_conn_req_connect(0, 0, t.slot(0)));
        inval("rpma_conn_req_connect(&NULL, NULL, &conn)", t -> {
            t.memory.setLong(8, 0);
            int rc = LIB.rpma_conn_req_connect(t.slot(1), 0, t.slot(0));
            assertThat(t.memory.getLong(8)).as("*req_ptr").isZero();
            t.memory.setLong(8, PATTERN);
            return rc;
        });
        inval("rpma_conn_req_recv(NULL, mr, 0, 8, ctx)", t -> LIB.rpma_conn_req_recv(0, t.slot(0), 0, 8, 0));
        inval("rpma_conn_req_get_private_data(NULL, &pdata)", t -> LIB.rpma_conn_req_get_private_data(0, t.slot(0)));
        inval("rpma_ep_listen(NULL, addr, port, &ep)", t -> LIB.rpma_ep_listen(0, "127.0.0.1", "7204", t.slot(0)));
        inval("rpma_ep_shutdown(NULL)", t -> LIB.rpma_ep_shutdown(0));
        inval("rpma_ep_get_fd(NULL, &fd)", t -> LIB.rpma_ep_get_fd(0, t.slot(0)));
        inval("rpma_ep_next_conn_req(NULL, NULL, &req)", t -> LIB.rpma_ep_next_conn_req(0, 0, t.slot(0)));
        inval("rpma_srq_cfg_new(NULL)", t -> LIB.rpma_srq_cfg_new(0));
        inval("rpma_srq_cfg_delete(NULL)", t -> LIB.rpma_srq_cfg_delete(0));
        inval("rpma_srq_cfg_set_rq_size(NULL, 1)", t -> LIB.rpma_srq_cfg_set_rq_size(0, 1));
        inval("rpma_srq_cfg_get_rq_size(NULL, &n)", t -> LIB.rpma_srq_cfg_get_rq_size(0, t.slot(0)));
        inval("rpma_srq_cfg_set_rcq_size(NULL, 1)", t -> LIB.rpma_srq_cfg_set_rcq_size(0, 1));
        inval("rpma_srq_cfg_get_rcq_size(NULL, &n)", t -> LIB.rpma_srq_cfg_get_rcq_size(0, t.slot(0)));
        inval("rpma_srq_new(NULL, NULL, &srq)", t -> LIB.rpma_srq_new(0, 0, t.slot(0)));
        inval("rpma_srq_delete(NULL)", t -> LIB.rpma_srq_delete(0));
        inval("rpma_srq_recv(NULL, mr, 0, 8, ctx)", t -> LIB.rpma_srq_recv(0, t.slot(0), 0, 8, 0));
        inval("rpma_srq_get_rcq(NULL, &rcq)", t -> LIB.rpma_srq_get_rcq(0, t.slot(0)));
        inval("rpma_read(NULL, ...)", t -> LIB.rpma_read(0, t.slot(0), 0, t.slot(1), 0, 8, 3, 0));
        inval("rpma_write(NULL, ...)", t -> LIB.rpma_write(0, t.slot(0), 0, t.slot(1), 0, 8, 3, 0));
        inval("rpma_write_with_imm(NULL, ...)", t -> LIB.rpma_write_with_imm(0, t.slot(0), 0, t.slot(1), 0, 8, 3, 1, 0));
        inval("rpma_atomic_write(NULL, ...)", t -> LIB.rpma_atomic_write(0, t.slot(0), 0, t.slot(1), 3, 0));
        inval("rpma_flush(NULL, ...)", t -> LIB.rpma_flush(0, t.slot(0), 0, 8, 0, 3, 0));
        inval("rpma_send(NULL, ...)", t -> LIB.rpma_send(0, t.slot(0), 0, 8, 3, 0));
        inval("rpma_send_with_imm(NULL, ...)", t -> LIB.rpma_send_with_imm(0, t.slot(0), 0, 8, 3, 1, 0));
        inval("rpma_recv(NULL, ...)", t -> LIB.rpma_recv(0, t.slot(0), 0, 8, 0));
        inval("rpma_cq_get_fd(NULL, &fd)", t -> LIB.rpma_cq_get_fd(0, t.slot(0)));
        inval("rpma_cq_wait(NULL)", t -> LIB.rpma_cq_wait(0));
        inval("rpma_cq_get_wc(NULL, 1, wc, &n)", t -> LIB.rpma_cq_get_wc(0, 1, t.slot(0), t.slot(1)));
        inval("rpma_log_get_threshold(PRIMARY, NULL)", t -> LIB.rpma_log_get_threshold(0, 0));
        inval("rpma_log_get_threshold(7, &level)", t -> LIB.rpma_log_get_threshold(7, t.slot(0)));
        inval("rpma_log_set_threshold(7, WARNING)", t -> LIB.rpma_log_set_threshold(7, 2));
        inval("rpma_log_set_threshold(PRIMARY, 9)", t -> LIB.rpma_log_set_threshold(0, 9));
        // deleting through a NULL *ptr is a no-op that succeeds
        CASES.add(new NullCase("rpma_conn_cfg_delete(&NULL)", t -> deleteNull(t, LIB::rpma_conn_cfg_delete), 0));
        CASES.add(new NullCase("rpma_peer_cfg_delete(&NULL)", t -> deleteNull(t, LIB::rpma_peer_cfg_delete), 0));
        CASES.add(new NullCase("rpma_srq_cfg_delete(&NULL)", t -> deleteNull(t, LIB::rpma_srq_cfg_delete), 0));
        CASES.add(new NullCase("rpma_conn_req_delete(&NULL)", t -> deleteNull(t, LIB::rpma_conn_req_delete), 0));
        CASES.add(new NullCase("rpma_conn_delete(&NULL)", t -> deleteNull(t, LIB::rpma_conn_delete), 0));
        CASES.add(new NullCase("rpma_ep_shutdown(&NULL)", t -> deleteNull(t, LIB::rpma_ep_shutdown), 0));
        CASES.add(new NullCase("rpma_mr_dereg(&NULL)", t -> deleteNull(t, LIB::rpma_mr_dereg), 0));
        CASES.add(new NullCase("rpma_mr_remote_delete(&NULL)", t -> deleteNull(t, LIB::rpma_mr_remote_delete), 0));
        CASES.add(new NullCase("rpma_srq_delete(&NULL)", t -> deleteNull(t, LIB::rpma_srq_delete), 0));
        CASES.add(new NullCase("rpma_peer_delete(&NULL)", t -> deleteNull(t, LIB::rpma_peer_delete), 0));
    }

    private static int deleteNull(LibRpmaNativeTest t, java.util.function.LongToIntFunction delete) {
        t.memory.setLong(56, 0);
        int rc = delete.applyAsInt(t.slot(7));
        assertThat(t.memory.getLong(56)).isZero();
        t.memory.setLong(56, PATTERN);
        return rc;
    }

    @TestFactory
    Stream<DynamicTest> nullArgumentsAreRejectedWithInvalAndOutParametersUntouched() {
        return CASES.stream().map(c -> DynamicTest.dynamicTest(c.call(), () -> {
            fill();
            assertThat(c.invoke().applyAsInt(this)).as(c.call()).isEqualTo(c.expected());
            assertUntouched();
        }));
    }

    @Test
    void everyFunctionOfTheRawLayerIsCovered() {
        List<String> table = java.util.Arrays.stream(LibRpma.class.getMethods()).map(java.lang.reflect.Method::getName)
                .filter(name -> name.startsWith("rpma_")).distinct().toList();
        long functions = table.size();
        assertThat(functions).as("librpma's 84 exported functions").isEqualTo(84);
        // loading the library registered these natives, each to the symbol of its name
        assertThat(java.util.Arrays.stream(DirectLibRpma.Direct.class.getDeclaredMethods())
                .filter(method -> java.lang.reflect.Modifier.isNative(method.getModifiers()))
                .map(java.lang.reflect.Method::getName)).as("direct-mapped natives")
                .containsExactlyInAnyOrderElementsOf(table);
        // all but the two text look-ups, rpma_log_set_function (NULL selects the default logger) and
        // rpma_mr_advise (librpma 1.2 dereferences mr without checking it: NULL crashes) check a pointer
        assertThat(CASES.stream().map(c -> c.call().substring(0, c.call().indexOf('('))).distinct().count())
                .isEqualTo(functions - 4);
    }

    @Test
    void boolIsOneByteEachWay() {
        try (Memory out = new Memory(8)) {
            fill();
            assertThat(LIB.rpma_conn_cfg_new(slot(0))).isZero();
            long cfg = this.memory.getLong(0);
            long flag = Pointer.nativeValue(out);
            try {
                for (boolean shared : new boolean[] { true, false, true }) {
                    out.setLong(0, PATTERN);
                    assertThat(LIB.rpma_conn_cfg_set_compl_channel(cfg, (byte) (shared ? 1 : 0))).isZero();
                    assertThat(LIB.rpma_conn_cfg_get_compl_channel(cfg, flag)).isZero();
                    assertThat(out.getByte(0)).isEqualTo((byte) (shared ? 1 : 0));
                    assertThat(out.getByteArray(1, 7)).as("bytes after the bool").containsOnly((byte) 0xA5);
                }
            }
            finally {
                assertThat(LIB.rpma_conn_cfg_delete(slot(0))).isZero();
                assertThat(this.memory.getLong(0)).as("*cfg_ptr NULLed").isZero();
            }

            assertThat(LIB.rpma_peer_cfg_new(slot(1))).isZero();
            long pcfg = this.memory.getLong(8);
            try {
                for (boolean supported : new boolean[] { true, false }) {
                    out.setLong(0, PATTERN);
                    assertThat(LIB.rpma_peer_cfg_set_direct_write_to_pmem(pcfg, (byte) (supported ? 1 : 0))).isZero();
                    assertThat(LIB.rpma_peer_cfg_get_direct_write_to_pmem(pcfg, flag)).isZero();
                    assertThat(out.getByte(0)).isEqualTo((byte) (supported ? 1 : 0));
                    assertThat(out.getByteArray(1, 7)).containsOnly((byte) 0xA5);
                }
            }
            finally {
                assertThat(LIB.rpma_peer_cfg_delete(slot(1))).isZero();
            }
        }
    }

    @Test
    void sizesAreSizeT() {
        try (Memory out = new Memory(16)) {
            fill();
            assertThat(LIB.rpma_peer_cfg_new(slot(0))).isZero();
            long pcfg = this.memory.getLong(0);
            out.setLong(0, -1);
            out.setLong(8, PATTERN);
            assertThat(LIB.rpma_peer_cfg_get_descriptor_size(pcfg, Pointer.nativeValue(out))).isZero();
            assertThat(out.getLong(0)).as("all 8 bytes of the size_t written").isOne();
            assertThat(out.getLong(8)).isEqualTo(PATTERN);
            assertThat(LIB.rpma_peer_cfg_delete(slot(0))).isZero();
        }
    }

    @Test
    void lastErrnoIsTheCallsErrno() {
        LibC.close(-1);
        assertThat(LibC.errno()).isEqualTo(9);
        assertThat(LIB.rpma_utils_get_ibv_context("127.0.0.1", 0, slot(0))).isEqualTo(-100002);
        assertThat(LIB.lastErrno()).as("ENODEV, read right after the call").isEqualTo(19);
    }
}
