package dev.rpma.jna.raw;

import com.sun.jna.Pointer;

/**
 * Expands the printf conversions librpma's log formats use ({@code %s %d %i %u %x %p %c %%} with
 * {@code l ll z h j t} length modifiers, flags, width and precision) from 64-bit argument slots.
 * Internal API.
 */
final class CFormat {

    private CFormat() {
    }

    static String format(String format, long[] args) {
        if (format == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(format.length() + 32);
        int next = 0;
        int i = 0;
        int n = format.length();
        while (i < n) {
            char c = format.charAt(i++);
            if (c != '%') {
                out.append(c);
                continue;
            }
            if (i < n && format.charAt(i) == '%') {
                out.append('%');
                i++;
                continue;
            }
            int precision = -1;
            while (i < n && "-+ #0".indexOf(format.charAt(i)) >= 0) {
                i++;
            }
            while (i < n && (Character.isDigit(format.charAt(i)) || format.charAt(i) == '*')) {
                if (format.charAt(i) == '*') {
                    next++;
                }
                i++;
            }
            if (i < n && format.charAt(i) == '.') {
                i++;
                if (i < n && format.charAt(i) == '*') {
                    precision = (next < args.length) ? (int) args[next++] : -1;
                    i++;
                }
                else {
                    int start = i;
                    while (i < n && Character.isDigit(format.charAt(i))) {
                        i++;
                    }
                    precision = (i > start) ? Integer.parseInt(format.substring(start, i)) : 0;
                }
            }
            boolean wide = false;
            while (i < n && "lhzjtL".indexOf(format.charAt(i)) >= 0) {
                char m = format.charAt(i++);
                wide |= (m == 'l' || m == 'z' || m == 'j' || m == 't' || m == 'L');
            }
            if (i >= n) {
                break;
            }
            char conversion = format.charAt(i++);
            long arg = (next < args.length) ? args[next] : 0;
            if ("sdiuxXpoc".indexOf(conversion) >= 0) {
                next++;
            }
            switch (conversion) {
                case 's' -> {
                    String s = (arg == 0) ? "(null)" : new Pointer(arg).getString(0);
                    out.append((precision >= 0 && precision < s.length()) ? s.substring(0, precision) : s);
                }
                case 'd', 'i' -> out.append(wide ? arg : (int) arg);
                case 'u' -> out.append(wide ? Long.toUnsignedString(arg) : Integer.toUnsignedString((int) arg));
                case 'x' -> out.append(wide ? Long.toHexString(arg) : Integer.toHexString((int) arg));
                case 'X' -> out.append((wide ? Long.toHexString(arg) : Integer.toHexString((int) arg)).toUpperCase());
                case 'o' -> out.append(wide ? Long.toOctalString(arg) : Integer.toOctalString((int) arg));
                case 'p' -> out.append("0x").append(Long.toHexString(arg));
                case 'c' -> out.append((char) (arg & 0xff));
                default -> out.append('%').append(conversion);
            }
        }
        int end = out.length();
        while (end > 0 && (out.charAt(end - 1) == '\n' || out.charAt(end - 1) == '\r')) {
            end--;
        }
        out.setLength(end);
        return out.toString();
    }
}
