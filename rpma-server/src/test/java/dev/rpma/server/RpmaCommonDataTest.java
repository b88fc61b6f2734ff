package dev.rpma.server;

import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class CommonDataTest {

    private static final byte[] DESCRIPTOR = descriptor();

    @Test
    void encodesTheExamplesLittleEndianLayout() {
        byte[] bytes = new RpmaCommonData(0x0102, DESCRIPTOR, new byte[] { 7, 8 }).encode();
        assertThat(bytes).hasSize(28);
        assertThat(bytes[0]).isEqualTo((byte) 0x02);
        assertThat(bytes[1]).isEqualTo((byte) 0x01);
        assertThat(bytes[2]).as("mr_desc_size").isEqualTo((byte) 21);
        assertThat(bytes[3]).as("pcfg_desc_size").isEqualTo((byte) 2);
        assertThat(Arrays.copyOfRange(bytes, 4, 25)).isEqualTo(DESCRIPTOR);
        assertThat(Arrays.copyOfRange(bytes, 25, 28)).containsExactly(7, 8, 0);
    }

    @Test
    void decodesWhatItEncodesEvenWhenTheTransportPadsIt() {
        RpmaCommonData data = RpmaCommonData.of(DESCRIPTOR);
        byte[] padded = Arrays.copyOf(data.encode(), 196);
        RpmaCommonData decoded = RpmaCommonData.decode(padded);
        assertThat(decoded).isEqualTo(data);
        assertThat(decoded.dataOffset()).isZero();
        assertThat(decoded.memoryRegionDescriptor()).isEqualTo(DESCRIPTOR);
        assertThat(decoded.peerConfigDescriptor()).isEmpty();
    }

    @Test
    void rejectsPrivateDataWithoutAMemoryRegion() {
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaCommonData.decode(new byte[14]))
            .withMessageContaining("28 bytes");
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaCommonData.decode(new byte[28]))
            .withMessageContaining("mr_desc_size 0");
        byte[] tooLarge = new byte[28];
        tooLarge[2] = 21;
        tooLarge[3] = 4;
        assertThatIllegalArgumentException().isThrownBy(() -> RpmaCommonData.decode(tooLarge))
            .withMessageContaining("fit in 24 bytes");
    }

    @Test
    void refusesDescriptorsLargerThanTheStructure() {
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaCommonData(0, new byte[21], new byte[4]));
        assertThatIllegalArgumentException().isThrownBy(() -> new RpmaCommonData(65536, DESCRIPTOR, new byte[0]));
    }

    @Test
    void copiesItsArrays() {
        byte[] descriptor = DESCRIPTOR.clone();
        RpmaCommonData data = RpmaCommonData.of(descriptor);
        descriptor[0] = 99;
        data.memoryRegionDescriptor()[1] = 99;
        assertThat(data.memoryRegionDescriptor()).isEqualTo(DESCRIPTOR);
    }

    private static byte[] descriptor() {
        byte[] descriptor = new byte[21];
        for (int i = 0; i < descriptor.length; i++) {
            descriptor[i] = (byte) (i + 1);
        }
        return descriptor;
    }
}
