#!/usr/bin/env python3
"""`isostencil plan --predict` against the simulation: for every point of the
paper mode's CSVs (scripts/smpi.sh paper), the time the cost model derived
from the run's platform and layout (scripts/smpi_model.py) predicts, beside
the simulated one (docs/simulating.md#a-cost-model-from-a-platform).

  smpi_predict.py CSV... [--isostencil build/apps/isostencil] [--platforms DIR]
                         [-o points.csv] [--auto-out auto.csv] [--tolerance 0.25]

Points: the fixed algorithms (linear, torus, direct, basis) of alltoall and
allgather on Moore, octant and shales neighborhoods; alltoallw rows are left out (plan prices
one block size). Prints a table a run, the fraction within the tolerance,
and auto's offline check: the algorithm plan picks under that model, its
simulated time against the simulated fastest of the run's contenders.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import smpi_model  # noqa: E402

FIXED = ("linear", "torus", "direct", "basis")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("--isostencil", default=os.environ.get("ISOSTENCIL", "build/apps/isostencil"))
    ap.add_argument("--platforms", default="tests/smpi/platforms")
    ap.add_argument("-o", "--output")
    ap.add_argument("--auto-out")
    ap.add_argument("--tolerance", type=float, default=0.25)
    ap.add_argument("--pattern", default="all", choices=("all", "faces"))
    ap.add_argument("--form", default="classes", choices=("classes", "one"),
                    help="smpi_model.py's --form: the model's form (one: as before 2026-12-06 06:30)")
    a = ap.parse_args()
    if not os.access(a.isostencil, os.X_OK):
        sys.exit(f"smpi_predict: {a.isostencil} not found: build the isostencil target (or set --isostencil)")

    # One group a simulated run: platform, ranks, grid, neighborhood.
    groups = defaultdict(list)
    for path in a.csv:
        for r in csv.DictReader(open(path)):
            if r["status"] != "ok" or r["operation"] not in ("alltoall", "allgather"):
                continue
            if not r["neighborhood"].split("-")[0] in ("moore", "octant", "shales"):
                continue
            groups[(r["platform"], int(r["np"]), r["proc_dims"], r["neighborhood"])].append((path, r))

    points, autos = [], []
    for (platform, n, dims, hood), rows in sorted(groups.items()):
        # iso-bench's names: moore-d3-r1, octant-d3-r3, shales-d3-3-7.
        kind, d, *radii = hood.split("-")
        spec = f"{kind}:{d[1:]}:{','.join(x.lstrip('r') for x in radii)}"
        d, offsets = smpi_model.offsets_of(spec)
        rad = max(max(abs(x) for x in o) for o in offsets)
        procs = [int(x) for x in dims.split("x")]
        p = smpi_model.Platform(os.path.join(a.platforms, platform + ".xml"))
        model, _, _, _ = smpi_model.derive(p, procs, offsets, a.pattern, a.form)
        sizes = sorted({int(r["size_bytes"]) for _, r in rows})
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            for k, v in model.items():
                f.write(f"{k} = {v!r}\n")
            mfile = f.name
        try:
            hood_args = ([f"--moore={d}:{rad}"] if kind == "moore" else
                         ["--offsets=" + ";".join(",".join(map(str, o)) for o in offsets)])
            out = subprocess.run([a.isostencil, "plan", *hood_args, "--procs", ",".join(map(str, procs)),
                                  "--predict", "--model", mfile, "--bytes", ",".join(map(str, sizes)), "--json"],
                                 check=True, capture_output=True, text=True).stdout
        finally:
            os.unlink(mfile)
        pred = json.loads(out)["predictions"]
        sim = {}  # (op, size, contender) -> us (the last CSV naming a point wins)
        for _, r in rows:
            sim[(r["operation"], int(r["size_bytes"]), r["contender"])] = (float(r["median_us"]), r.get("chosen", ""))
        for (op, size, cont), (us, _) in sorted(sim.items()):
            if cont not in FIXED:
                continue
            pu = pred[str(size)][cont][op]["predicted_seconds"] * 1e6
            points.append(dict(platform=platform, np=n, proc_dims=dims, neighborhood=hood, operation=op,
                               size_bytes=size, contender=cont, simulated_us=us, predicted_us=round(pu, 4),
                               ratio=round(pu / us, 4)))
        for op in ("alltoall", "allgather"):
            for size in sizes:
                ran = {c: sim[(op, size, c)][0] for c in FIXED if (op, size, c) in sim}
                if len(ran) < 2:
                    continue
                pick = pred[str(size)]["auto"][op]
                ports = pred[str(size)]["auto_ports"][op]
                best = min(ran, key=ran.get)
                # basis's schedule is direct's on a radius-1 Moore neighborhood.
                ran_pick = pick if pick in ran else ("direct" if pick == "basis" and kind == "moore" and rad == 1
                                                     and "direct" in ran else None)
                row = dict(platform=platform, np=n, proc_dims=dims, neighborhood=hood, operation=op, size_bytes=size,
                           auto=pick + (f":p{ports}" if ports else ""), fastest=best, fastest_us=ran[best],
                           auto_simulated_us=ran[ran_pick] if ran_pick else "",
                           ratio=round(ran[ran_pick] / ran[best], 4) if ran_pick else "")
                sim_auto = sim.get((op, size, "auto"))
                if sim_auto:
                    row.update(simulated_auto_us=sim_auto[0], simulated_auto_chose=sim_auto[1],
                               simulated_auto_ratio=round(sim_auto[0] / ran[best], 4))
                autos.append(row)

    tol = a.tolerance
    print(f"{'platform':24} {'np':>5} {'grid':>8} {'nbhd':12} {'op':9} {'size':>5} {'alg':7} "
          f"{'sim us':>9} {'pred us':>9} {'ratio':>6}")
    for q in points:
        mark = "" if abs(q["ratio"] - 1) <= tol else "  *"
        print(f"{q['platform']:24} {q['np']:5} {q['proc_dims']:>8} {q['neighborhood']:12} {q['operation']:9} "
              f"{q['size_bytes']:5} {q['contender']:7} {q['simulated_us']:9.2f} {q['predicted_us']:9.2f} "
              f"{q['ratio']:6.2f}{mark}")
    within = sum(abs(q["ratio"] - 1) <= tol for q in points)
    print(f"\nwithin {tol:.0%}: {within} of {len(points)} points ({within / max(len(points), 1):.0%})")
    by = defaultdict(lambda: [0, 0])
    for q in points:
        by[q["platform"]][1] += 1
        by[q["platform"]][0] += abs(q["ratio"] - 1) <= tol
    for k, (w, t) in sorted(by.items()):
        print(f"  {k}: {w} of {t}")
    if autos:
        ok = [x for x in autos if x["ratio"] != ""]
        good = sum(x["ratio"] <= 1.10 for x in ok)
        print(f"\nauto offline (plan's pick under the platform's model, its simulated time / the simulated fastest): "
              f"within 10 % at {good} of {len(ok)} points")
        for x in autos:
            flag = "" if x["ratio"] != "" and x["ratio"] <= 1.10 else "  *"
            print(f"  {x['platform']:24} {x['np']:5} {x['neighborhood']:12} {x['operation']:9} {x['size_bytes']:5} "
                  f"auto {x['auto']:10} fastest {x['fastest']:7} {x['ratio']}{flag}"
                  + (f"   in the simulation: {x['simulated_auto_chose']} {x['simulated_auto_ratio']}"
                     if "simulated_auto_us" in x else ""))
        sims = [x for x in autos if "simulated_auto_ratio" in x]
        if sims:
            print(f"auto in the simulation: within 10 % at {sum(x['simulated_auto_ratio'] <= 1.10 for x in sims)} "
                  f"of {len(sims)} points")
    for path, rows in ((a.output, points), (a.auto_out, autos)):
        if path and rows:
            keys = list(dict.fromkeys(k for r in rows for k in r))
            with open(path, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=keys)
                w.writeheader()
                w.writerows(rows)


if __name__ == "__main__":
    main()
