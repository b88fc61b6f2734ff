package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The link of an address, as the kernel reports its interface; a down interface is shown in the VM. */
class NetworkLinkTest {

    @Test
    void theLoopbackInterfaceIsUp() {
        assertThat(NetworkLink.problem("127.0.0.1")).isNull();
    }

    @Test
    void anAddressNoInterfaceHasIsNoClaim() {
        // from TEST-NET-2, held by no interface here: as a fake's or loopback's address
        assertThat(NetworkLink.problem("198.51.100.77")).isNull();
    }
}
