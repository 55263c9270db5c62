#!/usr/bin/env python3
"""Prints a Markdown table of the e2e tests that ran, one column per proxy, from run.sh's Ginkgo JUnit reports.

    compare-junit.py nftproxy=DIR_A/junit-ginkgo.xml kube-proxy=DIR_B/junit-ginkgo.xml

A test skipped by the focus in every report is left out; a test that ran under one proxy only shows "not run"
for the other. Exit status 1 when a test failed under the first proxy but passed under another (a proxy bug to fix).
"""
import sys
import xml.etree.ElementTree as ET


def outcomes(path):
    result = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        if not name.startswith("[It] "):
            continue  # suite set-up and reporting nodes
        name = name[len("[It] "):]
        labels = name.rfind(" [sig-")
        if labels > 0:
            name = name[:labels]  # Ginkgo repeats the labels at the end
        status = case.get("status")
        if status == "skipped":
            continue
        result[name] = (status, float(case.get("time", "0")))
    return result


def main(args):
    if len(args) < 2 or any("=" not in a for a in args):
        sys.exit(__doc__)
    columns = [(label, outcomes(path)) for label, path in (a.split("=", 1) for a in args)]
    names = sorted(set().union(*(r.keys() for _, r in columns)))
    print("| test | " + " | ".join(label for label, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    regressions = []
    for n in names:
        cells = []
        for _, r in columns:
            status, secs = r.get(n, ("not run", 0.0))
            cells.append(f"{status} ({secs:.1f} s)" if status != "not run" else status)
        print(f"| {n} | " + " | ".join(cells) + " |")
        first = columns[0][1].get(n, ("not run",))[0]
        if first == "failed" and any(r.get(n, ("",))[0] == "passed" for _, r in columns[1:]):
            regressions.append(n)
    for label, r in columns:
        passed = sum(1 for s, _ in r.values() if s == "passed")
        print(f"\n{label}: {passed} of {len(r)} passed", end="")
    print()
    for n in regressions:
        print(f"FAILS under {columns[0][0]} only: {n}", file=sys.stderr)
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
