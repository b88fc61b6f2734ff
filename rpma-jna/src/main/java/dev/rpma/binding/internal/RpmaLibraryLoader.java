package dev.rpma.binding.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.sun.jna.NativeLibrary;

/**
 * Finds and binds librpma. The library name or path comes from the system property
 * {@value #PROPERTY}, else the environment variable {@value #ENVIRONMENT}, else {@code librpma.so.0}
 * (runtime package {@code librpma0}) and then {@code rpma} ({@code librpma.so} of {@code librpma-dev}).
 * Internal API: users go through {@code dev.rpma.binding.Rpma}.
 */
public final class RpmaLibraryLoader {

    public static final String PROPERTY = "rpma.library";
    public static final String ENVIRONMENT = "RPMA_LIBRARY";

    /** How to make librpma loadable, as one sentence without its final period. */
    public static final String ADVICE = "Install librpma (Debian/Ubuntu: 'sudo apt-get install librpma0'), or set"
            + " the system property '" + PROPERTY + "' or the environment variable '" + ENVIRONMENT
            + "' to the library's file name or path";

    private RpmaLibraryLoader() {
    }

    /** The names tried, in order, each with where it came from. */
    public static Map<String, String> candidates() {
        Map<String, String> names = new LinkedHashMap<>();
        String property = System.getProperty(PROPERTY);
        if (property != null && !property.isBlank()) {
            names.put(property.trim(), "system property " + PROPERTY);
            return names;
        }
        String environment = System.getenv(ENVIRONMENT);
        if (environment != null && !environment.isBlank()) {
            names.put(environment.trim(), "environment variable " + ENVIRONMENT);
            return names;
        }
        names.put("librpma.so.0", "default (Debian/Ubuntu package librpma0)");
        names.put("rpma", "default (librpma.so of librpma-dev)");
        return names;
    }

    /**
     * Binds librpma, or throws a {@link LoadFailure} whose message names every candidate with the
     * loader's whole error for it, then the {@link #ADVICE}.
     */
    public static LibRpma load() {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, String> candidate : candidates().entrySet()) {
            try {
                NativeLibrary library = NativeLibrary.getInstance(candidate.getKey());
                return new JnaLibRpma(library);
            }
            catch (UnsatisfiedLinkError | NoClassDefFoundError ex) {
                failures.add("'" + candidate.getKey() + "' (" + candidate.getValue() + "): " + oneLine(ex));
            }
        }
        throw new LoadFailure("Tried " + String.join("; then ", failures));
    }

    /**
     * The loader's error on one line. JNA's reads {@code Unable to load library 'x':} and then, a line
     * each, why every place it looked failed; the first line alone ends at its colon. Repeated lines
     * (the same dlopen error for two spellings of a name) are kept once.
     */
    static String oneLine(Throwable error) {
        String message = error.getMessage();
        if (message == null || message.isBlank()) {
            return error.getClass().getName();
        }
        Set<String> lines = new LinkedHashSet<>();
        for (String line : message.split("\\R")) {
            if (!line.isBlank()) {
                lines.add(line.strip());
            }
        }
        StringBuilder text = new StringBuilder();
        for (String line : lines) {
            if (!text.isEmpty()) {
                text.append((text.charAt(text.length() - 1) == ':') ? " " : "; ");
            }
            text.append(line);
        }
        return text.toString();
    }

    /**
     * librpma could not be loaded: {@link #attempts()} says what was tried and how each try failed, and
     * the message ends with the {@link #ADVICE}.
     */
    public static final class LoadFailure extends UnsatisfiedLinkError {

        private static final long serialVersionUID = 1L;

        private final String attempts;

        LoadFailure(String attempts) {
            super("librpma could not be loaded. " + attempts + ". " + ADVICE + ".");
            this.attempts = attempts;
        }

        /** Each library name tried, where it came from, and the loader's error for it. */
        public String attempts() {
            return this.attempts;
        }
    }
}
