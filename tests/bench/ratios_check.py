#!/usr/bin/env python3
"""scripts/plot_bench.py's ratio tables (bench_autotune.sh's verdicts) on
hand-made iso-bench CSVs: with turn medians (iso-bench --interleave) the
ratios are taken turn by turn; without, medians of launch medians.

The CSV's launch medians say B is faster (the machine slowed down while A's
launches ran); its turns, taken side by side, say A is, by 10 % in every
turn. A paired table must name A the fastest and B at 1.10; the same rows
without turns name B. Usage: ratios_check.py scripts/plot_bench.py"""

import csv
import importlib.util
import os
import sys
import tempfile

HEADER = ["operation", "neighborhood", "dims", "neighbors", "size_bytes", "send_bytes", "contender", "chosen",
          "status", "note", "median_us", "min_us", "max_us", "launches", "reps", "reps_kept", "outliers_removed",
          "launch_medians_us", "mpi_library", "mpi_version", "np", "proc_dims", "periodic", "hostname", "date",
          "turn_medians_us"]


def row(contender, launch_medians, turns, chosen=""):
    return {"operation": "alltoall", "neighborhood": "moore-d3-r1", "dims": "3", "neighbors": "26",
            "size_bytes": "4096", "send_bytes": str(26 * 4096), "contender": contender, "chosen": chosen,
            "status": "ok", "note": "", "median_us": "", "min_us": "", "max_us": "", "launches": "3",
            "reps": "20", "reps_kept": "60", "outliers_removed": "0",
            "launch_medians_us": ";".join(f"{x:.4f}" for x in launch_medians), "mpi_library": "test",
            "mpi_version": "3.1", "np": "2", "proc_dims": "2x1x1", "periodic": "1,1,1", "hostname": "h",
            "date": "2026-12-06T00:00:00Z", "turn_medians_us": ";".join(f"{x:.4f}" for x in turns)}


def main():
    spec = importlib.util.spec_from_file_location("plot_bench", sys.argv[1])
    plot_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plot_bench)
    # The machine's speed drifts by 3x from turn to turn.
    drift = [10.0, 12.0, 30.0, 31.0, 11.0, 29.0]
    rows = [row("A", [30.0, 31.0, 29.0], drift),
            row("B", [11.0, 12.0, 13.0], [1.10 * t for t in drift]),
            row("auto", [30.5, 31.0, 29.5], [1.02 * t for t in drift], chosen="A"),
            row("bound-torus", [1.0, 1.0, 1.0], [0.1 * t for t in drift])]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for paired in (True, False):
            path = os.path.join(tmp, f"autotune-{'paired' if paired else 'medians'}.csv")
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=HEADER)
                writer.writeheader()
                for r in rows:
                    writer.writerow(r if paired else {**r, "turn_medians_us": ""})
            groups = plot_bench.groups(plot_bench.read_rows([path]), setup=False)
            ratios, fastest, pairs = plot_bench.ratio_tables(groups[("alltoall", "moore-d3-r1")])
            got = (fastest[4096]["contender"], round(ratios["B"][4096], 3), round(ratios["auto"][4096], 3),
                   pairs[4096], "bound-torus" in ratios)
            want = ("A", 1.1, 1.02, True, False) if paired else ("B", 1.0, round(30.5 / 12.0, 3), False, False)
            print(f"{'paired' if paired else 'medians'}: fastest, B, auto, paired, bound listed = {got}")
            if got != want:
                failures.append(f"{'paired' if paired else 'medians'}: got {got}, expected {want}")
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
