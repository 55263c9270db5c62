package io.nftproxy.source;

import io.nftproxy.cluster.ClusterSnapshot;

import java.util.List;

/**
 * What a manifest directory held.
 *
 * @param snapshot the objects that loaded; files are read in path order, documents in file order
 * @param problems files, documents and objects that were malformed and skipped (warnings)
 * @param ignored  well-formed objects of kinds the proxy does not read (Deployments, ConfigMaps, ...); informational
 */
public record LoadResult(ClusterSnapshot snapshot, List<LoadProblem> problems, List<LoadProblem> ignored) {
    public LoadResult {
        problems = List.copyOf(problems);
        ignored = List.copyOf(ignored);
    }
}
