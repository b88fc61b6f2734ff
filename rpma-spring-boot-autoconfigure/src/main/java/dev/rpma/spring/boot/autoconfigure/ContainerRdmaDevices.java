package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The RDMA device files a container was not given. The kernel shows every RDMA device in sysfs, also
 * inside a container (sysfs does not hide them), but a process can use one only through its
 * character devices in {@code /dev/infiniband}, which a container has only when they are passed in
 * ({@code docker run --device}, or a Kubernetes device plugin). So when this process runs in a
 * container and sysfs lists devices whose files are missing, that is why no device serves the
 * address, and the missing files name the flags to add.
 */
final class ContainerRdmaDevices {

    /** The connection manager's device, needed for any RDMA connection. */
    static final String RDMA_CM = "/dev/infiniband/rdma_cm";

    private static final List<String> CONTAINER_CGROUPS = List.of("docker", "kubepods", "containerd", "libpod", "crio");

    private ContainerRdmaDevices() {
    }

    /**
     * The device files under {@code root} that the machine's RDMA devices need and that are missing,
     * when this is a container; empty when it is not one, when nothing is missing, or when the kernel
     * shows no RDMA device at all (then no flag helps).
     */
    static List<String> missing(Path root) {
        if (!inContainer(root)) {
            return List.of();
        }
        List<String> verbs = list(root.resolve("sys/class/infiniband_verbs"), "uverbs");
        if (verbs.isEmpty()) {
            return List.of();
        }
        List<String> missing = new ArrayList<>();
        if (!Files.exists(root.resolve(RDMA_CM.substring(1)))) {
            missing.add(RDMA_CM);
        }
        for (String device : verbs) {
            if (!Files.exists(root.resolve("dev/infiniband").resolve(device))) {
                missing.add("/dev/infiniband/" + device);
            }
        }
        return List.copyOf(missing);
    }

    /** Docker's and Podman's marker files, or a container runtime's cgroup. */
    static boolean inContainer(Path root) {
        if (Files.exists(root.resolve(".dockerenv")) || Files.exists(root.resolve("run/.containerenv"))) {
            return true;
        }
        try {
            String cgroups = Files.readString(root.resolve("proc/1/cgroup"), StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
            return CONTAINER_CGROUPS.stream().anyMatch(cgroups::contains);
        }
        catch (IOException | RuntimeException ex) {
            return false;
        }
    }

    private static List<String> list(Path directory, String prefix) {
        if (!Files.isDirectory(directory)) {
            return List.of();
        }
        try (Stream<Path> entries = Files.list(directory)) {
            return entries.map((entry) -> entry.getFileName().toString())
                .filter((name) -> name.startsWith(prefix))
                .sorted()
                .toList();
        }
        catch (IOException ex) {
            return List.of();
        }
    }
}
