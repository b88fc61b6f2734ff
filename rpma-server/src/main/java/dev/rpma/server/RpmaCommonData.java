package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * {@code struct common_data} of librpma's examples: what a server sends in its accept's private data
 * so that the client can reach its memory.
 *
 * <pre>
 * struct common_data {
 *     uint16_t data_offset;     // where the user data starts in the region
 *     uint8_t mr_desc_size;     // size of the memory region descriptor in descriptors[]
 *     uint8_t pcfg_desc_size;   // size of the peer configuration descriptor after it
 *     char descriptors[24];
 * };                            // 28 bytes, little-endian
 * </pre>
 *
 * @param dataOffset offset of the data in the remote region
 * @param memoryRegionDescriptor the region's descriptor ({@code rpma_mr_get_descriptor})
 * @param peerConfigDescriptor the peer configuration's descriptor, empty when none is sent
 */
public record RpmaCommonData(int dataOffset, byte[] memoryRegionDescriptor, byte[] peerConfigDescriptor) {

    /** {@code DESCRIPTORS_MAX_SIZE} of the examples. */
    public static final int DESCRIPTORS_MAX_SIZE = 24;

    /** {@code sizeof(struct common_data)}. */
    public static final int SIZE = 4 + DESCRIPTORS_MAX_SIZE;

    public RpmaCommonData {
        if (dataOffset < 0 || dataOffset > 0xFFFF) {
            throw new IllegalArgumentException("data_offset is a uint16_t, got " + dataOffset);
        }
        if (memoryRegionDescriptor.length + peerConfigDescriptor.length > DESCRIPTORS_MAX_SIZE) {
            throw new IllegalArgumentException("The descriptors take " + memoryRegionDescriptor.length + " + "
                    + peerConfigDescriptor.length + " bytes; struct common_data holds " + DESCRIPTORS_MAX_SIZE);
        }
        memoryRegionDescriptor = memoryRegionDescriptor.clone();
        peerConfigDescriptor = peerConfigDescriptor.clone();
    }

    /** Only a memory region, its data at offset 0, as 02-read-to-volatile sends. */
    public static RpmaCommonData of(byte[] memoryRegionDescriptor) {
        return new RpmaCommonData(0, memoryRegionDescriptor, new byte[0]);
    }

    @Override
    public byte[] memoryRegionDescriptor() {
        return this.memoryRegionDescriptor.clone();
    }

    @Override
    public byte[] peerConfigDescriptor() {
        return this.peerConfigDescriptor.clone();
    }

    /** The {@value #SIZE} bytes to send. */
    public byte[] encode() {
        ByteBuffer buffer = ByteBuffer.allocate(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        buffer.putShort((short) this.dataOffset);
        buffer.put((byte) this.memoryRegionDescriptor.length);
        buffer.put((byte) this.peerConfigDescriptor.length);
        buffer.put(this.memoryRegionDescriptor);
        buffer.put(this.peerConfigDescriptor);
        return buffer.array();
    }

    /**
     * Reads the structure from received private data, which may be longer (RoCE pads it with
     * zeros).
     *
     * @throws IllegalArgumentException when the data is too short or its sizes do not fit
     */
    public static RpmaCommonData decode(byte[] privateData) {
        if (privateData.length < SIZE) {
            throw new IllegalArgumentException("struct common_data is " + SIZE + " bytes, the private data only "
                    + privateData.length + ": the server sent no memory region");
        }
        ByteBuffer buffer = ByteBuffer.wrap(privateData).order(ByteOrder.LITTLE_ENDIAN);
        int dataOffset = Short.toUnsignedInt(buffer.getShort());
        int mrSize = Byte.toUnsignedInt(buffer.get());
        int pcfgSize = Byte.toUnsignedInt(buffer.get());
        if (mrSize == 0 || mrSize + pcfgSize > DESCRIPTORS_MAX_SIZE) {
            throw new IllegalArgumentException("struct common_data says mr_desc_size " + mrSize + " and pcfg_desc_size "
                    + pcfgSize + "; they must be positive and fit in " + DESCRIPTORS_MAX_SIZE + " bytes");
        }
        byte[] mr = Arrays.copyOfRange(privateData, 4, 4 + mrSize);
        byte[] pcfg = Arrays.copyOfRange(privateData, 4 + mrSize, 4 + mrSize + pcfgSize);
        return new RpmaCommonData(dataOffset, mr, pcfg);
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof RpmaCommonData that && this.dataOffset == that.dataOffset
                && Arrays.equals(this.memoryRegionDescriptor, that.memoryRegionDescriptor)
                && Arrays.equals(this.peerConfigDescriptor, that.peerConfigDescriptor);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * this.dataOffset + Arrays.hashCode(this.memoryRegionDescriptor))
                + Arrays.hashCode(this.peerConfigDescriptor);
    }

    @Override
    public String toString() {
        return "RpmaCommonData[dataOffset=" + this.dataOffset + ", mrDescriptor=" + this.memoryRegionDescriptor.length
                + " bytes, pcfgDescriptor=" + this.peerConfigDescriptor.length + " bytes]";
    }
}
