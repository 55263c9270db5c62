package io.nftproxy.it.api;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A throwaway CA, a serving certificate for 127.0.0.1 signed by it, and a service-account signing key pair, made
 * with openssl in a directory of the caller's. The JDK cannot issue certificates without internal APIs, and
 * openssl comes with ca-certificates on every Debian host this runs on. Keys are P-256: generated in milliseconds,
 * and accepted by Go's TLS stack and by the API server as service-account signing keys (ES256).
 */
public record LoopbackCertificates(Path caCert, Path serverCert, Path serverKey, Path serviceAccountKey,
        Path serviceAccountPublicKey) {

    /** Valid for a week: longer than any test run, short enough that a leaked key is worthless soon. */
    private static final String DAYS = "7";

    private static final String CONFIG = """
            [req]
            distinguished_name = dn
            prompt = no
            [dn]
            CN = nftproxy-test
            [ca_ext]
            basicConstraints = critical,CA:TRUE
            keyUsage = critical,keyCertSign,cRLSign
            subjectKeyIdentifier = hash
            [server_ext]
            basicConstraints = critical,CA:FALSE
            keyUsage = critical,digitalSignature,keyEncipherment
            extendedKeyUsage = serverAuth
            subjectAltName = IP:127.0.0.1,DNS:localhost
            authorityKeyIdentifier = keyid
            """;

    public static LoopbackCertificates generate(Path dir) throws IOException {
        Files.createDirectories(dir);
        // Our own config, so the host's openssl.cnf defaults cannot change what gets issued.
        Path cnf = Files.writeString(dir.resolve("openssl.cnf"), CONFIG);
        LoopbackCertificates c = new LoopbackCertificates(dir.resolve("ca.crt"), dir.resolve("apiserver.crt"),
                dir.resolve("apiserver.key"), dir.resolve("sa.key"), dir.resolve("sa.pub"));
        Path caKey = dir.resolve("ca.key");
        Path csr = dir.resolve("apiserver.csr");
        String serial = "0x" + HexFormat.of().formatHex(new SecureRandom().generateSeed(8));
        openssl(dir, "req", "-x509", "-config", cnf.toString(), "-extensions", "ca_ext", "-newkey", "ec",
                "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", caKey.toString(), "-out", c.caCert.toString(),
                "-days", DAYS, "-subj", "/CN=nftproxy-test-ca");
        openssl(dir, "req", "-new", "-config", cnf.toString(), "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", c.serverKey.toString(), "-out", csr.toString(), "-subj", "/CN=kube-apiserver");
        openssl(dir, "x509", "-req", "-in", csr.toString(), "-CA", c.caCert.toString(), "-CAkey", caKey.toString(),
                "-set_serial", serial, "-days", DAYS, "-extfile", cnf.toString(), "-extensions", "server_ext",
                "-out", c.serverCert.toString());
        openssl(dir, "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", c.serviceAccountKey.toString());
        openssl(dir, "pkey", "-in", c.serviceAccountKey.toString(), "-pubout", "-out", c.serviceAccountPublicKey.toString());
        // Nothing needs the CA key again; deleting it means nothing else can be issued under this CA.
        Files.delete(caKey);
        Files.delete(csr);
        return c;
    }

    /** Trusts exactly this CA, as a client of the API server must (never a trust-all manager). */
    public SSLContext clientContext() throws IOException {
        try (InputStream in = Files.newInputStream(caCert)) {
            Certificate ca = CertificateFactory.getInstance("X.509").generateCertificate(in);
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            trust.setCertificateEntry("nftproxy-test-ca", ca);
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(null, tmf.getTrustManagers(), new SecureRandom());
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot load the test CA " + caCert, e);
        }
    }

    /**
     * Serves as the API server does, with its certificate and key: a TLS-terminating relay on 127.0.0.1 in front of
     * it is then trusted by every client of the test CA, and the CA key (deleted) is not needed to issue another.
     */
    public SSLContext serverContext() throws IOException {
        try (InputStream in = Files.newInputStream(serverCert)) {
            Certificate[] chain = CertificateFactory.getInstance("X.509").generateCertificates(in).toArray(Certificate[]::new);
            String pem = Files.readString(serverKey, StandardCharsets.US_ASCII);
            if (!pem.contains("BEGIN PRIVATE KEY")) throw new IOException(serverKey + " is not an unencrypted PKCS#8 key");
            byte[] der = java.util.Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
            java.security.PrivateKey key = java.security.KeyFactory.getInstance("EC")
                    .generatePrivate(new java.security.spec.PKCS8EncodedKeySpec(der));
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            char[] none = new char[0];
            ks.setKeyEntry("apiserver", key, none, chain);
            javax.net.ssl.KeyManagerFactory kmf = javax.net.ssl.KeyManagerFactory.getInstance(javax.net.ssl.KeyManagerFactory.getDefaultAlgorithm());
            kmf.init(ks, none);
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf.getKeyManagers(), null, new SecureRandom());
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IOException("cannot load the serving certificate " + serverCert, e);
        }
    }

    private static void openssl(Path dir, String... args) throws IOException {
        List<String> cmd = new ArrayList<>();
        cmd.add("openssl");
        cmd.addAll(List.of(args));
        Path out = dir.resolve("openssl.out");
        Process p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true)
                .redirectOutput(out.toFile()).start();
        try {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("openssl " + args[0] + " did not finish in 30 s");
            }
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted running openssl", e);
        }
        String output = Files.readString(out, StandardCharsets.UTF_8).strip();
        Files.deleteIfExists(out);
        if (p.exitValue() != 0) throw new IOException("openssl " + String.join(" ", args) + " failed: " + output);
    }
}
