package io.nftproxy.source.api;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Where fabric8's {@code Config.autoConfigure} takes the API server from when no --kubeconfig is given, said in one
 * phrase for the log and for connection errors. It looks at $KUBECONFIG (else ~/.kube/config) when that is a file,
 * else at the pod's KUBERNETES_SERVICE_HOST/PORT and service-account files; with none of them it uses its built-in
 * {@code https://kubernetes.default.svc}, a URL an operator never wrote and could not trace (issue 24).
 */
final class AutoConfigOrigin {
    /** Where a pod's service-account token and CA are mounted. */
    static final Path SERVICE_ACCOUNT = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    private AutoConfigOrigin() {}

    /** The kubeconfig fabric8 looks for: the first of $KUBECONFIG's files, else ~/.kube/config; used only if it is a file. */
    static Path kubeconfig(Function<String, String> env, Path home) {
        String kubeconfigVar = env.apply("KUBECONFIG");
        return kubeconfigVar != null && !kubeconfigVar.isBlank() ? Path.of(kubeconfigVar.split(":")[0]) : home.resolve(".kube/config");
    }

    static String describe(Function<String, String> env, Path home, Path serviceAccount) {
        String kubeconfigVar = env.apply("KUBECONFIG");
        boolean fromVar = kubeconfigVar != null && !kubeconfigVar.isBlank();
        Path kubeconfig = kubeconfig(env, home);
        String kubeconfigName = fromVar ? "$KUBECONFIG=" + kubeconfig : "~/.kube/config (" + kubeconfig + ")";
        if (Files.isRegularFile(kubeconfig)) return "no --kubeconfig: " + kubeconfigName;
        List<String> parts = new ArrayList<>();
        String master = env.apply("KUBERNETES_MASTER");
        String host = env.apply("KUBERNETES_SERVICE_HOST");
        String port = env.apply("KUBERNETES_SERVICE_PORT");
        if (host != null && port != null) {
            parts.add("KUBERNETES_SERVICE_HOST=" + host + ", KUBERNETES_SERVICE_PORT=" + port);
        } else if (master != null) {
            parts.add("KUBERNETES_MASTER=" + master);
        } else {
            parts.add((host == null ? "KUBERNETES_SERVICE_HOST" : "KUBERNETES_SERVICE_PORT")
                    + " unset, so the client library's default URL");
        }
        Path token = serviceAccount.resolve("token");
        parts.add(Files.exists(token) ? "token " + token : "no token (" + token + " missing)");
        Path ca = serviceAccount.resolve("ca.crt");
        parts.add(Files.isRegularFile(ca) ? "CA " + ca : "no CA file (" + ca + " missing: the JVM's trusted CAs)");
        return "no --kubeconfig and no " + kubeconfigName + ": in-cluster configuration: " + String.join(", ", parts);
    }
}
