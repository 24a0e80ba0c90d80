#!/usr/bin/env python3
"""The numbers behind the paper's qualitative claims, from the paper mode's
CSVs (scripts/smpi.sh paper; docs/simulating.md#the-papers-claims).

  smpi_claims.py CSV...

For every simulated run (platform, ranks, neighborhood, operation) and
block size: the gain of combining, linear's time over the faster of torus
and direct, beside the paper's ratio s / 2d (s neighbors, d dimensions);
direct's time over torus's; and where a run has both alltoall and
allgather, allgather's gain over alltoall's. A point present in several
CSVs (the simulation is deterministic) counts once.
"""
import csv
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    t = {}  # (platform, np, hood, op, size) -> {contender: us}
    info = {}
    for path in sys.argv[1:]:
        for r in csv.DictReader(open(path)):
            if r["status"] != "ok" or r["operation"] == "alltoallw":
                continue
            key = (r["platform"], int(r["np"]), r["neighborhood"], r["operation"], int(r["size_bytes"]))
            t.setdefault(key, {})[r["contender"]] = float(r["median_us"])
            info[key[:3]] = (int(r["neighbors"]), int(r["dims"]), r["proc_dims"])
    gains = {}
    print(f"{'platform':24} {'np':>5} {'neighborhood':16} {'op':9} {'size':>5} {'linear':>8} {'torus':>8} "
          f"{'direct':>8} {'gain':>6} {'s/2d':>6} {'dir/tor':>7}")
    for key in sorted(t):
        c = t[key]
        if not {"linear", "torus", "direct"} <= c.keys():
            continue
        s, d, _ = info[key[:3]]
        gain = c["linear"] / min(c["torus"], c["direct"])
        gains[key] = gain
        print(f"{key[0]:24} {key[1]:5} {key[2]:16} {key[3]:9} {key[4]:5} {c['linear']:8.2f} {c['torus']:8.2f} "
              f"{c['direct']:8.2f} {gain:6.2f} {s / (2 * d):6.2f} {c['direct'] / c['torus']:7.2f}")
    print("\ngain by block size (linear / best combining), smallest first:")
    runs = defaultdict(list)
    for key, g in sorted(gains.items()):
        runs[key[:4]].append((key[4], g))
    for run, pts in sorted(runs.items()):
        seq = " -> ".join(f"{g:.2f} ({size} B)" for size, g in pts)
        shrinks = all(b[1] <= a[1] * 1.05 for a, b in zip(pts, pts[1:]))
        print(f"  {run[0]:24} {run[1]:5} {run[2]:16} {run[3]:9} {seq}{'' if shrinks else '   (grows somewhere)'}")
    print("\nallgather's gain over alltoall's:")
    for key, g in sorted(gains.items()):
        if key[3] != "allgather":
            continue
        other = gains.get(key[:3] + ("alltoall", key[4]))
        if other:
            print(f"  {key[0]:24} {key[1]:5} {key[2]:16} {key[4]:5} B: allgather {g:.2f}, alltoall {other:.2f}, "
                  f"ratio {g / other:.2f}")


if __name__ == "__main__":
    main()
