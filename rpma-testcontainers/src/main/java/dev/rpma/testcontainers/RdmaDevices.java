package dev.rpma.testcontainers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.Device;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.core.CreateContainerCmdModifier;

/**
 * The RDMA devices of the machine the containers run on, and what a container needs to use them:
 * the device files ({@code /dev/infiniband/rdma_cm} and every {@code uverbs<N>}, as
 * {@code docker run --device}), the host's network (RDMA devices serve the host's addresses, and
 * soft-RoCE works only in the initial network namespace) and no limit on locked memory (RDMA
 * registers memory), as {@code docker run --network host --ulimit memlock=-1:-1} does.
 *
 * <pre>{@code
 * RdmaDevices rdma = RdmaDevices.ofHost();
 * assumeTrue(rdma.isAvailable(), "no RDMA device on this machine");
 * GenericContainer<?> server = rdma.applyTo(new GenericContainer<>("my-rdma-server:latest"));
 * }</pre>
 *
 * The devices are found when this object is made, in the directory given (the docker daemon's
 * machine must be this one: the files are passed in by their paths).
 */
public final class RdmaDevices implements CreateContainerCmdModifier {

    /** Where the kernel puts RDMA device files. */
    public static final Path DEFAULT_DIRECTORY = Path.of("/dev/infiniband");

    private static final String RDMA_CM = "rdma_cm";

    private final Path directory;

    private final List<Path> devices;

    private RdmaDevices(Path directory, List<Path> devices) {
        this.directory = directory;
        this.devices = devices;
    }

    /** The devices in {@link #DEFAULT_DIRECTORY}. */
    public static RdmaDevices ofHost() {
        return in(DEFAULT_DIRECTORY);
    }

    /**
     * The devices in {@code directory}: {@code rdma_cm} and the verbs devices {@code uverbs<N>}, in
     * name order; none when the directory does not exist.
     */
    public static RdmaDevices in(Path directory) {
        if (!Files.isDirectory(directory)) {
            return new RdmaDevices(directory, List.of());
        }
        try (Stream<Path> entries = Files.list(directory)) {
            List<Path> found = entries.filter((entry) -> isRdmaDevice(entry.getFileName().toString()))
                .sorted((a, b) -> order(a).compareTo(order(b)))
                .toList();
            return new RdmaDevices(directory, found);
        }
        catch (IOException ex) {
            throw new UncheckedIOException("Cannot list " + directory, ex);
        }
    }

    private static boolean isRdmaDevice(String name) {
        return name.equals(RDMA_CM) || name.matches("uverbs\\d+");
    }

    /** {@code rdma_cm} first, then {@code uverbs<N>} by number. */
    private static String order(Path device) {
        String name = device.getFileName().toString();
        return name.equals(RDMA_CM) ? "" : String.format("%10s", name.substring("uverbs".length()));
    }

    /** The device files found, {@code rdma_cm} first. */
    public List<Path> devices() {
        return this.devices;
    }

    /** Whether a container can use RDMA here: the connection manager and at least one verbs device exist. */
    public boolean isAvailable() {
        return this.devices.stream().anyMatch((device) -> device.getFileName().toString().equals(RDMA_CM))
                && this.devices.size() > 1;
    }

    /**
     * Gives {@code container} the devices, the host's network and unlimited locked memory.
     *
     * @return the container
     * @throws IllegalStateException when there is no device to give ({@link #isAvailable()} is false)
     */
    public <C extends GenericContainer<?>> C applyTo(C container) {
        if (!isAvailable()) {
            throw new IllegalStateException("No RDMA devices in " + this.directory + " (found " + this.devices
                    + "; a container needs rdma_cm and a uverbs<N>): run on a machine with an RDMA device or a"
                    + " soft-RoCE device ('rdma link show' lists them)");
        }
        container.withNetworkMode("host");
        container.withCreateContainerCmdModifier(this::modify);
        return container;
    }

    /** Adds the devices and the memlock limit to the container's host configuration, keeping what it has. */
    @Override
    public CreateContainerCmd modify(CreateContainerCmd command) {
        HostConfig hostConfig = command.getHostConfig();
        if (hostConfig == null) {
            hostConfig = HostConfig.newHostConfig();
            command.withHostConfig(hostConfig);
        }
        customize(hostConfig);
        return command;
    }

    HostConfig customize(HostConfig hostConfig) {
        List<Device> devices = new ArrayList<>();
        if (hostConfig.getDevices() != null) {
            devices.addAll(List.of(hostConfig.getDevices()));
        }
        for (Path device : this.devices) {
            devices.add(new Device("rwm", device.toString(), device.toString()));
        }
        List<Ulimit> ulimits = new ArrayList<>();
        if (hostConfig.getUlimits() != null) {
            for (Ulimit ulimit : hostConfig.getUlimits()) {
                if (!"memlock".equals(ulimit.getName())) {
                    ulimits.add(ulimit);
                }
            }
        }
        ulimits.add(new Ulimit("memlock", -1L, -1L));
        return hostConfig.withDevices(devices).withUlimits(ulimits).withNetworkMode("host");
    }

    @Override
    public String toString() {
        return "RDMA devices " + this.devices + " in " + this.directory;
    }
}
