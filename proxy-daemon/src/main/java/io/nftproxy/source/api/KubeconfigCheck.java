package io.nftproxy.source.api;

import io.nftproxy.config.SyntaxError;
import io.nftproxy.config.UnreadableFile;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.yaml.YAMLMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * What a kubeconfig must hold before fabric8 reads it: fabric8 reads a {@code current-context} that names no context,
 * or a context whose cluster is missing, as "no cluster" and quietly uses its built-in
 * {@code https://kubernetes.default.svc}; the operator then sees a connection error about a URL they never wrote
 * (issue 24). So the file's own YAML and the chain current-context → context → cluster (with a server) → user are
 * checked here first, each failure naming the file, what is missing and what the file does have.
 */
final class KubeconfigCheck {
    private static final YAMLMapper YAML = YAMLMapper.builder().build();

    private KubeconfigCheck() {}

    /** A kubeconfig that cannot be used; {@link #reason()} says why without the file, which the message names. */
    static final class KubeconfigException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final String reason;

        KubeconfigException(Path file, String reason) {
            super("kubeconfig " + file + ": " + reason);
            this.reason = reason;
        }

        String reason() { return reason; }
    }

    /**
     * The current context's name.
     *
     * @throws KubeconfigException the file cannot be read, is no YAML map, or its current context, that context's
     *                             cluster (or its server) or user is missing
     */
    static String currentContext(Path file) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new KubeconfigException(file, "cannot be read: " + UnreadableFile.reason(file, e));
        }
        JsonNode root;
        try {
            root = YAML.readTree(bytes);
        } catch (JacksonException e) {
            SyntaxError at = SyntaxError.of(e, new String(bytes, StandardCharsets.UTF_8), 1);
            throw new KubeconfigException(file, at.reason().startsWith("a tab character") ? at.toString()
                    : "invalid YAML" + (at.line() > 0 ? " " : ": ") + at);
        }
        if (root == null || root.isMissingNode() || root.isNull()) {
            throw new KubeconfigException(file, "the file is empty; it should hold a kubeconfig (kind: Config with "
                    + "clusters, users, contexts and current-context)");
        }
        if (!root.isObject()) {
            throw new KubeconfigException(file, "the file holds no map; it should hold a kubeconfig (kind: Config with "
                    + "clusters, users, contexts and current-context)");
        }
        List<String> contexts = names(root, "contexts");
        String current = root.path("current-context").asString("");
        if (current.isEmpty()) {
            throw new KubeconfigException(file, "no current-context; allowed: one of its contexts (" + list(contexts) + ")");
        }
        JsonNode context = named(root, "contexts", current).path("context");
        if (context.isMissingNode()) {
            throw new KubeconfigException(file, "current-context \"" + current + "\" is not one of its contexts ("
                    + list(contexts) + ")");
        }
        String cluster = context.path("cluster").asString("");
        JsonNode server = named(root, "clusters", cluster).path("cluster").path("server");
        if (named(root, "clusters", cluster).isMissingNode()) {
            throw new KubeconfigException(file, "context \"" + current + "\" names cluster \"" + cluster
                    + "\", which is not one of its clusters (" + list(names(root, "clusters")) + ")");
        }
        if (server.asString("").isEmpty()) {
            throw new KubeconfigException(file, "cluster \"" + cluster + "\" (of context \"" + current + "\") has no server");
        }
        String user = context.path("user").asString("");
        if (!user.isEmpty() && named(root, "users", user).isMissingNode()) {
            throw new KubeconfigException(file, "context \"" + current + "\" names user \"" + user
                    + "\", which is not one of its users (" + list(names(root, "users")) + ")");
        }
        return current;
    }

    private static List<String> names(JsonNode root, String list) {
        return root.path(list).valueStream().map(n -> n.path("name").asString("")).filter(s -> !s.isEmpty()).toList();
    }

    private static JsonNode named(JsonNode root, String list, String name) {
        return root.path(list).valueStream().filter(n -> name.equals(n.path("name").asString(null))).findFirst()
                .orElse(tools.jackson.databind.node.MissingNode.getInstance());
    }

    private static String list(List<String> names) {
        return names.isEmpty() ? "it has none" : String.join(", ", names);
    }
}
