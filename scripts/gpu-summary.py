#!/usr/bin/env python3
"""Writes OUTDIR/summary.md and summary.json for scripts/gpu-run.sh from its
steps.tsv (name, exit code, seconds), versions.txt and the benchmark CSVs."""
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
summary = {"versions": versions, "steps": steps, "results": results,
           "failed": [s["step"] for s in steps if s["status"] in ("failed", "timed out")],
           "skipped": [s["step"] for s in steps if s["status"] == "skipped"]}
(out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")

md = ["# GPU run", "", "| | |", "|---|---|"]
md += [f"| {k} | {v} |" for k, v in versions.items()]
md += ["", "| step | status | exit | seconds |", "|---|---|---|---|"]
md += [f"| {s['step']} | {s['status']} | {s['exit']} | {s['seconds']} |" for s in steps]
for name, rows in results.items():
    md += ["", f"## {name}", ""]
    if rows:
        cols = list(rows[0].keys())
        md += ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        md += ["| " + " | ".join(r[c] for c in cols) + " |" for r in rows]
md += ["", "Failed: " + (", ".join(summary["failed"]) or "none"),
       "Skipped: " + (", ".join(summary["skipped"]) or "none"), ""]
(out / "summary.md").write_text("\n".join(md))
