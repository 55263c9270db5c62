package io.nftproxy.it.release;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** The release's DaemonSet manifest (release/deploy/nftproxy.yaml): its placeholders, filled in, and its documents. */
public final class ReleaseManifest {
    public static final Path SOURCE = Path.of("..", "release", "deploy", "nftproxy.yaml").toAbsolutePath().normalize();
    /** What an operator (and CI) fills in: a name in capitals between two @ signs. */
    static final Pattern PLACEHOLDER = Pattern.compile("@([A-Z_]+)@");

    private ReleaseManifest() {}

    /** The names of the placeholders in {@code text}. */
    public static Set<String> placeholders(String text) {
        Set<String> names = new TreeSet<>();
        Matcher m = PLACEHOLDER.matcher(text);
        while (m.find()) names.add(m.group(1));
        return names;
    }

    /** {@code text} with each {@code @NAME@} replaced by {@code values.get(NAME)}, as sed does in the README and run.sh. */
    public static String fill(String text, Map<String, String> values) {
        String out = text;
        for (Map.Entry<String, String> v : values.entrySet()) out = out.replace("@" + v.getKey() + "@", v.getValue());
        return out;
    }

    /** The YAML documents of {@code text}, in order. */
    public static List<JsonNode> documents(String text) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAMLMapper.builder().build().readerFor(JsonNode.class).readValues(text)) {
            it.readAll(docs);
        }
        return docs;
    }

    /** The one document of {@code kind}. */
    public static JsonNode ofKind(List<JsonNode> docs, String kind) {
        List<JsonNode> found = docs.stream().filter(d -> kind.equals(d.path("kind").asString())).toList();
        if (found.size() != 1) throw new AssertionError("one " + kind + " in the manifest, found " + found.size());
        return found.get(0);
    }

    public static String read() throws IOException { return Files.readString(SOURCE); }
}
