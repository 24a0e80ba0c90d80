#!/usr/bin/env python3
"""Compares two run summaries (isostencil run's JSON) of the same deck from two
builds (scripts/gpu-run.sh: CUDA against Serial): every number under steps,
converged, initial, final, checks, non_finite and validates. --rtol 0 asks for
equality (Life); a positive rtol allows that relative difference (Jacobi, whose
updates fused multiply-adds may round differently on the GPU). Exit 0 equal,
1 different (each difference listed), 2 unreadable input. With rtol > 0 the
text details (rounded numbers in words) are not compared, their numbers are."""
import argparse
import json
import sys

KEYS = ("steps", "converged", "initial", "final", "checks", "non_finite", "validates")


def leaves(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rtol", type=float, default=0.0)
    ap.add_argument("a")
    ap.add_argument("b")
    args = ap.parse_args()
    try:
        a, b = (json.load(open(p)) for p in (args.a, args.b))
    except (OSError, ValueError) as e:
        print(f"gpu-compare: {e}")
        return 2
    if a.get("validates") is not True:
        print(f"gpu-compare: {args.a} does not validate")
        return 1
    bad = compared = 0
    for key in KEYS:
        la, lb = dict(leaves(a.get(key), key)), dict(leaves(b.get(key), key))
        for path in sorted(set(la) | set(lb)):
            x, y = la.get(path), lb.get(path)
            compared += 1
            if args.rtol > 0 and isinstance(x, str) and isinstance(y, str):
                # text details print rounded numbers; their values are compared
                compared -= 1
                continue
            if isinstance(x, (int, float)) and isinstance(y, (int, float)) \
                    and not isinstance(x, bool) and args.rtol > 0:
                same = abs(x - y) <= args.rtol * max(abs(x), abs(y))
            else:
                same = x == y
            if not same:
                bad += 1
                print(f"differs: {path}: {x!r} vs {y!r}")
    print(f"gpu-compare: {compared} values, {bad} differ (rtol {args.rtol})")
    return 1 if bad or compared == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
