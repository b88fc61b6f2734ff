package dev.rpma.sampleclient.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ExampleProtocolsTest {

    @Test
    void sendsGreetingsWithTheirNulAsTheCExamplesDo() {
        assertThat(ExampleProtocols.cString("Hello server!")).hasSize(14).endsWith(0);
        assertThat(ExampleProtocols.cString(ExampleProtocols.SERVER_GREETING))
            .isEqualTo("Hello client!\0".getBytes(StandardCharsets.US_ASCII));
    }

    @Test
    void readsACStringUpToItsNulIgnoringTransportPadding() {
        byte[] padded = Arrays.copyOf(ExampleProtocols.cString("Hello client!"), 56);
        assertThat(ExampleProtocols.fromCString(padded)).isEqualTo("Hello client!");
        assertThat(ExampleProtocols.fromCString("no nul".getBytes(StandardCharsets.US_ASCII))).isEqualTo("no nul");
        assertThat(ExampleProtocols.fromCString(new byte[0])).isEmpty();
    }

    @Test
    void recognisesOnlyTheTerminatedClientGreeting() {
        assertThat(ExampleProtocols.isClientGreeting(Arrays.copyOf(ExampleProtocols.cString("Hello server!"), 56))).isTrue();
        assertThat(ExampleProtocols.isClientGreeting(ExampleProtocols.cString("Hello server!"))).isTrue();
        assertThat(ExampleProtocols.isClientGreeting("Hello server!".getBytes(StandardCharsets.US_ASCII)))
            .as("without its NUL").isFalse();
        assertThat(ExampleProtocols.isClientGreeting(ExampleProtocols.cString("Hello stranger!"))).isFalse();
        assertThat(ExampleProtocols.isClientGreeting(ExampleProtocols.cString("Hello server!!")))
            .as("the greeting followed by more text").isFalse();
        assertThat(ExampleProtocols.isClientGreeting(ExampleProtocols.cString("Hello server"))).isFalse();
        assertThat(ExampleProtocols.isClientGreeting(new byte[0])).isFalse();
    }

    @Test
    void iAmDoneIsUint64Max() {
        assertThat(Long.toUnsignedString(ExampleProtocols.I_M_DONE)).isEqualTo("18446744073709551615");
    }
}
