package dev.rpma.binding;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * What the tests that compile C, or that need the JNI library, require of the machine, looked up as
 * the build looks it up: gcc on the PATH, and the JDK's {@code include/jni.h}. Where either is
 * missing the build leaves the JNI library out and such tests are skipped; where both are there the
 * tests run, and fail if the library is missing.
 */
public final class NativeToolchain {

    private NativeToolchain() {
    }

    /** Whether an executable {@code gcc} is on the PATH. */
    public static boolean hasGcc() {
        String path = System.getenv("PATH");
        if (path == null) {
            return false;
        }
        for (String directory : path.split(File.pathSeparator)) {
            if (!directory.isEmpty() && Files.isExecutable(Path.of(directory, "gcc"))) {
                return true;
            }
        }
        return false;
    }

    /** Whether the build had what it needs to make the JNI library. */
    public static boolean canBuildJni() {
        return hasGcc() && Files.isRegularFile(Path.of(System.getProperty("java.home"), "include", "jni.h"));
    }
}
