#!/usr/bin/env python3
"""A cost-model file (docs/design/cost-model.md) derived from an SMPI
platform's own figures, for `isostencil plan --predict --model FILE` and
ISO_COST_MODEL=FILE (docs/simulating.md#a-cost-model-from-a-platform).

  smpi_model.py PLATFORM.xml -o FILE                       # one rank a core, every byte leaves its node
  smpi_model.py PLATFORM.xml --procs 8,8 --moore 2:1 -o FILE  # the contention of that job's layout

SMPI 3.32 cannot run the library's calibration (persistent requests), so
the figures come from what SMPI charges a message on this platform:
  - posting an MPI_Isend sleeps smpi/ois (always), completing the receive of
    an eager message sleeps smpi/or (rendezvous receives pay nothing);
  - a message is a flow of size + 16 bytes over its route: the sum of the
    links' latencies, then the bytes at the route's bottleneck share.
Mapping (the model prices a step as the largest start-up, a cost per
further message of the larger direction, and every byte of the larger
direction at one rate):
  alpha        = ois + route latency + or     (the first message of a step)
  delta        = ois + or                     (each rank posts all its sends, then completes
                                               its receives: SMPI charges `or` in the wait, after
                                               the posting, so the two do not overlap)
  eager_limit  = smpi/async-small-thresh - 1  (SMPI: eager below the threshold)
  alpha_large  = ois + route latency          (no `or` for a rendezvous receive)
  delta_large  = ois
  beta = beta_large = seconds a byte of every neighbor block, all sent at
                 once (the one-step straightforward exchange), takes on the
                 most loaded link, divided by the blocks a rank sends: the
                 layout's link contention as one per-byte figure
  gamma = 0, beta_copy = 1e-15: computation is off on these platforms, so
                 packing and copies cost nothing in the simulation (0 would
                 mean `beta` for beta_copy)
That is --form one (the files before 2026-12-06). The default, --form
classes, differs:
  alpha        = ois + 2 x route latency + or (an eager message crosses its
                                               latency twice in SMPI 3.32: measured,
                                               2 ranks, 0.896 us on a node, 2.014 across)
  delta_post   = ois                          (posting the further sends hides the
                                               first one's latency and the bytes in flight)
  with a layout of several ranks a node (docs/design/cost-model.md#nodes):
  ranks_per_node = the platform's cores, alpha_node = ois + 2 x loopback
                 latency + or, beta_node = 1 / loopback bandwidth (flows do
                 not share it); alpha, alpha_large = the route of the
                 messages that leave a node; beta = beta_large = the most
                 loaded shared link's time in the one-step exchange over the
                 most blocks one rank sends off its node (those bytes alone
                 pay it)
ois and or are read at 8 bytes (ois_large at the threshold): the per-byte
factors of SMPI's piecewise costs, 0 on the project's platforms, are left
out; smpi/os (blocking sends) does not enter, the library posts MPI_Isend.
With --pattern faces, beta is instead the most loaded dimension's step of
a combining schedule (every rank to its two face neighbors of one
dimension): fairer to torus and direct, unfair to linear (compared in
docs/simulating.md). The route latency is the largest of the layout's neighbor messages (the
slowest one ends the step). Routes: a flat cluster goes node link, backbone,
node link; a TORUS routes dimension by dimension the short way round (one
link a hop); a DRAGONFLY goes node link, router hops (0 on one router, 1 in
a chassis, 2 in a group, 3 across groups), node link, through each node's
limiter. Inside a node a message crosses the node's loopback (a FATPIPE in a
cluster: flows do not share it). Without --procs, every byte leaves its node
and the node's ranks share its link (the pessimistic bound).
"""
import argparse
import itertools
import re
import sys
import xml.etree.ElementTree as ET

UNITS_T = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12}
UNITS_BW = {"Bps": 1.0, "kBps": 1e3, "KBps": 1e3, "MBps": 1e6, "GBps": 1e9, "TBps": 1e12,
            "bps": 0.125, "kbps": 125.0, "Kbps": 125.0, "Mbps": 1.25e5, "Gbps": 1.25e8, "Tbps": 1.25e11}


def quantity(text, units, what):
    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]*)\s*", text or "")
    if not m or (m.group(2) and m.group(2) not in units):
        sys.exit(f"smpi_model: cannot read {what} '{text}'")
    return float(m.group(1)) * units.get(m.group(2), 1.0)


def piecewise(text, size):
    """SMPI's "bound:offset:factor;..." cost at a message size: the last
    piece whose bound is at most the size."""
    best = (0.0, 0.0)
    for piece in sorted((tuple(float(x) for x in p.split(":")) for p in text.split(";") if p.strip()),
                        key=lambda p: p[0]):
        if piece[0] <= size:
            best = piece[1:3]
    return best[0] + best[1] * size


class Platform:
    def __init__(self, path):
        root = ET.parse(path).getroot()
        self.cfg = {p.get("id"): p.get("value") for p in root.iter("prop")}
        c = root.find(".//cluster")
        if c is None:
            sys.exit(f"smpi_model: {path} has no <cluster>")
        self.topology = c.get("topology", "FLAT")
        self.params = c.get("topo_parameters", "")
        self.cores = int(c.get("core", "1"))
        self.bw = quantity(c.get("bw"), UNITS_BW, "bw")
        self.lat = quantity(c.get("lat"), UNITS_T, "lat")
        self.bb_bw = quantity(c.get("bb_bw"), UNITS_BW, "bb_bw") if c.get("bb_bw") else None
        self.bb_lat = quantity(c.get("bb_lat", "0"), UNITS_T, "bb_lat")
        self.lo_bw = quantity(c.get("loopback_bw"), UNITS_BW, "loopback_bw") if c.get("loopback_bw") else None
        self.lo_lat = quantity(c.get("loopback_lat", "0"), UNITS_T, "loopback_lat")
        self.limiter = quantity(c.get("limiter_link"), UNITS_BW, "limiter_link") if c.get("limiter_link") else None
        first, _, last = c.get("radical").partition("-")
        self.nodes = int(last or first) - int(first) + 1
        for key in ("smpi/ois", "smpi/or", "smpi/async-small-thresh"):
            if key not in self.cfg:
                sys.exit(f"smpi_model: {path} sets no {key} in its <config> (SMPI's default of 0 "
                         "charges nothing a message: give the platform its costs first)")
        self.thresh = int(self.cfg["smpi/async-small-thresh"])

    def route(self, a, b):
        """(latency, [(link, capacity)]) from node a to node b; a link is a
        hashable name, one a direction where the link is SPLITDUPLEX."""
        if a == b:
            return self.lo_lat, [(("lo", a, "fatpipe"), self.lo_bw or self.bw)]
        links, lat = [], 0.0
        if self.limiter:
            links += [(("lim", a), self.limiter), (("lim", b), self.limiter)]
        if self.topology == "TORUS":
            dims = [int(x) for x in self.params.split(",")]
            ca, cb = self.coords(a, dims), self.coords(b, dims)
            cur = list(ca)
            for k, n in enumerate(dims):
                fwd = (cb[k] - cur[k]) % n
                step = 1 if fwd <= n - fwd else -1
                while cur[k] != cb[k]:
                    links.append((("t", self.index(cur, dims), k, step), self.bw))
                    cur[k] = (cur[k] + step) % n
                    lat += self.lat
            return lat, links
        links += [(("up", a), self.bw), (("down", b), self.bw)]
        lat = 2 * self.lat
        if self.topology == "DRAGONFLY":
            g = [p.split(",") for p in self.params.split(";")]
            per_router, routers, chassis = int(g[3][0]), int(g[2][0]), int(g[1][0])
            ra, rb = a // per_router, b // per_router
            if ra != rb:
                hops = 1 if ra // routers == rb // routers else 2 if ra // (routers * chassis) == rb // (
                    routers * chassis) else 3
                lat += hops * self.lat
        else:
            lat += self.bb_lat
            if self.bb_bw:
                links.append((("bb",), self.bb_bw))
        return lat, links

    @staticmethod
    def coords(node, dims):
        out = []
        for n in dims:  # SimGrid's torus: the first dimension varies fastest
            out.append(node % n)
            node //= n
        return out

    @staticmethod
    def index(c, dims):
        i, m = 0, 1
        for x, n in zip(c, dims):
            i += x * m
            m *= n
        return i


def moore(d, r):
    return [o for o in itertools.product(range(-r, r + 1), repeat=d) if any(o)]


def offsets_of(spec):
    """iso-bench's neighborhood names (apps/bench/include/isostencil/bench/
    neighborhoods.hpp): moore:D:R, octant:D:R (coordinates in [0,R]),
    shales:D:R1,R2.. ({-r,0,r}^D for each r)."""
    kind, d, r = (spec.split(":") + ["", ""])[:3]
    try:
        d = int(d)
        radii = [int(x) for x in r.split(",")]
    except ValueError:
        sys.exit(f"smpi_model: cannot read neighborhood '{spec}' (moore:D:R, octant:D:R or shales:D:R1,R2)")
    if kind == "moore" and len(radii) == 1:
        return d, moore(d, radii[0])
    if kind == "octant" and len(radii) == 1:
        return d, [o for o in itertools.product(range(radii[0] + 1), repeat=d) if any(o)]
    if kind == "shales":
        return d, sorted({o for q in radii for o in itertools.product((-q, 0, q), repeat=d) if any(o)})
    sys.exit(f"smpi_model: unknown neighborhood '{spec}' (moore:D:R, octant:D:R or shales:D:R1,R2)")


def neighbors(procs, offsets):
    """(rank, [the rank at each offset]) for every rank of the periodic
    process grid `procs`, ranks in row-major order (MPI's Cartesian order)."""
    n = 1
    for x in procs:
        n *= x
    for rank in range(n):
        c, rest = [], rank
        for x in reversed(procs):
            c.append(rest % x)
            rest //= x
        c.reverse()
        peers = []
        for o in offsets:
            peer = 0
            for k, x in enumerate(procs):
                peer = peer * x + (c[k] + o[k]) % x
            peers.append(peer)
        yield rank, peers


def layout_figures(p, procs, offsets):
    """(largest route latency, seconds a byte of every block on the most
    loaded link, blocks a rank sends) for the one-step exchange of every
    rank with every neighbor; ranks in row-major order on the process grid
    (MPI's Cartesian order), one a core, nodes filled in order."""
    load, cap, lat_max, single = {}, {}, 0.0, 0.0
    for rank, peers in neighbors(procs, offsets):
        for peer in peers:
            lat, links = p.route(rank // p.cores, peer // p.cores)
            lat_max = max(lat_max, lat)
            for link, capacity in links:
                if link[-1] == "fatpipe":  # flows do not share it
                    single = max(single, 1.0 / capacity)
                    continue
                load[link] = load.get(link, 0) + 1
                cap[link] = capacity
    worst = max([load[k] / cap[k] for k in load] + [single])
    return lat_max, worst, len(offsets)


def class_figures(p, procs, offsets):
    """The layout's route off the node (one rank a core, nodes filled in
    order): (the largest latency of a message that leaves its node, the
    seconds a byte of such a message takes: the most loaded shared link's
    time in the one-step exchange over the most blocks one rank sends off
    its node, whose bytes then take the link's time); (None, None) where no
    message leaves a node."""
    load, cap, lat_max, most = {}, {}, 0.0, 0
    for rank, peers in neighbors(procs, offsets):
        off = 0
        for peer in peers:
            if rank // p.cores == peer // p.cores:
                continue
            off += 1
            lat, links = p.route(rank // p.cores, peer // p.cores)
            lat_max = max(lat_max, lat)
            for link, capacity in links:
                load[link] = load.get(link, 0) + 1
                cap[link] = capacity
        most = max(most, off)
    if not most:
        return None, None
    return lat_max, max(load[k] / cap[k] for k in load) / most


def faces_figures(p, procs, offsets):
    """layout_figures of a combining step: every rank sends to its two face
    neighbors of one dimension at once (torus's and direct's steps); the
    most loaded dimension counts. The latency stays the full pattern's."""
    worst = 0.0
    for k in range(len(procs)):
        face = [o for o in offsets if all(x == 0 for j, x in enumerate(o) if j != k) and abs(o[k]) == 1]
        if face:
            _, w, b = layout_figures(p, procs, face)
            worst = max(worst, w / b)
    return worst


def derive(p, procs=None, offsets=None, pattern="all", form="classes"):
    ois = piecewise(p.cfg["smpi/ois"], 8)
    orecv = piecewise(p.cfg["smpi/or"], 8)
    ois_large = piecewise(p.cfg["smpi/ois"], p.thresh)
    if procs:
        lat, worst, blocks = layout_figures(p, procs, offsets)
        if pattern == "faces":
            worst, blocks = faces_figures(p, procs, offsets), 1
    else:  # every byte leaves the node, the node's ranks share its link
        lat, links = p.route(0, p.nodes - 1)
        worst, blocks = p.cores / min(c for _, c in links), 1
    beta = worst / blocks
    model = {
        "version": 2,
        "alpha": ois + lat + orecv,
        "beta": beta,
        "gamma": 0.0,
        "delta": ois + orecv,
        "eager_limit": max(p.thresh - 1, 1),
        "alpha_large": ois_large + lat,
        "beta_large": beta,
        "delta_large": ois_large,
        "beta_copy": 1e-15,
    }
    if form == "one":  # one route class, posting and transfer adding (the files before 2026-12-06 06:30)
        return model, lat, worst, blocks
    if procs and p.cores > 1 and pattern == "all":
        # Two route classes: on the node the loopback (flows do not share
        # it), off it the latency and contention of the messages that leave.
        lo_lat, lo_beta = p.route(0, 0)[0], 1.0 / (p.lo_bw or p.bw)
        remote_lat, remote_beta = class_figures(p, procs, offsets)
        if remote_lat is None:  # one node: every message stays on it
            remote_lat, remote_beta = lo_lat, lo_beta
        model.update(alpha=ois + remote_lat + orecv, alpha_large=ois_large + remote_lat, beta=remote_beta,
                     beta_large=remote_beta, ranks_per_node=p.cores, alpha_node=ois + 2 * lo_lat + orecv,
                     beta_node=lo_beta)
        lat = remote_lat
    # An eager message crosses its route's latency twice in SMPI 3.32 (2 ranks,
    # one message of 16 B each way: 0.896 us on one node, 2.014 us across
    # two, = ois + 2 x latency + or; 16 KiB rendezvous: ois + latency + bytes).
    model["alpha"] += lat
    # A rank posts its sends one after another (ois each): the bytes of those
    # already posted flow meanwhile.
    model["delta_post"] = ois
    return model, lat, worst, blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("platform")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--procs", help="the job's process grid, e.g. 8,8 (ranks one a core, nodes in order)")
    ap.add_argument("--moore", help="D:R, the neighborhood whose contention sets beta (with --procs)")
    ap.add_argument("--neighborhood", help="instead of --moore: moore:D:R, octant:D:R or shales:D:R1,R2")
    ap.add_argument("--pattern", default="all", choices=("all", "faces"),
                    help="the exchange whose contention sets beta: every neighbor at once (default) or a "
                         "combining step (face neighbors of one dimension)")
    ap.add_argument("--form", default="classes", choices=("classes", "one"),
                    help="two route classes (on and off the node) and posting overlapping transfer (default), "
                         "or one class with posting and transfer adding (the files before 2026-12-06)")
    a = ap.parse_args()
    p = Platform(a.platform)
    procs = offsets = None
    if a.procs:
        procs = [int(x) for x in a.procs.split(",")]
        if not (a.moore or a.neighborhood):
            sys.exit("smpi_model: --procs needs --moore D:R or --neighborhood SPEC")
        d, offsets = offsets_of(a.neighborhood or "moore:" + a.moore)
        if d != len(procs):
            sys.exit(f"smpi_model: --procs has {len(procs)} dimensions, the neighborhood {d}")
        total = 1
        for x in procs:
            total *= x
        if total > p.cores * p.nodes:
            sys.exit(f"smpi_model: {total} ranks do not fit {p.nodes} nodes of {p.cores} cores")
    model, lat, worst, blocks = derive(p, procs, offsets, a.pattern, a.form)
    with open(a.output, "w") as f:
        f.write(f"# isostencil cost model derived by scripts/smpi_model.py from {a.platform}\n")
        f.write(f"# layout: {'procs ' + a.procs + ', ' + (a.neighborhood or 'moore:' + str(a.moore)) if procs else 'none (every byte leaves its node)'}\n")
        if "ranks_per_node" in model:
            f.write(f"# two route classes: off the node {lat * 1e6:.3f} us, {model['beta'] * 1e9:.4f} ns a byte "
                    f"(its most loaded link's share); on it alpha_node, beta_node "
                    f"(docs/simulating.md#a-cost-model-from-a-platform)\n")
        else:
            f.write(f"# route latency {lat * 1e6:.3f} us; most loaded link {worst * 1e9:.4f} ns a byte of each "
                    f"of {blocks} blocks (docs/simulating.md#a-cost-model-from-a-platform)\n")
        for k, v in model.items():
            f.write(f"{k} = {v!r}\n")


if __name__ == "__main__":
    main()
