package dev.rpma.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ClientSlotsTest {

    /** Lengths around the eight-byte steps and the bulk copy's threshold, at an offset that is not aligned. */
    @ParameterizedTest
    @ValueSource(ints = { 0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 200 })
    void aSmallOrLargeArrayIsCopiedIntoASlotAndBackByteForByteWithoutTouchingItsNeighbours(int length) {
        ByteBuffer slot = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < slot.capacity(); i++) {
            slot.put(i, (byte) 0x5A);
        }
        byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        int at = 13;
        ClientSlots.write(slot, at, bytes);
        for (int i = 0; i < slot.capacity(); i++) {
            byte expected = (i >= at && i < at + length) ? bytes[i - at] : (byte) 0x5A;
            assertThat(slot.get(i)).as("byte %d of the slot", i).isEqualTo(expected);
        }
        byte[] back = new byte[length];
        ClientSlots.read(slot, at, back);
        assertThat(back).isEqualTo(bytes);
    }
}
