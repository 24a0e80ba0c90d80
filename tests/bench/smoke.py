#!/usr/bin/env python3
"""Smoke test of iso-bench: runs it (the command after `--`) and checks the
CSV it wrote: exact header, one row per expected (operation, neighborhood,
size, contender), measured rows with sane statistics and environment.

    smoke.py --csv FILE --mode collectives|setup|tune|halo [--np N] -- mpiexec -n 2 iso-bench ... --csv FILE

Mode halo (iso-bench halo, 3-D): one row per --halo-sizes x --halo-widths x
--halo-contenders, each measured, with the bytes a rank sends; with
--expect-wrong the run must fail, naming a wrong ghost cell, and its rows
be errors (the check of a broken exchange).
"""

import argparse
import csv
import os
import re
import subprocess
import sys

HEADER = ("operation,neighborhood,dims,neighbors,size_bytes,send_bytes,contender,chosen,status,note,"
          "median_us,min_us,max_us,launches,reps,reps_kept,outliers_removed,launch_medians_us,"
          "mpi_library,mpi_version,np,proc_dims,periodic,hostname,date,turn_medians_us")

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def check_measured(row, reps, launches, np, interleave=0):
    what = f"{row['operation']} {row['neighborhood']} {row['size_bytes']} {row['contender']}"
    check(row["status"] == "ok", f"{what}: status {row['status']} ({row['note']})")
    if row["status"] != "ok":
        return
    median, low, high = float(row["median_us"]), float(row["min_us"]), float(row["max_us"])
    check(0 < low <= median <= high, f"{what}: min/median/max {low}/{median}/{high} out of order")
    check(int(row["launches"]) == launches, f"{what}: {row['launches']} launches, expected {launches}")
    check(int(row["reps"]) == reps, f"{what}: reps {row['reps']}, expected {reps}")
    check(int(row["reps_kept"]) + int(row["outliers_removed"]) == reps * launches,
          f"{what}: kept + removed != reps x launches")
    check(len(row["launch_medians_us"].split(";")) == launches, f"{what}: launch medians {row['launch_medians_us']}")
    check(int(row["np"]) == np, f"{what}: np {row['np']}")
    # Interleaved: the median of each turn of `interleave` calls, every launch.
    turns = [t for t in row["turn_medians_us"].split(";") if t]
    expected_turns = launches * -(-reps // interleave) if interleave else 0
    check(len(turns) == expected_turns and all(float(t) > 0 for t in turns),
          f"{what}: {len(turns)} turn medians, expected {expected_turns}")
    check(row["mpi_library"] != "" and row["mpi_version"].count(".") == 1, f"{what}: MPI library/version missing")
    check(row["hostname"] != "" and row["date"].endswith("Z"), f"{what}: hostname/date missing")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--mode", choices=["collectives", "setup", "tune", "halo"], required=True)
    parser.add_argument("--halo-sizes", default="")
    parser.add_argument("--halo-widths", default="")
    parser.add_argument("--halo-contenders", default="")
    parser.add_argument("--expect-wrong", action="store_true")
    parser.add_argument("--np", type=int, default=2)
    parser.add_argument("--reps", type=int, required=True)
    parser.add_argument("--launches", type=int, required=True)
    parser.add_argument("--interleave", type=int, default=0, help="the run's iso-bench --interleave")
    parser.add_argument("--require", default="",
                        help="comma-separated contenders that must have rows too (mpi-persistent with MPI-4)")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if os.path.exists(args.csv):
        os.remove(args.csv)
    print("running:", " ".join(command), flush=True)
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=240)
    print(result.stdout)
    if args.expect_wrong:
        if result.returncode == 0 or "wrong halo" not in result.stdout or "ghost cell" not in result.stdout:
            print(f"FAILED: a broken exchange was not reported (exit code {result.returncode})")
            return 1
    elif result.returncode != 0:
        print(f"FAILED: iso-bench exited with {result.returncode}")
        return 1
    if not os.path.exists(args.csv):
        print(f"FAILED: {args.csv} was not written")
        return 1
    with open(args.csv, newline="") as handle:
        text = handle.read()
    header = text.splitlines()[0] if text else ""
    check(header == HEADER, f"header differs:\n  got      {header}\n  expected {HEADER}")
    with open(args.csv, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        check(None not in row and None not in row.values(), f"row with a wrong number of columns: {row}")
    keys = {(r["operation"], r["neighborhood"], r["size_bytes"], r["contender"]) for r in rows}
    check(len(keys) == len(rows), "duplicate rows")

    if args.mode == "collectives":
        contenders = ["linear", "torus", "direct", "auto", "mpi-create", "mpi-adjacent", "bound-torus",
                      "bound-direct"] + [c for c in args.require.split(",") if c]
        for size in ("8", "64"):
            for contender in contenders:
                matching = [r for r in rows if (r["operation"], r["neighborhood"], r["size_bytes"],
                                                r["contender"]) == ("alltoall", "moore-d2-r1", size, contender)]
                check(len(matching) == 1, f"no row for alltoall moore-d2-r1 {size} {contender}")
                for row in matching:
                    # The MPI library's own collectives may be skipped, saying why, where
                    # partners repeat and the library pairs repeated edges out of order.
                    if contender.startswith("mpi-") and row["status"] == "skipped":
                        check("repeated partners" in row["note"], f"{contender} skipped without the reason")
                        continue
                    check_measured(row, args.reps, args.launches, args.np, args.interleave)
                    check(int(row["neighbors"]) == 8 and int(row["dims"]) == 2, f"{contender}: s/d wrong")
                    check(int(row["send_bytes"]) == 8 * int(size), f"{contender}: send_bytes {row['send_bytes']}")
                    if contender == "auto":
                        # "torus", or "torus:p2" where it chose a port limit.
                        chosen = row["chosen"].split(":p")[0]
                        check(chosen in ("linear", "torus", "direct", "basis", "mpi"), f"auto chose {row['chosen']}")
        others = {r["contender"] for r in rows} - set(contenders) - {"mpi-persistent"}
        check(not others, f"unexpected contenders {others}")
        # The memory rule: a point that cannot fit is reported, not run.
        skipped = [r for r in rows if r["status"] == "skipped"]
        check(all("max-memory" in r["note"] or "repeated partners" in r["note"] for r in skipped),
              "a skipped row does not say why")
    elif args.mode == "tune":
        # tune's pick per launch, always with its port count, and its trials.
        pick = re.compile(r"(linear|torus|direct|basis|mpi):p[0-9]+")
        tuned = [r for r in rows if r["contender"] == "tune"]
        check(len(tuned) == 2, f"{len(tuned)} tune rows, expected 2 (sizes 8, 64)")
        for row in tuned:
            check_measured(row, args.reps, args.launches, args.np)
            picks = row["chosen"].split(";")
            check(all(pick.fullmatch(p) for p in picks) and len(picks) in (1, args.launches),
                  f"tune chose {row['chosen']!r}")
            check(row["note"].count("launch ") == args.launches and "torus:p1 " in row["note"],
                  f"tune note without every launch's trials: {row['note']!r}")
        linear = [r for r in rows if r["contender"] == "linear"]
        check(len(linear) == 2 and all(r["chosen"] == "" for r in linear), "linear rows missing or with a pick")
    elif args.mode == "halo":
        wanted = [(n, w, c) for n in args.halo_sizes.split(",") for w in args.halo_widths.split(",")
                  for c in args.halo_contenders.split(",")]
        check(len(rows) == len(wanted), f"{len(rows)} halo rows, expected {len(wanted)}")
        for n, w, c in wanted:
            name = f"halo-d3-n{n}-w{w}"
            matching = [r for r in rows if (r["operation"], r["neighborhood"], r["contender"]) == ("halo", name, c)]
            check(len(matching) == 1, f"no row for {name} {c}")
            for row in matching:
                if args.expect_wrong:
                    check(row["status"] == "error" and "ghost cell" in row["note"], f"{name} {c}: {row['status']}")
                    continue
                check_measured(row, args.reps, args.launches, args.np)
                side, width = int(n), int(w)
                # The ghost region of the box stencil: every block a rank sends.
                check(int(row["send_bytes"]) == 8 * ((side + 2 * width) ** 3 - side ** 3),
                      f"{name} {c}: send_bytes {row['send_bytes']}")
                check(int(row["size_bytes"]) == 8 * width * side * side, f"{name} {c}: size_bytes {row['size_bytes']}")
                reach = -(-width // side)
                check(int(row["neighbors"]) == (2 * reach + 1) ** 3 - 1, f"{name} {c}: {row['neighbors']} directions")
                if c == "auto":
                    check(row["chosen"].split(":p")[0] in ("linear", "torus", "direct", "basis", "mpi"),
                          f"auto chose {row['chosen']}")
    else:
        names = ["iso-neighborhood", "iso-alltoall-init", "iso-allgather-init", "iso-create+init", "mpi-create",
                 "mpi-adjacent", "iso-create+init-cold"]
        for name in names:
            matching = [r for r in rows if r["contender"] == name and r["neighborhood"] == "moore-d2-r1"]
            check(len(matching) == 1 and matching[0]["operation"] == "setup", f"no setup row for {name}")
            for row in matching:
                check_measured(row, args.reps, args.launches, args.np)
        check(len(rows) == len(names), f"{len(rows)} setup rows, expected {len(names)}")

    for message in failures:
        print("FAILED:", message)
    print(f"{len(rows)} rows checked: {'ok' if not failures else f'{len(failures)} problems'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
