package dev.rpma.binding;

/** One completion, copied out of a {@link RpmaCompletions} batch. */
public record RpmaCompletion(long context, int status, RpmaOpcode opcode, int byteLength, int immediate,
        boolean hasImmediate, int qpNumber, int vendorError) {

    public boolean isSuccess() {
        return this.status == 0;
    }
}
