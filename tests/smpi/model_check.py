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
expect("ib 8x8", model("ib-cluster-36x32.xml", "--procs", "8,8", "--moore", "2:1", "--form", "one")[0],
       dict(alpha=1.1e-6, delta=2e-7, beta=48 / 12.5e9 / 8, beta_large=48 / 12.5e9 / 8, eager_limit=12287,
            alpha_large=1.0e-6, delta_large=1e-7, gamma=0.0, beta_copy=1e-15, version=2))
# One node (32 ranks, 4 x 8): every message crosses the loopback, a FATPIPE
# of 8.5 GB/s that flows do not share; 0.34 us.
expect("ib one node", model("ib-cluster-36x32.xml", "--procs", "4,8", "--neighborhood", "moore:2:1", "--form",
                            "one")[0],
       dict(alpha=0.54e-6, beta=1 / 8.5e9 / 8, delta=2e-7))
# Two route classes (the default form): the same 8 x 8 layout. Off the node:
# node 0's link carries the 48 messages, a rank of row 0 or 3 sends 3 of its
# 8 blocks off the node, so a byte of those takes 48 / 3 / 12.5 GB/s; route
# 0.9 us, crossed twice by an eager message: alpha 0.1 + 1.8 + 0.1 us,
# alpha_large 0.1 + 0.9. On it: the loopback, 0.34 us (twice: 0.1 + 0.68
# + 0.1), 8.5 GB/s a flow. 32 ranks a node; each further send's posting
# (ois, 0.1 us) overlaps the bytes in flight.
expect("ib 8x8 classes", model("ib-cluster-36x32.xml", "--procs", "8,8", "--moore", "2:1")[0],
       dict(alpha=2.0e-6, beta=48 / 3 / 12.5e9, beta_large=48 / 3 / 12.5e9, alpha_large=1.0e-6, delta=2e-7,
            ranks_per_node=32, alpha_node=0.88e-6, beta_node=1 / 8.5e9, delta_post=1e-7))
# One node: no message leaves it, the off-node figures are the loopback's.
expect("ib one node classes", model("ib-cluster-36x32.xml", "--procs", "4,8", "--moore", "2:1")[0],
       dict(alpha=0.88e-6, beta=1 / 8.5e9, alpha_node=0.88e-6, beta_node=1 / 8.5e9, ranks_per_node=32))
# One rank a node (the torus): no node class; the eager start-up crosses
# the route latency twice (8 x 8 on nodes 0-63 of the 16 x 16 x 16 torus:
# rank 0 to rank 56, node (8, 3, 0), 8 + 3 hops of 0.1 us, the longest);
# posting overlap ois 1.4 us; beta as the one-class form's.
torus_one = model("bgp-torus-4096.xml", "--procs", "8,8", "--moore", "2:1", "--form", "one")[0]
torus_classes = model("bgp-torus-4096.xml", "--procs", "8,8", "--moore", "2:1")[0]
if torus_one is None or torus_classes is None or "ranks_per_node" in torus_classes:
    failures.append(f"torus 8x8: expected no node class, got {torus_classes}")
else:
    expect("torus 8x8 classes", torus_classes, dict(alpha=torus_one["alpha"] + 1.1e-6, beta=torus_one["beta"],
                                                    alpha_large=torus_one["alpha_large"], delta_post=1.4e-6))
# Torus without a layout: node 0 to node 4095 = (15,15,15) is one hop a
# dimension the short way round, 0.3 us (twice for an eager message); one
# rank a node on 425 MB/s links; ois = or = 1.4 us; eager below 1200 B.
expect("torus", model("bgp-torus-4096.xml")[0],
       dict(alpha=3.4e-6, delta=2.8e-6, beta=1 / 425e6, eager_limit=1199, alpha_large=1.7e-6, delta_large=1.4e-6))
# Dragonfly without a layout: node 0 to node 511 is in the other group (3
# router hops and the two node links, 0.1 us each), 24 ranks share the
# node's 5.25 GB/s link (below its 10 GB/s limiter); ois = or = 0.4 us;
# the 0.5 us twice for an eager message.
expect("dragonfly", model("aries-dragonfly-512x24.xml")[0],
       dict(alpha=1.8e-6, delta=8e-7, beta=24 / 5.25e9, eager_limit=8191))
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
print("smpi_model: 3 platforms' figures in both forms and 3 refusals as worked out by hand")
