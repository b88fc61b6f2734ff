package dev.rpma.binding;

/**
 * One completion, copied out of a {@link RpmaCompletions} batch.
 *
 * @param context the {@code wr_id} the operation was posted with: what a failed completion is named by
 * @param status {@code enum ibv_wc_status} ({@link CompletionStatus})
 * @param opcode what completed; defined only when {@link #isSuccess()}
 * @param byteLength bytes received (receives only)
 * @param immediate the immediate value, host order, when {@code hasImmediate}
 * @param hasImmediate whether the completion carries immediate data
 * @param qpNumber the queue pair it completed on
 * @param vendorError the provider's own error code
 */
public record RpmaCompletion(long context, int status, RpmaOpcode opcode, int byteLength, int immediate,
        boolean hasImmediate, int qpNumber, int vendorError) {

    public boolean isSuccess() {
        return this.status == 0;
    }
}
