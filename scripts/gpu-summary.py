#!/usr/bin/env python3
"""Writes OUTDIR/summary.md and summary.json for scripts/gpu-run.sh from its
steps.tsv (name, exit code, seconds), versions.txt and the benchmark CSVs.
The packed halo exchange's phases (isostencil-bench-halo --phases) also get
a table of their own, "halo_staging" in the JSON: per row the exchange time,
its phases, and the staging through host memory with its share."""
import csv
import json
import pathlib
import sys

out = pathlib.Path(sys.argv[1])
steps = []
for line in (out / "steps.tsv").read_text().splitlines():
    name, rc, sec = line.split("\t")
    rc = int(rc)
    status = {0: "ok", 77: "skipped"}.get(rc, "timed out" if rc in (124, 137) else "failed")
    steps.append({"step": name, "exit": rc, "seconds": int(sec), "status": status})
versions = dict(l.split("=", 1) for l in (out / "versions.txt").read_text().splitlines() if "=" in l)
results = {}
for name in ("perf-jacobi7", "perf-halo-packed"):
    p = out / f"{name}.csv"
    if p.exists():
        results[name] = list(csv.DictReader(p.open()))


def num(text):
    return float(text) if text not in (None, "") else None


def percent(share):
    return "-" if share is None else f"{100 * share:.1f} %"


# Rows with phases measured; older CSVs (no phase columns) give none.
staging = [{"case": r["case"], "local_n": int(r["local_n"]), "contender": r["contender"],
            "halo_us": num(r.get("halo_us")), "exchange_us": num(r["phase_exchange_us"]),
            **{k: num(r[k]) for k in ("pack_us", "to_host_us", "mpi_us", "to_device_us", "unpack_us", "staging_us")},
            "staging_share": num(r["staging_share"]), "staging_path": r["staging"]}
           for r in results.get("perf-halo-packed", []) if r.get("phase_exchange_us")]
summary = {"versions": versions, "steps": steps, "results": results, "halo_staging": staging,
           "failed": [s["step"] for s in steps if s["status"] in ("failed", "timed out")],
           "skipped": [s["step"] for s in steps if s["status"] == "skipped"]}
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

md = ["# GPU run", "", "| | |", "|---|---|"]
md += [f"| {k} | {v} |" for k, v in versions.items()]
md += ["", "| step | status | exit | seconds |", "|---|---|---|---|"]
md += [f"| {s['step']} | {s['status']} | {s['exit']} | {s['seconds']} |" for s in steps]
if "perf-halo-packed" in results:
    md += ["", "## Staging through host memory (perf-halo-packed, --phases)", ""]
    if staging:
        md += ["Microseconds per exchange, one repetition with fences between phases (the median by exchange "
               "time); staging = to host + to device, its share of that exchange.", "",
               "| case | n | contender | exchange | pack | to host | MPI | to device | unpack | staging | share "
               "| staging path |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        md += [f"| {r['case']} | {r['local_n']} | {r['contender']} | {r['exchange_us']:.2f} | {r['pack_us']:.2f} "
               f"| {r['to_host_us']:.2f} | {r['mpi_us']:.2f} | {r['to_device_us']:.2f} | {r['unpack_us']:.2f} "
               f"| {r['staging_us']:.2f} | {percent(r['staging_share'])} | {r['staging_path']} |"
               for r in staging]
    else:
        md += ["Not measured: the CSV has no phase columns (isostencil-bench-halo without --phases)."]
for name, rows in results.items():
    md += ["", f"## {name}", ""]
    if rows:
        cols = list(rows[0].keys())
        md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        md += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rows]
md += ["", "Failed: " + (", ".join(summary["failed"]) or "none"),
       "Skipped: " + (", ".join(summary["skipped"]) or "none"), ""]
(out / "summary.md").write_text("\n".join(md))
