#!/usr/bin/env python3
"""Turns tests/smpi/calibrate.c's table (a real MPI's per-message costs by
size) into an SMPI platform file for this machine (docs/simulating.md#calibration).

  smpi_calibrate.py TABLE --eager BYTES --cores N --label TEXT -o PLATFORM.xml

Every cost is two straight lines, one for the eager sizes and one for the
rendezvous sizes (a robust fit, so that one noisy size does not drag it):
  smpi/os, smpi/ois, smpi/or   sender (blocking, non-blocking) and receiver
                               CPU costs: the measured isend (os: the smaller
                               of send and isend, as a burst of blocking sends
                               waits once the receiver's eager slots fill) and
                               the larger of recv and exchange less isend
                               (above the eager limit: the last eager value,
                               since a rendezvous receive's time is transfer)
  link latency, bandwidth      the network part of the ping-pong: half a round
                               trip less os and or (SMPI charges os to a
                               blocking send only below the detached
                               threshold). The eager line gives the link's
                               latency, the rendezvous line its bandwidth;
                               smpi/lat-factor and smpi/bw-factor turn one
                               into the other at the last eager size (plus
                               SMPI's 16-byte envelope)
  thresholds                   async-small and send-is-detached = the eager
                               limit less 64 B (Open MPI counts headers in it)
  smpi/test                    one MPI_Test on an incomplete request
SMPI's factor lists apply a piece to the sizes above its bound.
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
            b, pp, send, isend, recv, test, exchange = (float(x) for x in line.split())
            # The receive's CPU cost: that of a message already arrived, or
            # what an exchange adds a message beyond posting its send,
            # whichever is larger (a TCP transport reads its messages in
            # whatever MPI call runs when they land: only the exchange sees it).
            recv = max(recv, exchange - isend)
            rows.append((int(b), pp * 1e-6, send * 1e-6, isend * 1e-6, recv * 1e-6, test * 1e-6))
    if len(rows) < 4:
        sys.exit(f"smpi_calibrate: {path}: fewer than 4 sizes measured")
    return rows


def median(values):
    v = sorted(values)
    return v[len(v) // 2] if len(v) % 2 else 0.5 * (v[len(v) // 2 - 1] + v[len(v) // 2])


def fit(points):
    """A straight line (offset, slope) through (size, time) points that one
    noisy size cannot drag (Theil-Sen: the median of the pairwise slopes)."""
    slope = median([(y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1:]])
    return median([y - slope * x for x, y in points]), slope


def overhead_string(sizes, values, eager):
    """A CPU cost as SMPI's "bound:offset:slope" pieces, a line for the
    eager sizes and one from the last eager size on; never negative."""
    out = []
    for bound, keep in ((0, True), (max(s for s, e in zip(sizes, eager) if e), False)):
        offset, slope = fit([(s, v) for s, v, e in zip(sizes, values, eager) if e == keep])
        slope = max(slope, 0.0)
        offset = max(offset, 0.0)
        out.append(f"{bound}:{offset:.6e}:{slope:.6e}")
    return ";".join(out)


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
    # One straight line a protocol (fit): the link's latency and bandwidth
    # are shared by concurrent messages, so noise between neighbouring sizes
    # must not become a piece with a tiny bandwidth. Eager: latency and bandwidth of the link; rendezvous:
    # factors on them from the last eager size (plus the envelope) on.
    xs = [x + envelope for x in sizes]
    low = [(x, y) for x, y, e in zip(xs, net, eager) if e]
    high = [(x, y) for x, y, e in zip(xs, net, eager) if not e]
    if len(low) < 2 or len(high) < 2:
        sys.exit("smpi_calibrate: need two measured sizes on each side of the eager limit")
    (lat, slope_low), (lat_high, slope_high) = fit(low), fit(high)
    # Small eager messages can leave the link no measurable slope once the
    # CPU costs take theirs: the eager line then takes the rendezvous
    # bandwidth, its latency refitted.
    if slope_low <= 0 < slope_high:
        slope_low = slope_high
        lat = median([y - slope_low * x for x, y in low])
    if min(lat, slope_low, lat_high, slope_high) <= 0:
        sys.exit(f"smpi_calibrate: a fitted latency or bandwidth is not positive ({lat}, {slope_low}, "
                 f"{lat_high}, {slope_high}): noisy measurement, calibrate again")
    bw = 1.0 / slope_high
    bound = low[-1][0]
    lat_f = [f"0:1", f"{bound}:{lat_high / lat:.6g}"]
    bw_f = [f"0:{slope_high / slope_low:.6g}", f"{bound}:1"]
    model = [(lat if e else lat_high) + x * (slope_low if e else slope_high) for x, e in zip(xs, eager)]
    test = sorted(r[5] for r in rows)[len(rows) // 2]

    config = [
        ("smpi/os", overhead_string(sizes, os_, eager)),
        ("smpi/ois", overhead_string(sizes, ois, eager)),
        ("smpi/or", overhead_string(sizes, or_, eager)),
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
        f"  recv {r[4] * 1e6:7.3f}  net {n * 1e6:8.3f}  fit {m * 1e6:8.3f}"
        for b, r, n, m in zip(sizes, rows, net, model))
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
     (net: the ping-pong less os and or; fit: the link's two lines.)
     Eager limit {a.eager} B. Eager: latency {lat * 1e6:.3f} us, bandwidth {1e-9 / slope_low:.3f} GB/s;
     rendezvous: latency {lat_high * 1e6:.3f} us, bandwidth {bw / 1e9:.3f} GB/s. -->
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
