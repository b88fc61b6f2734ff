package dev.rpma.binding;

/** Which side of connections a peer serves ({@code enum rpma_util_ibv_context_type}). */
public enum PeerRole {

    /** Listens on a local address ({@code RPMA_UTIL_IBV_CONTEXT_LOCAL}). */
    SERVER(0),
    /** Connects to a remote address ({@code RPMA_UTIL_IBV_CONTEXT_REMOTE}). */
    CLIENT(1);

    private final int code;

    PeerRole(int code) {
        this.code = code;
    }

    int code() {
        return this.code;
    }
}
