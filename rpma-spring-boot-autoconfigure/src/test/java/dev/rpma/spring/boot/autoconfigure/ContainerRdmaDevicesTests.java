package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.diagnostics.FailureAnalysis;

import dev.rpma.binding.Errno;
import dev.rpma.binding.RpmaError;
import dev.rpma.binding.RpmaException;
import dev.rpma.binding.RpmaFailureKind;
import dev.rpma.server.RpmaListenException;

import static org.assertj.core.api.Assertions.assertThat;

/** A container without the machine's RDMA devices, on a fake root file system. */
class ContainerRdmaDevicesTests {

    @TempDir
    Path root;

    @Test
    void outsideAContainerNothingIsMissing() throws IOException {
        sysfsDevices("uverbs0");
        assertThat(ContainerRdmaDevices.inContainer(this.root)).isFalse();
        assertThat(ContainerRdmaDevices.missing(this.root)).isEmpty();
    }

    @Test
    void dockersMarkerFileWithoutDeviceFilesNamesEveryMissingFile() throws IOException {
        Files.createFile(this.root.resolve(".dockerenv"));
        sysfsDevices("uverbs1", "uverbs0");
        assertThat(ContainerRdmaDevices.missing(this.root)).containsExactly("/dev/infiniband/rdma_cm",
                "/dev/infiniband/uverbs0", "/dev/infiniband/uverbs1");
    }

    @Test
    void aKubernetesCgroupIsAContainerAndOnlyTheFilesNotPassedInAreMissing() throws IOException {
        Files.createDirectories(this.root.resolve("proc/1"));
        Files.writeString(this.root.resolve("proc/1/cgroup"), "0::/kubepods/besteffort/pod1234/abcd\n");
        sysfsDevices("uverbs0", "uverbs1");
        deviceFiles("rdma_cm", "uverbs1");
        assertThat(ContainerRdmaDevices.inContainer(this.root)).isTrue();
        assertThat(ContainerRdmaDevices.missing(this.root)).containsExactly("/dev/infiniband/uverbs0");
    }

    @Test
    void everyDevicePassedInMissesNothing() throws IOException {
        Files.createDirectories(this.root.resolve("run"));
        Files.createFile(this.root.resolve("run/.containerenv"));
        sysfsDevices("uverbs0");
        deviceFiles("rdma_cm", "uverbs0");
        assertThat(ContainerRdmaDevices.inContainer(this.root)).isTrue();
        assertThat(ContainerRdmaDevices.missing(this.root)).isEmpty();
    }

    @Test
    void aMachineWithoutRdmaDevicesMissesNothingAFlagCouldAdd() throws IOException {
        Files.createFile(this.root.resolve(".dockerenv"));
        assertThat(ContainerRdmaDevices.missing(this.root)).isEmpty();
    }

    @Test
    void theListenFailureNamesTheDockerFlagsAndTheKubernetesFields() throws IOException {
        Files.createFile(this.root.resolve(".dockerenv"));
        sysfsDevices("uverbs0", "uverbs2");
        deviceFiles("uverbs2");
        FailureAnalysis analysis = new RpmaListenFailureAnalyzer(this.root).analyze(noDevice());
        assertThat(analysis.getDescription()).isEqualTo("RDMA endpoint 'default' could not listen on 198.18.0.1:7204:"
                + " this process runs in a container without the machine's RDMA devices (/dev/infiniband/rdma_cm,"
                + " /dev/infiniband/uverbs0 missing; rpma_utils_get_ibv_context() failed with RPMA_E_PROVIDER"
                + " (-100002): Provider error occurred; errno 19 (ENODEV)).");
        assertThat(analysis.getAction())
            .contains("'docker run --device /dev/infiniband/rdma_cm --device /dev/infiniband/uverbs0 --network host"
                    + " --ulimit memlock=-1:-1 ...'")
            .contains("RDMA device plugin's resource")
            .contains("hostNetwork: true")
            .contains("IPC_LOCK")
            .doesNotContain("soft-RoCE");
    }

    @Test
    void outsideAContainerTheListenFailureIsAnalyzedAsBefore() throws IOException {
        sysfsDevices("uverbs0");
        FailureAnalysis analysis = new RpmaListenFailureAnalyzer(this.root).analyze(noDevice());
        assertThat(analysis.getDescription()).startsWith("RDMA endpoint 'default' could not listen: no RDMA device serves");
        assertThat(analysis.getAction()).doesNotContain("--device");
    }

    private static RpmaListenException noDevice() {
        String function = "rpma_utils_get_ibv_context";
        int code = RpmaError.PROVIDER.code();
        return new RpmaListenException("default", "198.18.0.1", 7204, new RpmaException(function, code,
                "Provider error occurred", Errno.ENODEV,
                RpmaFailureKind.classify(function, code, Errno.ENODEV).hint("198.18.0.1", 0)));
    }

    private void sysfsDevices(String... names) throws IOException {
        Path verbs = Files.createDirectories(this.root.resolve("sys/class/infiniband_verbs"));
        for (String name : names) {
            Files.createDirectories(verbs.resolve(name));
        }
    }

    private void deviceFiles(String... names) throws IOException {
        Path devices = Files.createDirectories(this.root.resolve("dev/infiniband"));
        for (String name : names) {
            Files.createFile(devices.resolve(name));
        }
    }
}
