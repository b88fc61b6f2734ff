package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link RpmaError} codes and names, {@link RpmaException}'s message, {@link Errno} names. */
class RpmaErrorTest {

    @ParameterizedTest
    @EnumSource(RpmaError.class)
    void ofFindsEveryCode(RpmaError error) {
        assertThat(RpmaError.of(error.code())).isSameAs(error);
        assertThat(error.cName()).isEqualTo("RPMA_E_" + error.name());
    }

    @Test
    void codesAreLibrpmas() {
        assertThat(RpmaError.values()).extracting(RpmaError::code).containsExactly(-100000, -100001, -100002, -100003,
                -100004, -100005, -100006, -100007, -100008, -100009);
    }

    @ParameterizedTest
    @ValueSource(ints = { 0, 1, -1, -99999, -100010, -200000, Integer.MIN_VALUE, Integer.MAX_VALUE })
    void otherCodesAreUnknown(int code) {
        assertThat(RpmaError.of(code)).isSameAs(RpmaError.UNKNOWN);
    }

    @Test
    void messageNamesFunctionCodeTextErrnoAndHint() {
        RpmaException ex = new RpmaException("rpma_ep_listen", -100002, "Provider error occurred", 19, "Use soft-RoCE");
        assertThat(ex).hasMessage("rpma_ep_listen() failed with RPMA_E_PROVIDER (-100002): Provider error occurred;"
                + " errno 19 (ENODEV). Use soft-RoCE");
        assertThat(ex.function()).isEqualTo("rpma_ep_listen");
        assertThat(ex.error()).isSameAs(RpmaError.PROVIDER);
        assertThat(ex.returnCode()).isEqualTo(-100002);
        assertThat(ex.errno()).isEqualTo(19);
        assertThat(ex.librpmaText()).isEqualTo("Provider error occurred");
        assertThat(ex.hint()).isEqualTo("Use soft-RoCE");
        assertThat(ex.diagnostic()).isEqualTo("rpma_ep_listen() failed with RPMA_E_PROVIDER (-100002): Provider error"
                + " occurred; errno 19 (ENODEV)");
    }

    @Test
    void messageWithoutErrnoOrHint() {
        assertThat(new RpmaException("rpma_ep_next_conn_req", -100004, "Invalid argument", 0, null))
                .hasMessage("rpma_ep_next_conn_req() failed with RPMA_E_INVAL (-100004): Invalid argument")
                .satisfies(ex -> {
                    assertThat(ex.hint()).isNull();
                    assertThat(ex.diagnostic()).isEqualTo(ex.getMessage());
                });
    }

    @Test
    void anUndefinedCodeKeepsItsValue() {
        RpmaException ex = new RpmaException("rpma_x", -7, "Unknown error", 0, null);
        assertThat(ex.error()).isSameAs(RpmaError.UNKNOWN);
        assertThat(ex.returnCode()).isEqualTo(-7);
        assertThat(ex).hasMessage("rpma_x() failed with RPMA_E_UNKNOWN (-7): Unknown error");
    }

    @Test
    void errnoNames() {
        assertThat(Errno.name(Errno.EAGAIN)).isEqualTo("EAGAIN");
        assertThat(Errno.name(Errno.EBADF)).isEqualTo("EBADF");
        assertThat(Errno.name(Errno.ENODEV)).isEqualTo("ENODEV");
        assertThat(Errno.name(Errno.ECONNREFUSED)).isEqualTo("ECONNREFUSED");
        assertThat(Errno.name(1234)).isEqualTo("errno 1234");
    }

    @Test
    void eventsAndOpcodesMapTheirCodes() {
        for (RpmaConnectionEvent event : RpmaConnectionEvent.values()) {
            assertThat(RpmaConnectionEvent.of(event.code())).isSameAs(event);
        }
        assertThat(RpmaConnectionEvent.of(99)).isSameAs(RpmaConnectionEvent.UNDEFINED);
        for (RpmaOpcode opcode : RpmaOpcode.values()) {
            if (opcode != RpmaOpcode.OTHER) {
                assertThat(RpmaOpcode.of(opcode.code())).isSameAs(opcode);
            }
        }
        assertThat(RpmaOpcode.of(7)).isSameAs(RpmaOpcode.OTHER);
        assertThat(FlushType.of(0)).isSameAs(FlushType.PERSISTENT);
        assertThat(FlushType.of(1)).isSameAs(FlushType.VISIBILITY);
    }
}
