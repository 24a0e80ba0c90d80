#!/usr/bin/env python3
"""Runs isostencil-bench-halo (the command after --) and checks the phase
columns of its CSV (--phases, docs/benchmarks.md): present; filled for the
packed contenders alone; each phase >= 0 and together at most the exchange
they were measured in; staging = to host + to device; staging share =
staging / exchange, in [0, 1]; and what --expect says of the staging:

  host    no copies (host memory): 0, "none: host memory space"
  staged  copies measured (simulated device memory, 2+ ranks): > 0, MPI > 0
  local   staged, but every block stays on the rank (1 rank): 0, no MPI
  off     run without --phases: every phase column empty

The CSV prints microseconds with 6 decimals, so sums and ratios of printed
values are compared within that rounding (half a unit per value), no more."""
import argparse
import csv
import os
import subprocess
import sys

PHASES = ["pack_us", "to_host_us", "mpi_us", "to_device_us", "unpack_us"]
COLUMNS = ["phase_exchange_us"] + PHASES + ["staging_us", "staging_share", "staging"]
HALF = 0.5e-6  # half a unit of the last printed digit


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--expect", required=True, choices=["host", "staged", "local", "off"])
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if os.path.exists(args.csv):
        os.remove(args.csv)
    run = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(run.stdout)
    if run.returncode != 0:
        return fail(f"the benchmark exited with {run.returncode}")
    with open(args.csv, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            return fail(f"CSV lacks the columns {missing}")
        rows = list(reader)
    if not rows:
        return fail("CSV has no rows")
    packed = 0
    for row in rows:
        where = f"{row['case']} n={row['local_n']} {row['contender']}"
        if row["status"] != "ok":
            return fail(f"{where}: status {row['status']}")
        timed = args.expect != "off" and row["contender"].startswith("packed-")
        if not timed:
            filled = [c for c in COLUMNS if row[c] != ""]
            if filled:
                return fail(f"{where}: no phases were timed, yet {filled} are filled")
            continue
        packed += 1
        error = check_packed(row, args.expect)
        if error:
            return fail(f"{where}: {error}")
    if args.expect != "off" and packed == 0:
        return fail("no packed contender in the CSV")
    print(f"halo_phases: {len(rows)} rows, {packed} with phases, all consistent ({args.expect})")
    return 0


def check_packed(row, expect):
    try:
        v = {c: float(row[c]) for c in COLUMNS if c != "staging"}
    except ValueError as e:
        return f"a phase column is not a number: {e}"
    exchange = v["phase_exchange_us"]
    if exchange <= 0 or v["pack_us"] <= 0:
        return f"exchange {exchange} us and pack {v['pack_us']} us must have taken time"
    if any(v[c] < 0 for c in COLUMNS if c != "staging"):
        return f"a negative figure: {v}"
    total = sum(v[c] for c in PHASES)
    if total > exchange + HALF * (len(PHASES) + 1):
        return f"the phases sum to {total} us, more than their exchange, {exchange} us"
    staging = v["to_host_us"] + v["to_device_us"]
    if abs(v["staging_us"] - staging) > 3 * HALF:
        return f"staging {v['staging_us']} us is not to host + to device ({staging} us)"
    share = v["staging_share"]
    if not 0 <= share <= 1:
        return f"staging share {share} outside [0, 1]"
    # share = staging / exchange, each printed rounded
    if abs(share - v["staging_us"] / exchange) > HALF + HALF * (1 + share) / exchange:
        return f"staging share {share} is not staging / exchange ({v['staging_us']} / {exchange})"
    label = row["staging"]
    if expect in ("host", "local"):
        want = "none: host memory space" if expect == "host" else "none: no block leaves the rank"
        if label != want:
            return f"staging says \"{label}\", expected \"{want}\""
        if v["to_host_us"] != 0 or v["to_device_us"] != 0 or share != 0:
            return f"no staging, yet copies of {v['to_host_us']} and {v['to_device_us']} us, share {share}"
        if expect == "local" and v["mpi_us"] != 0:
            return f"no block leaves the rank, yet {v['mpi_us']} us in MPI"
    else:
        if label != "host-staged":
            return f"staging says \"{label}\", expected \"host-staged\""
        if v["to_host_us"] <= 0 or v["to_device_us"] <= 0 or share <= 0 or v["mpi_us"] <= 0:
            return f"staged, yet to host {v['to_host_us']}, to device {v['to_device_us']}, MPI {v['mpi_us']} us"
    return None


def fail(message):
    print(f"halo_phases: FAIL: {message}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
