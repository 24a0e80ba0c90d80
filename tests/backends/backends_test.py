#!/usr/bin/env python3
"""Bit-identical across backends and thread counts, for one deck.

Runs `isostencil run DECK` (a short run: the --set overrides below) with the
OpenMP build's driver at OMP_NUM_THREADS=1 and at 2, and with a Serial
build's driver when one is given, each in its own directory with the same
relative output directory, then compares every run with the first, exactly:

- every dataset of the HDF5 output (h5py; raw bytes, dtype and shape) and
  every attribute, except those naming the execution space or its threads;
- the summary JSON without its timings and the execution space/thread entries
  (initial and final metrics with the residuals at full precision, steps,
  convergence, checks);
- the progress lines (the metric of every measured step), without their
  timing part.

Exit status 0 when all agree, 1 with the differences listed, 2 on a usage or
run error. Used by tests/backends/CMakeLists.txt.
"""
import argparse
import json
import os
import re
import subprocess
import sys

import h5py
import numpy

# Keys that may name the machine's execution space or its concurrency: they
# differ between the runs by design.
VOLATILE_KEY = re.compile(r"kokkos|execution|concurrency|thread|backend|space", re.IGNORECASE)
TIMING_SUFFIX = re.compile(r"  [0-9.]+ (us|ms|s|min)/step  halo [0-9]+%  ETA .*$")


def run(label, command, env_extra, cwd):
    env = dict(os.environ)
    env.update(env_extra)
    os.makedirs(cwd, exist_ok=True)
    result = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, timeout=600)
    print(f"--- {label}: {' '.join(command)} (exit {result.returncode})")
    print(result.stdout, end="")
    if result.returncode != 0:
        print(f"FAILED: {label} exited with {result.returncode}")
        sys.exit(2)
    return result.stdout


def progress(stdout):
    lines = []
    for line in stdout.splitlines():
        if re.match(r"^step\s+[0-9]+/[0-9]+ ", line):
            lines.append(TIMING_SUFFIX.sub("", line))
    return lines


def strip_volatile(value):
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items()
                if k != "timings" and not VOLATILE_KEY.search(k)}
    if isinstance(value, list):
        return [strip_volatile(v) for v in value]
    return value


def first_json_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path or '/'}: {a!r} vs {b!r}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}/{key}: only in {'the first' if key in a else 'the second'}"
            found = first_json_difference(a[key], b[key], f"{path}/{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} entries"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_json_difference(x, y, f"{path}/{i}")
            if found:
                return found
        return None
    if isinstance(a, float):
        # Python reads the JSON's shortest round-trip text back exactly.
        return None if a.hex() == b.hex() else f"{path}: {a!r} ({a.hex()}) vs {b!r} ({b.hex()})"
    return None if a == b else f"{path}: {a!r} vs {b!r}"


def h5_contents(path):
    """{object path: ('dataset', dtype, shape, bytes) or ('group',)} and
    {(object path, attribute): bytes}."""
    objects, attributes = {}, {}

    def attrs(name, obj):
        for key, value in obj.attrs.items():
            if VOLATILE_KEY.search(key):
                continue
            attributes[(name, key)] = numpy.asarray(value).tobytes() if not isinstance(
                value, (str, bytes)) else (value.encode() if isinstance(value, str) else value)

    with h5py.File(path, "r") as f:
        attrs("/", f)

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                data = obj[()]
                objects[name] = ("dataset", str(obj.dtype), obj.shape,
                                 numpy.ascontiguousarray(data).tobytes())
            else:
                objects[name] = ("group",)
            attrs(name, obj)

        f.visititems(visit)
    return objects, attributes


def first_field_difference(path, a, b, dtype, shape):
    x = numpy.frombuffer(a, dtype=dtype).reshape(shape)
    y = numpy.frombuffer(b, dtype=dtype).reshape(shape)
    bits = numpy.uint8 if x.dtype.itemsize == 1 else numpy.dtype(f"u{x.dtype.itemsize}")
    differ = numpy.argwhere(x.view(bits) != y.view(bits))
    first = tuple(int(i) for i in differ[0])
    return (f"{path}: {len(differ)} of {x.size} cells differ, first at {first}: "
            f"{x[first]!r} vs {y[first]!r}")


def compare(name, first, other):
    problems = []
    fa, aa = first["h5"]
    fb, ab = other["h5"]
    if sorted(fa) != sorted(fb):
        problems.append(f"HDF5 objects differ: {sorted(set(fa) ^ set(fb))}")
    datasets = 0
    for path in sorted(set(fa) & set(fb)):
        if fa[path][0] != "dataset":
            continue
        datasets += 1
        if fa[path][1:3] != fb[path][1:3]:
            problems.append(f"{path}: dtype/shape {fa[path][1:3]} vs {fb[path][1:3]}")
        elif fa[path][3] != fb[path][3]:
            problems.append(first_field_difference(path, fa[path][3], fb[path][3],
                                                   fa[path][1], fa[path][2]))
    for key in sorted(set(aa) | set(ab)):
        if aa.get(key) != ab.get(key):
            problems.append(f"HDF5 attribute {key[0]}@{key[1]} differs")
    found = first_json_difference(first["json"], other["json"])
    if found:
        problems.append(f"summary JSON differs at {found}")
    if first["progress"] != other["progress"]:
        for x, y in zip(first["progress"], other["progress"]):
            if x != y:
                problems.append(f"progress line differs: {x!r} vs {y!r}")
                break
        else:
            problems.append(f"{len(first['progress'])} vs {len(other['progress'])} progress lines")
    return datasets, problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--preflags", default="", help="'|'-separated mpiexec flags")
    parser.add_argument("--np", type=int, default=1)
    parser.add_argument("--exe", required=True, help="the OpenMP build's isostencil")
    parser.add_argument("--serial-exe", default="", help="a Serial build's isostencil")
    parser.add_argument("--deck", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--steps", type=int, default=24)
    args = parser.parse_args()

    name = os.path.splitext(os.path.basename(args.deck))[0]
    overrides = ["--set", f"run.steps={args.steps}", "--set", f"run.residual_every={args.steps // 4}",
                 "--set", f"output.every={args.steps // 2}", "--set", "output.checkpoint_every=0",
                 "--set", "halo.validate_every=0", "--set", "output.dir=out"]
    preflags = [f for f in args.preflags.split("|") if f]
    configs = [("OpenMP, 1 thread", args.exe, {"OMP_NUM_THREADS": "1", "OMP_PROC_BIND": "false"}),
               ("OpenMP, 2 threads", args.exe, {"OMP_NUM_THREADS": "2", "OMP_PROC_BIND": "false"})]
    if args.serial_exe:
        if not os.access(args.serial_exe, os.X_OK):
            print(f"FAILED: ISOSTENCIL_SERIAL_DRIVER={args.serial_exe} is not an executable")
            return 2
        configs.append(("Serial", args.serial_exe, {}))
    else:
        print("note: no Serial driver given (ISOSTENCIL_SERIAL_DRIVER): OpenMP 1 vs 2 threads only")

    results = []
    for index, (label, exe, env) in enumerate(configs):
        cwd = os.path.join(args.work, f"run{index}")
        h5 = os.path.join(cwd, "out", f"{name}.h5")
        summary = os.path.join(cwd, "out", f"{name}.summary.json")
        for stale in (h5, summary):
            if os.path.exists(stale):
                os.remove(stale)
        command = [args.mpiexec, "-n", str(args.np)] + preflags + [exe, "run", args.deck] + overrides
        stdout = run(f"{label}, {args.np} rank(s)", command, env, cwd)
        with open(summary) as f:
            summary_json = json.load(f)
        results.append({"label": label, "h5": h5_contents(h5),
                        "json": strip_volatile(summary_json), "progress": progress(stdout)})

    failures = 0
    for other in results[1:]:
        datasets, problems = compare(name, results[0], other)
        if problems:
            failures += 1
            print(f"FAILED: {name}, {args.np} rank(s): {other['label']} differs from "
                  f"{results[0]['label']}:")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"PASSED: {name}, {args.np} rank(s): {other['label']} equals "
                  f"{results[0]['label']} bit for bit ({datasets} datasets, "
                  f"{len(other['progress'])} progress lines, summary JSON)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
