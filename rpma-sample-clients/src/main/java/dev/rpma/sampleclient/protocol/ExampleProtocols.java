package dev.rpma.sampleclient.protocol;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The wire formats of librpma's examples, so that this project's server and client interoperate
 * with the unmodified C programs: 01-connection (a greeting in the private data both ways),
 * 02-read-to-volatile (a memory region descriptor in the accept's private data, see
 * {@link dev.rpma.server.RpmaCommonData}) and 08-messages-ping-pong (8-byte little-endian counters).
 */
public final class ExampleProtocols {

    /** What a client of 01-connection sends in its connect's private data (NUL included). */
    public static final String CLIENT_GREETING = "Hello server!";

    /** What the server of 01-connection answers in its accept's private data (NUL included). */
    public static final String SERVER_GREETING = "Hello client!";

    private static final byte[] CLIENT_GREETING_ASCII = CLIENT_GREETING.getBytes(StandardCharsets.US_ASCII);

    /** The string the server of 02-read-to-volatile exposes for reading (NUL included). */
    public static final String READ_CONTENT = "Hello client!";

    /** Size of one message of 08-messages-ping-pong: a {@code uint64_t}. */
    public static final int MESSAGE_SIZE = Long.BYTES;

    /** {@code I_M_DONE} of 08-messages-ping-pong: {@code UINT64_MAX}, the client's last message. */
    public static final long I_M_DONE = -1L;

    /** Ports this project uses for the three protocols (the examples take any port). */
    public static final int HELLO_PORT = 7204;

    public static final int READ_PORT = 7205;

    public static final int PING_PONG_PORT = 7206;

    private ExampleProtocols() {
    }

    /** {@code text} as the C examples send it: ASCII with its terminating NUL. */
    public static byte[] cString(String text) {
        byte[] ascii = text.getBytes(StandardCharsets.US_ASCII);
        byte[] terminated = new byte[ascii.length + 1];
        System.arraycopy(ascii, 0, terminated, 0, ascii.length);
        return terminated;
    }

    /**
     * The text of a C string received as private data: up to the first NUL, since RoCE pads
     * private data with zeros to the transport's length.
     */
    public static String fromCString(byte[] data) {
        int length = 0;
        while (length < data.length && data[length] != 0) {
            length++;
        }
        return new String(data, 0, length, StandardCharsets.US_ASCII);
    }

    /** Whether a client's private data is the greeting of 01-connection, NUL included. */
    public static boolean isClientGreeting(byte[] privateData) {
        // bytes, not a String: a server asks this for every connection request
        int length = CLIENT_GREETING_ASCII.length;
        return privateData.length > length && privateData[length] == 0
                && Arrays.equals(privateData, 0, length, CLIENT_GREETING_ASCII, 0, length);
    }
}
