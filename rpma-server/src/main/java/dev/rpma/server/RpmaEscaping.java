package dev.rpma.server;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Bytes from a peer made safe for a log line: printable ASCII stays, every other byte (LF, CR, ESC,
 * the other controls 0x00 to 0x1f, DEL 0x7f, non-ASCII, and the backslash itself) becomes
 * {@code \xNN}, and the text is cut after a bound. Unescaped, a newline in a client's private data
 * writes a forged, well-formed line into the log, and an escape sequence rewrites a terminal.
 *
 * <p>The one helper for it: use it wherever a handler logs what a client sent (its private data, a
 * message) or text that may contain it (an exception's message); the server uses it for everything
 * of a peer's it logs.
 */
public final class RpmaEscaping {

    /** How much of a peer's bytes a log line shows unless told otherwise. */
    public static final int DEFAULT_LIMIT = 64;

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private RpmaEscaping() {
    }

    /** {@code bytes}, escaped, at most {@code limit} of them (then "..." and how many were left out). */
    public static String escape(byte[] bytes, int limit) {
        return escape(ByteBuffer.wrap(bytes), limit);
    }

    /** {@code bytes}, escaped, at most {@value #DEFAULT_LIMIT} of them. */
    public static String escape(byte[] bytes) {
        return escape(bytes, DEFAULT_LIMIT);
    }

    /**
     * The remaining bytes of {@code message} (a message handler's view of its receive slot, say),
     * escaped, at most {@code limit} of them; the buffer's position is left as it was.
     */
    public static String escape(ByteBuffer message, int limit) {
        int length = message.remaining();
        int shown = Math.min(length, Math.max(0, limit));
        StringBuilder text = new StringBuilder(shown + 16);
        for (int i = 0; i < shown; i++) {
            int b = message.get(message.position() + i) & 0xFF;
            if (b >= 0x20 && b < 0x7F && b != '\\') {
                text.append((char) b);
            }
            else {
                text.append("\\x").append(HEX[b >>> 4]).append(HEX[b & 0xF]);
            }
        }
        if (shown < length) {
            text.append("...(").append(length - shown).append(" more bytes)");
        }
        return text.toString();
    }

    /** {@code text}'s UTF-8 bytes, escaped as {@link #escape(byte[], int)} does. */
    public static String escape(String text, int limit) {
        return escape(text.getBytes(StandardCharsets.UTF_8), limit);
    }

    /**
     * A throwable's class and its message escaped and bounded to {@code limit} bytes: one line whatever
     * the message holds (it may quote what a peer sent).
     */
    public static String describe(Throwable cause, int limit) {
        String text = cause.getMessage();
        return cause.getClass().getName() + ((text != null) ? ": " + escape(text, limit) : "");
    }
}
