#!/usr/bin/env python3
"""Plots the CSVs of `scripts/smpi.sh paper`: simulated time a call against block size.

One panel per (platform, ranks, operation, neighborhood): one line per
contender (linear, torus, direct, auto, ...), time a call over block size,
both on log scales; the title gives the platform, the simulated ranks, the
neighborhood (family, d, r) and its neighbors. Several
CSVs (platforms, rank counts, operations) go side by side in one figure.

    python3 scripts/plot_smpi.py docs/results/smpi/paper/paper-*.csv -o paper.png

Needs matplotlib (Debian: python3-matplotlib; scripts/plot_setup.py).
"""

import argparse
import csv
import sys
from collections import defaultdict

from plot_setup import pyplot

plt = pyplot("plot_smpi.py")

STYLE = {"linear": ("tab:gray", "o"), "torus": ("tab:blue", "s"), "direct": ("tab:green", "^"),
         "basis": ("tab:purple", "v"), "auto": ("tab:red", "*")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("-o", "--out", required=True, help="PNG to write")
    args = parser.parse_args()

    # (platform, ranks, operation, d, neighbors, neighborhood) -> contender -> [(size, us)]
    panels = defaultdict(lambda: defaultdict(list))
    for path in args.csv:
        rows = list(csv.DictReader(open(path)))
        if not rows:
            sys.exit(f"plot_smpi.py: {path} has no rows")
        for r in rows:
            if r["status"] != "ok":
                continue
            key = (r.get("platform", "?"), int(r["np"]), r["operation"], int(r["dims"]), int(r["neighbors"]),
                   r["neighborhood"])
            panels[key][r["contender"]].append((int(r["size_bytes"]), float(r["median_us"])))
    if not panels:
        sys.exit("plot_smpi.py: no point with status ok")

    keys = sorted(panels)
    columns = min(4, len(keys))
    rows_n = (len(keys) + columns - 1) // columns
    fig, axes = plt.subplots(rows_n, columns, figsize=(4.2 * columns, 3.4 * rows_n), squeeze=False)
    for ax, key in zip(axes.flat, keys):
        platform, ranks, operation, d, neighbors, hood = key
        # iso-bench's names: moore-d3-r1, octant-d3-r3, shales-d3-3-7.
        family, _, *radii = hood.split("-") + [""]
        radius = ",".join(x.lstrip("r") for x in radii if x)
        for contender, points in sorted(panels[key].items()):
            points.sort()
            color, marker = STYLE.get(contender, (None, "x"))
            ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, color=color,
                    label=contender, markersize=9 if marker == "*" else 5,
                    linestyle=":" if contender == "auto" else "-")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{platform}, {ranks} ranks\n{operation}, {family.capitalize()} d={d} r={radius} "
                     f"({neighbors} neighbors)", fontsize=8)
        ax.set_xlabel("block bytes (alltoallw: m)" if operation == "alltoallw" else "block bytes", fontsize=8)
        ax.set_ylabel("simulated us a call", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(keys):]:
        ax.axis("off")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot_smpi.py: {args.out} ({len(keys)} panels)")


if __name__ == "__main__":
    main()
