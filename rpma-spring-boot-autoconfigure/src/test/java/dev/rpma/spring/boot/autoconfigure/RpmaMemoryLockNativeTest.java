package dev.rpma.spring.boot.autoconfigure;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.io.MemoryLockLimit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The start-up check against a real limit: a child JVM under {@code prlimit --memlock=65536}, without
 * {@code CAP_IPC_LOCK} ({@code setpriv} drops it when this process has it, as root does), starts the
 * auto-configuration over the installed librpma with a 1 MB region. The check runs before any peer is
 * opened, so no RDMA device is needed to reach it: the JVM reads the 64 KiB limit itself, fails with
 * {@code RpmaMemoryLockException}, and Boot's analysis is the analyzer's.
 */
class RpmaMemoryLockNativeTest {

    @Test
    void aProcessUnderUlimit64FailsAtStartWithTheAnalyzersMessage() throws IOException, InterruptedException {
        assumeTrue(Rpma.isAvailable(), "librpma is not installed");
        assumeTrue(onPath("prlimit"), "prlimit (util-linux) is needed");
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        List<String> command = new ArrayList<>(List.of("prlimit", "--memlock=65536:65536"));
        if (MemoryLockLimit.current().ipcLockCapable()) {
            assumeTrue(onPath("setpriv"), "setpriv (util-linux) is needed to drop CAP_IPC_LOCK");
            command.addAll(List.of("setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"));
        }
        command.addAll(List.of(java, "-cp", System.getProperty("java.class.path"),
                MemoryLockLimitedApplication.class.getName()));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(line(output, MemoryLockLimitedApplication.LIMIT))
            .isEqualTo(new MemoryLockLimit(65536, 65536, false, MemoryLockLimit.current().pageSize()).toString());
        assertThat(line(output, MemoryLockLimitedApplication.FAILURE))
            .isEqualTo("dev.rpma.server.RpmaMemoryLockException");
        assertThat(line(output, MemoryLockLimitedApplication.DESCRIPTION)).startsWith("The RDMA server registers")
            .contains("region 'catalog' on the peer of 198.18.0.1", "this process may lock only 64 KiB (RLIMIT_MEMLOCK)");
        assertThat(line(output, MemoryLockLimitedApplication.ACTION)).contains("'ulimit -l unlimited'",
                "'docker run --ulimit memlock=-1:-1'", "'LimitMEMLOCK=infinity'");
    }

    private static String line(String output, String prefix) {
        return output.lines()
            .filter((line) -> line.startsWith(prefix))
            .map((line) -> line.substring(prefix.length()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no line " + prefix + " in " + output));
    }

    private static boolean onPath(String program) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("sh", "-c", "command -v " + program).start();
        return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    }
}
