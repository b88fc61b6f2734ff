package dev.rpma.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

/** What the one escaping helper keeps, what it escapes, and where it cuts. */
class RpmaEscapingTest {

    @Test
    void printableAsciiStaysAndEveryOtherByteIsEscaped() {
        byte[] all = new byte[256];
        for (int b = 0; b < 256; b++) {
            all[b] = (byte) b;
        }
        String escaped = RpmaEscaping.escape(all, 256);
        assertThat(escaped).startsWith("\\x00\\x01").contains("\\x0a\\x0b\\x0c\\x0d").contains("\\x1b")
            .contains("\\x1f !\"#").contains("[\\x5c]").contains("}~\\x7f\\x80").endsWith("\\xff");
        assertThat(escaped.chars()).allMatch((c) -> c >= 0x20 && c < 0x7f);
    }

    @Test
    void textIsEscapedAsItsUtf8Bytes() {
        assertThat(RpmaEscaping.escape("caf\u00e9\r\nx", 64)).isEqualTo("caf\\xc3\\xa9\\x0d\\x0ax");
    }

    @Test
    void theBoundCutsAndSaysHowMuchWasLeftOut() {
        byte[] bytes = "0123456789".getBytes(StandardCharsets.US_ASCII);
        assertThat(RpmaEscaping.escape(bytes, 4)).isEqualTo("0123...(6 more bytes)");
        assertThat(RpmaEscaping.escape(bytes, 0)).isEqualTo("...(10 more bytes)");
        assertThat(RpmaEscaping.escape(bytes)).isEqualTo("0123456789");
        assertThat(RpmaEscaping.escape(new byte[100])).endsWith("\\x00...(36 more bytes)");
    }

    @Test
    void aMessageViewIsReadFromItsPositionAndLeftAsItWas() {
        ByteBuffer message = ByteBuffer.wrap("xx\nFORGED".getBytes(StandardCharsets.US_ASCII)).position(2).asReadOnlyBuffer();
        assertThat(RpmaEscaping.escape(message, 64)).isEqualTo("\\x0aFORGED");
        assertThat(message.position()).isEqualTo(2);
        assertThat(message.remaining()).isEqualTo(7);
    }
}
