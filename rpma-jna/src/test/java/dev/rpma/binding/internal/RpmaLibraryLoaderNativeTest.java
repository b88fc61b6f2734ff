package dev.rpma.binding.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import dev.rpma.binding.Rpma;
import dev.rpma.binding.RpmaUnavailableException;

/** Finding librpma: the defaults, the override, and what a missing library says. */
class RpmaLibraryLoaderNativeTest {

    private final String saved = System.getProperty(RpmaLibraryLoader.PROPERTY);

    @AfterEach
    void restore() {
        if (this.saved == null) {
            System.clearProperty(RpmaLibraryLoader.PROPERTY);
        }
        else {
            System.setProperty(RpmaLibraryLoader.PROPERTY, this.saved);
        }
    }

    @Test
    void defaultsAreTheRuntimeSonameThenTheDevSymlink() {
        System.clearProperty(RpmaLibraryLoader.PROPERTY);
        if (System.getenv(RpmaLibraryLoader.ENVIRONMENT) == null) {
            assertThat(RpmaLibraryLoader.candidates()).containsOnlyKeys("librpma.so.0", "rpma");
            assertThat(RpmaLibraryLoader.candidates().keySet()).containsExactly("librpma.so.0", "rpma");
        }
        assertThat(RpmaLibraryLoader.load().rpma_err_2str(-100004)).isEqualTo("Invalid argument");
    }

    @Test
    void thePropertyNamesTheLibrary() {
        System.setProperty(RpmaLibraryLoader.PROPERTY, " /usr/lib/x86_64-linux-gnu/librpma.so.0 ");
        assertThat(RpmaLibraryLoader.candidates()).containsExactly(
                org.assertj.core.api.Assertions.entry("/usr/lib/x86_64-linux-gnu/librpma.so.0",
                        "system property rpma.library"));
        assertThat(RpmaLibraryLoader.load().rpma_err_2str(0)).isEqualTo("Success");
    }

    @Test
    void aMissingLibrarySaysWhatWasSearchedWhyItFailedAndHowToInstallIt() {
        System.setProperty(RpmaLibraryLoader.PROPERTY, "/nonexistent/librpma.so");
        assertThatThrownBy(RpmaLibraryLoader::load).isInstanceOfSatisfying(RpmaLibraryLoader.LoadFailure.class, ex -> {
            assertThat(ex.attempts()).startsWith("Tried '/nonexistent/librpma.so' (system property rpma.library):"
                    + " Unable to load library '/nonexistent/librpma.so': ")
                    // the dynamic loader's own words, which JNA puts on the lines after its colon
                    .contains("/nonexistent/librpma.so: cannot open shared object file: No such file or directory")
                    .doesNotContain("\n");
            assertThat(ex).hasMessage("librpma could not be loaded. " + ex.attempts() + ". " + RpmaLibraryLoader.ADVICE
                    + ".");
        });
        assertThat(RpmaLibraryLoader.ADVICE).contains("sudo apt-get install librpma0")
                .contains("system property 'rpma.library' or the environment variable 'RPMA_LIBRARY'");
    }

    /** As JNA's NativeLibrary words it: a first line ending at a colon, then each place it looked. */
    @Test
    void theLoadersErrorIsKeptWholeOnOneLine() {
        String jna = "Unable to load library 'rpma':\n"
                + "librpma.so: cannot open shared object file: No such file or directory\n"
                + "librpma.so: cannot open shared object file: No such file or directory\n"
                + "Native library (linux-x86-64/librpma.so) not found in resource path (app.jar)";
        assertThat(RpmaLibraryLoader.oneLine(new UnsatisfiedLinkError(jna))).isEqualTo("Unable to load library 'rpma':"
                + " librpma.so: cannot open shared object file: No such file or directory;"
                + " Native library (linux-x86-64/librpma.so) not found in resource path (app.jar)");
        assertThat(RpmaLibraryLoader.oneLine(new UnsatisfiedLinkError("one line"))).isEqualTo("one line");
        assertThat(RpmaLibraryLoader.oneLine(new NoClassDefFoundError())).isEqualTo("java.lang.NoClassDefFoundError");
    }

    /** In a JVM of its own: {@link Rpma} binds once per JVM, and this one must stay bound. */
    @Test
    void rpmaReportsAMissingLibraryInsteadOfFailingToLoadItsClass() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process process = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                "-D" + RpmaLibraryLoader.PROPERTY + "=/nonexistent/librpma.so", MissingLibraryProbe.class.getName()))
                .redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output).contains("available=false")
                .contains("cause=" + RpmaLibraryLoader.LoadFailure.class.getName() + ": librpma could not be loaded."
                        + " Tried '/nonexistent/librpma.so' (system property rpma.library): Unable to load library"
                        + " '/nonexistent/librpma.so': /nonexistent/librpma.so: cannot open shared object file")
                .contains("apt-get install librpma0")
                .contains("get=" + RpmaUnavailableException.class.getName());
    }

    /** Runs in the forked JVM. */
    public static final class MissingLibraryProbe {

        public static void main(String[] args) {
            System.out.println("available=" + Rpma.isAvailable());
            System.out.println("cause=" + Rpma.unavailabilityCause());
            try {
                Rpma.get();
                System.out.println("get=returned");
            }
            catch (RuntimeException ex) {
                System.out.println("get=" + ex.getClass().getName() + ": " + ex.getMessage());
            }
        }
    }
}
