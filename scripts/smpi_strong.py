#!/usr/bin/env python3
"""A simulated strong-scaling curve of Jacobi 3-D 27-point with deep halos
(docs/simulating.md#strong-scaling-simulated).

Reads the CSVs of `iso-bench halo` simulated under SMPI (one rank count a
file; rows halo-d3-nN-wW), takes for each rank count p the rows whose N is
the grid's share (GRID / p^(1/3) cells a side) and prices a step at depth k
as the framework's depth = auto does (apps/driver/src/depth_choice.cpp):

    step(k) = (exchange(w = k) + cells(k) / rate) / k,
    cells(k) = sum over g = 0..k-1 of (N + 2g)^3

(one exchange of width k every k substeps; substep g of the k computes the
interior grown by the 27-point stencil's reach 1 for each substep still to
come). `rate` is a kernel rate measured on a real machine (updates/s a rank).
With --ranks, the rows are taken by subdomain size alone, whatever rank
count simulated them: on a torus whose shape is the process grid's, one
rank a node, every rank's exchange is the same at every scale (the 26
neighbors at the same hops), so a 4 x 4 x 4 torus at 64 ranks stands for
a 16 x 16 x 16 one at 4096 (docs/simulating.md#strong-scaling-simulated).
Writes a CSV (every depth, and depth 1 against the best) and a PNG: time
per step and parallel efficiency over ranks. Efficiency is against the
fastest time per step at the smallest rank count, for both curves.

    smpi_strong.py --grid 512 --rate 3.74e8 --rate 128:3.81e8 [--ranks 64,512,4096] -o OUT.csv --png OUT.png CSV...
"""

import argparse
import csv
import re
import sys


def parse_rates(items):
    rates, default = {}, None
    for item in items:
        if ":" in item:
            n, r = item.split(":", 1)
            rates[int(n)] = float(r)
        else:
            default = float(item)
    return rates, default


def load(paths, contender):
    """(ranks, n, w) -> microseconds a exchange, from rows that are ok."""
    table = {}
    for path in paths:
        with open(path, newline="") as handle:
            for row in csv.DictReader(handle):
                if row["operation"] != "halo" or row["contender"] != contender:
                    continue
                m = re.fullmatch(r"halo-d3-n(\d+)-w(\d+)", row["neighborhood"])
                if not m:
                    continue
                if row["status"] != "ok":
                    sys.exit(f"{path}: {row['neighborhood']} {contender}: {row['status']} {row['note']}")
                table[(int(row["np"]), int(m.group(1)), int(m.group(2)))] = float(row["median_us"])
    return table


def cube_root(p):
    r = round(p ** (1 / 3))
    return r if r ** 3 == p else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("csv", nargs="+")
    parser.add_argument("--grid", type=int, default=512, help="cells a side of the global grid (default 512)")
    parser.add_argument("--rate", action="append", required=True,
                        help="kernel updates/s a rank; N:RATE for subdomains of N^3 (repeatable)")
    parser.add_argument("--depths", default="1,2,3,4")
    parser.add_argument("--contender", default="linear")
    parser.add_argument("--ranks", help="rank counts to price from rows of any rank count (a torus of the grid's shape)")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--png")
    args = parser.parse_args()
    rates, default = parse_rates(args.rate)
    depths = [int(k) for k in args.depths.split(",")]
    table = load(args.csv, args.contender)
    if args.ranks:
        by_size = {(n, w): t for (_, n, w), t in sorted(table.items(), reverse=True)}
        wanted = [int(r) for r in args.ranks.split(",")]
        table = {(r, n, w): t for r in wanted for (n, w), t in by_size.items()}

    points = []
    for ranks in sorted({p for p, _, _ in table}):
        side = cube_root(ranks)
        if side is None or args.grid % side:
            continue
        n = args.grid // side
        rate = rates.get(n, default)
        if rate is None:
            sys.exit(f"no kernel rate for {n}^3 (give --rate {n}:RATE or a default)")
        steps = {}
        for k in depths:
            if (ranks, n, k) not in table:
                continue
            halo = table[(ranks, n, k)]
            cells = sum((n + 2 * g) ** 3 for g in range(k))
            compute = cells / rate * 1e6
            steps[k] = (halo, compute, (halo + compute) / k)
        if 1 not in steps:
            continue
        best = min(steps, key=lambda k: steps[k][2])
        points.append((ranks, n, rate, steps, best))
    if not points:
        sys.exit("no rank count with depth 1 rows for the grid's share")

    base_ranks = points[0][0]
    base = points[0][3][points[0][4]][2] * base_ranks
    with open(args.output, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["ranks", "cells_a_side", "kernel_updates_per_s", "depth", "halo_us", "compute_us",
                      "step_us", "best_depth", "efficiency"])
        for ranks, n, rate, steps, best in points:
            for k, (halo, compute, step) in sorted(steps.items()):
                out.writerow([ranks, n, f"{rate:.4g}", k, f"{halo:.2f}", f"{compute:.2f}", f"{step:.2f}", best,
                              f"{base / (step * ranks):.3f}"])
    for ranks, n, rate, steps, best in points:
        one, top = steps[1][2], steps[best][2]
        print(f"{ranks:>5} ranks, {n}^3 a rank: depth 1 {one:9.1f} us a step, best depth {best} {top:9.1f} us "
              f"({one / top:.2f}x); efficiency {base / (one * ranks):.2f} / {base / (top * ranks):.2f}")

    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        ranks = [p[0] for p in points]
        one = [p[3][1][2] for p in points]
        best = [p[3][p[4]][2] for p in points]
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        left.loglog(ranks, one, "o-", label="depth 1")
        left.loglog(ranks, best, "s-", label="best depth")
        for p, t in zip(points, best):
            left.annotate(f"k={p[4]}", (p[0], t), textcoords="offset points", xytext=(4, -12), fontsize=8)
        left.loglog(ranks, [base / r for r in ranks], "k:", label="ideal")
        left.set_xlabel("ranks")
        left.set_ylabel("time per step [us]")
        left.set_title(f"Jacobi 3-D 27-point, {args.grid}³ cells")
        left.legend()
        right.semilogx(ranks, [base / (t * r) for t, r in zip(one, ranks)], "o-", label="depth 1")
        right.semilogx(ranks, [base / (t * r) for t, r in zip(best, ranks)], "s-", label="best depth")
        right.set_xlabel("ranks")
        right.set_ylabel(f"parallel efficiency (vs best at {base_ranks})")
        right.set_ylim(0, 1.1)
        right.legend()
        for axis in (left, right):
            axis.set_xticks(ranks)
            axis.set_xticklabels([str(r) for r in ranks])
        fig.tight_layout()
        fig.savefig(args.png, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
