package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;

import dev.rpma.binding.io.FdPoller;
import dev.rpma.binding.internal.LibC;
import dev.rpma.binding.internal.NativeLogFunction;

/**
 * Every size, offset and constant the binding hardcodes equals what the C headers say: a probe
 * ({@code src/test/c/layout_probe.c}) is compiled with gcc against librpma.h and
 * infiniband/verbs.h at test time and prints them.
 */
@EnabledIf(value = "dev.rpma.binding.NativeToolchain#hasGcc",
        disabledReason = "gcc is not on the PATH, so the probe of the C headers cannot be compiled")
class LayoutNativeTest {

    private static final Map<String, Long> C = new HashMap<>();

    @BeforeAll
    static void runProbe() throws IOException, InterruptedException {
        Path basedir = Path.of(System.getProperty("basedir", "."));
        Path source = basedir.resolve("src/test/c/layout_probe.c");
        Path binary = basedir.resolve("target/layout_probe");
        Files.createDirectories(binary.getParent());
        run(List.of("gcc", "-Wall", "-Werror", "-o", binary.toString(), source.toString()));
        String output = run(List.of(binary.toString()));
        for (String line : output.split("\n")) {
            int space = line.lastIndexOf(' ');
            C.put(line.substring(0, space), Long.parseLong(line.substring(space + 1)));
        }
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        assertThat(process.exitValue()).as("%s failed:%n%s", command, output).isZero();
        return output;
    }

    private static long c(String name) {
        assertThat(C).as("the probe printed " + name).containsKey(name);
        return C.get(name);
    }

    @Test
    void workCompletionLayout() {
        assertThat(RpmaCompletions.WC_SIZE).isEqualTo(c("sizeof(struct ibv_wc)"));
        assertThat(RpmaCompletions.WR_ID).isEqualTo(c("offsetof(struct ibv_wc, wr_id)"));
        assertThat(RpmaCompletions.STATUS).isEqualTo(c("offsetof(struct ibv_wc, status)"));
        assertThat(RpmaCompletions.OPCODE).isEqualTo(c("offsetof(struct ibv_wc, opcode)"));
        assertThat(RpmaCompletions.VENDOR_ERR).isEqualTo(c("offsetof(struct ibv_wc, vendor_err)"));
        assertThat(RpmaCompletions.BYTE_LEN).isEqualTo(c("offsetof(struct ibv_wc, byte_len)"));
        assertThat(RpmaCompletions.IMM_DATA).isEqualTo(c("offsetof(struct ibv_wc, imm_data)"));
        assertThat(RpmaCompletions.QP_NUM).isEqualTo(c("offsetof(struct ibv_wc, qp_num)"));
        assertThat(RpmaCompletions.SRC_QP).isEqualTo(c("offsetof(struct ibv_wc, src_qp)"));
        assertThat(RpmaCompletions.WC_FLAGS).isEqualTo(c("offsetof(struct ibv_wc, wc_flags)"));
        assertThat(RpmaCompletions.FLAG_WITH_IMM).isEqualTo(c("IBV_WC_WITH_IMM"));
        assertThat(c("IBV_WC_SUCCESS")).as("RpmaCompletions.isSuccess compares with 0").isZero();
    }

    @Test
    void opcodes() {
        assertThat(RpmaOpcode.SEND.code()).isEqualTo(c("IBV_WC_SEND"));
        assertThat(RpmaOpcode.RDMA_WRITE.code()).isEqualTo(c("IBV_WC_RDMA_WRITE"));
        assertThat(RpmaOpcode.RDMA_READ.code()).isEqualTo(c("IBV_WC_RDMA_READ"));
        assertThat(RpmaOpcode.COMP_SWAP.code()).isEqualTo(c("IBV_WC_COMP_SWAP"));
        assertThat(RpmaOpcode.FETCH_ADD.code()).isEqualTo(c("IBV_WC_FETCH_ADD"));
        assertThat(RpmaOpcode.BIND_MW.code()).isEqualTo(c("IBV_WC_BIND_MW"));
        assertThat(RpmaOpcode.LOCAL_INV.code()).isEqualTo(c("IBV_WC_LOCAL_INV"));
        assertThat(RpmaOpcode.RECV.code()).isEqualTo(c("IBV_WC_RECV"));
        assertThat(RpmaOpcode.RECV_RDMA_WITH_IMM.code()).isEqualTo(c("IBV_WC_RECV_RDMA_WITH_IMM"));
    }

    @Test
    void privateDataStructFitsTheScratchSlot() {
        // Scratch writes the pointer at PDATA_STRUCT and the length byte at PDATA_STRUCT + 8
        assertThat(c("offsetof(struct rpma_conn_private_data, ptr)")).isZero();
        assertThat(c("offsetof(struct rpma_conn_private_data, len)")).isEqualTo(8);
        assertThat(Scratch.PDATA_STRUCT + c("sizeof(struct rpma_conn_private_data)")).as("ends before the bytes")
                .isLessThanOrEqualTo(Scratch.BYTES);
        assertThat(Scratch.PDATA_STRUCT).isGreaterThanOrEqualTo(Scratch.OUT2 + 8);
        assertThat(Scratch.SIZE - Scratch.BYTES).as("room for 255 bytes of private data")
                .isGreaterThanOrEqualTo(RpmaConnectionRequest.MAX_PRIVATE_DATA);
    }

    @Test
    void errorCodes() {
        for (RpmaError error : RpmaError.values()) {
            assertThat(error.code()).as(error.cName()).isEqualTo(c(error.cName()));
        }
    }

    @Test
    void connectionEvents() {
        for (RpmaConnectionEvent event : RpmaConnectionEvent.values()) {
            assertThat(event.code()).as(event.name()).isEqualTo(c("RPMA_CONN_" + event.name()));
        }
    }

    @Test
    void flagsAndEnums() {
        for (MemoryUsage usage : MemoryUsage.values()) {
            assertThat(usage.flag()).as(usage.name()).isEqualTo(c("RPMA_MR_USAGE_" + usage.name()));
        }
        for (FlushType type : FlushType.values()) {
            assertThat(type.code).as(type.name()).isEqualTo(c("RPMA_FLUSH_TYPE_" + type.name()));
        }
        assertThat(CompletionMode.ON_ERROR.flags).isEqualTo(c("RPMA_F_COMPLETION_ON_ERROR"));
        assertThat(CompletionMode.ALWAYS.flags).isEqualTo(c("RPMA_F_COMPLETION_ALWAYS"));
        assertThat(PeerRole.SERVER.code()).isEqualTo(c("RPMA_UTIL_IBV_CONTEXT_LOCAL"));
        assertThat(PeerRole.CLIENT.code()).isEqualTo(c("RPMA_UTIL_IBV_CONTEXT_REMOTE"));
    }

    @Test
    void logging() {
        assertThat(RpmaLog.Level.DISABLED.code).isEqualTo(c("RPMA_LOG_DISABLED"));
        for (RpmaLog.Level level : RpmaLog.Level.values()) {
            if (level != RpmaLog.Level.DISABLED) {
                assertThat(level.code).as(level.name()).isEqualTo(c("RPMA_LOG_LEVEL_" + level.name()));
            }
        }
        assertThat(RpmaLog.Threshold.PRIMARY.code).isEqualTo(c("RPMA_LOG_THRESHOLD"));
        assertThat(RpmaLog.Threshold.AUX.code).isEqualTo(c("RPMA_LOG_THRESHOLD_AUX"));
        assertThat(NativeLogFunction.DEFAULT_FUNCTION).isEqualTo(c("RPMA_LOG_USE_DEFAULT_FUNCTION"));
    }

    @Test
    void libcConstants() throws ReflectiveOperationException {
        assertThat(LibC.F_GETFL).isEqualTo(c("F_GETFL"));
        assertThat(LibC.F_SETFL).isEqualTo(c("F_SETFL"));
        assertThat(LibC.O_NONBLOCK).isEqualTo(c("O_NONBLOCK"));
        assertThat(LibC.POLLIN).isEqualTo((short) c("POLLIN"));
        assertThat(LibC.EFD_CLOEXEC).isEqualTo(c("EFD_CLOEXEC"));
        assertThat(LibC.EFD_NONBLOCK).isEqualTo(c("EFD_NONBLOCK"));
        assertThat(LibC.EINTR).isEqualTo(c("EINTR"));
        assertThat(LibC.EAGAIN).isEqualTo(c("EAGAIN"));
        assertThat(LibC.RLIMIT_MEMLOCK).isEqualTo(c("RLIMIT_MEMLOCK"));
        assertThat(LibC.RLIM_INFINITY).isEqualTo(c("RLIM_INFINITY"));
        assertThat(LibC.RLIMIT_SIZE).isEqualTo(c("sizeof(struct rlimit)"));
        assertThat(c("offsetof(struct rlimit, rlim_cur)")).isZero();
        assertThat(c("offsetof(struct rlimit, rlim_max)")).isEqualTo(8);
        assertThat(LibC.SC_PAGESIZE).isEqualTo(c("_SC_PAGESIZE"));
        Field pollFdSize = FdPoller.class.getDeclaredField("POLLFD_SIZE");
        pollFdSize.setAccessible(true);
        assertThat(pollFdSize.getInt(null)).isEqualTo(c("sizeof(struct pollfd)"));
    }

    /** Every status name, and the constants the server compares with, are rdma-core's. */
    @Test
    void completionStatuses() throws IllegalAccessException {
        for (int status = 0; status <= 21; status++) {
            assertThat(c(CompletionStatus.name(status))).as(CompletionStatus.name(status)).isEqualTo(status);
        }
        assertThat(CompletionStatus.name(22)).isEqualTo("ibv_wc_status 22");
        for (Field field : CompletionStatus.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class) {
                assertThat(CompletionStatus.name(field.getInt(null))).as(field.getName())
                    .isEqualTo("IBV_WC_" + field.getName());
            }
        }
    }

    @Test
    void errnoValues() throws IllegalAccessException {
        int checked = 0;
        for (Field field : Errno.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == int.class) {
                assertThat(field.getInt(null)).as(field.getName()).isEqualTo(c(field.getName()));
                assertThat(Errno.name(field.getInt(null))).isEqualTo(field.getName());
                checked++;
            }
        }
        assertThat(checked).isEqualTo(27);
    }
}
