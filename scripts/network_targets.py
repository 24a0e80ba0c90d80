#!/usr/bin/env python3
"""The network targets from one scripts/bench_network.sh run, as a markdown table.

Reads predict.json, collectives.csv and halo.csv from --dir. Every target is
a ratio from the same run; "met" is decided here, not by hand:
  alltoall auto >= 6x mpi-adjacent at <= 64 B, >= 2x at 8 KiB;
  allgather auto >= 6x mpi-adjacent at every size run;
  27-point halo at 16^3: auto >= 3x naive and >= 3x mpi-neighbor;
  plan --predict within 25 % of the measured time, linear/torus/direct/basis
  at 8 B, 512 B and 8 KiB (alltoall);
  auto within 5 % of the fastest contender at every size run (alltoall).
"""
import argparse
import csv
import json
import os
import sys


def read_rows(path):
    with open(path, newline="") as handle:
        return [row for row in csv.DictReader(handle) if row.get("status", "ok") == "ok"]


def size_label(size):
    size = int(size)
    return f"{size // 1024} KiB" if size >= 1024 and size % 1024 == 0 else f"{size} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", required=True)
    parser.add_argument("--transport", default="tcp")
    args = parser.parse_args()

    collectives = read_rows(os.path.join(args.dir, "collectives.csv"))
    times = {}  # (operation, size, contender) -> median us
    chosen = {}
    for row in collectives:
        key = (row["operation"], int(row["size_bytes"]), row["contender"])
        times[key] = float(row["median_us"])
        if row["contender"] == "auto":
            chosen[key[:2]] = row.get("chosen", "")
    sizes = sorted({key[1] for key in times})
    lines = []
    missed = 0

    def target(text, value, ok, detail=""):
        nonlocal missed
        missed += 0 if ok else 1
        lines.append(f"| {text} | {value} | {'met' if ok else 'missed'} | {detail} |")

    def ratio(operation, size, baseline, contender="auto"):
        a, b = times.get((operation, size, contender)), times.get((operation, size, baseline))
        return None if a is None or b is None or a <= 0 else b / a

    for operation, small, large in (("alltoall", 6.0, 2.0), ("allgather", 6.0, 6.0)):
        for size in sizes:
            r = ratio(operation, size, "mpi-adjacent")
            if r is None:
                continue
            need = small if size <= 64 else large if size == 8192 or operation == "allgather" else None
            if need is None:
                continue
            target(f"{operation} auto >= {need:g}x MPI_Neighbor_{operation} at {size_label(size)}", f"{r:.2f}x",
                   r >= need, f"auto -> {chosen.get((operation, size), '?')}; "
                   f"{times[(operation, size, 'auto')]:.1f} vs {times[(operation, size, 'mpi-adjacent')]:.1f} us")

    for size in sizes:
        contenders = {c: t for (o, s, c), t in times.items() if o == "alltoall" and s == size and c != "auto"}
        if not contenders or ("alltoall", size, "auto") not in times:
            continue
        best = min(contenders, key=contenders.get)
        excess = times[("alltoall", size, "auto")] / contenders[best]
        target(f"alltoall auto within 5 % of the fastest at {size_label(size)}", f"{excess:.3f}", excess <= 1.05,
               f"auto -> {chosen.get(('alltoall', size), '?')}, fastest {best}")

    halo_path = os.path.join(args.dir, "halo.csv")
    if os.path.exists(halo_path):
        halo = {row["contender"]: float(row["halo_us"]) for row in read_rows(halo_path)
                if row["case"] == "jacobi27" and row["local_n"] == "16"}
        if "auto" in halo:
            for baseline in ("naive", "mpi-neighbor"):
                if baseline in halo:
                    r = halo[baseline] / halo["auto"]
                    target(f"27-point halo at 16^3 >= 3x {baseline}", f"{r:.2f}x", r >= 3.0,
                           f"{halo['auto']:.1f} vs {halo[baseline]:.1f} us")

    predict_path = os.path.join(args.dir, "predict.json")
    if os.path.exists(predict_path):
        predictions = json.load(open(predict_path))["predictions"]
        for size_text, by_algorithm in sorted(predictions.items(), key=lambda item: int(item[0])):
            size = int(size_text)
            for algorithm in ("linear", "torus", "direct", "basis"):
                entry = by_algorithm.get(algorithm, {}).get("alltoall")
                measured = times.get(("alltoall", size, algorithm))
                if not entry or measured is None or "predicted_seconds" not in entry:
                    continue
                quotient = entry["predicted_seconds"] * 1e6 / measured
                target(f"plan --predict within 25 %: {algorithm} at {size_label(size)}", f"{quotient:.2f}",
                       0.75 <= quotient <= 1.25,
                       f"{entry['predicted_seconds'] * 1e6:.1f} predicted vs {measured:.1f} us measured")

    where = "2 hosts (network namespaces), 1 rank each" if args.transport == "hosts" else "TCP loopback, 2 ranks"
    print(f"## Network targets: {where}, 3-D Moore r=1\n")
    print("| target | measured | | detail |")
    print("|---|---|---|---|")
    print("\n".join(lines))
    print(f"\n{len(lines) - missed} of {len(lines)} met.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
