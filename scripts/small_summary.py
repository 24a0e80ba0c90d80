#!/usr/bin/env python3
"""The small-exchange targets from scripts/bench_small.sh's CSVs, as markdown.

    small_summary.py SHM_CSV [TCP_CSV] [--load TEXT]

Every figure is a ratio of medians taken in the same run (iso-bench
collectives rows: median_us of the launches' medians); where the contenders
were timed in the same turns (iso-bench --interleave), auto's target is also
taken turn by turn (the median over turns of auto's time over a rival's). Contenders named
X@persistent are X with persistent requests forced; plain X posts as the
library chooses by default.
"""
import argparse
import csv
import sys
from collections import defaultdict

from plot_bench import turns_of, worst_turn_ratio  # the same directory

SMALL = (1, 2, 4, 8, 16, 28, 29, 32, 64)


def load(path):
    times = defaultdict(dict)  # (operation, size) -> contender -> median us
    fastest = defaultdict(dict)  # ... -> fastest launch's median (min_us)
    chosen = {}
    turns = defaultdict(dict)  # ... -> contender -> turn medians (interleaved runs)
    meta = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["status"] != "ok":
                continue
            key = (row["operation"], int(row["size_bytes"]))
            times[key][row["contender"]] = float(row["median_us"])
            fastest[key][row["contender"]] = float(row["min_us"])
            turns[key][row["contender"]] = turns_of(row)
            if row["contender"] == "auto":
                chosen[key] = row["chosen"]
            meta = row
    return times, fastest, chosen, meta, turns


def worst(values):
    return max(values, key=lambda item: item[0])


def best(values):
    return min(values, key=lambda item: item[0])


def transport_section(name, path, out):
    times, fastest, chosen, meta, turns = load(path)
    out.append(f"## {name}\n")
    if meta:
        out.append(f"{meta['mpi_library'].split(',')[0]}, np {meta['np']}, grid {meta['proc_dims']}, "
                   f"host {meta['hostname']}, {meta['date']}.\n")
    rows = []
    status = []

    def ratio(op, size, a, b):
        t = times.get((op, size), {})
        return t[a] / t[b] if a in t and b in t and t[b] > 0 else None

    out.append("| operation | size B | torus | torus@persistent | bound-torus | direct | direct@persistent "
               "| bound-direct | auto (chosen) | mpi-adjacent | torus/bound | torus@persistent/bound "
               "| direct/bound | direct@persistent/bound |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for (op, size) in sorted(times):
        t = times[(op, size)]

        def cell(c):
            return f"{t[c]:.3f}" if c in t else ""

        def r(a, b):
            v = ratio(op, size, a, b)
            return f"{v:.2f}" if v is not None else ""

        out.append(f"| {op} | {size} | {cell('torus')} | {cell('torus@persistent')} | {cell('bound-torus')} "
                   f"| {cell('direct')} | {cell('direct@persistent')} | {cell('bound-direct')} "
                   f"| {cell('auto')} ({chosen.get((op, size), '')}) | {cell('mpi-adjacent')} "
                   f"| {r('torus', 'bound-torus')} | {r('torus@persistent', 'bound-torus')} "
                   f"| {r('direct', 'bound-direct')} | {r('direct@persistent', 'bound-direct')} |")
    out.append("")

    def collect(op, a, b, sizes=SMALL):
        return [(v, s) for s in sizes if (v := ratio(op, s, a, b)) is not None]

    for alg in ("torus", "direct"):
        for label, contender in ((alg, alg), (f"{alg}@persistent (before)", f"{alg}@persistent")):
            got = collect("alltoall", contender, f"bound-{alg}")
            if got:
                v, s = worst(got)
                met = "met" if v <= 1.3 or "persistent" in contender else "**missed**"
                status.append((f"alltoall {label} within 1.3x of its Sendrecv bound, 1-64 B", f"max {v:.2f}x at {s} B",
                               met if "persistent" not in contender else "(reference)"))
    for alg in ("torus", "direct", "auto"):
        got = [(times[("allgather", s)][alg], s) for s in SMALL if s >= 4
               if alg in times.get(("allgather", s), {})]
        if got:
            v, s = worst(got)
            bound = collect("allgather", alg if alg != "auto" else "auto", "bound-torus", tuple(s for s in SMALL if s >= 4))
            extra = f"; max {worst(bound)[0]:.2f}x bound-torus" if bound else ""
            met = "met" if v <= 1.5 else "**missed**"
            status.append((f"allgather 27 blocks, 4-64 B: {alg} <= 1.5 us", f"max {v:.3f} us at {s} B{extra}",
                           met if name.startswith("shared") else "(shown)"))
    got = collect("alltoall", "mpi-adjacent", "auto")
    if got:
        v, s = best(got)
        status.append(("alltoall auto >= 2.5x faster than MPI_Neighbor_alltoall, 1-64 B", f"min {v:.2f}x at {s} B",
                       "met" if v >= 2.5 else "**missed**"))
    # Auto against the fastest other contender (bounds aside), by medians and
    # by the fastest launch: where auto runs the very operation of the
    # contender it chose, what separates them is the machine's noise.
    for label, table in (("medians", times), ("fastest launches", fastest)):
        behind = []
        for (op, size), t in table.items():
            if "auto" not in t:
                continue
            rivals = {c: v for c, v in t.items() if not c.startswith("bound") and c != "auto"}
            if rivals:
                best_rival = min(rivals, key=rivals.get)
                behind.append((t["auto"] / rivals[best_rival],
                               f"{op} {size} B (fastest {best_rival}; auto chose {chosen.get((op, size), '?')})"))
        if behind:
            v, where = worst(behind)
            status.append((f"auto within 5 % of the fastest contender, every size ({label})",
                           f"worst {v:.3f} at {where}", "met" if v <= 1.05 else "**missed**"))
    # Turn by turn: auto's time over each rival's in the same turn, the
    # median over turns; the worst rival. A drifting machine moves both.
    behind = []
    for (op, size), t in turns.items():
        rivals = {c: v for c, v in t.items() if not c.startswith("bound") and c != "auto"}
        paired = worst_turn_ratio(t.get("auto", []), rivals)
        if paired:
            behind.append((paired[0], f"{op} {size} B (against {paired[1]}; auto chose {chosen.get((op, size), '?')})"))
    if behind:
        v, where = worst(behind)
        status.append(("auto within 5 % of the fastest contender, every size (turn by turn)",
                       f"worst {v:.3f} at {where}", "met" if v <= 1.05 else "**missed**"))
    # The choice itself: the contender auto chose, timed as that contender,
    # against the fastest. Auto's own row and its contender's differ only by
    # the machine's noise; this separates a wrong choice from that noise.
    # Turn by turn where the run interleaved its contenders.
    behind = []
    for (op, size), t in times.items():
        pick = chosen.get((op, size), "").split(":")[0]
        rivals = {c: v for c, v in t.items() if not c.startswith("bound") and c != "auto"}
        if pick not in t or not rivals:
            continue
        theirs = turns[(op, size)]
        paired = worst_turn_ratio(theirs.get(pick, []), {c: theirs.get(c, []) for c in rivals})
        if paired:
            behind.append((paired[0], f"{op} {size} B (auto chose {pick}; against {paired[1]}, turn by turn)"))
        else:
            best_rival = min(rivals, key=rivals.get)
            behind.append((t[pick] / rivals[best_rival], f"{op} {size} B (auto chose {pick}, fastest {best_rival})"))
    if behind:
        v, where = worst(behind)
        status.append(("auto's choice within 5 % of the fastest contender, every size (the chosen contender's times)",
                       f"worst {v:.3f} at {where}", "met" if v <= 1.05 else "**missed**"))
    out.append("| target | measured | status |")
    out.append("|---|---|---|")
    for what, measured, met in status:
        out.append(f"| {what} | {measured} | {met} |")
    out.append("")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shm")
    parser.add_argument("tcp", nargs="?")
    parser.add_argument("--load", default="")
    args = parser.parse_args()
    out = ["# The fixed cost of a small exchange\n",
           "Medians in microseconds; ratios within one run. "
           "X@persistent: X with persistent requests forced (the path before fresh posting).\n"]
    if args.load:
        out.append(f"Load average: {args.load}.\n")
    transport_section("shared memory", args.shm, out)
    if args.tcp:
        transport_section("TCP loopback (--mca btl tcp,self)", args.tcp, out)
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
