package dev.rpma.binding.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

import com.sun.jna.Pointer;
import org.jspecify.annotations.Nullable;

/**
 * Expands the printf conversions librpma's log formats use ({@code %s %d %i %u %x %X %o %p %c %%}
 * with the {@code hh h l ll z j t} length modifiers, the {@code - + space # 0} flags, width and
 * precision, {@code *} included) from 64-bit argument slots, as glibc's printf does. Floating-point
 * and unknown conversions consume no slot and are copied as they are; {@code %n} writes nothing.
 * Internal API.
 */
final class CFormat {

    private CFormat() {
    }

    static String format(@Nullable String format, long[] args) {
        if (format == null) {
            return "";
        }
        StringBuilder out = new StringBuilder(format.length() + 32);
        Slots slots = new Slots(args);
        int i = 0;
        int n = format.length();
        while (i < n) {
            char c = format.charAt(i++);
            if (c != '%') {
                out.append(c);
                continue;
            }
            int specStart = i - 1;
            boolean left = false;
            boolean plus = false;
            boolean space = false;
            boolean alternate = false;
            boolean zero = false;
            for (; i < n; i++) {
                char flag = format.charAt(i);
                if (flag == '-') {
                    left = true;
                }
                else if (flag == '+') {
                    plus = true;
                }
                else if (flag == ' ') {
                    space = true;
                }
                else if (flag == '#') {
                    alternate = true;
                }
                else if (flag == '0') {
                    zero = true;
                }
                else {
                    break;
                }
            }
            int width = 0;
            if (i < n && format.charAt(i) == '*') {
                width = (int) slots.next();
                if (width < 0) {
                    left = true;
                    width = -width;
                }
                i++;
            }
            else {
                while (i < n && Character.isDigit(format.charAt(i))) {
                    width = width * 10 + (format.charAt(i++) - '0');
                }
            }
            int precision = -1;
            if (i < n && format.charAt(i) == '.') {
                i++;
                if (i < n && format.charAt(i) == '*') {
                    precision = (int) slots.next();
                    if (precision < 0) {
                        precision = -1;
                    }
                    i++;
                }
                else {
                    precision = 0;
                    while (i < n && Character.isDigit(format.charAt(i))) {
                        precision = precision * 10 + (format.charAt(i++) - '0');
                    }
                }
            }
            // length: 8 bits (hh), 16 (h), 32 (none), 64 (l ll z j t L)
            int bits = 32;
            while (i < n && "hlzjtLq".indexOf(format.charAt(i)) >= 0) {
                char m = format.charAt(i++);
                bits = (m == 'h') ? ((bits == 16) ? 8 : 16) : 64;
            }
            if (i >= n) {
                out.append(format, specStart, n);
                break;
            }
            char conversion = format.charAt(i++);
            String body;
            String prefix = "";
            boolean numeric = false;
            switch (conversion) {
                case 'd', 'i' -> {
                    long value = signed(slots.next(), bits);
                    prefix = (value < 0) ? "-" : plus ? "+" : space ? " " : "";
                    body = digits((value < 0) ? Long.toUnsignedString(-value) : Long.toString(value), value == 0,
                            precision);
                    numeric = true;
                }
                case 'u' -> {
                    long value = unsigned(slots.next(), bits);
                    body = digits(Long.toUnsignedString(value), value == 0, precision);
                    numeric = true;
                }
                case 'x', 'X' -> {
                    long value = unsigned(slots.next(), bits);
                    body = digits(Long.toHexString(value), value == 0, precision);
                    if (alternate && value != 0) {
                        prefix = "0x";
                    }
                    if (conversion == 'X') {
                        body = body.toUpperCase();
                        prefix = prefix.toUpperCase();
                    }
                    numeric = true;
                }
                case 'o' -> {
                    long value = unsigned(slots.next(), bits);
                    body = digits(Long.toOctalString(value), value == 0, precision);
                    if (alternate && !body.startsWith("0")) {
                        body = "0" + body;
                    }
                    numeric = true;
                }
                case 'p' -> {
                    long value = slots.next();
                    body = (value == 0) ? "(nil)" : "0x" + Long.toHexString(value);
                }
                case 'c' -> body = String.valueOf((char) (slots.next() & 0xff));
                case 's' -> body = string(slots.next(), precision);
                case '%' -> body = "%";
                default -> {
                    // floating point travels in other registers; anything else is not librpma's
                    out.append(format, specStart, i);
                    continue;
                }
            }
            if (conversion == '%') {
                out.append('%');
                continue;
            }
            int padding = width - prefix.length() - body.length();
            if (padding <= 0) {
                out.append(prefix).append(body);
            }
            else if (left) {
                out.append(prefix).append(body).append(" ".repeat(padding));
            }
            else if (zero && numeric && precision < 0) {
                out.append(prefix).append("0".repeat(padding)).append(body);
            }
            else {
                out.append(" ".repeat(padding)).append(prefix).append(body);
            }
        }
        int end = out.length();
        while (end > 0 && (out.charAt(end - 1) == '\n' || out.charAt(end - 1) == '\r')) {
            end--;
        }
        out.setLength(end);
        return out.toString();
    }

    /** The arguments in order; past the last, 0 (as a C callee would read garbage, not crash). */
    private static final class Slots {

        private final long[] args;

        private int next;

        Slots(long[] args) {
            this.args = args;
        }

        long next() {
            return (this.next < this.args.length) ? this.args[this.next++] : 0;
        }
    }

    private static long signed(long slot, int bits) {
        return switch (bits) {
            case 8 -> (byte) slot;
            case 16 -> (short) slot;
            case 32 -> (int) slot;
            default -> slot;
        };
    }

    private static long unsigned(long slot, int bits) {
        return (bits == 64) ? slot : slot & ((1L << bits) - 1);
    }

    /** Applies a precision (minimum digits; precision 0 prints nothing for 0). */
    private static String digits(String digits, boolean isZero, int precision) {
        if (precision == 0 && isZero) {
            return "";
        }
        return (precision > digits.length()) ? "0".repeat(precision - digits.length()) + digits : digits;
    }

    /** A C string, reading at most {@code precision} bytes when one is given (it need not be terminated then). */
    private static String string(long address, int precision) {
        if (address == 0) {
            return (precision < 0 || precision >= 6) ? "(null)" : "";
        }
        Pointer pointer = new Pointer(address);
        if (precision < 0) {
            return pointer.getString(0, StandardCharsets.UTF_8.name());
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(Math.min(precision, 256));
        for (int k = 0; k < precision; k++) {
            byte b = pointer.getByte(k);
            if (b == 0) {
                break;
            }
            bytes.write(b);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
