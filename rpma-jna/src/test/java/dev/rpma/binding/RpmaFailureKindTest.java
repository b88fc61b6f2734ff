package dev.rpma.binding;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/** How a failed call is classified, whether it is worth another try, and what its hint says. */
class RpmaFailureKindTest {

    private static final int PROVIDER = RpmaError.PROVIDER.code();

    @ParameterizedTest(name = "{0} {1} errno {2} -> {3}")
    @CsvSource(delimiter = '|', textBlock = """
            rpma_ep_listen             | PROVIDER        | 98  | PORT_IN_USE
            rpma_ep_listen             | PROVIDER        | 19  | NO_DEVICE
            rpma_ep_listen             | PROVIDER        | 99  | ADDRESS_NOT_AVAILABLE
            rpma_ep_next_conn_req      | PROVIDER        | 19  | NO_DEVICE
            rpma_ep_next_conn_req      | PROVIDER        | 4   | INTERRUPTED
            rpma_ep_next_conn_req      | PROVIDER        | 9   | CLOSED
            rpma_ep_next_conn_req      | PROVIDER        | 5   | PROVIDER
            rpma_ep_next_conn_req      | PROVIDER        | 11  | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | PROVIDER        | 12  | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | PROVIDER        | 23  | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | PROVIDER        | 24  | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | PROVIDER        | 105 | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | PROVIDER        | 28  | PROVIDER
            rpma_ep_next_conn_req      | PROVIDER        | 0   | PROVIDER
            rpma_utils_get_ibv_context | PROVIDER        | 19  | NO_DEVICE
            rpma_utils_get_ibv_context | PROVIDER        | 22  | NO_DEVICE
            rpma_utils_get_ibv_context | PROVIDER        | 98  | NO_DEVICE
            rpma_utils_get_ibv_context | PROVIDER        | 4   | NO_DEVICE
            rpma_utils_get_ibv_context | PROVIDER        | 99  | ADDRESS_NOT_AVAILABLE
            rpma_utils_get_ibv_context | INVAL           | 0   | INVALID
            rpma_peer_new              | NOMEM           | 0   | OUT_OF_MEMORY
            rpma_mr_reg                | PROVIDER        | 12  | MEMORY_LOCK_LIMIT
            rpma_mr_reg                | NOMEM           | 0   | OUT_OF_MEMORY
            rpma_mr_reg                | PROVIDER        | 5   | PROVIDER
            rpma_srq_new               | PROVIDER        | 12  | RESOURCES_EXHAUSTED
            rpma_ep_next_conn_req      | INVAL           | 0   | INVALID
            rpma_ep_next_conn_req      | UNKNOWN         | 0   | OTHER
            rpma_ep_next_conn_req      | NOSUPP          | 0   | OTHER
            rpma_ep_next_conn_req      | AGAIN           | 0   | OTHER
            rpma_conn_next_event       | NO_EVENT        | 0   | OTHER
            """)
    void classifiesByCodeErrnoAndFunction(String function, RpmaError error, int errno, RpmaFailureKind expected) {
        assertThat(RpmaFailureKind.classify(function, error.code(), errno)).isSameAs(expected);
        assertThat(RpmaFailureKind.classify(new RpmaException(function, error.code(), "text", errno, null)))
                .isSameAs(expected);
    }

    @Test
    void anErrnoCountsForProviderErrorsOnly() {
        assertThat(RpmaFailureKind.classify("rpma_ep_listen", RpmaError.NOMEM.code(), Errno.EADDRINUSE))
                .isSameAs(RpmaFailureKind.OUT_OF_MEMORY);
        assertThat(RpmaFailureKind.classify("rpma_ep_listen", -7, Errno.ENODEV)).isSameAs(RpmaFailureKind.OTHER);
    }

    /** An acceptor goes on after these and gives its endpoint up after the others. */
    @Test
    void transientKinds() {
        assertThat(RpmaFailureKind.values()).filteredOn(RpmaFailureKind::isTransient).containsExactlyInAnyOrder(
                RpmaFailureKind.PORT_IN_USE, RpmaFailureKind.ADDRESS_NOT_AVAILABLE, RpmaFailureKind.INTERRUPTED,
                RpmaFailureKind.PROVIDER, RpmaFailureKind.OUT_OF_MEMORY, RpmaFailureKind.MEMORY_LOCK_LIMIT,
                RpmaFailureKind.RESOURCES_EXHAUSTED);
        assertThat(RpmaFailureKind.classify("rpma_ep_next_conn_req", PROVIDER, Errno.EBADF).isTransient()).isFalse();
        assertThat(RpmaFailureKind.classify("rpma_ep_next_conn_req", PROVIDER, Errno.ENODEV).isTransient()).isFalse();
        assertThat(RpmaFailureKind.classify("rpma_ep_next_conn_req", PROVIDER, Errno.EIO).isTransient()).isTrue();
    }

    /** An acceptor waits for these to pass however long they last, and counts the other transient ones. */
    @Test
    void resourceShortages() {
        assertThat(RpmaFailureKind.values()).filteredOn(RpmaFailureKind::isResourceShortage)
            .containsExactlyInAnyOrder(RpmaFailureKind.OUT_OF_MEMORY, RpmaFailureKind.RESOURCES_EXHAUSTED)
            .allMatch(RpmaFailureKind::isTransient);
    }

    @Test
    void portInUseNamesThePortAndWhatToDo() {
        assertThat(RpmaFailureKind.PORT_IN_USE.hint("198.18.0.1", 7204)).isEqualTo("Port 7204 on 198.18.0.1 is in use."
                + " Stop the other process that listens on 198.18.0.1:7204, or choose another port");
    }

    @Test
    void noDeviceSaysHowToGetOneInWordsAUserCanActOn() {
        String hint = RpmaFailureKind.NO_DEVICE.hint("198.18.0.1", 0);
        assertThat(hint).startsWith("No RDMA device serves 198.18.0.1. RDMA binds to the IP address of an"
                + " RDMA-capable interface; 127.0.0.1 never works.")
                .contains("RDMA network card")
                .contains("'modprobe rdma_rxe', then 'rdma link add rxe0 type rxe netdev <interface>'")
                .doesNotContain("tools/")
                .doesNotContain(" 0");
        assertThat(hint.indexOf("soft-RoCE")).as("the advice is given once").isEqualTo(hint.lastIndexOf("soft-RoCE"));
    }

    @Test
    void addressNotAvailableSaysHowToFindTheAddresses() {
        assertThat(RpmaFailureKind.ADDRESS_NOT_AVAILABLE.hint("198.18.0.9", 7204))
                .startsWith("No interface of this machine has the address 198.18.0.9. Use the IP address of one of")
                .contains("'rdma link show'");
    }

    /** Every way of raising the limit, wherever the process runs, and the other way out: registering less. */
    @Test
    void memoryLockLimitSaysHowToRaiseItEverywhere() {
        assertThat(RpmaFailureKind.MEMORY_LOCK_LIMIT.hint("198.18.0.1", 0))
                .startsWith("Registering memory would pass the memory this process may lock (RLIMIT_MEMLOCK). Raise")
                .contains("'ulimit -l unlimited'", "'docker run --ulimit memlock=-1:-1'", "'LimitMEMLOCK=infinity'",
                        "Kubernetes", "IPC_LOCK", "register less memory")
                .doesNotContain("198.18.0.1");
    }

    @ParameterizedTest
    @EnumSource(names = { "PORT_IN_USE", "NO_DEVICE", "ADDRESS_NOT_AVAILABLE", "MEMORY_LOCK_LIMIT" },
            mode = EnumSource.Mode.EXCLUDE)
    void theOtherKindsHaveNoHint(RpmaFailureKind kind) {
        assertThat(kind.problem("198.18.0.1", 7204)).isNull();
        assertThat(kind.advice("198.18.0.1", 7204)).isNull();
        assertThat(kind.hint("198.18.0.1", 7204)).isNull();
    }

    @Test
    void theHintIsProblemThenAdvice() {
        for (RpmaFailureKind kind : RpmaFailureKind.values()) {
            String problem = kind.problem("198.18.0.1", 7204);
            if (problem != null) {
                assertThat(kind.hint("198.18.0.1", 7204)).as(kind.name()).isEqualToIgnoringCase(
                        problem + ". " + kind.advice("198.18.0.1", 7204));
            }
        }
    }
}
