#!/usr/bin/env python3
"""Plots iso-bench CSV files like the paper's figures.

For every (operation, neighborhood) of the collective benchmarks: one PNG of
bars per contender over the block sizes, height = median of the launches'
medians, whiskers = their min and max (log time axis). For the set-up
benchmark (`iso-bench setup`): a markdown table like the paper's Table II and
a bar chart. Optionally a markdown summary with ratios against a baseline.

Several CSV files (e.g. one per mpirun launch) are merged: rows with the same
(operation, neighborhood, size, contender) pool their launch medians, and
median/min/max are recomputed over the pool.

    python3 scripts/plot_bench.py results.csv [more.csv ...] -o plots/ [--summary]

With --ratios each CSV is one transport instead (not merged; LABEL=FILE names
it, else the file name after its last '-': autotune-shm.csv -> shm): per
(operation, neighborhood) a PNG of every contender's time divided by the
fastest contender's at each size (bounds left out; log size axis), ratios.md
with the auto/fastest and tune/fastest tables, and one line per transport and
choosing contender (auto, tune) on stdout: its worst ratio, at which size, and
whether it stays within 5 % of the fastest everywhere.

    python3 scripts/plot_bench.py --ratios autotune-shm.csv autotune-tcp.csv -o plots/

Needs matplotlib (Debian: python3-matplotlib). When the python3 on PATH lacks
it, the script re-runs itself with /usr/bin/python3.
"""

import argparse
import csv
import math
import os
import statistics
import sys


def import_pyplot(script="plot_bench.py"):
    """matplotlib.pyplot on the Agg backend, for `script` (plot_stencil.py uses it too).

    A python3 first on PATH (pyenv, venv) may lack Debian's matplotlib: then
    the script runs again, once, under /usr/bin/python3."""
    try:
        import matplotlib
    except ImportError:
        system = "/usr/bin/python3"
        once = "PLOT_" + os.path.splitext(script)[0].replace("plot_", "").upper() + "_REEXEC"
        if os.path.exists(system) and os.path.realpath(sys.executable) != os.path.realpath(system) \
                and not os.environ.get(once):
            os.environ[once] = "1"
            os.execv(system, [system] + sys.argv)
        sys.exit(f"{script}: matplotlib is missing (Debian: apt-get install python3-matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


# Colours and hatches per contender, in the order they are drawn.
STYLE = {
    "linear": ("#9e9e9e", ""),
    "torus": ("#1f77b4", ""),
    "direct": ("#2ca02c", ""),
    "basis": ("#17becf", ""),
    "auto": ("#222222", ""),
    "tune": ("#e377c2", ""),
    "iso-mpi": ("#8c564b", ""),
    "mpi-create": ("#ff7f0e", ""),
    "mpi-adjacent": ("#d62728", ""),
    "mpi-persistent": ("#9467bd", ""),
    "bound-torus": ("#aec7e8", "//"),
    "bound-direct": ("#98df8a", "//"),
}

SETUP_ORDER = ["iso-neighborhood", "iso-alltoall-init", "iso-allgather-init", "iso-create+init",
               "mpi-create", "mpi-adjacent"]


def format_bytes(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if n == int(n) else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def format_us(us):
    if us is None:
        return "-"
    if us >= 1e4:
        return f"{us / 1e3:.1f} ms"
    return f"{us:.2f} us" if us < 100 else f"{us:.0f} us"


def turns_of(row):
    """A CSV row's turn medians (iso-bench --interleave), [] where it has none."""
    return [float(x) for x in (row.get("turn_medians_us") or "").split(";") if x]


def turn_ratio(ours, theirs):
    """The median over turns of ours / theirs, turn by turn; None unless both
    have the same, non-zero number of turns."""
    pairs = [a / b for a, b in zip(ours, theirs) if b > 0] if ours and len(ours) == len(theirs) else []
    return statistics.median(pairs) if pairs else None


def worst_turn_ratio(ours, rivals):
    """(ratio, name) of the rival ours trails most, turn by turn; None unless
    every rival has ours' turns."""
    ratios = {name: turn_ratio(ours, theirs) for name, theirs in rivals.items()}
    if not ratios or None in ratios.values():
        return None
    name = max(ratios, key=ratios.get)
    return ratios[name], name


def read_rows(paths):
    """Merged rows keyed by (operation, neighborhood, size, contender), in first-seen order."""
    merged = {}
    for path in paths:
        with open(path, newline="") as handle:
            reader = csv.DictReader(handle)
            required = {"operation", "neighborhood", "size_bytes", "contender", "status", "launch_medians_us"}
            missing = required - set(reader.fieldnames or [])
            if missing:
                sys.exit(f"plot_bench.py: {path} is not an iso-bench CSV (missing {', '.join(sorted(missing))})")
            for row in reader:
                key = (row["operation"], row["neighborhood"], int(row["size_bytes"]), row["contender"])
                medians = [float(x) for x in row["launch_medians_us"].split(";") if x] \
                    if row["status"] == "ok" else []
                turns = turns_of(row) if row["status"] == "ok" else []
                if key not in merged:
                    entry = dict(row)
                    entry["medians"] = []
                    entry["turns"] = []
                    merged[key] = entry
                entry = merged[key]
                entry["medians"] += medians
                entry["turns"] += turns
                if medians:
                    entry["status"] = "ok"
                    entry["note"] = row.get("note", "")
                    entry["chosen"] = row.get("chosen", "")
    for entry in merged.values():
        m = entry["medians"]
        entry["median"] = statistics.median(m) if m else None
        entry["min"] = min(m) if m else None
        entry["max"] = max(m) if m else None
    return merged


def groups(merged, setup):
    out = {}
    for (op, nbh, size, contender), entry in merged.items():
        if (op == "setup") != setup:
            continue
        out.setdefault((op, nbh), []).append(entry)
    return out


def contender_order(entries):
    names = []
    for e in entries:
        if e["contender"] not in names:
            names.append(e["contender"])
    known = [n for n in STYLE if n in names]
    return known + [n for n in names if n not in STYLE]


def short_library(entry):
    library = entry.get("mpi_library", "")
    return library.split(",")[0].strip() if library else "MPI"


def bar_series(entries, k, width):
    """Series k of grouped bars `width` wide: entries[x] is group x's row or
    None. Returns the bars' x, heights (medians) and the error bars below and
    above (down to the minimum, up to the maximum); unmeasured rows have none."""
    xs, heights, low, high = [], [], [], []
    for x, e in enumerate(entries):
        if e is None or e["median"] is None:
            continue
        xs.append(x - 0.4 + width * (k + 0.5))
        heights.append(e["median"])
        low.append(e["median"] - e["min"])
        high.append(e["max"] - e["median"])
    return xs, heights, low, high


def plot_group(plt, op, nbh, entries, outdir, contenders_filter, dpi):
    sizes = sorted({int(e["size_bytes"]) for e in entries})
    names = [n for n in contender_order(entries) if not contenders_filter or n in contenders_filter]
    table = {(int(e["size_bytes"]), e["contender"]): e for e in entries}
    first = entries[0]
    fig, ax = plt.subplots(figsize=(min(14.0, max(6.5, 0.07 * len(sizes) * max(1, len(names)) + 2.0)), 4.2))
    width = 0.8 / max(1, len(names))
    lowest = None
    for k, name in enumerate(names):
        colour, hatch = STYLE.get(name, (None, ""))
        series = [table.get((size, name)) for size in sizes]
        xs, heights, low, high = bar_series(series, k, width)
        for e in series:
            if e is not None and e["median"] is not None:
                lowest = e["min"] if lowest is None else min(lowest, e["min"])
        if not xs:
            continue
        ax.bar(xs, heights, width=width, color=colour, hatch=hatch, edgecolor="white" if not hatch else "#555555",
               linewidth=0.3, label=name, yerr=[low, high], error_kw={"elinewidth": 0.7, "capsize": 1.5})
    ax.set_yscale("log")
    # Points that were not measured: say why at the bottom of their group.
    for x, size in enumerate(sizes):
        states = {table[(size, n)]["status"] for n in names if (size, n) in table}
        if states and "ok" not in states:
            ax.text(x, 0.02, "skipped" if "skipped" in states else "error", rotation=90, ha="center", va="bottom",
                    fontsize=7, color="#aa0000", transform=ax.get_xaxis_transform())
    labels = []
    for size in sizes:
        if op == "alltoallw":
            sends = [int(table[(size, n)]["send_bytes"]) for n in names if (size, n) in table]
            labels.append(f"m={format_bytes(size)}\n{format_bytes(max(sends)) if sends else ''}")
        else:
            labels.append(format_bytes(size))
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels(labels, fontsize=7 if len(sizes) > 10 else 8, rotation=45 if len(sizes) > 10 else 0)
    ax.set_xlabel("block size m, block i has m^(d-nz(v_i)) bytes (second line: send buffer)"
                  if op == "alltoallw" else "block size")
    ax.set_ylabel("time per call [us]")
    ax.set_title(f"{op}, {nbh} (s = {first['neighbors']}), {first.get('np', '?')} ranks "
                 f"{first.get('proc_dims', '')}, {short_library(first)}", fontsize=9)
    ax.grid(axis="y", which="major", linewidth=0.4, alpha=0.6)
    ax.legend(fontsize=7, ncol=min(len(names), 5), loc="upper left", frameon=False)
    top = ax.get_ylim()[1]
    ax.set_ylim(top=top * 3)  # room for the legend
    fig.text(0.99, 0.01, "bars: median of launch medians; whiskers: min/max over launches", ha="right",
             fontsize=6, color="#555555")
    fig.tight_layout()
    path = os.path.join(outdir, f"{op}_{nbh}.png")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def setup_table(merged):
    """{(d, r, s, proc_dims): {contender: entry}} for the set-up rows."""
    out = {}
    for (op, nbh, size, contender), e in merged.items():
        if op != "setup":
            continue
        key = (int(e["dims"]), nbh, int(e["neighbors"]), e.get("proc_dims", ""))
        out.setdefault(key, {})[contender] = e
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], kv[0][2])))


def write_setup(plt, merged, outdir, dpi):
    table = setup_table(merged)
    if not table:
        return []
    any_entry = next(iter(next(iter(table.values())).values()))
    lines = [f"Set-up times in microseconds, {any_entry.get('np', '?')} ranks, {short_library(any_entry)} "
             f"(median of launch medians; Table II of the paper).", "",
             "| d | r | s | iso::Neighborhood | alltoall_init | allgather_init | Neighborhood + alltoall_init "
             "| MPI_Dist_graph_create | MPI_Dist_graph_create_adjacent | adjacent / (iso create+init) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for (d, nbh, s, _), row in table.items():
        r = nbh.rsplit("-r", 1)[-1] if "-r" in nbh else "?"
        def cell(name):
            e = row.get(name)
            return f"{e['median']:.1f}" if e and e["median"] is not None else "-"
        total = row.get("iso-create+init")
        adjacent = row.get("mpi-adjacent")
        ratio = "-"
        if total and adjacent and total["median"] and adjacent["median"] is not None:
            ratio = f"{adjacent['median'] / total['median']:.2f}"
        lines.append(f"| {d} | {r} | {s} | {cell('iso-neighborhood')} | {cell('iso-alltoall-init')} | "
                     f"{cell('iso-allgather-init')} | {cell('iso-create+init')} | {cell('mpi-create')} | "
                     f"{cell('mpi-adjacent')} | {ratio} |")
    md = os.path.join(outdir, "setup.md")
    with open(md, "w") as handle:
        handle.write("\n".join(lines) + "\n")

    fig, ax = plt.subplots(figsize=(9, 4))
    keys = list(table)
    names = [n for n in SETUP_ORDER if any(n in row for row in table.values())]
    width = 0.8 / max(1, len(names))
    colours = ["#1f77b4", "#6baed6", "#9ecae1", "#08519c", "#ff7f0e", "#d62728"]
    for k, name in enumerate(names):
        xs, hs, lo, hi = bar_series([table[key].get(name) for key in keys], k, width)
        ax.bar(xs, hs, width=width, label=name, color=colours[k % len(colours)], yerr=[lo, hi],
               error_kw={"elinewidth": 0.6, "capsize": 1})
    ax.set_yscale("log")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels([f"d={d} {nbh.rsplit('-', 1)[-1]}\ns={s}" for (d, nbh, s, _) in keys], fontsize=7)
    ax.set_ylabel("set-up time [us]")
    ax.set_title(f"Set-up times, Moore neighborhoods, {any_entry.get('np', '?')} ranks, {short_library(any_entry)}",
                 fontsize=9)
    ax.grid(axis="y", linewidth=0.4, alpha=0.6)
    ax.legend(fontsize=7, ncol=3, frameon=False, loc="upper left")
    ax.set_ylim(top=ax.get_ylim()[1] * 5)
    fig.tight_layout()
    png = os.path.join(outdir, "setup.png")
    fig.savefig(png, dpi=dpi)
    plt.close(fig)
    return [md, png]


def write_summary(merged, outdir, baseline):
    lines = [f"Median time per call in microseconds; in parentheses the speed-up over `{baseline}` "
             f"(its time divided by the contender's; above 1: faster).", ""]
    for (op, nbh), entries in groups(merged, setup=False).items():
        names = contender_order(entries)
        table = {(int(e["size_bytes"]), e["contender"]): e for e in entries}
        sizes = sorted({int(e["size_bytes"]) for e in entries})
        first = entries[0]
        lines += [f"### {op}, {nbh} (s = {first['neighbors']}, {first.get('np', '?')} ranks, "
                  f"{first.get('proc_dims', '')})", "",
                  "| size | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
        for size in sizes:
            base = table.get((size, baseline))
            cells = []
            for name in names:
                e = table.get((size, name))
                if e is None or e["median"] is None:
                    cells.append(e["status"] if e else "-")
                    continue
                text = f"{e['median']:.2f}"
                if base and base["median"] and name != baseline:
                    text += f" ({base['median'] / e['median']:.2f}x)"
                if name == "auto" and e.get("chosen"):
                    text += f" [{e['chosen']}]"
                cells.append(text)
            lines.append(f"| {format_bytes(size)} | " + " | ".join(cells) + " |")
        lines.append("")
    path = os.path.join(outdir, "summary.md")
    with open(path, "w") as handle:
        handle.write("\n".join(lines))
    return path


# Within this factor of the fastest contender counts as as fast (noise).
RATIO_TOLERANCE = 1.05


def transport_label(path):
    """autotune-shm.csv -> shm; LABEL=FILE -> (LABEL, FILE)."""
    if "=" in path and not os.path.exists(path):
        label, file = path.split("=", 1)
        return label, file
    stem = os.path.splitext(os.path.basename(path))[0]
    return stem.rsplit("-", 1)[-1], path


def ratio_tables(entries):
    """{contender: {size: ratio}} against the fastest measured contender per
    size (bounds move no real data: left out), {size: fastest entry} and
    {size: True where the ratios are paired}. Where every contender of a size
    was timed in the same turns (iso-bench --interleave), the ratios are
    paired: the median over turns of each turn's time over the fastest's in
    that turn, the fastest being the contender whose turns are nearest each
    turn's least. A VM whose speed drifts by 2x within a run then moves
    numerator and denominator together. Otherwise: medians of launch medians."""
    table = {}
    for e in entries:
        if e["median"] is not None and not e["contender"].startswith("bound-"):
            table.setdefault(int(e["size_bytes"]), {})[e["contender"]] = e
    fastest, ratios, paired = {}, {}, {}
    for size, row in table.items():
        counts = {len(e.get("turns", [])) for e in row.values()}
        if len(counts) == 1 and 0 not in counts:
            turns = list(zip(*(e["turns"] for e in row.values())))
            least = [min(t) for t in turns]
            names = list(row)
            nearness = {n: statistics.median(t[k] / low for t, low in zip(turns, least) if low > 0)
                        for k, n in enumerate(names)}
            best = min(names, key=lambda n: nearness[n])
            fastest[size] = row[best]
            for name, e in row.items():
                ratios.setdefault(name, {})[size] = turn_ratio(e["turns"], row[best]["turns"])
            paired[size] = True
            continue
        fastest[size] = min(row.values(), key=lambda e: e["median"])
        best = fastest[size]["median"]
        for name, e in row.items():
            ratios.setdefault(name, {})[size] = e["median"] / best if best > 0 else float("inf")
        paired[size] = False
    return ratios, fastest, paired


def plot_ratios(plt, label, op, nbh, entries, ratios, outdir, dpi):
    names = [n for n in contender_order(entries) if n in ratios]
    first = entries[0]
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    for name in names:
        # A port-limited contender ("torus:p2") in its algorithm's colour, dashed.
        base, _, ports = name.partition(":p")
        colour = STYLE.get(base, (None, ""))[0]
        style = {"": "-", "1": "--", "2": ":"}.get(ports, "-.")
        points = sorted(ratios[name].items())
        wide = name in ("auto", "tune")
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o" if wide else ".", linestyle=style,
                linewidth=2.0 if wide else 0.9, markersize=4 if wide else 3, color=colour, label=name)
    ax.axhline(RATIO_TOLERANCE, color="#aa0000", linewidth=0.6, linestyle="--")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({int(e["size_bytes"]) for e in entries})
    ax.set_xticks(sizes)
    ax.set_xticklabels([format_bytes(x) for x in sizes], fontsize=7, rotation=45)
    ax.set_xlabel("block size")
    ax.set_ylabel("time / fastest contender's time")
    ax.set_title(f"{label}: {op}, {nbh} (s = {first['neighbors']}), {first.get('np', '?')} ranks "
                 f"{first.get('proc_dims', '')}, {short_library(first)}", fontsize=9)
    ax.grid(which="both", linewidth=0.3, alpha=0.5)
    ax.legend(fontsize=7, ncol=min(len(names), 5), loc="upper left", frameon=False)
    ax.set_ylim(bottom=0.95, top=ax.get_ylim()[1] * 2)
    top = ax.get_ylim()[1]
    ticks = [t for t in (1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000) if t <= top]
    ax.set_yticks(ticks)
    ax.set_yticklabels([f"{t:g}" for t in ticks], fontsize=7)
    ax.minorticks_off()
    fig.text(0.99, 0.01, f"turn by turn where interleaved, else medians of launch medians; dashed: {RATIO_TOLERANCE:g}", ha="right", fontsize=6,
             color="#555555")
    fig.tight_layout()
    path = os.path.join(outdir, f"ratios_{label}_{op}_{nbh}.png")
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def write_ratios(plt, paths, outdir, dpi):
    """The --ratios mode: returns the files written; prints the summary lines."""
    lines = [f"Time per call divided by the fastest contender's at each size (bounds left out); "
             f"within {RATIO_TOLERANCE:g}: as fast, up to noise. Sizes marked * are paired (contenders "
             f"timed in the same turns, iso-bench --interleave): the median over turns of each turn's "
             f"ratio; the others: ratios of medians.", ""]
    written, verdicts = [], []
    for path in paths:
        label, file = transport_label(path)
        merged = read_rows([file])
        for (op, nbh), entries in groups(merged, setup=False).items():
            ratios, fastest, paired = ratio_tables(entries)
            if not ratios:
                continue
            written.append(plot_ratios(plt, label, op, nbh, entries, ratios, outdir, dpi))
            chosen = {(int(e["size_bytes"]), e["contender"]): e.get("chosen", "") for e in entries}
            choosing = [n for n in ("auto", "tune") if n in ratios]
            lines += [f"### {label}: {op}, {nbh} ({os.path.basename(file)})", "",
                      "| size | fastest | us | " + " | ".join(f"{n}/fastest [chose]" for n in choosing) + " |",
                      "|---|---|---|" + "---|" * len(choosing)]
            for size in sorted(fastest):
                cells = []
                for name in choosing:
                    r = ratios[name].get(size)
                    cells.append("-" if r is None else f"{r:.2f} [{chosen.get((size, name), '')}]")
                lines.append(f"| {format_bytes(size)}{' *' if paired[size] else ''} | {fastest[size]['contender']} | "
                             f"{fastest[size]['median']:.2f} | " + " | ".join(cells) + " |")
            lines.append("")
            for name in choosing:
                size, worst = max(ratios[name].items(), key=lambda kv: kv[1])
                within = sum(1 for r in ratios[name].values() if r <= RATIO_TOLERANCE)
                verdicts.append(
                    f"{label} {op} {nbh}: {name} worst {worst:.3f}x the fastest at {format_bytes(size)} "
                    f"(fastest there: {fastest[size]['contender']}); within {RATIO_TOLERANCE:g} at "
                    f"{within}/{len(ratios[name])} sizes: {'yes' if worst <= RATIO_TOLERANCE else 'NO'}")
    lines += ["Summary:", ""] + [f"- {v}" for v in verdicts]
    md = os.path.join(outdir, "ratios.md")
    with open(md, "w") as handle:
        handle.write("\n".join(lines) + "\n")
    for v in verdicts:
        print(v)
    return written + [md]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("csv", nargs="+", help="iso-bench CSV files (merged)")
    parser.add_argument("-o", "--outdir", default="bench-plots", help="output folder (default bench-plots)")
    parser.add_argument("--op", action="append", help="only this operation (repeatable)")
    parser.add_argument("--neighborhood", "-n", action="append", help="only this neighborhood (repeatable)")
    parser.add_argument("--contenders", help="comma-separated contenders to draw (default all)")
    parser.add_argument("--summary", action="store_true", help="also write summary.md with ratios")
    parser.add_argument("--baseline", default="mpi-adjacent", help="baseline of the summary ratios")
    parser.add_argument("--dpi", type=int, default=90, help="PNG resolution (default 90)")
    parser.add_argument("--ratios", action="store_true",
                        help="each CSV ([LABEL=]FILE) is one transport: ratio-to-fastest plots, ratios.md "
                             "and the auto/tune verdicts (see above)")
    args = parser.parse_args()

    plt = import_pyplot()
    if args.ratios:
        os.makedirs(args.outdir, exist_ok=True)
        written = write_ratios(plt, args.csv, args.outdir, args.dpi)
        for path in written:
            print(path)
        if len(written) < 2:
            sys.exit("plot_bench.py: no measured rows to compare")
        return
    merged = read_rows(args.csv)
    if args.op:
        merged = {k: v for k, v in merged.items() if k[0] in args.op or k[0] == "setup"}
    if args.neighborhood:
        merged = {k: v for k, v in merged.items() if k[1] in args.neighborhood or k[0] == "setup"}
    os.makedirs(args.outdir, exist_ok=True)
    contenders = set(args.contenders.split(",")) if args.contenders else None
    written = []
    for (op, nbh), entries in groups(merged, setup=False).items():
        written.append(plot_group(plt, op, nbh, entries, args.outdir, contenders, args.dpi))
    written += write_setup(plt, merged, args.outdir, args.dpi)
    if args.summary:
        written.append(write_summary(merged, args.outdir, args.baseline))
    for path in written:
        print(path)
    if not written:
        sys.exit("plot_bench.py: nothing to plot")


if __name__ == "__main__":
    main()
