package dev.rpma.binding.pmem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * libpmem's mapping on the host, which has no persistent memory: a file mapped through libpmem is
 * written back by {@code persist}, is unmapped once nothing reaches its memory (and not while a view
 * of it does), and anything that is not a device DAX is refused with what to do.
 */
class PmemMappingTest {

    @TempDir
    Path dir;

    @Test
    void persistWritesTheRangeBackToTheFile() throws IOException {
        Path file = this.dir.resolve("persisted");
        PmemMapping mapping = PmemMapping.mapFile(file, 3 * 4096);
        assertThat(mapping.isPmem()).as("a temporary file is not persistent memory").isFalse();
        assertThat(mapping.length()).isEqualTo(3 * 4096);
        byte[] written = new byte[3 * 4096];
        new Random(22).nextBytes(written);
        mapping.memory().put(0, written);
        mapping.persist(0, written.length);

        assertThat(Files.readAllBytes(file)).isEqualTo(written);
        assertThatThrownBy(() -> mapping.persist(3 * 4096 - 1, 2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> mapping.persist(-1, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        mapping.persist(5, 0);
    }

    @Test
    void theMappingIsReleasedOnceNothingReachesItsMemoryAndNotWhileAViewDoes() throws Exception {
        Path file = this.dir.resolve("released");
        ByteBuffer view = viewOfAMappingNoOneElseHolds(file);
        assertThat(mapped(file)).isTrue();

        collectGarbage(() -> !mapped(file), 10);
        assertThat(mapped(file)).as("a view of the memory keeps the mapping").isTrue();
        assertThat(view.get(7)).isEqualTo((byte) 42);

        view = null;
        assertThat(collectGarbage(() -> !mapped(file), 400)).as("unmapped once unreachable").isTrue();
    }

    private static ByteBuffer viewOfAMappingNoOneElseHolds(Path file) throws IOException {
        PmemMapping mapping = PmemMapping.mapFile(file, 4096);
        mapping.memory().put(7, (byte) 42);
        return mapping.memory().slice(0, 64);
    }

    @Test
    void aCharacterDeviceThatIsNotADeviceDaxIsRefusedWithWhatToDo() {
        assertThatThrownBy(() -> PmemMapping.mapDeviceDax(Path.of("/dev/null")))
            .isInstanceOf(IOException.class)
            .hasMessageContaining("/dev/null is not a device DAX", "ndctl create-namespace --mode=devdax", "-o dax");
    }

    @Test
    void aRegularFileIsNotADeviceDax() throws IOException {
        Path file = Files.write(this.dir.resolve("plain"), new byte[4096]);
        assertThatThrownBy(() -> PmemMapping.mapDeviceDax(file)).isInstanceOf(IOException.class)
            .hasMessageContaining("is not a device DAX");
    }

    @Test
    void aMissingDeviceIsNoSuchFile() {
        assertThatThrownBy(() -> PmemMapping.mapDeviceDax(Path.of("/dev/dax-no-such-device")))
            .isInstanceOf(NoSuchFileException.class);
    }

    /** Whether this process maps {@code file} ({@code /proc/self/maps} names mapped files). */
    private static boolean mapped(Path file) {
        try {
            return Files.readString(Path.of("/proc/self/maps")).contains(file.toString());
        }
        catch (IOException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Collects garbage, up to {@code rounds} times 25 ms, until {@code done}; whether it got there. */
    private static boolean collectGarbage(java.util.function.BooleanSupplier done, int rounds) throws InterruptedException {
        for (int i = 0; i < rounds; i++) {
            System.gc();
            Thread.sleep(25);
            if (done.getAsBoolean()) {
                return true;
            }
        }
        return false;
    }
}
