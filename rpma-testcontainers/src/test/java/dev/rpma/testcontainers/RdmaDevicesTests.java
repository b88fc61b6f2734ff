package dev.rpma.testcontainers;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;

import com.github.dockerjava.api.command.CreateContainerCmd;
import com.github.dockerjava.api.model.Device;
import com.github.dockerjava.api.model.HostConfig;
import com.github.dockerjava.api.model.Ulimit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/** The customizer on a fake {@code /dev/infiniband}: no docker daemon needed. */
class RdmaDevicesTests {

    @TempDir
    Path dev;

    @Test
    void findsTheConnectionManagerAndEveryVerbsDeviceInOrder() throws IOException {
        files("uverbs10", "uverbs2", "rdma_cm", "umad0", "issm0", "uverbs0");
        RdmaDevices devices = RdmaDevices.in(this.dev);
        assertThat(devices.devices()).containsExactly(this.dev.resolve("rdma_cm"), this.dev.resolve("uverbs0"),
                this.dev.resolve("uverbs2"), this.dev.resolve("uverbs10"));
        assertThat(devices.isAvailable()).isTrue();
    }

    @Test
    void withoutTheDirectoryThereIsNothingToPassIn() {
        RdmaDevices devices = RdmaDevices.in(this.dev.resolve("infiniband"));
        assertThat(devices.devices()).isEmpty();
        assertThat(devices.isAvailable()).isFalse();
        assertThatIllegalStateException().isThrownBy(() -> devices.applyTo(new GenericContainer<>(image())))
            .withMessageContaining("No RDMA devices in " + this.dev.resolve("infiniband"));
    }

    @Test
    void theConnectionManagerAloneIsNotEnough() throws IOException {
        files("rdma_cm");
        assertThat(RdmaDevices.in(this.dev).isAvailable()).isFalse();
        files("uverbs3");
        assertThat(RdmaDevices.in(this.dev).isAvailable()).isTrue();
    }

    @Test
    void aContainerGetsTheHostsNetworkAndTheDevicesWhenItIsCreated() throws IOException {
        files("rdma_cm", "uverbs0", "uverbs1");
        GenericContainer<?> container = RdmaDevices.in(this.dev).applyTo(new GenericContainer<>(image()));
        assertThat(container.getNetworkMode()).isEqualTo("host");
        assertThat(container.getCreateContainerCmdModifiers()).hasSize(1);
        HostConfig hostConfig = HostConfig.newHostConfig()
            .withDevices(new Device("r", "/dev/fuse", "/dev/fuse"))
            .withUlimits(new Ulimit[] { new Ulimit("nofile", 4096L, 4096L), new Ulimit("memlock", 65536L, 65536L) });
        CreateContainerCmd command = command(hostConfig);
        container.getCreateContainerCmdModifiers().forEach((modifier) -> modifier.modify(command));
        assertThat(hostConfig.getDevices()).extracting(Device::getPathOnHost, Device::getPathInContainer,
                Device::getcGroupPermissions)
            .containsExactly(tuple("/dev/fuse", "/dev/fuse", "r"), devices("rdma_cm"), devices("uverbs0"),
                    devices("uverbs1"));
        assertThat(hostConfig.getUlimits()).extracting(Ulimit::getName, Ulimit::getSoftLong, Ulimit::getHardLong)
            .containsExactly(tuple("nofile", 4096L, 4096L), tuple("memlock", -1L, -1L));
        assertThat(hostConfig.getNetworkMode()).isEqualTo("host");
    }

    private org.assertj.core.groups.Tuple devices(String name) {
        String path = this.dev.resolve(name).toString();
        return tuple(path, path, "rwm");
    }

    private static org.assertj.core.groups.Tuple tuple(Object... values) {
        return org.assertj.core.groups.Tuple.tuple(values);
    }

    /** Only {@code getHostConfig()} answers: what the customizer reads. */
    private static CreateContainerCmd command(HostConfig hostConfig) {
        return (CreateContainerCmd) Proxy.newProxyInstance(RdmaDevicesTests.class.getClassLoader(),
                new Class<?>[] { CreateContainerCmd.class }, (proxy, method, arguments) -> {
                    if (method.getName().equals("getHostConfig")) {
                        return hostConfig;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }

    private static DockerImageName image() {
        return DockerImageName.parse("rpma/c-clients:latest");
    }

    private void files(String... names) throws IOException {
        for (String name : names) {
            Files.createFile(this.dev.resolve(name));
        }
    }
}
