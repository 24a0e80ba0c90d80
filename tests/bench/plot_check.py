#!/usr/bin/env python3
"""Runs scripts/plot_bench.py on the smoke CSVs and checks its outputs.
Exit 77 (skipped) when no python3 with matplotlib is around."""

import os
import shutil
import subprocess
import sys


def has_matplotlib(python):
    return subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode == 0


def main():
    script, outdir, *csvs = sys.argv[1:]
    if not (has_matplotlib(sys.executable) or (os.path.exists("/usr/bin/python3")
                                                and has_matplotlib("/usr/bin/python3"))):
        print("matplotlib is not installed: skipped")
        return 77
    shutil.rmtree(outdir, ignore_errors=True)
    result = subprocess.run([sys.executable, script, *csvs, "-o", outdir, "--summary"], capture_output=True,
                            text=True)
    print(result.stdout, result.stderr)
    if result.returncode != 0:
        print("FAILED: plot_bench.py exited with", result.returncode)
        return 1
    expected = ["alltoall_moore-d2-r1.png", "setup.md", "setup.png", "summary.md"]
    missing = [name for name in expected if not os.path.exists(os.path.join(outdir, name))]
    if missing:
        print("FAILED: missing", missing)
        return 1
    with open(os.path.join(outdir, "alltoall_moore-d2-r1.png"), "rb") as handle:
        if handle.read(8) != b"\x89PNG\r\n\x1a\n":
            print("FAILED: not a PNG")
            return 1
    with open(os.path.join(outdir, "setup.md")) as handle:
        table = handle.read()
    if "| 2 | 1 | 8 |" not in table:
        print("FAILED: setup.md lacks the d=2 r=1 row:\n" + table)
        return 1
    print("plots ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
