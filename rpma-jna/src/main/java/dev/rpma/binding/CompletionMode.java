package dev.rpma.binding;

/** When an operation posts a completion ({@code RPMA_F_COMPLETION_*}). */
public enum CompletionMode {

    /** Only when it fails ({@code RPMA_F_COMPLETION_ON_ERROR}). */
    ON_ERROR(1),
    /** Always ({@code RPMA_F_COMPLETION_ALWAYS}). */
    ALWAYS(3);

    final int flags;

    CompletionMode(int flags) {
        this.flags = flags;
    }
}
