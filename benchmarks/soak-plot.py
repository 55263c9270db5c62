#!/usr/bin/env python3
"""Plots a soak run (benchmarks/soak.sh): /usr/bin/python3 benchmarks/soak-plot.py OUT_DIR/samples.csv docs/soak.png

Reads the samples SoakBench wrote (one row per interval) and, beside them, events.log for the API server
restarts, which are drawn as dotted vertical lines. Needs matplotlib: Debian's python3-matplotlib, hence the system interpreter where another python3 comes first on PATH.
"""
import csv
import math
import re
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def column(rows, name):
    out = []
    for r in rows:
        v = float(r[name])
        out.append(v if not math.isnan(v) else float("nan"))
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: soak-plot.py SAMPLES.csv OUT.png")
    samples, png = Path(sys.argv[1]), Path(sys.argv[2])
    with samples.open() as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{samples}: no samples")
    minutes = [float(r["t_s"]) / 60 for r in rows]
    restarts = []
    events = samples.with_name("events.log")
    if events.exists():
        for line in events.read_text().splitlines():
            m = re.search(r"t=(\d+) s: API server restart$", line)
            if m:
                restarts.append(int(m.group(1)) / 60)
    else:
        # A copy of the samples without the run's events.log: a restart is the first sample that found the API down.
        up = column(rows, "api_up")
        restarts = [minutes[i] for i in range(len(rows)) if up[i] == 0 and (i == 0 or up[i - 1] == 1)]

    fig, axes = plt.subplots(3, 2, figsize=(13, 10), sharex=True)
    (mem, res), (gc, sync), (pending, load) = axes

    mem.plot(minutes, column(rows, "rss_mb"), label="RSS")
    mem.plot(minutes, column(rows, "heap_committed_mb"), label="heap committed")
    mem.plot(minutes, column(rows, "heap_after_gc_mb"), label="heap after the interval's last GC")
    mem.set_ylabel("MB")
    mem.set_ylim(bottom=0)
    mem.set_title("memory")

    res.plot(minutes, column(rows, "threads"), label="threads")
    res.plot(minutes, column(rows, "fds"), label="open descriptors")
    res.set_ylim(bottom=0)
    res.set_title("threads and descriptors")

    # An interval without a collection has no longest pause (the CSV says 0): left out, not drawn as 0 ms.
    longest = [m if c > 0 else float("nan") for m, c in zip(column(rows, "gc_pause_max_ms"), column(rows, "gc_count"))]
    gc.plot(minutes, longest, ".", markersize=3, label="longest pause in the interval")
    gc.axhline(10, color="red", linewidth=0.8, label="10 ms target (p99)")
    gc.set_ylabel("ms")
    gc.set_yscale("log")
    gc.set_title("GC pauses (GC log)")

    sync.plot(minutes, column(rows, "sync_mean_ms"), ".", markersize=3, label="mean sync in the interval")
    sync.plot(minutes, column(rows, "sync_p99_le_ms"), "_", markersize=4, label="p99 bucket bound in the interval")
    sync.set_ylabel("ms")
    sync.set_yscale("log")
    sync.set_title("sync durations (/metrics)")

    pending.plot(minutes, column(rows, "service_changes_pending"), label="Service changes pending")
    pending.plot(minutes, column(rows, "endpoint_changes_pending"), label="endpoint changes pending")
    pending.set_ylim(bottom=0, top=max(1, pending.get_ylim()[1]))
    pending.set_title("changes pending at the sample (/metrics)")
    pending.set_xlabel("minutes")

    t = [float(r["t_s"]) for r in rows]
    made = column(rows, "changes_made")
    rate = [float("nan")] + [(made[i] - made[i - 1]) / (t[i] - t[i - 1]) for i in range(1, len(rows))]
    load.plot(minutes, rate, label="changes written per second")
    load.plot(minutes, column(rows, "load1"), label="machine load (1 min, 2 cores, shared)")
    load.set_ylim(bottom=0)
    load.set_title("churn and machine load")
    load.set_xlabel("minutes")

    for ax in axes.flat:
        for i, r in enumerate(restarts):
            ax.axvline(r, color="grey", linestyle=":", linewidth=0.8, label="API server restart" if i == 0 else None)
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(alpha=0.3)
    fig.suptitle(f"nftproxy soak: {samples.name}, {len(rows)} samples of {float(rows[1]['t_s']) - float(rows[0]['t_s']):.0f} s"
                 if len(rows) > 1 else f"nftproxy soak: {samples.name}", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


if __name__ == "__main__":
    main()
