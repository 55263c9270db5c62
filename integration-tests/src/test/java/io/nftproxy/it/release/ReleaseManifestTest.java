package io.nftproxy.it.release;

import io.nftproxy.it.CliRun;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The release's DaemonSet manifest is laid out as kubeadm deploys kube-proxy (ServiceAccount bound to
 * system:node-proxier, ConfigMap with kubeadm's config.conf and a token kubeconfig, a privileged host-network
 * DaemonSet with kube-proxy's mounts, rolled out a node at a time), leaves only the image, the API server and the pod
 * range to fill in, and CI's DaemonSet e2e (integration-tests/node/run.sh) fills in exactly those in the released file.
 */
class ReleaseManifestTest {
    private static final Path RUN_SH = Path.of("..", "integration-tests", "node", "run.sh").toAbsolutePath().normalize();
    private static final Path KUBEADM_CONFIG = Path.of("..", "proxy-daemon", "src", "test", "resources",
            "kubeadm-v1.36-kube-proxy-config.conf").toAbsolutePath().normalize();
    private static final Map<String, String> VALUES = Map.of("IMAGE", "registry.example/nftproxy:1.2.3",
            "API_SERVER", "https://192.0.2.10:6443", "CLUSTER_CIDR", "10.244.0.0/16");

    @TempDir
    Path tmp;

    private static List<JsonNode> filled() throws Exception {
        String text = ReleaseManifest.fill(ReleaseManifest.read(), VALUES);
        assertEquals(Set.of(), ReleaseManifest.placeholders(text), "nothing left to fill in");
        return ReleaseManifest.documents(text);
    }

    @Test
    void threeValuesToFillInAndCiFillsInExactlyThoseInTheReleasedFile() throws Exception {
        assertEquals(VALUES.keySet(), ReleaseManifest.placeholders(ReleaseManifest.read()));
        String run = Files.readString(RUN_SH);
        Set<String> substituted = new TreeSet<>();
        Matcher m = Pattern.compile("-e \"s\\|@([A-Z_]+)@\\|").matcher(run);
        while (m.find()) substituted.add(m.group(1));
        assertEquals(VALUES.keySet(), substituted, "run.sh's sed fills in the manifest's placeholders, no more");
        // The manifest it applies is the one inside the release tarball, not a copy of the harness's own.
        assertTrue(run.contains("\"$rel_name/deploy/nftproxy.yaml\""), "run.sh reads the tarball's deploy/nftproxy.yaml");
        try (var s = Files.list(RUN_SH.getParent())) {
            assertEquals(List.of(), s.map(p -> p.getFileName().toString()).filter(n -> n.contains("daemonset")).toList(),
                    "no test-only manifest beside run.sh");
        }
    }

    @Test
    void kubeadmsLayoutForKubeProxy() throws Exception {
        List<JsonNode> docs = filled();
        assertEquals(List.of("ServiceAccount", "ClusterRoleBinding", "ConfigMap", "DaemonSet"),
                docs.stream().map(d -> d.path("kind").asString()).toList());
        JsonNode sa = ReleaseManifest.ofKind(docs, "ServiceAccount");
        JsonNode binding = ReleaseManifest.ofKind(docs, "ClusterRoleBinding");
        JsonNode cm = ReleaseManifest.ofKind(docs, "ConfigMap");
        JsonNode ds = ReleaseManifest.ofKind(docs, "DaemonSet");
        for (JsonNode namespaced : List.of(sa, cm, ds)) {
            assertEquals("kube-system", namespaced.path("metadata").path("namespace").asString(), namespaced.toString());
        }
        String account = sa.path("metadata").path("name").asString();

        // The rights kube-proxy has: the built-in ClusterRole, bound to the pod's service account.
        assertEquals("ClusterRole", binding.path("roleRef").path("kind").asString());
        assertEquals("system:node-proxier", binding.path("roleRef").path("name").asString());
        assertEquals("rbac.authorization.k8s.io", binding.path("roleRef").path("apiGroup").asString());
        JsonNode subject = binding.path("subjects").get(0);
        assertEquals(1, binding.path("subjects").size());
        assertEquals(List.of("ServiceAccount", account, "kube-system"), List.of(subject.path("kind").asString(),
                subject.path("name").asString(), subject.path("namespace").asString()));

        JsonNode spec = ds.path("spec").path("template").path("spec");
        assertEquals(account, spec.path("serviceAccountName").asString());
        assertEquals(ds.path("spec").path("selector").path("matchLabels"), ds.path("spec").path("template").path("metadata").path("labels"));
        assertEquals("kube-proxy", ds.path("spec").path("selector").path("matchLabels").path("k8s-app").asString(),
                "the label upstream's tests and tools look for");
        assertTrue(spec.path("hostNetwork").asBoolean());
        assertEquals("system-node-critical", spec.path("priorityClassName").asString());
        assertEquals(1, spec.path("tolerations").size());
        assertEquals("{\"operator\":\"Exists\"}", spec.path("tolerations").get(0).toString(), "every taint tolerated");
        assertEquals("linux", spec.path("nodeSelector").path("kubernetes.io/os").asString());
        JsonNode update = ds.path("spec").path("updateStrategy");
        assertEquals("RollingUpdate", update.path("type").asString());
        assertEquals(1, update.path("rollingUpdate").path("maxUnavailable").asInt());
        assertEquals(0, update.path("rollingUpdate").path("maxSurge").asInt(), "two pods of one node would share its ports");

        assertEquals(1, spec.path("containers").size());
        JsonNode c = spec.path("containers").get(0);
        assertEquals(VALUES.get("IMAGE"), c.path("image").asString());
        assertEquals("IfNotPresent", c.path("imagePullPolicy").asString(), "an image imported on the node, or pulled");
        assertTrue(c.path("securityContext").path("privileged").asBoolean());
        assertEquals(List.of("run", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"),
                strings(c.path("args")), "nftproxy's explicit run with kubeadm's two flags");
        JsonNode env = c.path("env").get(0);
        assertEquals("NODE_NAME", env.path("name").asString());
        assertEquals("spec.nodeName", env.path("valueFrom").path("fieldRef").path("fieldPath").asString());
        assertEquals(10256, c.path("readinessProbe").path("httpGet").path("port").asInt());
        assertEquals("/healthz", c.path("readinessProbe").path("httpGet").path("path").asString());

        // kube-proxy's mounts: its ConfigMap, the xtables lock (created if missing), the kernel's modules read-only.
        assertEquals("/var/lib/kube-proxy", mount(c, spec, "kube-proxy", false).path("mountPath").asString());
        assertEquals(cm.path("metadata").path("name").asString(),
                volume(spec, "kube-proxy").path("configMap").path("name").asString());
        JsonNode lock = volume(spec, "xtables-lock").path("hostPath");
        assertEquals("/run/xtables.lock", mount(c, spec, "xtables-lock", false).path("mountPath").asString());
        assertEquals(List.of("/run/xtables.lock", "FileOrCreate"), List.of(lock.path("path").asString(), lock.path("type").asString()));
        assertEquals("/lib/modules", mount(c, spec, "lib-modules", true).path("mountPath").asString());
        assertEquals("/lib/modules", volume(spec, "lib-modules").path("hostPath").path("path").asString());

        // The kubeconfig the config names is the ConfigMap's, with the service account's token and CA.
        assertTrue(cm.path("data").has("config.conf") && cm.path("data").has("kubeconfig.conf"), cm.toString());
        JsonNode kubeconfig = ReleaseManifest.documents(cm.path("data").path("kubeconfig.conf").asString()).get(0);
        JsonNode cluster = kubeconfig.path("clusters").get(0).path("cluster");
        assertEquals(VALUES.get("API_SERVER"), cluster.path("server").asString());
        assertEquals("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt", cluster.path("certificate-authority").asString());
        assertEquals("/var/run/secrets/kubernetes.io/serviceaccount/token",
                kubeconfig.path("users").get(0).path("user").path("tokenFile").asString());
        assertEquals(kubeconfig.path("contexts").get(0).path("name").asString(), kubeconfig.path("current-context").asString());
    }

    /**
     * config.conf is kubeadm v1.36's own, byte for byte but for clusterCIDR and mode, and nftproxy takes it as the pod
     * does: its effective configuration has the values filled in, the kubeconfig of the same ConfigMap, no warning.
     */
    @Test
    void configConfIsKubeadmsAndTheDaemonTakesItWithoutAWarning() throws Exception {
        JsonNode cm = ReleaseManifest.ofKind(filled(), "ConfigMap");
        String conf = cm.path("data").path("config.conf").asString();
        List<String> kubeadm = Files.readAllLines(KUBEADM_CONFIG);
        List<String> ours = conf.lines().toList();
        List<String> differ = new ArrayList<>();
        assertEquals(kubeadm.size(), ours.size(), conf);
        for (int i = 0; i < ours.size(); i++) if (!ours.get(i).equals(kubeadm.get(i))) differ.add(ours.get(i));
        assertEquals(List.of("clusterCIDR: \"10.244.0.0/16\"", "mode: nftables"), differ);

        Path file = Files.writeString(tmp.resolve("config.conf"), conf);
        Path effective = tmp.resolve("effective.yaml");
        CliRun r = CliRun.of("run", "--config=" + file, "--hostname-override=node-a", "--write-config-to=" + effective);
        assertEquals(0, r.exit(), r.err());
        assertFalse(r.err().contains("WARN") || r.out().contains("WARN"), r.out() + r.err());
        JsonNode e = ReleaseManifest.documents(Files.readString(effective)).get(0);
        assertEquals("10.244.0.0/16", e.path("clusterCIDR").asString());
        assertEquals("nftables", e.path("mode").asString());
        assertEquals("node-a", e.path("hostnameOverride").asString());
        assertEquals("/var/lib/kube-proxy/kubeconfig.conf", e.path("clientConnection").path("kubeconfig").asString(),
                "the ConfigMap's kubeconfig.conf, where the DaemonSet mounts it");
        assertTrue(e.path("healthzBindAddress").asString().endsWith(":10256"), "the readiness probe's port");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asString()));
        return out;
    }

    private static JsonNode volume(JsonNode podSpec, String name) {
        for (JsonNode v : podSpec.path("volumes")) if (name.equals(v.path("name").asString())) return v;
        throw new AssertionError("no volume " + name + " in " + podSpec.path("volumes"));
    }

    private static JsonNode mount(JsonNode container, JsonNode podSpec, String name, boolean readOnly) {
        volume(podSpec, name);
        for (JsonNode m : container.path("volumeMounts")) {
            if (name.equals(m.path("name").asString())) {
                assertEquals(readOnly, m.path("readOnly").asBoolean(false), m.toString());
                return m;
            }
        }
        throw new AssertionError("no mount of " + name + " in " + container.path("volumeMounts"));
    }
}
