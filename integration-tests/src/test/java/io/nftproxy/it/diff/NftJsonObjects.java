package io.nftproxy.it.diff;

import io.nftproxy.readback.Json;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A table as {@code nft -j list table} prints it, object by object, with exactly two things taken out because they
 * carry no meaning: handles (the kernel numbers objects in the order they were added) and the order of a set's or
 * map's elements (the kernel keeps them in its own order). Everything else nft reports stays: every key of every
 * chain, rule, set, map, counter, flag, timeout, size, comment and priority. It covers what the parsed comparison
 * ({@code TableComparison}) might not model; the parsed one says the same differences in rule syntax.
 */
final class NftJsonObjects {
    private NftJsonObjects() {}

    /** Each object by a name unique in the table ({@code chain X}, {@code rule X #3}, {@code set Y}), as JSON text. */
    static Map<String, String> of(String nftJson) {
        Map<String, String> out = new TreeMap<>();
        Map<String, Integer> rulesPerChain = new LinkedHashMap<>();
        Object root = Json.parse(nftJson);
        if (!(root instanceof Map<?, ?> m) || !(m.get("nftables") instanceof List<?> items)) {
            throw new IllegalArgumentException("not nft's JSON: " + nftJson.substring(0, Math.min(200, nftJson.length())));
        }
        for (Object item : items) {
            if (!(item instanceof Map<?, ?> one) || one.size() != 1) continue;
            Map.Entry<?, ?> e = one.entrySet().iterator().next();
            String kind = String.valueOf(e.getKey());
            if (kind.equals("metainfo") || !(e.getValue() instanceof Map<?, ?> body)) continue;
            Map<String, Object> clean = new LinkedHashMap<>();
            body.forEach((k, v) -> {
                if (!"handle".equals(k)) clean.put(String.valueOf(k), v);
            });
            if (clean.get("elem") instanceof List<?> elems) {
                TreeSet<String> sorted = new TreeSet<>();
                elems.forEach(x -> sorted.add(Json.write(x)));
                clean.put("elem", new ArrayList<>(sorted));
            }
            String name = switch (kind) {
                case "rule" -> {
                    String chain = String.valueOf(clean.get("chain"));
                    int n = rulesPerChain.merge(chain, 1, Integer::sum);
                    yield "rule " + chain + " #" + n;
                }
                case "table" -> "table";
                default -> kind + " " + clean.get("name");
            };
            out.put(name, Json.write(clean));
        }
        return out;
    }

    /** Every object present on one side only or different, kube-proxy's ({@code expected}) first. */
    static List<String> diff(String expected, String actual) {
        Map<String, String> want = of(expected);
        Map<String, String> have = of(actual);
        List<String> out = new ArrayList<>();
        TreeSet<String> names = new TreeSet<>(want.keySet());
        names.addAll(have.keySet());
        for (String n : names) {
            String w = want.get(n);
            String h = have.get(n);
            if (w == null) out.add(n + ": only nftproxy has it: " + h);
            else if (h == null) out.add(n + ": only kube-proxy has it: " + w);
            else if (!w.equals(h)) out.add(n + ":\n  kube-proxy: " + w + "\n  nftproxy:   " + h);
        }
        return out;
    }
}
