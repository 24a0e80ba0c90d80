#!/usr/bin/env python3
"""Backends entry of scripts/bench.sh: Serial vs OpenMP at 1 and 2 threads.

Reads the CSVs of isostencil-bench-stencil (Jacobi 7-point) and
isostencil-bench-life (Life 2-D) written per backend as
  <dir>/backends-stencil-<variant>.csv, <dir>/backends-life-<variant>.csv
with <variant> one of serial, openmp1, openmp2, and writes
  <dir>/backends.csv       one row per case, variant and overlap mode
  <dir>/backends.md        rates and the ratios (OpenMP 2 threads / 1 thread,
                           OpenMP 1 thread / Serial), with the target
  <dir>/plots/backends.png step rates per case and variant

  scripts/plot_backends.py DIR
"""
import csv
import os
import sys

VARIANTS = [("serial", "Serial"), ("openmp1", "OpenMP 1 thread"), ("openmp2", "OpenMP 2 threads")]
TARGET = 1.7  # Jacobi, OpenMP 2 threads / 1 thread (issue 15)


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def rows_of(out):
    rows = []
    for variant, label in VARIANTS:
        stencil = os.path.join(out, f"backends-stencil-{variant}.csv")
        life = os.path.join(out, f"backends-life-{variant}.csv")
        if os.path.exists(stencil):
            for r in read(stencil):
                if r["kernel"] != "jacobi7":
                    continue
                n = int(r["local_n"])
                rows.append({"case": f"Jacobi 7-point {n}^3", "variant": variant, "label": label,
                             "overlap": r["overlap"],
                             "kernel_rate": float(r["kernel_updates_per_s_per_rank"]),
                             "step_rate": float(r["step_updates_per_s_total"])})
        if os.path.exists(life):
            for r in read(life):
                e = int(r["extent"])
                rows.append({"case": f"Life 2-D {e}^2", "variant": variant, "label": label,
                             "overlap": "on" if r["overlap"] in ("1", "on") else "off",
                             "kernel_rate": float(r["kernel_updates_per_s_per_rank"]),
                             "step_rate": float(r["step_updates_per_s"])})
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    rows = rows_of(out)
    if not rows:
        sys.exit(f"plot_backends.py: no backends-*.csv in {out}")
    with open(os.path.join(out, "backends.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "variant", "overlap", "kernel_updates_per_s", "step_updates_per_s"])
        for r in rows:
            w.writerow([r["case"], r["variant"], r["overlap"], f'{r["kernel_rate"]:.6g}',
                        f'{r["step_rate"]:.6g}'])

    rate = {(r["case"], r["variant"], r["overlap"]): r["step_rate"] for r in rows}
    cases = list(dict.fromkeys(r["case"] for r in rows))
    lines = ["## Backends (1 rank; step rate, M cell updates/s)", "",
             "| case | overlap | Serial | OpenMP 1 thread | OpenMP 2 threads | 2 threads / 1 thread "
             "| OpenMP 1 thread / Serial |",
             "|---|---|---|---|---|---|---|"]
    verdicts = []
    for case in cases:
        for overlap in ("off", "on"):
            got = [rate.get((case, v, overlap)) for v, _ in VARIANTS]
            if all(g is None for g in got):
                continue
            cells = [f"{g / 1e6:.0f}" if g else "-" for g in got]
            scale = got[2] / got[1] if got[1] and got[2] else None
            one = got[1] / got[0] if got[0] and got[1] else None
            cells += [f"{scale:.2f}x" if scale else "-", f"{one:.2f}x" if one else "-"]
            lines.append(f"| {case} | {overlap} | " + " | ".join(cells) + " |")
            if case.startswith("Jacobi") and overlap == "off" and scale:
                verdicts.append(f"- target: Jacobi OpenMP 2 threads >= {TARGET}x 1 thread "
                                f"(overlap off): {scale:.2f}x, "
                                f"{'met' if scale >= TARGET else 'missed'}")
    lines += [""] + verdicts + [
        "", "Step rate: cells x steps / wall time of the steps (halo included). The machine's "
        "load decides much of the 2-thread figure: a descheduled thread stalls every parallel "
        "region (see the load in bench.log)."]
    with open(os.path.join(out, "backends.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_backends.py: matplotlib missing; no plot", file=sys.stderr)
        return
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    fig, axes = plt.subplots(1, len(cases), figsize=(5 * len(cases), 4), squeeze=False)
    for ax, case in zip(axes[0], cases):
        width = 0.38
        for k, overlap in enumerate(("off", "on")):
            values = [rate.get((case, v, overlap), 0) / 1e6 for v, _ in VARIANTS]
            xs = [i + (k - 0.5) * width for i in range(len(VARIANTS))]
            ax.bar(xs, values, width, label=f"overlap {overlap}")
        ax.set_xticks(range(len(VARIANTS)))
        ax.set_xticklabels([label for _, label in VARIANTS], rotation=15)
        ax.set_title(case)
        ax.set_ylabel("M cell updates/s (step)")
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, "plots", "backends.png"), dpi=110)


if __name__ == "__main__":
    main()
