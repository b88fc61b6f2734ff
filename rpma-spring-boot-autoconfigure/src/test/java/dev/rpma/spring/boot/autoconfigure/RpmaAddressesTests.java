package dev.rpma.spring.boot.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RpmaAddressesTests {

    @ParameterizedTest
    @ValueSource(strings = { "198.18.0.1", " 10.0.0.5 ", "2001:db8::1", "fd00::5" })
    void acceptsIpLiteralsOfAnInterface(String address) {
        assertThatCode(() -> RpmaAddresses.validate("rpma.server.address", address)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = { "127.0.0.1", "127.1.2.3", "::1", "0:0:0:0:0:0:0:1", "::ffff:127.0.0.1" })
    void refusesLoopback(String address) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", address))
            .satisfies((ex) -> {
                assertThat(ex.property()).isEqualTo("rpma.server.address");
                assertThat(ex.value()).isEqualTo(address);
            })
            .withMessageContaining("loopback")
            .withMessageContaining("RDMA-capable interface");
    }

    @ParameterizedTest
    @ValueSource(strings = { "0.0.0.0", "::", "0:0:0:0:0:0:0:0" })
    void refusesTheWildcard(String address) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.endpoints.replica.address", address))
            .withMessageContaining("rpma.server.endpoints.replica.address")
            .withMessageContaining("wildcard");
    }

    @ParameterizedTest
    @ValueSource(strings = { "localhost", "rdma-host.example", "g::1", "[::1]", "10.0.0" })
    void refusesHostNames(String address) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", address))
            .withMessageContaining("not a host name");
    }

    // 300.1.1.1 used to reach InetAddress.getByName as a host name; 010 means 8 to getaddrinfo
    @ParameterizedTest
    @ValueSource(strings = { "300.1.1.1", "10.0.0.256", "010.0.0.1", "2001:db8:::1:2" })
    void refusesMalformedLiteralsWithoutLookingThemUp(String address) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", address))
            .withMessageContaining("not a valid IP address");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            ${RDMA_IP}              | RDMA_IP
            10.0.0.${HOST_OCTET}    | HOST_OCTET
            ${UNCLOSED              | UNCLOSED
            """)
    void anUnresolvedPlaceholderIsNamedAndNotTakenForAHostName(String address, String name) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", address))
            .satisfies((ex) -> {
                assertThat(ex.reason()).isEqualTo("contains the placeholder '${" + name + "}', which is not defined");
                assertThat(ex.action()).startsWith("Define '" + name + "' (as an environment variable")
                    .endsWith("or set 'rpma.server.address' to the IP address itself");
            })
            .withMessageNotContaining("host name");
    }

    @Test
    void eachRefusalSaysWhatToSet() {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.endpoints.replica.address", "127.0.0.1"))
            .satisfies((ex) -> assertThat(ex.action()).startsWith("Set 'rpma.server.endpoints.replica.address' to the"
                    + " IP address of an RDMA-capable interface"));
    }

    @ParameterizedTest
    @ValueSource(strings = { "", "   " })
    void requiresAnAddress(String address) {
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", address))
            .withMessageContaining("is required");
        assertThatExceptionOfType(InvalidRpmaPropertyException.class)
            .isThrownBy(() -> RpmaAddresses.validate("rpma.server.address", null))
            .withMessageContaining("is required");
    }
}
