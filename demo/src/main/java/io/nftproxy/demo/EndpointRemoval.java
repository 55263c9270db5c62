package io.nftproxy.demo;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.MappingIterator;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * What the EndpointSlice controller does when a Deployment scales down, done to a manifest file: the endpoint with
 * a given address leaves the EndpointSlices of one Service. The file is rewritten through a hidden temporary file
 * and an atomic rename, so a watching source never reads half of it (comments are not kept).
 */
public final class EndpointRemoval {
    private static final ObjectMapper YAML = YAMLMapper.builder().build();

    private EndpointRemoval() {}

    /**
     * Removes the endpoints holding {@code address} from the EndpointSlices labelled for {@code service} in
     * {@code file}; returns how many were removed (0 leaves the file untouched).
     */
    public static int remove(Path file, String service, String address) throws IOException {
        List<JsonNode> docs = new ArrayList<>();
        try (MappingIterator<JsonNode> it = YAML.readerFor(JsonNode.class).readValues(Files.readAllBytes(file))) {
            while (it.hasNextValue()) docs.add(it.nextValue());
        }
        int removed = 0;
        for (JsonNode doc : docs) {
            if (!"EndpointSlice".equals(doc.path("kind").asString(""))) continue;
            if (!service.equals(doc.path("metadata").path("labels").path("kubernetes.io/service-name").asString(""))) continue;
            if (!(doc.get("endpoints") instanceof ArrayNode endpoints)) continue;
            for (int i = endpoints.size() - 1; i >= 0; i--) {
                if (holds(endpoints.get(i), address)) {
                    endpoints.remove(i);
                    removed++;
                }
            }
        }
        if (removed == 0) return 0;
        StringBuilder out = new StringBuilder();
        for (JsonNode doc : docs) out.append(YAML.writeValueAsString(doc));
        Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
        Files.writeString(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        return removed;
    }

    private static boolean holds(JsonNode endpoint, String address) {
        return endpoint.get("addresses") instanceof ArrayNode addresses
                && addresses.valueStream().anyMatch(a -> address.equals(a.asString("")));
    }
}
