#!/usr/bin/env python3
"""scripts/gpu-summary.py on sample run folders: the staging through host
memory of the packed halo exchange (isostencil-bench-halo --phases) reaches
summary.md and summary.json.

1. A hand-made perf-halo-packed.csv: a staged row (staging 3 + 1 of an
   exchange of 16 us: share 0.25), a host row (no staging), a datatype row
   (no phases): the table shows "25.0 %" and "0.0 %" with their paths, the
   JSON's halo_staging holds exactly the two phase rows with those values.
2. An older CSV without phase columns: "Not measured", halo_staging empty.
3. With --bench-csv, a CSV the benchmark wrote: each row with phases appears
   in halo_staging with the CSV's share, and in the table."""
import argparse
import csv
import json
import pathlib
import subprocess
import sys
import tempfile

COLUMNS = ["case", "local_n", "contender", "status", "halo_us", "phase_exchange_us", "pack_us", "to_host_us",
           "mpi_us", "to_device_us", "unpack_us", "staging_us", "staging_share", "staging"]


def summarize(script, folder, rows, columns):
    folder.mkdir()
    (folder / "steps.tsv").write_text("perf-halo-packed\t0\t12\nperf-jacobi7\t77\t0\n")
    (folder / "versions.txt").write_text("gpu=sample\ntotal_s=12\n")
    with open(folder / "perf-halo-packed.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    subprocess.run([sys.executable, script, str(folder)], check=True)
    return (folder / "summary.md").read_text(), json.loads((folder / "summary.json").read_text())


def staging_section(md):
    """The lines of summary.md's staging section."""
    lines = md.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith("## Staging through host memory")), None)
    expect(start is not None, f"summary.md has no staging section:\n{md}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def expect(condition, message):
    if not condition:
        print(f"summary_check: FAIL: {message}", file=sys.stderr)
        sys.exit(1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--bench-csv")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        blank = dict.fromkeys(COLUMNS[5:], "")
        rows = [
            {"case": "jacobi27", "local_n": "64", "contender": "packed-torus", "status": "ok", "halo_us": "15",
             "phase_exchange_us": "16", "pack_us": "2", "to_host_us": "3", "mpi_us": "8", "to_device_us": "1",
             "unpack_us": "1.5", "staging_us": "4", "staging_share": "0.25", "staging": "host-staged"},
            {"case": "jacobi27", "local_n": "128", "contender": "packed-auto", "status": "ok", "halo_us": "40",
             "phase_exchange_us": "41", "pack_us": "5", "to_host_us": "0", "mpi_us": "30", "to_device_us": "0",
             "unpack_us": "4", "staging_us": "0", "staging_share": "0", "staging": "none: host memory space"},
            {"case": "jacobi27", "local_n": "64", "contender": "torus", "status": "ok", "halo_us": "14", **blank},
        ]
        md, js = summarize(args.script, tmp / "sample", rows, COLUMNS)
        table = [l for l in staging_section(md) if l.startswith("| jacobi27 |")]
        expect(len(table) == 2, f"the staging table has {len(table)} rows, not 2:\n{md}")
        expect("| 16.00 | 2.00 | 3.00 | 8.00 | 1.00 | 1.50 | 4.00 | 25.0 % | host-staged |" in table[0],
               f"the staged row reads {table[0]}")
        expect("| 0.00 | 30.00 | 0.00 | 4.00 | 0.00 | 0.0 % | none: host memory space |" in table[1],
               f"the host row reads {table[1]}")
        staged = js["halo_staging"]
        expect([r["contender"] for r in staged] == ["packed-torus", "packed-auto"],
               f"halo_staging rows {[r['contender'] for r in staged]}")
        expect(staged[0]["staging_share"] == 0.25 and staged[0]["staging_us"] == 4.0 and
               staged[0]["to_host_us"] == 3.0 and staged[0]["staging_path"] == "host-staged", f"{staged[0]}")
        expect(staged[1]["staging_share"] == 0.0 and staged[1]["staging_path"] == "none: host memory space",
               f"{staged[1]}")

        old = [{k: r[k] for k in COLUMNS[:5]} for r in rows]
        md, js = summarize(args.script, tmp / "old", old, COLUMNS[:5])
        expect(any(l.startswith("Not measured") for l in staging_section(md)) and js["halo_staging"] == [],
               "an older CSV should read as not measured")

        if args.bench_csv:
            with open(args.bench_csv, newline="") as f:
                reader = csv.DictReader(f)
                bench = list(reader)
                columns = reader.fieldnames
            md, js = summarize(args.script, tmp / "bench", bench, columns)
            phased = [r for r in bench if r["phase_exchange_us"]]
            expect(phased, f"{args.bench_csv} has no row with phases")
            got = js["halo_staging"]
            expect(len(got) == len(phased), f"{len(got)} halo_staging rows for {len(phased)} rows with phases")
            for r, g in zip(phased, got):
                expect(g["contender"] == r["contender"] and g["staging_share"] == float(r["staging_share"]) and
                       g["staging_path"] == r["staging"], f"{g} against the CSV's {r}")
                share = f"{100 * float(r['staging_share']):.1f} %"
                expect(any(l.startswith(f"| {r['case']} | {r['local_n']} | {r['contender']} |") and
                           f"| {share} | {r['staging']} |" in l for l in staging_section(md)),
                       f"no table row for {r['case']} {r['local_n']} {r['contender']} with {share}")
    print("summary_check: the staging reaches summary.md and summary.json")


if __name__ == "__main__":
    main()
