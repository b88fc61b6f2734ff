package dev.rpma.binding.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

import dev.rpma.binding.internal.LibC;

/** The Linux scheduling policy of the calling thread, as the kernel reports it. */
public final class SchedulingPolicies {

    public static final int SCHED_OTHER = 0;

    public static final int SCHED_BATCH = LibC.SCHED_BATCH;

    private SchedulingPolicies() {
    }

    /** Field 41 ({@code policy}) of {@code /proc/thread-self/stat}. */
    public static int ofCurrentThread() {
        try {
            String stat = Files.readString(Path.of("/proc/thread-self/stat"));
            // the fields after the command name, which may contain spaces, start with field 3
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
            return Integer.parseInt(fields[41 - 3]);
        }
        catch (IOException ex) {
            throw new UncheckedIOException(ex);
        }
    }
}
