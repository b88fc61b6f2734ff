package dev.rpma.server;

/**
 * Bytes from a peer made safe for a log line: printable ASCII stays, every other byte (newlines,
 * carriage returns, escape sequences, NUL, non-ASCII) becomes {@code \xNN}, and the text is cut
 * after a bound. Use it wherever a handler logs what a client sent (its private data, a message):
 * unescaped, a newline in the private data writes a forged line into the log.
 */
public final class RpmaEscaping {

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private RpmaEscaping() {
    }

    /** {@code bytes}, escaped, at most {@code limit} of them (then "..." and how many were left out). */
    public static String escape(byte[] bytes, int limit) {
        StringBuilder text = new StringBuilder(Math.min(bytes.length, limit) + 16);
        int shown = Math.min(bytes.length, Math.max(0, limit));
        for (int i = 0; i < shown; i++) {
            int b = bytes[i] & 0xFF;
            if (b >= 0x20 && b < 0x7F && b != '\\') {
                text.append((char) b);
            }
            else {
                text.append("\\x").append(HEX[b >>> 4]).append(HEX[b & 0xF]);
            }
        }
        if (shown < bytes.length) {
            text.append("...(").append(bytes.length - shown).append(" more bytes)");
        }
        return text.toString();
    }

    /** {@code text}'s UTF-8 bytes, escaped as {@link #escape(byte[], int)} does. */
    public static String escape(String text, int limit) {
        return escape(text.getBytes(java.nio.charset.StandardCharsets.UTF_8), limit);
    }
}
