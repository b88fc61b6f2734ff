package dev.rpma.sample.e2e;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The samples of a Prometheus text exposition, looked up by name and labels. */
final class Prometheus {

    private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)})?\\s+(\\S+)(\\s+\\d+)?$");

    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples = new ArrayList<>();

    private final String text;

    Prometheus(String text) {
        this.text = text;
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher matcher = SAMPLE.matcher(line.trim());
            if (!matcher.matches()) {
                continue;
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (matcher.group(3) != null) {
                Matcher label = LABEL.matcher(matcher.group(3));
                while (label.find()) {
                    labels.put(label.group(1), label.group(2));
                }
            }
            this.samples.add(new Sample(matcher.group(1), labels, Double.parseDouble(matcher.group(4))));
        }
    }

    /**
     * The value of the one sample named {@code name} whose labels include {@code labels} (given as
     * name, value pairs).
     *
     * @throws AssertionError when no sample or more than one matches
     */
    double value(String name, String... labels) {
        List<Sample> found = new ArrayList<>();
        for (Sample sample : this.samples) {
            if (sample.name.equals(name) && matches(sample.labels, labels)) {
                found.add(sample);
            }
        }
        if (found.size() != 1) {
            throw new AssertionError(found.size() + " samples of " + name + " with labels " + List.of(labels)
                    + " in the scrape; its " + name + " lines:\n" + lines(name));
        }
        return found.get(0).value;
    }

    long count(String name, String... labels) {
        return Math.round(value(name, labels));
    }

    private static boolean matches(Map<String, String> actual, String[] wanted) {
        for (int i = 0; i + 1 < wanted.length; i += 2) {
            if (!wanted[i + 1].equals(actual.get(wanted[i]))) {
                return false;
            }
        }
        return true;
    }

    private String lines(String name) {
        StringBuilder lines = new StringBuilder();
        for (String line : this.text.split("\n")) {
            if (line.startsWith(name)) {
                lines.append(line).append('\n');
            }
        }
        return lines.toString();
    }
}
