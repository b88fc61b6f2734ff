package dev.rpma.binding.testing;

/**
 * A data-path operation (or a receive) posted to a {@link FakeLibRpma}, with its arguments.
 *
 * @param function e.g. {@code rpma_send}, {@code rpma_recv}, {@code rpma_conn_req_recv}
 * @param localRegion the {@code struct rpma_mr_local *} (0 where there is none)
 * @param localOffset offset in the local region
 * @param length bytes
 * @param remoteRegion the {@code struct rpma_mr_remote *} (0 where there is none)
 * @param remoteOffset offset in the remote region
 * @param flags {@code RPMA_F_COMPLETION_*}, or the flush type for a flush's {@code immediate}
 * @param immediate the immediate value, the 8 bytes of an atomic write, or the flush type
 * @param context the {@code op_context}
 * @param thread the calling thread's name
 */
public record PostedOperation(String function, long localRegion, long localOffset, long length, long remoteRegion,
        long remoteOffset, int flags, long immediate, long context, String thread) {
}
