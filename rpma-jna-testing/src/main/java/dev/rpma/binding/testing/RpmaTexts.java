package dev.rpma.binding.testing;

/**
 * The texts librpma 1.2.0 returns from {@code rpma_err_2str} and {@code rpma_utils_conn_event_2str},
 * read from the real library (the native tests keep the two in step).
 */
public final class RpmaTexts {

    private RpmaTexts() {
    }

    /** {@code rpma_err_2str(code)}. */
    public static String errorText(int code) {
        return switch (code) {
            case 0 -> "Success";
            case -100001 -> "Not supported";
            case -100002 -> "Provider error occurred";
            case -100003 -> "Out of memory";
            case -100004 -> "Invalid argument";
            case -100005 -> "No next completion available";
            case -100006 -> "No next event available";
            case -100007 -> "Temporary error, try again";
            case -100008 -> "Completion channel is shared";
            case -100009 -> "Completion channel is not shared";
            default -> "Unknown error";
        };
    }

    /** {@code rpma_utils_conn_event_2str(event)}. */
    public static String eventText(int event) {
        return switch (event) {
            case -1 -> "Undefined connection event";
            case 0 -> "Connection established";
            case 1 -> "Connection closed";
            case 2 -> "Connection lost";
            case 3 -> "Connection rejected";
            case 4 -> "Connection unreachable";
            default -> "Unsupported connection event";
        };
    }
}
