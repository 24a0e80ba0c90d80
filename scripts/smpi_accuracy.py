#!/usr/bin/env python3
"""Simulated against real: iso-bench's CSVs from scripts/smpi.sh accuracy
(DIR/real-T-N.csv, DIR/sim-T-N.csv for transport T at N ranks), joined on
(operation, neighborhood, size, contender). Prints one row a point, writes
them to -o, and exits 1 when a point's simulated median is off the real
one by more than --tolerance (relative), or when a real point has no
simulated twin (docs/simulating.md#calibration).

  smpi_accuracy.py [--tolerance 0.25] [-o accuracy.csv] DIR
"""
import argparse
import csv
import glob
import os
import re
import sys


def rows(path):
    with open(path, newline="") as f:
        return {(r["operation"], r["neighborhood"], int(r["size_bytes"]), r["contender"]): r
                for r in csv.DictReader(f) if r["status"] == "ok"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("-o", "--output")
    a = ap.parse_args()
    out, bad, missing = [], 0, 0
    reals = sorted(glob.glob(os.path.join(a.dir, "real-*-*.csv")))
    if not reals:
        sys.exit(f"smpi_accuracy: no real-*.csv in {a.dir}")
    for real_path in reals:
        transport, ranks = re.match(r"real-(\w+)-(\d+)\.csv", os.path.basename(real_path)).groups()
        real = rows(real_path)
        sim_path = os.path.join(a.dir, f"sim-{transport}-{ranks}.csv")
        sim = rows(sim_path) if os.path.exists(sim_path) else {}
        for key, r in sorted(real.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][3])):
            real_us = float(r["median_us"])
            if key not in sim:
                print(f"smpi_accuracy: {transport} {ranks} ranks {key}: no simulated point", file=sys.stderr)
                bad += 1
                missing += 1
                continue
            sim_us = float(sim[key]["median_us"])
            error = sim_us / real_us - 1
            ok = abs(error) <= a.tolerance
            bad += not ok
            out.append(dict(transport=transport, ranks=ranks, operation=key[0], neighborhood=key[1],
                            size_bytes=key[2], contender=key[3], real_us=f"{real_us:.3f}",
                            sim_us=f"{sim_us:.3f}", error=f"{error:+.3f}", within=int(ok)))
    print(f"{'transport':>9} {'ranks':>5} {'size':>6} {'contender':>9} {'real us':>9} {'sim us':>9} {'error':>7}")
    for r in out:
        print(f"{r['transport']:>9} {r['ranks']:>5} {r['size_bytes']:>6} {r['contender']:>9} {r['real_us']:>9} "
              f"{r['sim_us']:>9} {float(r['error']) * 100:>6.1f}%{'' if r['within'] else '  OUT'}")
    if a.output and out:
        with open(a.output, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out[0]))
            w.writeheader()
            w.writerows(out)
    within = sum(r["within"] for r in out)
    print(f"smpi_accuracy: {within} of {len(out) + missing} points within "
          f"{a.tolerance * 100:.0f} %")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
