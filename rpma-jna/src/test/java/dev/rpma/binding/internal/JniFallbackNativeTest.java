package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;

/**
 * A jar built without the JNI library (on a machine without gcc) still binds librpma, with every
 * call through JNA, and says why. Runs only where the build left the library out; where it is there,
 * {@link JniCallsNativeTest} covers it.
 */
class JniFallbackNativeTest {

    @Test
    void withoutTheLibraryEveryCallGoesThroughJna() {
        assumeTrue(JniCalls.class.getResource(JniCalls.RESOURCE) == null, "the build put the JNI library in the jar");
        assertThat(JniCalls.unavailableReason()).startsWith("no JNI library for ").endsWith(" in the jar");
        assertThat(JniCalls.LIBC).isFalse();
        JnaLibRpma lib = (JnaLibRpma) RpmaLibraryLoader.load();
        assertThat(lib.usesJni()).isFalse();
        assertThat(lib.rpma_err_2str(-100004)).isEqualTo("Invalid argument");
    }
}
