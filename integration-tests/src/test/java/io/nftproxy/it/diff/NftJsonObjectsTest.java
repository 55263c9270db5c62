package io.nftproxy.it.diff;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the JSON comparison of the differential tests ignores (handles, element order) and what it does not. */
class NftJsonObjectsTest {
    private static String table(String setHandle, String elems, String timeout, String ruleComment) {
        return "{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\", \"json_schema_version\": 1}},"
                + "{\"table\": {\"family\": \"ip\", \"name\": \"kube-proxy\", \"handle\": 7}},"
                + "{\"chain\": {\"family\": \"ip\", \"table\": \"kube-proxy\", \"name\": \"services\", \"handle\": 3}},"
                + "{\"set\": {\"family\": \"ip\", \"name\": \"cluster-ips\", \"table\": \"kube-proxy\", \"type\": \"ipv4_addr\","
                + " \"handle\": " + setHandle + ", \"timeout\": " + timeout + ", \"elem\": [" + elems + "]}},"
                + "{\"rule\": {\"family\": \"ip\", \"table\": \"kube-proxy\", \"chain\": \"services\", \"handle\": 9,"
                + " \"comment\": \"" + ruleComment + "\", \"expr\": [{\"accept\": null}]}}]}";
    }

    @Test
    void handlesAndElementOrderCarryNoMeaning() {
        String a = table("4", "\"172.30.0.1\", \"172.30.0.2\"", "0", "x");
        String b = table("12", "\"172.30.0.2\", \"172.30.0.1\"", "0", "x");
        assertEquals(List.of(), NftJsonObjects.diff(a, b));
    }

    @Test
    void everyOtherKeyCounts() {
        String a = table("4", "\"172.30.0.1\"", "0", "x");
        List<String> d = NftJsonObjects.diff(a, table("4", "\"172.30.0.1\"", "10", "y"));
        assertEquals(2, d.size(), d.toString());
        assertTrue(d.get(0).startsWith("rule services #1:"), d.toString());
        assertTrue(d.get(1).startsWith("set cluster-ips:"), d.toString());
        List<String> missing = NftJsonObjects.diff(a, table("4", "", "0", "x"));
        assertEquals(1, missing.size(), missing.toString());
    }
}
