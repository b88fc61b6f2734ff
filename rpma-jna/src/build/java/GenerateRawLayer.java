import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Writes the classes that repeat {@code LibRpma}'s method list, so that the interface is the one
 * place where librpma's functions are written out: {@code dev.rpma.binding.internal.DirectLibRpma} (the JNA
 * direct-mapped natives and the methods that call them) and {@code dev.rpma.binding.testing.ForwardingLibRpma}
 * (a raw layer that forwards every call to another one). Run by the build before compiling:
 * {@code java GenerateRawLayer.java <LibRpma.java> <DirectLibRpma's sources dir> <ForwardingLibRpma's sources dir>},
 * where {@code -} skips one: rpma-jna writes the first, rpma-jna-testing the second.
 */
public final class GenerateRawLayer {

    /** One abstract method a line, optionally after a one-line Javadoc that gives its C prototype. */
    private static final Pattern METHOD = Pattern.compile(
            "^\\s*(?:/\\*\\* \\{@code (?<proto>.*)\\} \\*/\\s*\\n)?\\s*(?<type>[\\w.]+) (?<name>\\w+)\\((?<params>[^)]*)\\);\\s*$",
            Pattern.MULTILINE);

    private static final Pattern PARAMETER = Pattern.compile("([\\w.]+) (\\w+)");

    private record Method(String prototype, String type, String name, List<String> types, List<String> names) {

        String parameters() {
            List<String> declared = new ArrayList<>();
            for (int i = 0; i < this.types.size(); i++) {
                declared.add(this.types.get(i) + " " + this.names.get(i));
            }
            return String.join(", ", declared);
        }

        String arguments() {
            return String.join(", ", this.names);
        }

        boolean isLibrpmaFunction() {
            return this.name.startsWith("rpma_");
        }
    }

    private GenerateRawLayer() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException(
                    "usage: GenerateRawLayer <LibRpma.java> <DirectLibRpma's dir or -> <ForwardingLibRpma's dir or ->");
        }
        List<Method> methods = parse(Files.readString(Path.of(args[0])));
        if (!args[1].equals("-")) {
            write(Path.of(args[1]), "dev/rpma/binding/internal/DirectLibRpma.java", direct(methods));
        }
        if (!args[2].equals("-")) {
            write(Path.of(args[2]), "dev/rpma/binding/testing/ForwardingLibRpma.java", forwarding(methods));
        }
    }

    private static List<Method> parse(String source) {
        List<Method> methods = new ArrayList<>();
        Matcher matcher = METHOD.matcher(source);
        while (matcher.find()) {
            List<String> types = new ArrayList<>();
            List<String> names = new ArrayList<>();
            String params = matcher.group("params").trim();
            if (!params.isEmpty()) {
                for (String param : params.split(",")) {
                    Matcher parameter = PARAMETER.matcher(param.trim());
                    if (!parameter.matches()) {
                        throw new IllegalStateException("unexpected parameter '" + param + "' in " + matcher.group());
                    }
                    types.add(parameter.group(1));
                    names.add(parameter.group(2));
                }
            }
            methods.add(new Method(matcher.group("proto"), matcher.group("type"), matcher.group("name"), types, names));
        }
        // A declaration the pattern does not read (split over lines, a default method, an annotation) would
        // silently be missing from every generated class: count the declarations another way.
        long declarations = source.lines().filter(line -> line.trim().endsWith(");")).count();
        if (methods.isEmpty() || declarations != methods.size()) {
            throw new IllegalStateException("read " + methods.size() + " of LibRpma's " + declarations
                    + " method declarations: keep each one on one line, as '<type> <name>(<type> <name>, ...);'");
        }
        for (Method method : methods) {
            if (method.isLibrpmaFunction() && method.prototype() == null) {
                throw new IllegalStateException(method.name() + " has no '/** {@code <C prototype>} */' line");
            }
        }
        return methods;
    }

    private static String direct(List<Method> methods) {
        StringBuilder out = new StringBuilder();
        out.append("""
                package dev.rpma.binding.internal;

                /**
                 * Every librpma function of {@link LibRpma} called through JNA direct mapping: each is a static
                 * native method of {@link Direct} bound to the symbol of the same name, taking only primitives
                 * and strings, so no call allocates for its arguments. Generated from {@link LibRpma}.
                 */
                abstract class DirectLibRpma implements LibRpma {
                """);
        for (Method method : methods) {
            if (method.isLibrpmaFunction()) {
                appendCall(out, method, "Direct.");
            }
        }
        out.append("""

                    /** The direct-mapped symbols; {@code Native.register} binds each method to its C namesake. */
                    static final class Direct {

                        private Direct() {
                        }
                """);
        for (Method method : methods) {
            if (method.isLibrpmaFunction()) {
                out.append("\n        // ").append(method.prototype()).append('\n');
                out.append("        static native ").append(method.type()).append(' ').append(method.name())
                        .append('(').append(method.parameters()).append(");\n");
            }
        }
        out.append("    }\n}\n");
        return out.toString();
    }

    private static String forwarding(List<Method> methods) {
        StringBuilder out = new StringBuilder();
        out.append("""
                package dev.rpma.binding.testing;

                import dev.rpma.binding.internal.LibRpma;

                /**
                 * A raw layer that forwards every call to another one; subclasses replace the calls they script
                 * or measure. Generated from {@link LibRpma}.
                 */
                public abstract class ForwardingLibRpma implements LibRpma {

                    private final LibRpma delegate;

                    protected ForwardingLibRpma(LibRpma delegate) {
                        this.delegate = delegate;
                    }
                """);
        for (Method method : methods) {
            appendCall(out, method, "this.delegate.");
        }
        out.append("}\n");
        return out.toString();
    }

    /** A {@code LibRpma} method that returns what the same-named method of {@code target} returns. */
    private static void appendCall(StringBuilder out, Method method, String target) {
        out.append("\n    @Override\n");
        out.append("    public ").append(method.type()).append(' ').append(method.name()).append('(')
                .append(method.parameters()).append(") {\n");
        out.append("        return ").append(target).append(method.name()).append('(').append(method.arguments())
                .append(");\n");
        out.append("    }\n");
    }

    private static void write(Path root, String file, String content) throws IOException {
        Path path = root.resolve(file);
        Files.createDirectories(path.getParent());
        if (!Files.exists(path) || !Files.readString(path).equals(content)) {
            Files.writeString(path, content);
        }
    }
}
