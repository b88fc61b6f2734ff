package dev.rpma.sample.e2e;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
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

    /** The sum of the samples named {@code name} whose labels include {@code labels}; 0 when none. */
    double sum(String name, String... labels) {
        return this.samples.stream()
            .filter((sample) -> sample.name.equals(name) && matches(sample.labels, labels))
            .mapToDouble(Sample::value)
            .sum();
    }

    /** The {@code le} bounds and counts of the histogram buckets named {@code name} with {@code labels}, by bound. */
    SortedMap<Double, Double> buckets(String name, String... labels) {
        SortedMap<Double, Double> buckets = new TreeMap<>();
        for (Sample sample : this.samples) {
            if (sample.name.equals(name) && matches(sample.labels, labels)) {
                String le = sample.labels.get("le");
                double bound = "+Inf".equals(le) ? Double.POSITIVE_INFINITY : Double.parseDouble(le);
                buckets.merge(bound, sample.value, Double::sum);
            }
        }
        return buckets;
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
