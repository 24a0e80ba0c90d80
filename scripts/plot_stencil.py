#!/usr/bin/env python3
"""Plots the stencil benchmarks' CSVs and checks issue 7's targets.

Inputs (each optional):
  --halo      isostencil-bench-halo CSV: one PNG per case, time per step per
              contender and local size, bars stacked kernel / halo / other
  --petsc     isostencil-bench-petsc CSV: ratios DMDA / ours per measure
  --collectives, --setup   iso-bench CSVs (the collective targets)
  --stencil, --life        kernel-rate CSVs (listed in the summary)
Writes OUT/plots/*.png and OUT/summary.md: every target of issue 7 with the
measured ratio and met / missed.

    python3 scripts/plot_stencil.py --halo halo.csv --petsc petsc.csv -o results/

Needs matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv
import os

from plot_bench import import_pyplot, turns_of, worst_turn_ratio  # the same directory


def read(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def num(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


HALO_ORDER = ["linear", "torus", "direct", "auto", "iso-mpi", "naive", "mpi-neighbor"]
COLORS = {"kernel": "#1f77b4", "halo": "#d62728", "other": "#bbbbbb"}


def plot_halo(plt, rows, outdir, dpi):
    written = []
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    for case in cases:
        sub = [r for r in rows if r["case"] == case and r["status"] == "ok"]
        sizes = sorted({int(r["local_n"]) for r in sub})
        if not sizes:
            continue
        fig, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.8), squeeze=False)
        for ax, n in zip(axes[0], sizes):
            at = {r["contender"]: r for r in sub if int(r["local_n"]) == n}
            names = [c for c in HALO_ORDER if c in at] + [c for c in at if c not in HALO_ORDER]
            bottom = [0.0] * len(names)
            for part in ("kernel", "halo", "other"):
                values = [max(num(at[c][part + "_us"]) or 0.0, 0.0) for c in names]
                ax.bar(range(len(names)), values, bottom=bottom, color=COLORS[part], label=part)
                bottom = [b + v for b, v in zip(bottom, values)]
            labels = [c + ("\n(" + at[c]["chosen"] + ")" if c == "auto" and at[c]["chosen"] else "") for c in names]
            ax.set_xticks(range(len(names)))
            ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
            dims = int(at[names[0]]["dims"])
            ax.set_title(f"{case}, {n}^{dims} per rank", fontsize=9)
            ax.set_ylabel("time per step [us]")
        axes[0][0].legend(fontsize=8)
        env = sub[0]
        fig.suptitle(f"{case}: time per step by halo exchange (np={env['np']}, {env['proc_dims']})", fontsize=10)
        fig.tight_layout()
        path = os.path.join(outdir, f"halo_{case}.png")
        fig.savefig(path, dpi=dpi)
        plt.close(fig)
        written.append(path)
    return written


def plot_petsc(plt, rows, outdir, dpi):
    measures = ["setup", "ghost27", "jacobi7-step", "jacobi7-sweep"]
    sizes = sorted({int(r["local_n"]) for r in rows})
    if not sizes:
        return []
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / len(measures)
    for k, m in enumerate(measures):
        ratios = []
        for n in sizes:
            at = {r["contender"]: r for r in rows if r["measure"] == m and int(r["local_n"]) == n}
            ours, theirs = at.get("isostencil"), at.get("dmda")
            ratio = None
            if ours and theirs:
                ratio = num(theirs["median_us"]) / num(ours["median_us"])
            ratios.append(ratio or 0)
        ax.bar([i + k * width for i in range(len(sizes))], ratios, width, label=m)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.axhline(1.5, color="gray", linewidth=0.8, linestyle="--")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(sizes))])
    ax.set_xticklabels([f"{n}^3" for n in sizes])
    ax.set_ylabel("DMDA time / isostencil time")
    ax.set_title("isostencil vs PETSc DMDA (above 1: ours faster)", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(outdir, "petsc.png")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return [path]


class Targets:
    def __init__(self):
        self.lines = []

    def add(self, target, measured, met, note=""):
        status = "n/a" if met is None else ("met" if met else "**missed**")
        self.lines.append(f"| {target} | {measured} | {status} | {note} |")


def fmt(x, digits=2):
    return "-" if x is None else f"{x:.{digits}f}"


def collective_targets(t, rows):
    """Targets on 3-D Moore r = 1 from iso-bench rows (median_us per contender)."""
    def is_moore31(name):
        return name.startswith("moore") and "d3" in name and "r1" in name

    def table(op):
        out = {}
        for r in rows:
            if r.get("operation") != op or not is_moore31(r.get("neighborhood", "")) or r.get("status") != "ok":
                continue
            out.setdefault(int(r["size_bytes"]), {})[r["contender"]] = num(r["median_us"])
        return out

    a2a, ag = table("alltoall"), table("allgather")
    if not a2a:
        t.add("alltoall targets (3-D Moore r=1)", "no data", None, "iso-bench CSV missing")
        return
    mpi = ("mpi-create", "mpi-adjacent")

    def mpi_ratio(tab, limit):
        worst = None
        for size, c in tab.items():
            values = [c[m] for m in mpi if c.get(m)]
            best_mpi = min(values) if values else None
            if size <= limit and c.get("auto") and best_mpi:
                r = best_mpi / c["auto"]
                worst = r if worst is None else min(worst, r)
        return worst

    r = mpi_ratio(a2a, 64)
    t.add("alltoall auto >= 2.5x faster than MPI_Neighbor_alltoall, blocks <= 64 B",
          f"min {fmt(r)}x (vs the faster MPI graph)", None if r is None else r >= 2.5)
    # Where the contenders took turns (iso-bench --interleave): auto's time
    # over each rival's turn by turn, the median over turns; else medians.
    turns = {}
    for r in rows:
        if r.get("operation") == "alltoall" and is_moore31(r.get("neighborhood", "")) and r.get("status") == "ok":
            turns.setdefault(int(r["size_bytes"]), {})[r["contender"]] = turns_of(r)
    worst, at, paired_all = None, None, True
    for size, c in sorted(a2a.items()):
        field = {k: v for k, v in c.items() if v and not k.startswith("bound") and k != "auto"}
        if not (c.get("auto") and field):
            continue
        theirs = turns.get(size, {})
        paired = worst_turn_ratio(theirs.get("auto", []), {k: theirs.get(k, []) for k in field})
        if paired:
            ratio = paired[0]
        else:
            ratio, paired_all = c["auto"] / min(field.values()), False
        if worst is None or ratio > worst:
            worst, at = ratio, size
    t.add("alltoall auto within 5 % of the fastest contender, 1 B..64 KiB",
          f"worst auto/fastest {fmt(worst, 3)} at {at} B" + (" (turn by turn)" if paired_all else ""),
          None if worst is None else worst <= 1.05)
    for alg in ("torus", "direct"):
        worst = None
        for size, c in a2a.items():
            if size <= 64 and c.get(alg) and c.get("bound-" + alg):
                ratio = c[alg] / c["bound-" + alg]
                worst = ratio if worst is None else max(worst, ratio)
        t.add(f"alltoall {alg} within 1.3x of its Sendrecv bound, blocks <= 64 B", f"max {fmt(worst)}x",
              None if worst is None else worst <= 1.3)
    r = mpi_ratio(ag, 64)
    t.add("allgather auto >= 3.5x faster than MPI_Neighbor_allgather, blocks <= 64 B",
          f"min {fmt(r)}x", None if r is None else r >= 3.5)
    worst, at = None, None
    for size, c in ag.items():
        if c.get("auto") and a2a.get(size, {}).get("auto"):
            ratio = c["auto"] / a2a[size]["auto"]
            if worst is None or ratio > worst:
                worst, at = ratio, size
    t.add("allgather never slower than alltoall (auto, same block size)",
          f"max allgather/alltoall {fmt(worst)} at {at} B", None if worst is None else worst <= 1.0)


def setup_targets(t, rows):
    per = {}
    for r in rows:
        if r.get("operation") != "setup" or r.get("status") != "ok":
            continue
        per.setdefault(r["neighborhood"], {})[r["contender"]] = num(r["median_us"])
    worst, at, eligible = None, None, {}
    for nbh, c in per.items():
        parts = nbh.split("-")
        try:
            d, rad = int(parts[1][1:]), int(parts[2][1:])
        except (IndexError, ValueError):
            continue
        if d <= 4 and rad <= 3:
            eligible[nbh] = c
        if d <= 4 and rad <= 3 and c.get("iso-create+init") and c.get("mpi-adjacent"):
            ratio = c["iso-create+init"] / c["mpi-adjacent"]
            if worst is None or ratio > worst:
                worst, at = ratio, nbh
    t.add("setup: neighborhood creation + init no slower than MPI_Dist_graph_create_adjacent, d <= 4, r <= 3",
          f"worst ours/adjacent {fmt(worst)} ({at})", None if worst is None else worst <= 1.0)
    # Cold: every cache of the process empty (the row iso-bench times first).
    cold = [(c["iso-create+init-cold"] / c["mpi-adjacent"], nbh) for nbh, c in eligible.items()
            if c.get("iso-create+init-cold") and c.get("mpi-adjacent")]
    if cold:
        worst, at = max(cold)
        t.add("setup, cold caches: creation + init at most 2x MPI_Dist_graph_create_adjacent, d <= 4, r <= 3",
              f"worst ours/adjacent {fmt(worst)} ({at})", worst <= 2.0)


def halo_targets(t, rows):
    def halo(n, contender, column="halo_us"):
        for r in rows:
            if r["case"] == "jacobi27" and int(r["local_n"]) == n and r["contender"] == contender and r["status"] == "ok":
                return num(r.get(column)), r.get("chosen", "")
        return None, ""

    for n, need, word in ((16, 1.5, ">= 1.5x faster"), (128, 1.0, "no slower")):
        auto, chosen = halo(n, "auto")
        auto_min, _ = halo(n, "auto", "halo_min_us")
        for other, label in (("naive", "the naive exchange"), ("mpi-neighbor", "MPI_Neighbor_alltoallw")):
            them, _ = halo(n, other)
            them_min, _ = halo(n, other, "halo_min_us")
            ratio = them / auto if auto and them else None
            best = them_min / auto_min if auto_min and them_min else None
            t.add(f"27-point halo at {n}^3: auto {word} than {label}",
                  f"{fmt(ratio)}x ({fmt(auto)} vs {fmt(them)} us, auto = {chosen})",
                  None if ratio is None else ratio >= need,
                  "" if best is None else f"fastest repetitions: {fmt(best)}x ({fmt(auto_min)} vs {fmt(them_min)} us)")


def petsc_targets(t, rows, note):
    if not rows:
        t.add("PETSc DMDA targets", "not measured", None, note or "no PETSc CSV")
        return

    def get(measure, n, who):
        for r in rows:
            if r["measure"] == measure and int(r["local_n"]) == n and r["contender"] == who:
                return num(r["median_us"])
        return None

    sizes = sorted({int(r["local_n"]) for r in rows})
    for n in sizes:
        o, d = get("ghost27", n, "isostencil"), get("ghost27", n, "dmda")
        r = d / o if o and d else None
        need = 1.5 if n <= 32 else 1.0  # larger grids: keep the lead
        t.add(f"27-point halo {'>= 1.5x faster than' if need > 1 else 'no slower than'} DMGlobalToLocal at {n}^3",
              f"{fmt(r)}x ({fmt(o)} vs {fmt(d)} us)", None if r is None else r >= need)
    worst, at = None, None
    for n in sizes:
        o, d = get("setup", n, "isostencil"), get("setup", n, "dmda")
        if o and d and (worst is None or d / o < worst):
            worst, at = d / o, n
    t.add("grid + halo setup no slower than DMDACreate3d + DMSetUp",
          f"worst DMDA/ours {fmt(worst)} (at {at}^3)", None if worst is None else worst >= 1.0)
    for n in sizes:
        o, d = get("jacobi7-step", n, "isostencil"), get("jacobi7-step", n, "dmda")
        r = d / o if o and d else None
        t.add(f"7-point Jacobi step rate >= DMDA's at {n}^3",
              f"{fmt(r)}x ({fmt(o)} vs {fmt(d)} us per step)", None if r is None else r >= 1.0)


def packed_targets(t, rows):
    """The packed transport against datatypes (scripts/bench_packed.sh's CSVs:
    halo_vs_datatypes, the ratio of medians measured rep by rep beside it)."""
    got = [(num(r.get("halo_vs_datatypes")), f"np {r['np']}, {r['local_n']}^3, {r['contender']}")
           for r in rows if r.get("status") == "ok" and num(r.get("halo_vs_datatypes"))]
    if got:
        worst, at = max(got)
        t.add("packed halo <= 1.2x the datatype path, 27-point, 16^3 and 64^3, np 1 and 2",
              f"worst packed/datatypes {fmt(worst, 3)} ({at})", worst <= 1.2)


def tile_targets(t, rows):
    """Depth 4 tile by tile against depth 1 (isostencil-bench-stencil, 1 rank),
    and each against the copy bound of the same run."""
    rate = {(int(r["local_n"]), r["kernel"]): num(r["kernel_updates_per_s_per_rank"]) for r in rows}
    bound = {int(r["local_n"]): num(r["bound_updates_per_s_per_rank"]) for r in rows if r["kernel"] == "jacobi7"}
    for n in sorted(bound):
        one, tiled = rate.get((n, "jacobi7")), rate.get((n, "jacobi7 d4 tiled"))
        r = tiled / one if one and tiled else None
        t.add(f"Jacobi 7-point depth 4 tiled >= 1.5x the updates/s of depth 1 at {n}^3, 1 rank",
              f"{fmt(r)}x ({fmt(tiled and tiled / 1e6, 0)} vs {fmt(one and one / 1e6, 0)} M/s; "
              f"copy bound {fmt(bound[n] / 1e6, 0)} M/s)", None if r is None else r >= 1.5)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--halo")
    p.add_argument("--petsc")
    p.add_argument("--petsc-note", default="")
    p.add_argument("--collectives", nargs="*", default=[])
    p.add_argument("--setup")
    p.add_argument("--stencil")
    p.add_argument("--life")
    p.add_argument("--packed", nargs="*", default=[], help="scripts/bench_packed.sh's CSVs")
    p.add_argument("--tiles", help="isostencil-bench-stencil at 1 rank, depths 1 and 4 tiled")
    p.add_argument("-o", "--outdir", default="bench-results")
    p.add_argument("--elapsed", help="seconds the benchmarks ran (for the summary)")
    p.add_argument("--load", default="", help="load average during the run (for the summary)")
    p.add_argument("--dpi", type=int, default=90)
    args = p.parse_args()
    plt = import_pyplot("plot_stencil.py")
    plots = os.path.join(args.outdir, "plots")
    os.makedirs(plots, exist_ok=True)
    halo, petsc = read(args.halo), read(args.petsc)
    collectives = [r for path in args.collectives for r in read(path)]
    written = plot_halo(plt, halo, plots, args.dpi) + plot_petsc(plt, petsc, plots, args.dpi)

    t = Targets()
    collective_targets(t, collectives)
    setup_targets(t, read(args.setup))
    halo_targets(t, halo)
    petsc_targets(t, petsc, args.petsc_note)
    packed_targets(t, [r for path in args.packed for r in read(path)])
    tile_targets(t, read(args.tiles))
    env = (halo or petsc or collectives or [{}])[0]
    lines = ["# Benchmark summary (every target of the run)", ""]
    lines.append(f"np = {env.get('np', '?')}, {env.get('mpi_library', '?')}, host {env.get('hostname', '?')}, "
                 f"{env.get('date', '?')}; load average {args.load or '?'}"
                 + (f"; benchmarks ran {args.elapsed} s" if args.elapsed else "") + ".")
    lines += ["", "Ratios within one run (above 1: ours faster, unless stated).", "",
              "| target | measured | status | note |", "|---|---|---|---|"] + t.lines
    stencil, life = read(args.stencil), read(args.life)
    if stencil:
        lines += ["", "## Stencil kernels (isostencil-bench-stencil)", "",
                  "| n | kernel | overlap | kernel Mu/s/rank | % of copy bound | halo share |", "|---|---|---|---|---|---|"]
        for r in stencil:
            lines.append(f"| {r['local_n']} | {r['kernel']} | {r['overlap']} | "
                         f"{fmt(num(r['kernel_updates_per_s_per_rank']) / 1e6, 1)} | "
                         f"{fmt(num(r['kernel_pct_of_bound']), 1)} | {fmt(100 * num(r['halo_share']), 1)} % |")
    if life:
        lines += ["", "## Life (isostencil-bench-life)", "", "| " + " | ".join(life[0].keys()) + " |",
                  "|" + "---|" * len(life[0])]
        lines += ["| " + " | ".join(r.values()) + " |" for r in life]
    if halo:
        lines += ["", "## Halo exchange per step (isostencil-bench-halo, medians, us per step)", "",
                  "| case | n | contender | chosen | step | kernel | halo | other |", "|---|---|---|---|---|---|---|---|"]
        for r in halo:
            lines.append(f"| {r['case']} | {r['local_n']} | {r['contender']} | {r['chosen']} | {fmt(num(r['step_us']))} | "
                         f"{fmt(num(r['kernel_us']))} | {fmt(num(r['halo_us']))} | {fmt(num(r['other_us']))} |")
    if petsc:
        lines += ["", "## PETSc DMDA (isostencil-bench-petsc, medians)", "",
                  "| n | measure | contender | us | M updates/s/rank |", "|---|---|---|---|---|"]
        for r in petsc:
            rate = num(r["updates_per_s_per_rank"])
            lines.append(f"| {r['local_n']} | {r['measure']} | {r['contender']} | {fmt(num(r['median_us']))} | "
                         f"{fmt(rate / 1e6, 1) if rate else '-'} |")
    lines += ["", "Plots: " + ", ".join(os.path.relpath(w, args.outdir) for w in written), ""]
    path = os.path.join(args.outdir, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(lines))
    print(path)
    for w in written:
        print(w)


if __name__ == "__main__":
    main()
