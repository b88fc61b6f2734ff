package dev.rpma.binding;

/** How far a flush pushes the data ({@code enum rpma_flush_type}). */
public enum FlushType {

    /** To persistence ({@code RPMA_FLUSH_TYPE_PERSISTENT}). */
    PERSISTENT(0),
    /** To global visibility ({@code RPMA_FLUSH_TYPE_VISIBILITY}). */
    VISIBILITY(1);

    final int code;

    FlushType(int code) {
        this.code = code;
    }

    static FlushType of(int code) {
        return (code == 0) ? PERSISTENT : VISIBILITY;
    }
}
