#!/usr/bin/env python3
"""An SMPI hostfile for a platform's <cluster>: N ranks, one a core, the
nodes filled in order (docs/simulating.md#platforms).
  smpi_hostfile.py PLATFORM.xml N [--nodes K]   # K: spread over the first K nodes only
Prints "host:ranks" lines; fails when the cluster has fewer cores than N."""
import argparse
import sys
import xml.etree.ElementTree as ET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("platform")
    ap.add_argument("ranks", type=int)
    ap.add_argument("--nodes", type=int, help="use only the first K nodes")
    a = ap.parse_args()
    cluster = ET.parse(a.platform).getroot().find(".//cluster")
    if cluster is None:
        sys.exit(f"smpi_hostfile: {a.platform} has no <cluster>")
    first, _, last = cluster.get("radical").partition("-")
    names = [f"{cluster.get('prefix', '')}{i}{cluster.get('suffix', '')}"
             for i in range(int(first), int(last or first) + 1)]
    names = names[:a.nodes] if a.nodes else names
    cores = int(cluster.get("core", "1"))
    if a.ranks < 1 or a.ranks > cores * len(names):
        sys.exit(f"smpi_hostfile: {a.ranks} ranks do not fit {len(names)} nodes of {cores} cores")
    left = a.ranks
    for name in names:
        if left == 0:
            break
        take = min(cores, left)
        print(f"{name}:{take}")
        left -= take


if __name__ == "__main__":
    main()
