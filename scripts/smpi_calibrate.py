#!/usr/bin/env python3
"""Turns tests/smpi/calibrate.c's table (a real MPI's per-message costs by
size) into an SMPI platform file for this machine (docs/simulating.md#calibration).

  smpi_calibrate.py TABLE --eager BYTES --cores N --label TEXT -o PLATFORM.xml

The model is piecewise linear between the measured sizes, so that SMPI's
ping-pong reproduces the measured one at every measured size:
  smpi/os, smpi/ois, smpi/or   sender (blocking, non-blocking) and receiver
                               costs: the measured isend (os: the smaller of
                               send and isend, as a burst of blocking sends
                               waits once the receiver's eager slots fill) and
                               recv times (above the eager limit: the last
                               eager value, since a rendezvous receive's time
                               is transfer)
  link latency, bandwidth      the network part of the ping-pong, that is
                               half a round trip less os and or (SMPI charges
                               os to a blocking send only below the detached
                               threshold): latency = that part at the
                               smallest size, bandwidth = the slope between
                               the two largest sizes; smpi/lat-factor and
                               smpi/bw-factor bend it through every measured size
  thresholds                   async-small and send-is-detached = the eager
                               limit less 64 B (Open MPI counts headers in it)
  smpi/test                    one MPI_Test on an incomplete request
The link sees 16 bytes more than the message (SMPI's envelope): its factors'
bounds are shifted by 16. SMPI's factor lists apply a piece to sizes above its bound ("bound:..."),
the first piece also below it: pieces joining at the measured sizes give a
continuous curve, whatever side a size on a bound falls.
"""
import argparse
import sys


def read_table(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            b, pp, send, isend, recv, test = (float(x) for x in line.split())
            rows.append((int(b), pp * 1e-6, send * 1e-6, isend * 1e-6, recv * 1e-6, test * 1e-6))
    if len(rows) < 4:
        sys.exit(f"smpi_calibrate: {path}: fewer than 4 sizes measured")
    return rows


def pieces(sizes, values, split):
    """Lines through consecutive points, [(bound, offset, slope)], in two
    regimes: points below `split` (eager), then the points from `split` on
    (rendezvous), the first of their lines carried back to the last eager
    point (sizes between it and `split` get the rendezvous line). The jump between the two
    protocols stays a jump, not a steep line that concurrent messages
    would share as bandwidth."""
    def lines(xs, ys):
        return [(xs[i], ys[i] - (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i]) * xs[i],
                 (ys[i + 1] - ys[i]) / (xs[i + 1] - xs[i])) for i in range(len(xs) - 1)]
    low = [(x, y) for x, y in zip(sizes, values) if x < split]
    high = [(x, y) for x, y in zip(sizes, values) if x >= split]
    out = lines(*zip(*low)) if len(low) > 1 else [(0, low[0][1], 0.0)] if low else []
    if high:
        rdv = lines(*zip(*high)) if len(high) > 1 else [(split, high[0][1], 0.0)]
        out.append((low[-1][0] if low else 0, rdv[0][1], rdv[0][2]))
        out += rdv[1:]
    return out


def overhead_string(sizes, values, split):
    return ";".join(f"{b}:{o:.6e}:{s:.6e}" for b, o, s in pieces(sizes, values, split))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--eager", type=int, required=True, help="the MPI's eager limit in bytes, headers included")
    ap.add_argument("--cores", type=int, required=True)
    ap.add_argument("--label", required=True, help="what was measured, for the file's comment")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()

    rows = read_table(a.table)
    thresh = max(a.eager - 64, 1)
    sizes = [r[0] for r in rows]
    eager = [b < thresh for b in sizes]
    if not any(eager) or all(eager):
        sys.exit("smpi_calibrate: the measured sizes must straddle the eager limit")
    last_eager_recv = [r[4] for r, e in zip(rows, eager) if e][-1]
    # The blocking send of a burst waits once the receiver's eager slots
    # fill (Open MPI's shared-memory fast boxes); its posting cost, as for
    # MPI_Isend, is the overhead.
    os_ = [min(r[2], r[3]) for r in rows]
    ois = [r[3] for r in rows]
    or_ = [r[4] if e else last_eager_recv for r, e in zip(rows, eager)]
    # The network's part: what the ping-pong spends beyond the charged overheads.
    net = [max(r[1] - (o if e else 0.0) - q, 1e-9) for r, o, q, e in zip(rows, os_, or_, eager)]
    envelope = 16
    lat = net[0]
    slope_big = (net[-1] - net[-2]) / (sizes[-1] - sizes[-2])
    if slope_big <= 0:
        sys.exit("smpi_calibrate: the two largest sizes give no bandwidth (noise?); measure again")
    bw = 1.0 / slope_big
    lat_f, bw_f = [], []
    # SMPI's network sees a message as its bytes plus a 16-byte envelope.
    xs = [x + envelope for x in sizes]
    for i, (b, o, s) in enumerate(pieces(xs, net, thresh + envelope)):
        # A piece needs positive latency and bandwidth; where noise gives
        # neither, it still ends on a measured point (its right one).
        end = xs[min(i + 1, len(xs) - 1)]
        value = o + s * end
        if s <= 0:
            s = 1e-3 / bw
            o = value - s * end
        if o <= 0:
            o = 1e-3 * lat
            s = (value - o) / end
        lat_f.append(f"{b}:{o / lat:.6g}")
        bw_f.append(f"{b}:{1.0 / (s * bw):.6g}")
    test = sorted(r[5] for r in rows)[len(rows) // 2]

    config = [
        ("smpi/os", overhead_string(sizes, os_, thresh)),
        ("smpi/ois", overhead_string(sizes, ois, thresh)),
        ("smpi/or", overhead_string(sizes, or_, thresh)),
        ("smpi/lat-factor", ";".join(lat_f)),
        ("smpi/bw-factor", ";".join(bw_f)),
        ("smpi/async-small-thresh", str(thresh)),
        ("smpi/send-is-detached-thresh", str(thresh)),
        ("smpi/test", f"{test:.6e}"),
        ("smpi/grow-injected-times", "no"),
        # Computation between MPI calls would be timed on the simulating
        # host and charged at the same speed (host speed = smpi/host-speed) ...
        ("smpi/host-speed", "1e9"),
        # ... but not here: SMPI 3.32 charges about 2 us of its own work per
        # MPI call as the program's computation on this machine (the
        # calibration program simulated on this platform shows it), more
        # than a small message costs. Local copies go uncharged instead.
        ("smpi/simulate-computation", "no"),
    ]
    table = "\n".join(
        f"       {b:>8} B  pingpong {r[1] * 1e6:8.3f}  send {r[2] * 1e6:7.3f}  isend {r[3] * 1e6:7.3f}"
        f"  recv {r[4] * 1e6:7.3f}  net {n * 1e6:8.3f}"
        for b, r, n in zip(sizes, rows, net))
    with open(a.output, "w") as f:
        f.write(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- This machine as SMPI sees it, calibrated by scripts/smpi.sh calibrate
     (tests/smpi/calibrate.c, scripts/smpi_calibrate.py; docs/simulating.md#calibration):
     {a.label}
     One host local-0 with {a.cores} cores (hostfile line "local-0:N"); its
     ranks talk over its loopback link, SHARED: concurrent messages share
     its bandwidth, as copies through one memory system do (a cluster's
     loopback is a FATPIPE, where they would not). Measured, microseconds (medians):
{table}
     Eager limit {a.eager} B; latency {lat * 1e6:.3f} us, bandwidth {bw / 1e9:.3f} GB/s. -->
<platform version="4.1">
  <config>
""")
        for key, value in config:
            f.write(f'    <prop id="{key}" value="{value}"/>\n')
        f.write(f"""  </config>
  <zone id="local" routing="Full">
    <host id="local-0" speed="1Gf" core="{a.cores}"/>
    <link id="local-0-loopback" bandwidth="{bw:.6g}Bps" latency="{lat:.6g}s" sharing_policy="SHARED"/>
    <route src="local-0" dst="local-0"><link_ctn id="local-0-loopback"/></route>
  </zone>
</platform>
""")


if __name__ == "__main__":
    main()
