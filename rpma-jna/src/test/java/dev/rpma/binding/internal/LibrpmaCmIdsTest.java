package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

/**
 * The layout check of {@link LibrpmaCmIds} on requests built in native memory as librpma 1.2/1.3 lay
 * them out: the id is taken only when every checked field holds, and nothing behind a failed check is
 * dereferenced.
 */
class LibrpmaCmIdsTest {

    private static final long PEER = 0x5500_0000_1000L;

    private static final long CONTEXT = 0x5500_0000_2000L;

    private static final long QP = 0x5500_0000_3000L;

    private final ByteBuffer cmId = NativeMemory.allocate(64);

    private final ByteBuffer privateData = NativeMemory.allocate(16);

    private final ByteBuffer request = NativeMemory.allocate(LibrpmaCmIds.REQ_SIZE);

    LibrpmaCmIdsTest() {
        this.cmId.putLong(LibrpmaCmIds.ID_VERBS, CONTEXT).putLong(LibrpmaCmIds.ID_QP, QP);
        this.request.putInt(LibrpmaCmIds.REQ_IS_PASSIVE, 1)
            .putLong(LibrpmaCmIds.REQ_ID, NativeMemory.address(this.cmId))
            .putLong(LibrpmaCmIds.REQ_DATA_PTR, NativeMemory.address(this.privateData))
            .put(LibrpmaCmIds.REQ_DATA_LEN, (byte) 14)
            .putLong(LibrpmaCmIds.REQ_PEER, PEER);
    }

    private long check() {
        return LibrpmaCmIds.check(NativeMemory.address(this.request), PEER, CONTEXT, NativeMemory.address(this.privateData),
                14);
    }

    @Test
    void aRequestLaidOutAsLibrpmaDoesGivesItsId() {
        assertThat(check()).isEqualTo(NativeMemory.address(this.cmId));
    }

    @Test
    void anActiveRequestIsNotRead() {
        this.request.putInt(LibrpmaCmIds.REQ_IS_PASSIVE, 0);
        assertThat(check()).isZero();
    }

    @Test
    void anotherPeerMeansAnotherLayout() {
        this.request.putLong(LibrpmaCmIds.REQ_PEER, PEER + 8);
        assertThat(check()).isZero();
    }

    @Test
    void privateDataElsewhereMeansAnotherLayout() {
        this.request.put(LibrpmaCmIds.REQ_DATA_LEN, (byte) 13);
        assertThat(check()).isZero();
        this.request.put(LibrpmaCmIds.REQ_DATA_LEN, (byte) 14).putLong(LibrpmaCmIds.REQ_DATA_PTR, 0);
        assertThat(check()).isZero();
    }

    @Test
    void anIdOfAnotherDeviceOrWithoutQueuePairIsNotTaken() {
        this.cmId.putLong(LibrpmaCmIds.ID_VERBS, CONTEXT + 8);
        assertThat(check()).isZero();
        this.cmId.putLong(LibrpmaCmIds.ID_VERBS, CONTEXT).putLong(LibrpmaCmIds.ID_QP, 0);
        assertThat(check()).isZero();
    }

    @Test
    void aMisalignedOrNullIdIsNeverDereferenced() {
        // an id pointer that would fault if read: the check must stop at it
        this.request.putLong(LibrpmaCmIds.REQ_ID, 0x13);
        assertThat(check()).isZero();
        this.request.putLong(LibrpmaCmIds.REQ_ID, 0);
        assertThat(check()).isZero();
    }

    @Test
    void librdmacmBindsWhereLibrpmaIsInstalled() {
        assertThat(LibrpmaCmIds.bind()).isInstanceOf(LibrpmaCmIds.class);
    }
}
