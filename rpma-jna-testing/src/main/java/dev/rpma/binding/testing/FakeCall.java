package dev.rpma.binding.testing;

import java.util.Arrays;

/**
 * One call into {@link FakeLibRpma}, as recorded in its call log.
 *
 * @param sequence position in the log (1 for the fake's first call)
 * @param function the C function, e.g. {@code rpma_ep_next_conn_req}
 * @param thread name of the calling thread
 * @param args the integer and pointer arguments as passed (strings are left out)
 * @param returnCode what the fake returned; meaningless when {@code violation}
 * @param errno the errno the fake left for {@code lastErrno()}
 * @param violation whether the call was recorded as a violation (and threw an {@link AssertionError})
 */
public record FakeCall(long sequence, String function, String thread, long[] args, int returnCode, int errno,
        boolean violation) {

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder().append('#').append(this.sequence).append(' ').append(this.function)
                .append('(');
        for (int i = 0; i < this.args.length; i++) {
            text.append((i == 0) ? "" : ", ").append("0x").append(Long.toHexString(this.args[i]));
        }
        text.append(") on '").append(this.thread).append("' -> ");
        if (this.violation) {
            return text.append("VIOLATION").toString();
        }
        text.append(this.returnCode);
        if (this.errno != 0) {
            text.append(" errno ").append(this.errno);
        }
        return text.toString();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof FakeCall call && call.sequence == this.sequence && call.function.equals(this.function)
                && Arrays.equals(call.args, this.args);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(this.sequence);
    }
}
