package dev.rpma.binding;

/**
 * Names of the {@code enum ibv_wc_status} values a completion carries (rdma-core). Only the status and
 * the {@code wr_id} of a failed completion are defined: its opcode is not, so a failed completion is
 * named by the work request its {@code wr_id} says was posted, never by its opcode.
 */
public final class CompletionStatus {

    public static final int SUCCESS = 0;
    public static final int LOC_LEN_ERR = 1;
    public static final int LOC_QP_OP_ERR = 2;
    public static final int LOC_PROT_ERR = 4;
    public static final int WR_FLUSH_ERR = 5;
    public static final int REM_ACCESS_ERR = 10;
    public static final int RETRY_EXC_ERR = 12;
    public static final int RNR_RETRY_EXC_ERR = 13;

    private static final String[] NAMES = { "SUCCESS", "LOC_LEN_ERR", "LOC_QP_OP_ERR", "LOC_EEC_OP_ERR",
        "LOC_PROT_ERR", "WR_FLUSH_ERR", "MW_BIND_ERR", "BAD_RESP_ERR", "LOC_ACCESS_ERR", "REM_INV_REQ_ERR",
        "REM_ACCESS_ERR", "REM_OP_ERR", "RETRY_EXC_ERR", "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR", "REM_INV_RD_REQ_ERR",
        "REM_ABORT_ERR", "INV_EECN_ERR", "INV_EEC_STATE_ERR", "FATAL_ERR", "RESP_TIMEOUT_ERR", "GENERAL_ERR" };

    private CompletionStatus() {
    }

    /** The C name, e.g. {@code IBV_WC_REM_ACCESS_ERR}, or {@code ibv_wc_status N} for a value not listed. */
    public static String name(int status) {
        return (status >= 0 && status < NAMES.length) ? "IBV_WC_" + NAMES[status] : "ibv_wc_status " + status;
    }

    /** The name with the number, as a log line shows it: {@code IBV_WC_REM_ACCESS_ERR (10)}. */
    public static String describe(int status) {
        return name(status) + " (" + status + ")";
    }
}
