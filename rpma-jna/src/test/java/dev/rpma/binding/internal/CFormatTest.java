package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * {@link CFormat} expands librpma's log formats from 64-bit argument slots as C's printf does:
 * explicit expectations for the conversions librpma uses, and glibc's own {@code snprintf} as the
 * oracle for a wider table.
 */
class CFormatTest {

    private static final List<Memory> STRINGS = new ArrayList<>();

    /** A NUL-terminated native string; its address is what a C caller passes for %s. */
    private static long cString(String value) {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        Memory memory = new Memory(bytes.length + 1L);
        memory.write(0, bytes, 0, bytes.length);
        memory.setByte(bytes.length, (byte) 0);
        STRINGS.add(memory);
        return Pointer.nativeValue(memory);
    }

    @AfterAll
    static void free() {
        STRINGS.forEach(Memory::close);
    }

    private static String format(String format, long... args) {
        return CFormat.format(format, args);
    }

    @Test
    void conversionsLibrpmaUses() {
        assertThat(format("rdma_getaddrinfo(node=%s, service=%s, ai_flags=%s): %s\n", cString("127.0.0.1"), 0,
                cString("passive"), cString("No such device")))
                .isEqualTo("rdma_getaddrinfo(node=127.0.0.1, service=(null), ai_flags=passive): No such device");
        assertThat(format("%d %i %d", 42, -7, 0xFFFF_FFFFL)).isEqualTo("42 -7 -1");
        assertThat(format("%u", -1)).isEqualTo("4294967295");
        assertThat(format("%lu %zu %llu", -1, 21, 5)).isEqualTo("18446744073709551615 21 5");
        assertThat(format("%ld", -5)).isEqualTo("-5");
        assertThat(format("%x %lx %X", 0xabcdef, 0x1122334455667788L, 255)).isEqualTo("abcdef 1122334455667788 FF");
        assertThat(format("%p", 0x7f00_dead_beefL)).isEqualTo("0x7f00deadbeef");
        assertThat(format("100%%")).isEqualTo("100%");
        assertThat(format("[%.*s]", 3, cString("abcdef"))).isEqualTo("[abc]");
        assertThat(format("[%.2s]", cString("abcdef"))).isEqualTo("[ab]");
        assertThat(format("%c%c", 'o', 'k')).isEqualTo("ok");
        assertThat(format("%o", 8)).isEqualTo("10");
        assertThat(format("incorrect size of the descriptor: %i bytes (should be at least: %i bytes)", 20, 21))
                .isEqualTo("incorrect size of the descriptor: 20 bytes (should be at least: 21 bytes)");
        assertThat(format("new struct rpma_mr_remote {raddr=0x%lx, size=%lu, rkey=0x%x, usage=0x%x}",
                0x1122334455667788L, 4096, 0xabcdef, 0x21))
                .isEqualTo("new struct rpma_mr_remote {raddr=0x1122334455667788, size=4096, rkey=0xabcdef, usage=0x21}");
    }

    @Test
    void edges() {
        assertThat(format(null)).isEmpty();
        assertThat(format("no conversions\r\n\n")).isEqualTo("no conversions");
        assertThat(format("%s and %d", cString("only one"))).as("missing arguments read as 0")
                .isEqualTo("only one and 0");
        assertThat(format("%d %d %d %d %d %d %d %d %d", 1, 2, 3, 4, 5, 6, 7, 8)).endsWith("8 0");
        assertThat(format("%s", cString("zażółć"))).isEqualTo("zażółć");
        assertThat(format("%p", 0)).isEqualTo("(nil)");
        assertThat(format("%.3s|%s", 0, 0)).as("glibc prints (null) only when it fits the precision")
                .isEqualTo("|(null)");
        assertThat(format("%hd %hhd %hu %hhx", 0x1_FFFF, 0x1FF, -1, -1)).isEqualTo("-1 -1 65535 ff");
        assertThat(format("%5d|%-5d|%05d|%+d|% d", 42, 42, -42, 42, 42)).isEqualTo("   42|42   |-0042|+42| 42");
        assertThat(format("%*d|%-*d", 4, 7, 3, 7)).isEqualTo("   7|7  ");
        assertThat(format("%#x %#o %.3d %.0d|", 255, 8, 7, 0)).isEqualTo("0xff 010 007 |");
        assertThat(format("%8s|%-8s|", cString("ab"), cString("ab"))).isEqualTo("      ab|ab      |");
        assertThat(format("%q %f", 1)).as("unknown and floating conversions are printed, not expanded")
                .isEqualTo("%q %f");
    }

    @Test
    void precisionBoundsHowMuchOfAStringIsRead() {
        // 4 bytes without a terminating NUL, at the very end of their allocation
        Memory unterminated = new Memory(4);
        unterminated.write(0, new byte[] { 'a', 'b', 'c', 'd' }, 0, 4);
        assertThat(format("%.*s", 4, Pointer.nativeValue(unterminated))).isEqualTo("abcd");
        assertThat(format("%.2s", Pointer.nativeValue(unterminated))).isEqualTo("ab");
        unterminated.close();
    }

    static Stream<Arguments> oracle() {
        return Stream.of(
                Arguments.of("%d|%i|%u|%x|%X|%o", new Object[] { -123, 456, -1, 0xbeef, 0xbeef, 511 }),
                Arguments.of("%ld|%lu|%lx|%zu|%zd", new Object[] { -1L, -1L, -2L, 12345678901L, -3L }),
                Arguments.of("%lld|%llu|%jd|%td", new Object[] { Long.MIN_VALUE, Long.MAX_VALUE, 7L, -8L }),
                Arguments.of("%hd|%hu|%hhd|%hhu|%hx", new Object[] { 70000, 70000, 300, 300, -1 }),
                Arguments.of("[%6d][%-6d][%06d][%+6d][% 6d][%+.3d]", new Object[] { 12, 12, -12, 12, 12, 5 }),
                Arguments.of("[%*d][%-*d][%*d]", new Object[] { 5, 1, 5, 1, -5, 1 }),
                Arguments.of("[%.5d][%8.5d][%-8.5x][%.0d][%#.0x][%#x][%#o][%#X]",
                        new Object[] { 42, 42, 42, 0, 0, 0, 0, 26 }),
                Arguments.of("[%p][%20p][%-20p]", new Object[] { ptr(0x1234), ptr(0xabcdef), ptr(0xabcdef) }),
                Arguments.of("[%p]", new Object[] { ptr(0) }),
                Arguments.of("[%s][%10s][%-10s][%.3s][%10.2s][%.*s][%.*s]",
                        new Object[] { "abc", "abc", "abc", "abcdef", "abcdef", 2, "xyz", -1, "neg" }),
                Arguments.of("[%s][%.5s][%.6s][%10s]", new Object[] { ptr(0), ptr(0), ptr(0), ptr(0) }),
                Arguments.of("[%c][%3c][%-3c]", new Object[] { 65, 66, 67 }),
                Arguments.of("[%5%][%%][%-5d]", new Object[] { 9 }),
                Arguments.of("%s=%d %s=%u %s=%lx %s", new Object[] { "a", 1, "b", 2, "c", 3L, "d" }));
    }

    private static Pointer ptr(long address) {
        return new Pointer(address);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("oracle")
    void matchesGlibcSnprintf(String format, Object[] args) {
        Object[] nativeArgs = new Object[args.length];
        long[] slots = new long[args.length];
        for (int i = 0; i < args.length; i++) {
            Object arg = args[i];
            if (arg instanceof String text) {
                long address = cString(text);
                nativeArgs[i] = new Pointer(address);
                slots[i] = address;
            }
            else if (arg instanceof Pointer pointer) {
                nativeArgs[i] = pointer;
                slots[i] = Pointer.nativeValue(pointer);
            }
            else if (arg instanceof Long value) {
                nativeArgs[i] = value;
                slots[i] = value;
            }
            else {
                nativeArgs[i] = arg;
                slots[i] = (Integer) arg;
            }
        }
        Memory buffer = new Memory(512);
        Object[] call = new Object[args.length + 3];
        call[0] = buffer;
        call[1] = 512L;
        call[2] = format;
        System.arraycopy(nativeArgs, 0, call, 3, args.length);
        Function.getFunction("c", "snprintf").invokeInt(call);
        String glibc = buffer.getString(0, "UTF-8");
        buffer.close();

        assertThat(CFormat.format(format, slots)).isEqualTo(glibc);
    }
}
