package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Random;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import dev.rpma.binding.MemoryUsage;

/**
 * A region's backing store on the host, with temporary files: what a mapped file keeps across a
 * reopen, what is refused (a missing file, MAP_SYNC on a file system without DAX, a definition that
 * claims persistence its store does not give), and the durability call's range.
 */
class RpmaBackingStoreTest {

    @TempDir
    Path dir;

    @Test
    void aFileRegionKeepsWhatWasWrittenAcrossAReopen() throws IOException {
        Path file = this.dir.resolve("region");
        byte[] written = new byte[8192];
        new Random(22).nextBytes(written);

        RpmaBackingStore first = RpmaBackingStore.mapFile(file, 8192, true);
        assertThat(first.kind()).isEqualTo(RpmaBackingStore.Kind.FILE);
        assertThat(first.memory().isDirect()).isTrue();
        assertThat(first.persistentOnArrival()).isFalse();
        first.memory().put(0, written);
        first.makeDurable(0, 8192);

        assertThat(Files.readAllBytes(file)).as("the file itself, read without the mapping").isEqualTo(written);
        RpmaBackingStore reopened = RpmaBackingStore.mapFile(file, 8192, false);
        byte[] read = new byte[8192];
        reopened.memory().get(0, read);
        assertThat(read).isEqualTo(written);
    }

    @Test
    void aShorterFileIsExtendedWithZerosAndALongerOneKeepsItsTail() throws IOException {
        Path file = this.dir.resolve("short");
        Files.write(file, new byte[] { 7, 7 });
        RpmaBackingStore store = RpmaBackingStore.mapFile(file, 4096, false);
        assertThat(Files.size(file)).isEqualTo(4096);
        assertThat(store.memory().get(1)).isEqualTo((byte) 7);
        assertThat(store.memory().get(2)).isZero();

        RpmaBackingStore smaller = RpmaBackingStore.mapFile(file, 16, false);
        assertThat(smaller.memory().capacity()).isEqualTo(16);
        assertThat(Files.size(file)).as("nothing cut off").isEqualTo(4096);
    }

    @Test
    void aMissingFileIsCreatedOnlyWhenAsked() {
        Path file = this.dir.resolve("missing");
        assertThatThrownBy(() -> RpmaBackingStore.mapFile(file, 64, false))
            .isInstanceOfSatisfying(RpmaRegionStoreException.class, (ex) -> {
                assertThat(ex.path()).isEqualTo(file);
                assertThat(ex.getMessage()).contains(file.toString(), "does not exist and create-if-missing is off");
            });
        assertThat(file).doesNotExist();
        assertThat(RpmaBackingStore.mapFile(file, 64, true).memory().capacity()).isEqualTo(64);
        assertThat(file).exists();
    }

    @Test
    void mapSyncOnAFileSystemWithoutDaxIsRefusedWithWhatToDo() {
        // a temporary directory is never on a DAX mount where these tests run (tmpfs, ext4 or overlay on disk)
        Path file = this.dir.resolve("not-pmem");
        assertThatThrownBy(() -> RpmaBackingStore.mapDax(file, 4096, true))
            .isInstanceOfSatisfying(RpmaRegionStoreException.class, (ex) -> {
                assertThat(ex.kind()).isEqualTo(RpmaBackingStore.Kind.DAX);
                assertThat(ex.getMessage()).contains("MAP_SYNC", "not on a DAX file system", "-o dax");
            });
    }

    @Test
    void aCharacterDeviceThatIsNotADeviceDaxIsRefusedWithWhatToDo() {
        assertThatThrownBy(() -> RpmaBackingStore.mapDax(Path.of("/dev/null"), 4096, true))
            .isInstanceOfSatisfying(RpmaRegionStoreException.class, (ex) -> {
                assertThat(ex.kind()).isEqualTo(RpmaBackingStore.Kind.DAX);
                assertThat(ex.path()).isEqualTo(Path.of("/dev/null"));
                assertThat(ex.getMessage()).contains("/dev/null is not a device DAX",
                        "ndctl create-namespace --mode=devdax");
            });
    }

    @Test
    void aMissingDeviceIsNeverCreatedAndTheFailureSaysHowToMakeOrPassOne() {
        Path device = Path.of("/dev/dax-rpma-test-missing");
        assertThatThrownBy(() -> RpmaBackingStore.mapDax(device, 4096, true))
            .isInstanceOfSatisfying(RpmaRegionStoreException.class, (ex) -> assertThat(ex.getMessage())
                .contains("no such device", "ndctl create-namespace --mode=devdax", "--device " + device));
        assertThat(device).doesNotExist();
    }

    @Test
    void sizesOutsideOneByteToTwoGigabytesAreRefused() {
        assertThatThrownBy(() -> RpmaBackingStore.mapFile(this.dir.resolve("x"), 0, true))
            .hasMessageContaining("from 1 byte to 2GB");
        assertThatThrownBy(() -> RpmaBackingStore.mapFile(this.dir.resolve("x"), 1L << 31, true))
            .hasMessageContaining("from 1 byte to 2GB");
        assertThatThrownBy(() -> RpmaBackingStore.allocate(0)).hasMessageContaining("at least one byte");
    }

    @Test
    void makingARangeDurableChecksTheRangeAndDoesNothingForProcessMemory() {
        RpmaBackingStore volatileStore = RpmaBackingStore.allocate(32);
        volatileStore.makeDurable(0, 32);
        assertThatThrownBy(() -> volatileStore.makeDurable(30, 4)).isInstanceOf(IndexOutOfBoundsException.class);
        RpmaBackingStore file = RpmaBackingStore.mapFile(this.dir.resolve("f"), 32, true);
        assertThatThrownBy(() -> file.makeDurable(-1, 4)).isInstanceOf(IndexOutOfBoundsException.class);
        file.makeDurable(31, 1);
        file.makeDurable(0, 0);
    }

    @Test
    void makingAFileRegionDurableChangesNoByteOfItNorOfTheFile() throws IOException {
        // pages are dirtied by an atomic add of zero: the content must be exactly what was written
        Path file = this.dir.resolve("touched");
        int size = 3 * 4096 + 5;
        byte[] written = new byte[size];
        new Random(9).nextBytes(written);
        RpmaBackingStore store = RpmaBackingStore.mapFile(file, size, true);
        store.memory().put(0, written);
        store.makeDurable(1, size - 1);
        store.makeDurable(3 * 4096, 5);
        byte[] read = new byte[size];
        store.memory().get(0, read);
        assertThat(read).isEqualTo(written);
        assertThat(Files.readAllBytes(file)).isEqualTo(written);
    }

    @Test
    void aDefinitionThatPromisesPersistenceItsStoreDoesNotGiveIsRefused() {
        RpmaBackingStore file = RpmaBackingStore.mapFile(this.dir.resolve("f"), 64, true);
        assertThatThrownBy(() -> new RpmaRegionDefinition("log", file,
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_PERSISTENT), Set.of(), false))
            .hasMessageContaining("Region 'log' declares FLUSH_TYPE_PERSISTENT, but its memory (FILE ")
            .hasMessageContaining("not persistent memory mapped with MAP_SYNC");
        assertThatThrownBy(() -> new RpmaRegionDefinition("log", file,
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of(), true))
            .hasMessageContaining("Region 'log' declares direct write to PMem, but its memory (FILE ");
        assertThatThrownBy(() -> new RpmaRegionDefinition("log", RpmaBackingStore.allocate(64),
                EnumSet.of(MemoryUsage.FLUSH_TYPE_PERSISTENT), Set.of(), false))
            .hasMessageContaining("its memory (VOLATILE)");

        RpmaRegionDefinition visible = new RpmaRegionDefinition("log", file,
                EnumSet.of(MemoryUsage.WRITE_DST, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of(), false);
        assertThat(visible.memory()).isSameAs(file.memory());
        RpmaBackingStore pmem = RpmaBackingStore.assumedPersistentForTests(ByteBuffer.allocateDirect(64), this.dir.resolve("pmem"));
        assertThat(new RpmaRegionDefinition("log", pmem, EnumSet.of(MemoryUsage.WRITE_DST,
                MemoryUsage.FLUSH_TYPE_PERSISTENT, MemoryUsage.FLUSH_TYPE_VISIBILITY), Set.of(), true).directWriteToPmem())
            .isTrue();
    }

    @Test
    void aHeapBufferIsNotARegion() {
        assertThatThrownBy(() -> RpmaBackingStore.of(ByteBuffer.allocate(8))).hasMessageContaining("direct ByteBuffer");
    }
}
