#!/usr/bin/env python3
"""scripts/smpi_model.py against figures worked out by hand from the
platform files (docs/simulating.md#a-cost-model-from-a-platform), and its
refusals. Exit 0 only when every figure matches within 1e-9 relative."""
import os
import subprocess
import sys
import tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
script = os.path.join(root, "scripts", "smpi_model.py")
plat = os.path.join(root, "tests", "smpi", "platforms")
failures = []


def model(platform, *args):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "m.txt")
        r = subprocess.run([sys.executable, script, os.path.join(plat, platform), "-o", out, *args],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return None, r.stderr
        kv = {}
        for line in open(out):
            line = line.split("#")[0].strip()
            if line:
                k, v = (x.strip() for x in line.split("="))
                kv[k] = float(v)
        return kv, r.stderr


def expect(name, got, want):
    if got is None:
        failures.append(f"{name}: no model")
        return
    for k, v in want.items():
        if k not in got or abs(got[k] - v) > 1e-9 * max(abs(v), 1e-30):
            failures.append(f"{name}: {k} = {got.get(k)}, expected {v}")


# InfiniBand cluster, 64 ranks on an 8 x 8 grid, Moore 2-D r=1: node 0 holds
# rows 0-3; row 3 sends 3 blocks each down and row 0 3 each up (periodic),
# 48 messages over node 0's 12.5 GB/s link, a rank sending 8 blocks.
# Route 0.4 + 0.1 + 0.4 us; ois = or = 0.1 us; eager below 12288 B.
expect("ib 8x8", model("ib-cluster-36x32.xml", "--procs", "8,8", "--moore", "2:1")[0],
       dict(alpha=1.1e-6, delta=2e-7, beta=48 / 12.5e9 / 8, beta_large=48 / 12.5e9 / 8, eager_limit=12287,
            alpha_large=1.0e-6, delta_large=1e-7, gamma=0.0, beta_copy=1e-15, version=2))
# One node (32 ranks, 4 x 8): every message crosses the loopback, a FATPIPE
# of 8.5 GB/s that flows do not share; 0.34 us.
expect("ib one node", model("ib-cluster-36x32.xml", "--procs", "4,8", "--neighborhood", "moore:2:1")[0],
       dict(alpha=0.54e-6, beta=1 / 8.5e9 / 8, delta=2e-7))
# Torus without a layout: node 0 to node 4095 = (15,15,15) is one hop a
# dimension the short way round, 0.3 us; one rank a node on 425 MB/s links;
# ois = or = 1.4 us; eager below 1200 B.
expect("torus", model("bgp-torus-4096.xml")[0],
       dict(alpha=3.1e-6, delta=2.8e-6, beta=1 / 425e6, eager_limit=1199, alpha_large=1.7e-6, delta_large=1.4e-6))
# Dragonfly without a layout: node 0 to node 511 is in the other group (3
# router hops and the two node links, 0.1 us each), 24 ranks share the
# node's 5.25 GB/s link (below its 10 GB/s limiter); ois = or = 0.4 us.
expect("dragonfly", model("aries-dragonfly-512x24.xml")[0],
       dict(alpha=1.3e-6, delta=8e-7, beta=24 / 5.25e9, eager_limit=8191))
# Refusals: a grid of the wrong dimension, a job larger than the machine.
for args, what in ((["--procs", "8,8", "--moore", "3:1"], "dimensions"),
                   (["--procs", "64,64"], "--moore"),
                   (["--procs", "48,48", "--moore", "2:1"], "do not fit")):
    got, err = model("ib-cluster-36x32.xml", *args)
    if got is not None or what not in err:
        failures.append(f"{args}: expected a refusal naming '{what}', got {err.strip() or 'a model'}")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("smpi_model: 4 platforms' figures and 3 refusals as worked out by hand")
