package io.nftproxy.render;

import io.nftproxy.nft.Chain;
import io.nftproxy.nft.TableContent;
import io.nftproxy.nft.Element;
import io.nftproxy.nft.NftSet;
import io.nftproxy.nft.Rule;
import io.nftproxy.service.ServicePortName;

import java.util.Collections;
import java.util.List;

/**
 * Everything one service port contributes to a table, rendered once: its sets (affinity), chains with their
 * rules, and its elements in the shared dispatch sets. Immutable; a table is the skeleton plus the union of the
 * fragments of all service ports, added in service-port order, so a fragment can be cached and reused as long
 * as its inputs are unchanged.
 *
 * @param noLocalInternal a Local internal policy with endpoints elsewhere but none here (for metrics)
 * @param noLocalExternal the same for the external policy
 */
public record ServicePortFragment(ServicePortName name, List<NftSet> sets, List<Chain> chains, List<Rule> rules,
                                  List<Element> elements, boolean noLocalInternal, boolean noLocalExternal) {
    /** Wraps rather than copies: {@link ServicePortRules} hands over lists it no longer touches. */
    public ServicePortFragment {
        sets = Collections.unmodifiableList(sets);
        chains = Collections.unmodifiableList(chains);
        rules = Collections.unmodifiableList(rules);
        elements = Collections.unmodifiableList(elements);
    }

    /** Adds this fragment to a table under construction, kinds in the order the kernel needs them. */
    public void addTo(TableContent.Builder t) {
        for (NftSet s : sets) t.set(s);
        for (Chain c : chains) t.chain(c);
        for (Rule r : rules) t.rule(r);
        for (Element e : elements) t.element(e);
    }
}
