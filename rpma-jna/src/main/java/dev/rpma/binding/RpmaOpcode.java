package dev.rpma.binding;

/** What completed ({@code enum ibv_wc_opcode}, the values librpma's operations produce). */
public enum RpmaOpcode {

    SEND(0), RDMA_WRITE(1), RDMA_READ(2), COMP_SWAP(3), FETCH_ADD(4), BIND_MW(5), LOCAL_INV(6),
    /** A flush or atomic write reported by the provider under another code. */
    OTHER(-1),
    RECV(128), RECV_RDMA_WITH_IMM(129);

    private final int code;

    RpmaOpcode(int code) {
        this.code = code;
    }

    public int code() {
        return this.code;
    }

    static RpmaOpcode of(int code) {
        return switch (code) {
            case 0 -> SEND;
            case 1 -> RDMA_WRITE;
            case 2 -> RDMA_READ;
            case 3 -> COMP_SWAP;
            case 4 -> FETCH_ADD;
            case 5 -> BIND_MW;
            case 6 -> LOCAL_INV;
            case 128 -> RECV;
            case 129 -> RECV_RDMA_WITH_IMM;
            default -> OTHER;
        };
    }
}
