package dev.rpma.jna.raw;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.sun.jna.NativeLibrary;

/**
 * Finds and binds librpma. The library name or path comes from the system property
 * {@value #PROPERTY}, else the environment variable {@value #ENVIRONMENT}, else {@code librpma.so.0}
 * (runtime package {@code librpma0}) and then {@code rpma} ({@code librpma.so} of {@code librpma-dev}).
 * Internal API: users go through {@code dev.rpma.jna.Rpma}.
 */
public final class RpmaLibraryLoader {

    public static final String PROPERTY = "rpma.library";
    public static final String ENVIRONMENT = "RPMA_LIBRARY";

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
     * Binds librpma, or throws {@link UnsatisfiedLinkError} whose message names every candidate
     * with its own failure and how to install the library.
     */
    public static LibRpma load() {
        List<String> failures = new ArrayList<>();
        for (Map.Entry<String, String> candidate : candidates().entrySet()) {
            try {
                NativeLibrary library = NativeLibrary.getInstance(candidate.getKey());
                return new JnaLibRpma(library);
            }
            catch (UnsatisfiedLinkError | NoClassDefFoundError ex) {
                failures.add("'" + candidate.getKey() + "' (" + candidate.getValue() + "): "
                        + firstLine(ex.getMessage()));
            }
        }
        throw new UnsatisfiedLinkError("librpma could not be loaded. Tried " + String.join("; ", failures)
                + ". Install it (Debian/Ubuntu: 'apt-get install librpma0'), or point the system property '"
                + PROPERTY + "' or the environment variable '" + ENVIRONMENT
                + "' at the library's file name or path.");
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "not found";
        }
        int newline = message.indexOf('\n');
        return (newline < 0) ? message : message.substring(0, newline);
    }
}
