package io.nftproxy.cluster;

import java.util.Map;

/**
 * The metadata fields the proxy reads. Values are as the API (or a manifest file) gave them: unvalidated.
 *
 * @param creationTimestamp RFC 3339 text, or null; it decides which of two Services claiming one node port keeps it
 */
public record ObjectMeta(String namespace, String name, Map<String, String> labels, Map<String, String> annotations,
                         boolean deleting, String creationTimestamp) {
    public ObjectMeta {
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        annotations = annotations == null ? Map.of() : Map.copyOf(annotations);
    }

    /** Metadata without a creation timestamp (manifests written by hand rarely carry one). */
    public ObjectMeta(String namespace, String name, Map<String, String> labels, Map<String, String> annotations,
                      boolean deleting) {
        this(namespace, name, labels, annotations, deleting, null);
    }

    public static ObjectMeta of(String namespace, String name) {
        return new ObjectMeta(namespace, name, Map.of(), Map.of(), false);
    }

    /** {@code namespace/name}, for diagnostics. */
    public String key() { return (namespace == null ? "" : namespace + "/") + name; }
}
