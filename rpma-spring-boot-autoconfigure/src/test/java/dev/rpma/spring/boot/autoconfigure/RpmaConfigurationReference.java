package dev.rpma.spring.boot.autoconfigure;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.lang.reflect.RecordComponent;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.TreePathScanner;
import com.sun.source.util.Trees;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.BeanWrapperImpl;
import org.springframework.boot.json.JsonParserFactory;

import dev.rpma.spring.boot.autoconfigure.client.RpmaClientProperties;

/**
 * Renders the reference of every property in this module's configuration metadata as markdown: a
 * section per group, a row per property with its type, default and description, as
 * {@code docs/configuration.md} shows them below its hand-written introduction.
 *
 * <p>The metadata stops at a map (named endpoints, regions): spring-boot-configuration-processor does
 * not describe what a map's values hold. Those rows come from {@link RpmaProperties}' source, the
 * Javadoc the processor reads for every other property, and a named endpoint's groups are checked to
 * take exactly the properties of the {@code rpma.server} groups they inherit from.
 */
final class RpmaConfigurationReference {

    private static final String PROPERTIES_SOURCE =
            "src/main/java/dev/rpma/spring/boot/autoconfigure/RpmaProperties.java";

    private static final String CLIENT_PROPERTIES_SOURCE =
            "src/main/java/dev/rpma/spring/boot/autoconfigure/client/RpmaClientProperties.java";

    /** A block tag starts a line of the comment. */
    private static final Pattern BLOCK_TAG = Pattern.compile("\\n[\\s*]*@\\w");

    private static final Pattern PARAM = Pattern.compile("@param\\s+(\\w+)\\s+(.*?)(?=\\n[\\s*]*@\\w|\\z)",
            Pattern.DOTALL);

    private static final Pattern INLINE_TAG = Pattern.compile("\\{@\\w+\\s+([^}]*)}");

    private final List<Map<String, Object>> properties;

    private final List<Map<String, Object>> groups;

    private final Map<String, String> javadoc;

    private RpmaConfigurationReference(Map<String, Object> metadata, Map<String, String> javadoc) {
        this.properties = list(metadata, "properties");
        this.groups = list(metadata, "groups");
        this.javadoc = javadoc;
    }

    /** The reference of the metadata the build generated for this module, with RpmaProperties' Javadoc. */
    static RpmaConfigurationReference ofThisModule() throws IOException {
        Map<String, String> javadoc = javadoc(moduleDirectory().resolve(PROPERTIES_SOURCE));
        javadoc.putAll(javadoc(moduleDirectory().resolve(CLIENT_PROPERTIES_SOURCE)));
        return new RpmaConfigurationReference(metadata(), javadoc);
    }

    /** {@code META-INF/spring-configuration-metadata.json} as the build wrote it, additional metadata merged in. */
    static Map<String, Object> metadata() throws IOException {
        Path file = classesDirectory().resolve("META-INF/spring-configuration-metadata.json");
        return JsonParserFactory.getJsonParser().parseMap(Files.readString(file, StandardCharsets.UTF_8));
    }

    /** This module's directory, where {@code target/classes} is. */
    static Path moduleDirectory() {
        return classesDirectory().getParent().getParent();
    }

    private static Path classesDirectory() {
        try {
            return Path.of(RpmaProperties.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        }
        catch (URISyntaxException ex) {
            throw new IllegalStateException(ex);
        }
    }

    /** Every property name the reference lists, map values expanded. */
    Set<String> names() {
        return sections().values().stream().flatMap(List::stream).map(Row::name)
            .collect(Collectors.toCollection(LinkedHashSet::new));
    }

    String render() {
        Map<String, String> intros = new HashMap<>();
        for (Map<String, Object> group : this.groups) {
            String type = (String) group.get("type");
            if (type.startsWith(RpmaProperties.class.getName() + "$")) {
                intros.put((String) group.get("name"), classDoc(type));
            }
        }
        for (Map<String, Object> property : this.properties) {
            if (mapValueType((String) property.get("type")) != null) {
                intros.put(property.get("name") + ".<name>", (String) property.get("description"));
            }
        }
        StringBuilder markdown = new StringBuilder();
        sections().forEach((section, rows) -> {
            markdown.append("\n## `").append(section).append("`\n\n");
            String intro = intros.get(section);
            if (intro != null) {
                markdown.append(intro).append("\n\n");
            }
            markdown.append("| Property | Type | Default | Description |\n|---|---|---|---|\n");
            for (Row row : rows) {
                markdown.append("| `").append(row.name()).append("` | ").append(cell(row.type())).append(" | ")
                    .append(row.defaultValue().isEmpty() ? "" : "`" + cell(row.defaultValue()) + "`").append(" | ")
                    .append(cell(row.description())).append(" |\n");
            }
        });
        return markdown.toString();
    }

    private Map<String, List<Row>> sections() {
        // rpma.* first, then the actuator's
        Map<String, List<Row>> sections = new TreeMap<>(Comparator
            .comparing((String section) -> !section.startsWith("rpma.")).thenComparing(Comparator.naturalOrder()));
        for (Map<String, Object> property : this.properties) {
            String name = (String) property.get("name");
            String type = (String) property.get("type");
            Class<?> mapValue = mapValueType(type);
            if (mapValue != null) {
                sections.put(name + ".<name>", mapValueRows(name + ".<name>", mapValue));
            }
            else {
                Object defaultValue = property.get("defaultValue");
                String shown = (defaultValue != null) ? value(defaultValue) : "";
                if (typeName(type).startsWith("one of ")) {
                    // an enum's constant as the metadata spells it (READ_ONLY, read_only): as the type lists it
                    shown = shown.toLowerCase(Locale.ROOT).replace('_', '-');
                }
                sections.computeIfAbsent(section(name), (section) -> new ArrayList<>())
                    .add(new Row(name, typeName(type), shown, (String) property.get("description")));
            }
        }
        sections.values().forEach((rows) -> rows.sort(Comparator.comparing(Row::name)));
        return sections;
    }

    /** The longest group that holds the property, else its parent. */
    private String section(String property) {
        return this.groups.stream().map((group) -> (String) group.get("name"))
            .filter((group) -> property.startsWith(group + ".")).max(Comparator.comparingInt(String::length))
            .orElse(property.substring(0, property.lastIndexOf('.')));
    }

    /**
     * The rows of a map's value: a record's components (null: inherited), or a bean's fields and initial values,
     * those of a nested bean of the same properties class under its own prefix.
     */
    private List<Row> mapValueRows(String prefix, Class<?> type) {
        List<Row> rows = new ArrayList<>();
        if (type.isRecord()) {
            for (RecordComponent component : type.getRecordComponents()) {
                String name = prefix + "." + dashed(component.getName());
                String doc = doc(key(type) + "#" + component.getName());
                if (component.getType().getDeclaringClass() == RpmaProperties.class) {
                    checkSameProperties(component.getType(), "rpma.server." + dashed(component.getName()));
                    rows.add(new Row(name + ".*", "group", "", doc));
                }
                else {
                    rows.add(new Row(name, typeName(component.getGenericType().getTypeName()), "", doc));
                }
            }
            return rows;
        }
        BeanWrapperImpl initial = new BeanWrapperImpl(type);
        for (Field field : type.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            if (field.getType().getDeclaringClass() == type.getDeclaringClass() && !field.getType().isEnum()) {
                // a nested group of the value (a client's admission): its properties, one level down
                rows.addAll(mapValueRows(prefix + "." + dashed(field.getName()), field.getType()));
            }
            else {
                rows.add(new Row(prefix + "." + dashed(field.getName()), typeName(field.getGenericType().getTypeName()),
                        value(initial.getPropertyValue(field.getName())), doc(key(type) + "#" + field.getName())));
            }
        }
        return rows;
    }

    /** A named endpoint's group takes exactly the properties of the rpma.server group it inherits from. */
    private void checkSameProperties(Class<?> endpointGroup, String serverGroup) {
        Set<String> own = Arrays.stream(endpointGroup.getRecordComponents())
            .map((component) -> serverGroup + "." + dashed(component.getName()))
            .collect(Collectors.toCollection(TreeSet::new));
        Set<String> server = this.properties.stream().map((property) -> (String) property.get("name"))
            .filter((name) -> name.startsWith(serverGroup + "."))
            .collect(Collectors.toCollection(TreeSet::new));
        if (!own.equals(server)) {
            throw new IllegalStateException(endpointGroup.getSimpleName() + " must take the properties of " + serverGroup
                    + " " + server + ", not " + own);
        }
    }

    private static @Nullable Class<?> mapValueType(String type) {
        String prefix = "java.util.Map<java.lang.String,";
        if (!type.startsWith(prefix)) {
            return null;
        }
        Class<?> value = load(type.substring(prefix.length(), type.length() - 1));
        if (value.getDeclaringClass() != RpmaProperties.class && value.getDeclaringClass() != RpmaClientProperties.class) {
            throw new IllegalStateException("no rendering for a map of " + value);
        }
        return value;
    }

    private static String typeName(String type) {
        switch (type) {
            case "java.lang.Boolean", "boolean":
                return "boolean";
            case "java.lang.Integer", "int":
                return "integer";
            case "java.lang.Double", "double":
                return "number";
            case "java.lang.String":
                return "string";
            case "java.time.Duration":
                return "duration";
            case "java.nio.file.Path":
                return "path";
            case "org.springframework.util.unit.DataSize":
                return "data size";
            case "java.util.List<java.lang.String>":
                return "list of strings";
            default:
                if (type.startsWith("java.util.List<") && load(type.substring(15, type.length() - 1)).isEnum()) {
                    return "list of names";
                }
                if (type.startsWith("java.util.List<") && load(type.substring(15, type.length() - 1)).isRecord()) {
                    // a list of small records (the admission keys): each item's properties, as written in YAML
                    return "list of (" + Arrays.stream(load(type.substring(15, type.length() - 1)).getRecordComponents())
                        .map((component) -> dashed(component.getName())).collect(Collectors.joining(", ")) + ")";
                }
                Class<?> enumType = load(type);
                if (!enumType.isEnum()) {
                    throw new IllegalStateException("no rendering for the type " + type);
                }
                return "one of " + Arrays.stream(enumType.getEnumConstants()).map((constant) -> "`" + value(constant) + "`")
                    .collect(Collectors.joining(", "));
        }
    }

    /** A value as it is written in application.properties. */
    private static String value(@Nullable Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof Collection<?> values) {
            return values.stream().map(RpmaConfigurationReference::value).collect(Collectors.joining(","));
        }
        if (value instanceof Enum<?> constant) {
            return constant.name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
        if (value instanceof java.time.Duration duration) {
            return org.springframework.boot.convert.DurationStyle.SIMPLE.print(duration);
        }
        return value.toString();
    }

    private String classDoc(String binaryName) {
        return doc(binaryName.substring(binaryName.lastIndexOf('.') + 1));
    }

    private String doc(String key) {
        String doc = this.javadoc.get(key);
        if (doc == null) {
            throw new IllegalStateException("RpmaProperties.java has no Javadoc for " + key);
        }
        return doc;
    }

    private static String key(Class<?> type) {
        return type.getName().substring(type.getPackageName().length() + 1);
    }

    private static String dashed(String camelCase) {
        return camelCase.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(Locale.ROOT);
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }

    private static Class<?> load(String name) {
        try {
            return Class.forName(name, false, RpmaConfigurationReference.class.getClassLoader());
        }
        catch (ClassNotFoundException ex) {
            throw new IllegalStateException(ex);
        }
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Map<String, Object> metadata, String key) {
        return (List<Map<String, Object>>) metadata.get(key);
    }

    /**
     * The Javadoc in {@code source}, cleaned up as the processor does it: by nested class
     * ({@code RpmaProperties$Region}), and by field or record component ({@code RpmaProperties$Region#size}).
     */
    private static Map<String, String> javadoc(Path source) throws IOException {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        Map<String, String> docs = new HashMap<>();
        try (StandardJavaFileManager files = compiler.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            JavacTask task = (JavacTask) compiler.getTask(null, files, null, List.of("-proc:none"), null,
                    files.getJavaFileObjects(source));
            Trees trees = Trees.instance(task);
            for (CompilationUnitTree unit : task.parse()) {
                new TreePathScanner<Void, String>() {

                    @Override
                    public Void visitClass(ClassTree tree, String outer) {
                        String name = (outer != null) ? outer + "$" + tree.getSimpleName() : tree.getSimpleName().toString();
                        String comment = trees.getDocComment(getCurrentPath());
                        if (comment != null) {
                            docs.put(name, text(BLOCK_TAG.split(comment, 2)[0]));
                            Matcher param = PARAM.matcher(comment);
                            while (param.find()) {
                                docs.put(name + "#" + param.group(1), text(param.group(2)));
                            }
                        }
                        return super.visitClass(tree, name);
                    }

                    @Override
                    public Void visitVariable(VariableTree tree, String owner) {
                        String comment = trees.getDocComment(getCurrentPath());
                        if (comment != null) {
                            docs.put(owner + "#" + tree.getName(), text(comment));
                        }
                        return null;
                    }

                    @Override
                    public Void visitMethod(MethodTree tree, String owner) {
                        return null;
                    }
                }.scan(unit, null);
            }
        }
        return docs;
    }

    private static String text(String comment) {
        String joined = comment.replaceAll("(?m)^\\s*\\*?", " ").replaceAll("\\s+", " ").trim();
        return INLINE_TAG.matcher(joined).replaceAll("$1");
    }

    private record Row(String name, String type, String defaultValue, String description) {
    }
}
