#!/usr/bin/env python3
"""Plots scripts/bench_depth.sh's depth.csv: time per step against halo.depth.

One panel per (kernel, transport, ranks); one line per cells-per-rank size,
each divided by the same size's depth-1 time (below 1: the deeper halo pays);
a star marks what depth = "auto" picked and the time that run took, on the
same scale.

    python3 scripts/plot_depth.py depth.csv -o depth.png

Needs matplotlib (Debian: python3-matplotlib; scripts/plot_setup.py).
"""

import argparse
import csv
import sys
from collections import defaultdict

from plot_setup import pyplot

plt = pyplot("plot_depth.py")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv")
    parser.add_argument("-o", "--out", required=True, help="PNG to write")
    args = parser.parse_args()

    rows = list(csv.DictReader(open(args.csv)))
    if not rows:
        sys.exit(f"plot_depth.py: {args.csv} has no rows")
    panels = defaultdict(lambda: defaultdict(dict))  # (kernel, transport, np) -> cells -> depth -> row
    for r in rows:
        panels[(r["kernel"], r["transport"], int(r["np"]))][int(r["cells_per_rank"])][r["depth"]] = r
    keys = sorted(panels)
    kernels = sorted({k[0] for k in keys})
    setups = sorted({(k[1], k[2]) for k in keys})
    fig, axes = plt.subplots(len(kernels), len(setups), figsize=(3.2 * len(setups), 2.8 * len(kernels)),
                             squeeze=False, sharex=True)
    for i, kernel in enumerate(kernels):
        for j, (transport, np_) in enumerate(setups):
            ax = axes[i][j]
            by_cells = panels.get((kernel, transport, np_))
            ax.set_title(f"{kernel}, {transport}, np {np_}", fontsize=8)
            ax.axhline(1.0, color="grey", linewidth=0.5)
            if not by_cells:
                ax.set_axis_off()
                continue
            for cells, by_depth in sorted(by_cells.items()):
                if "1" not in by_depth:
                    continue
                base = float(by_depth["1"]["per_step_s"])
                fixed = sorted((int(d), float(r["per_step_s"]) / base) for d, r in by_depth.items() if d != "auto")
                line, = ax.plot([d for d, _ in fixed], [v for _, v in fixed], marker="o", markersize=3,
                                label=f"{cells} cells ({base * 1e6:.3g} us at k=1)")
                auto = by_depth.get("auto")
                if auto:
                    ax.plot([int(auto["chosen"])], [float(auto["per_step_s"]) / base], marker="*", markersize=9,
                            color=line.get_color(), linestyle="none")
            ax.set_yscale("log")
            ax.set_xticks([1, 2, 3, 4, 6, 8])
            ax.legend(fontsize=5)
            if j == 0:
                ax.set_ylabel("time/step vs k=1")
            if i == len(kernels) - 1:
                ax.set_xlabel("halo.depth k (star: auto)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    print(f"plot_depth.py: {args.out}")


if __name__ == "__main__":
    main()
