package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code docs/configuration.md} is the metadata the build generated, rendered by
 * {@link RpmaConfigurationReference} below the page's hand-written introduction, so that the reference
 * cannot drift from the code. {@code -Drpma.docs.write=true} writes the page instead of comparing.
 */
class RpmaConfigurationReferenceTests {

    /** The line that ends the hand-written introduction; everything after it is generated. */
    static final String MARKER = "<!-- Generated from the configuration metadata by RpmaConfigurationReferenceTests:"
            + " edit the text above this line, or the Javadoc of RpmaProperties, not the tables below. -->";

    private static final Path PAGE = RpmaConfigurationReference.moduleDirectory().resolveSibling("docs")
        .resolve("configuration.md");

    @Test
    void referencePageIsTheRenderedMetadata() throws IOException {
        String page = Files.readString(PAGE, StandardCharsets.UTF_8);
        int marker = page.indexOf(MARKER + "\n");
        assertThat(marker).as("the line %s in %s", MARKER, PAGE).isNotNegative();
        String expected = page.substring(0, marker + MARKER.length() + 1)
                + RpmaConfigurationReference.ofThisModule().render();
        if (Boolean.getBoolean("rpma.docs.write")) {
            Files.writeString(PAGE, expected, StandardCharsets.UTF_8);
            return;
        }
        assertThat(page).as("%s differs from the configuration metadata; regenerate it with"
                + " 'mvn -pl rpma-spring-boot-autoconfigure -am verify -Drpma.docs.write=true'", PAGE)
            .isEqualTo(expected);
    }

    @Test
    void everyPropertyOfTheMetadataIsInTheReference() throws IOException {
        // a map is a section of its own, whose properties are those of its values
        List<String> names = properties().stream().map((property) -> property.get("name")
                + (((String) property.get("type")).startsWith("java.util.Map<") ? ".<name>" : "")).toList();
        String reference = RpmaConfigurationReference.ofThisModule().render();
        assertThat(names).isNotEmpty().allSatisfy((name) -> assertThat(reference).contains("`" + name));
    }

    @Test
    void namedEndpointsAndRegionsAreExpanded() throws IOException {
        assertThat(RpmaConfigurationReference.ofThisModule().names()).contains(
                "rpma.server.endpoints.<name>.address", "rpma.server.endpoints.<name>.port",
                "rpma.server.endpoints.<name>.acceptor.*", "rpma.server.endpoints.<name>.connection.*",
                "rpma.server.endpoints.<name>.messages.*", "rpma.server.endpoints.<name>.limits.*",
                "rpma.server.regions.<name>.size", "rpma.server.regions.<name>.usage",
                "rpma.server.regions.<name>.endpoints");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> properties() throws IOException {
        return (List<Map<String, Object>>) RpmaConfigurationReference.metadata().get("properties");
    }
}
