package dev.rpma.binding.io;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * {@link MemoryLockLimit#current()} against the kernel: what the shell's {@code ulimit -l} says of
 * this process's limit, and, in a child JVM started under {@code prlimit --memlock} with
 * {@code CAP_IPC_LOCK} dropped from its capability sets ({@code setpriv}), exactly the limit it was
 * given and no capability.
 */
class MemoryLockLimitNativeTest {

    @Test
    void readsWhatTheShellReportsForThisProcess() throws IOException, InterruptedException {
        String ulimit = run(List.of("sh", "-c", "ulimit -l")).trim();
        MemoryLockLimit limit = MemoryLockLimit.current();
        if (ulimit.equals("unlimited")) {
            assertThat(limit.softBytes()).isEqualTo(MemoryLockLimit.UNLIMITED);
        }
        else {
            assertThat(limit.softBytes()).isEqualTo(Long.parseLong(ulimit) * 1024);
        }
        assertThat(limit.hardBytes()).isGreaterThanOrEqualTo(limit.softBytes());
        assertThat(limit.pageSize()).isEqualTo(Integer.parseInt(run(List.of("getconf", "PAGESIZE")).trim()));
        assertThat(limit.ipcLockCapable()).isEqualTo(MemoryLockLimit.holdsIpcLock(
                Files.readString(Path.of("/proc/self/status"))));
    }

    @Test
    void readsTheLimitAChildWasStartedWithAndThatItLacksTheCapability() throws IOException, InterruptedException {
        assumeTrue(onPath("prlimit"), "prlimit (util-linux) is needed");
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        // lowered, which needs no privilege; the hard limit no higher than a container's default
        List<String> command = new ArrayList<>(List.of("prlimit", "--memlock=32768:65536"));
        if (MemoryLockLimit.current().ipcLockCapable()) {
            assumeTrue(onPath("setpriv"), "setpriv (util-linux) is needed to drop CAP_IPC_LOCK");
            command.addAll(List.of("setpriv", "--inh-caps=-ipc_lock", "--bounding-set=-ipc_lock"));
        }
        command.addAll(List.of(java, "-cp", System.getProperty("java.class.path"), PrintMemoryLockLimit.class.getName()));
        assertThat(run(command)).contains("soft=32768 hard=65536 ipcLock=false");
    }

    /** Run in the child JVM: prints what it reads. */
    public static final class PrintMemoryLockLimit {

        public static void main(String[] args) {
            MemoryLockLimit limit = MemoryLockLimit.current();
            System.out.println("soft=" + limit.softBytes() + " hard=" + limit.hardBytes() + " ipcLock="
                    + limit.ipcLockCapable());
        }
    }

    private static boolean onPath(String program) throws IOException, InterruptedException {
        Process process = new ProcessBuilder("sh", "-c", "command -v " + program).start();
        return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
    }

    private static String run(List<String> command) throws IOException, InterruptedException {
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(2, TimeUnit.MINUTES)).as(output).isTrue();
        assertThat(process.exitValue()).as(String.join(" ", command) + ": " + output).isZero();
        return output;
    }
}
