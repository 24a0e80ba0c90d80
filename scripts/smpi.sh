#!/usr/bin/env bash
# The collectives library under SimGrid SMPI (docs/simulating.md): installs
# Debian's libsimgrid-dev when smpicxx is missing, builds the library and its
# MPI-only programs in build-smpi/ (tests/smpi/CMakeLists.txt), and with
# `test` runs the differential check and the collectives' C and C++ examples
# at the given simulated rank counts.
#   bash scripts/smpi.sh                 # install if needed, build
#   bash scripts/smpi.sh test [N ...]    # build the check and the examples, run them at N ranks (default 64)
#   bash scripts/smpi.sh calibrate       # measure this machine's Open MPI (shared memory, TCP) and write
#                                        # BUILD_DIR/calibration/local-{shm,tcp}.xml
#   bash scripts/smpi.sh platforms       # load each tests/smpi/platforms/*.xml: ping-pong in a node
#                                        # and between its first and last node (2 simulated ranks)
#   bash scripts/smpi.sh paper [N] [PLATFORM]  # the paper's collectives at N simulated ranks (default 1152
#                                        # on tests/smpi/platforms/ib-cluster-36x32.xml): BUILD_DIR/paper-*.csv
#   bash scripts/smpi.sh start [N]      # iso-bench's common start: the paper mode's times at N ranks (64)
#                                        # alike under SMPI's default and recursive-doubling allreduce and barrier
#   bash scripts/smpi.sh model PLATFORM -o FILE [--procs P,.. --moore D:R]  # a cost-model file from the
#                                        # platform's figures (scripts/smpi_model.py)
#   bash scripts/smpi.sh predict CSV...  # plan --predict under that model against the paper mode's CSVs
#                                        # (scripts/smpi_predict.py; needs the host build's isostencil)
#   bash scripts/smpi.sh accuracy [N ...]  # calibrate, then iso-bench simulated on those platforms
#                                        # against the same runs for real, at N ranks (default 2 4 8)
# Environment: BUILD_DIR (build-smpi), JOBS (2), CASES (differential cases, 6),
# PAPER_DIMS (2 3), PAPER_HOOD (moore; octant, shales: iso-bench's names), PAPER_RADII (1; for shales "3,7"), PAPER_SIZES (8,128,2048), PAPER_CONTENDERS (linear,torus,direct),
# PAPER_OPS (alltoall), PAPER_ALLREDUCE and PAPER_BARRIER (SMPI's algorithms: rdb and ompi_recursivedoubling;
# default = SMPI's own), PAPER_PRIVATIZATION (dlopen up to 4096 ranks, mmap above), PAPER_MODEL (auto's cost model: defaults, platform = derived by scripts/smpi_model.py
# from the platform and each run's layout, or a FILE),
# REAL_ISO_BENCH (iso-bench built with the real MPI; default build/apps/bench/iso-bench).
# Quiet on success; the build's and each run's output go to BUILD_DIR/*.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
build=${BUILD_DIR:-build-smpi}
jobs=${JOBS:-2}

# A platform's cost model, and plan --predict against simulated CSVs: no
# SMPI build needed (docs/simulating.md#a-cost-model-from-a-platform).
if [[ ${1:-} == model || ${1:-} == predict ]]; then
  mode=$1
  shift
  [[ $mode == model ]] && exec python3 scripts/smpi_model.py "$@"
  exec python3 scripts/smpi_predict.py "$@"
fi

if ! command -v smpicxx >/dev/null 2>&1; then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q libsimgrid-dev; } \
    >/tmp/isostencil-smpi-apt.log 2>&1 || { cat /tmp/isostencil-smpi-apt.log >&2; echo "smpi.sh: installing libsimgrid-dev failed" >&2; exit 1; }
fi

mkdir -p "$build"
if [[ ! -f $build/CMakeCache.txt ]]; then
  cmake -S tests/smpi -B "$build" -DCMAKE_C_COMPILER=smpicc -DCMAKE_CXX_COMPILER=smpicxx \
    -DISOSTENCIL_WERROR=ON ${CMAKE_ARGS:-} >"$build/configure.log" 2>&1 \
    || { cat "$build/configure.log" >&2; exit 1; }
fi
# `test` builds only what it runs (CI's time: iso-bench and CLI11 alone
# take minutes on 2 cores); a plain call builds everything.
targets=()
case ${1:-} in
  test) targets=(--target smpi_differential c_collectives cpp_collectives) ;;
  calibrate | platforms) ;;
  accuracy | paper | start) targets=(--target iso-bench) ;;
  '') ;;
  *) echo "smpi.sh: unknown mode '$1' (expected test, platforms, calibrate, accuracy, paper, start, model, predict or nothing)" >&2; exit 2 ;;
esac
[[ ${1:-} == calibrate || ${1:-} == platforms ]] || cmake --build "$build" -j"$jobs" "${targets[@]}" >"$build/build.log" 2>&1 \
  || { tail -50 "$build/build.log" >&2; exit 1; }

# Open MPI's per-message costs on this machine, shared memory and TCP, as
# SMPI platforms (tests/smpi/calibrate.c, scripts/smpi_calibrate.py).
calibrate() {
  local out=$build/calibration
  mkdir -p "$out"
  mpicc -O2 -o "$out/calibrate" tests/smpi/calibrate.c
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  local transport btl eager
  for transport in shm:vader tcp:tcp; do
    btl=${transport#*:}
    eager=$(ompi_info --param btl "$btl" --level 9 --parsable | sed -n "s/^mca:btl:$btl:param:btl_${btl}_eager_limit:value://p")
    [[ $eager =~ ^[0-9]+$ ]] || { echo "smpi.sh: no eager limit for btl $btl from ompi_info" >&2; exit 1; }
    mpirun -np 2 --mca btl "self,$btl" "$out/calibrate" 1048576 50 >"$out/${transport%%:*}.txt" \
      || { echo "smpi.sh: the calibration run over btl $btl failed" >&2; exit 1; }
    python3 scripts/smpi_calibrate.py "$out/${transport%%:*}.txt" --eager "$eager" --cores "$(nproc)" \
      -o "$out/local-${transport%%:*}.xml" \
      --label "Open MPI $(ompi_info --version | sed -n 's/^Open MPI v//p' | head -1), btl self,$btl, 2 ranks, on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
  done
}

if [[ ${1:-} == calibrate ]]; then
  calibrate
  echo "smpi: calibrated platforms in $build/calibration (local-shm.xml, local-tcp.xml)"
  exit 0
fi

# Each platform loads and gives the figures its comment states: the
# calibration program (its ping-pong) at 2 ranks in one node and across.
if [[ ${1:-} == platforms ]]; then
  smpicc -O2 -o "$build/calibrate-smpi" tests/smpi/calibrate.c
  printf '%-28s %-6s %10s %10s %10s\n' platform pair "8 B us" "4 KiB us" "64 KiB us"
  for platform in tests/smpi/platforms/*.xml; do
    # The cluster's first and last node (two ranks on the first: on a
    # one-core node too, SMPI shares the core).
    read -r first last < <(python3 -c 'import sys, xml.etree.ElementTree as E
c = E.parse(sys.argv[1]).getroot().find(".//cluster")
print(*(c.get("prefix", "") + i + c.get("suffix", "") for i in c.get("radical").split("-")))' "$platform")
    echo "$first:2" >"$build/hosts-node.txt"
    printf '%s:1\n%s:1\n' "$first" "$last" >"$build/hosts-across.txt"
    for pair in node across; do
      log=$build/platform-$(basename "$platform" .xml)-$pair.log
      smpirun -np 2 -platform "$platform" -hostfile "$build/hosts-$pair.txt" --cfg=smpi/display-timing:no \
        --log=root.thres:error "$build/calibrate-smpi" 65536 3 >"$log" 2>&1 \
        || { cat "$log" >&2; echo "smpi.sh: $platform does not run ($pair)" >&2; exit 1; }
      awk -v p="$(basename "$platform" .xml)" -v pair="$pair" '$1 == 8 { a = $2 } $1 == 4096 { b = $2 } $1 == 65536 { c = $2 }
        END { printf "%-28s %-6s %10s %10s %10s\n", p, pair, a, b, c }' "$log"
    done
  done
  exit 0
fi

# The paper's experiments at scale: iso-bench on Moore r=1 neighborhoods,
# one simulation a dimension, each with its wall time and peak memory
# (docs/simulating.md#the-papers-experiments). iso-bench starts each timed
# call on every rank at one simulated instant (docs/simulating.md#a-common-start),
# so the collectives around it do not move its time: the mode picks SMPI's
# recursive-doubling allreduce, whose cost grows as log P (SMPI's default is
# linear, and quadratic in simulation time at thousands of ranks), and
# keeps the recursive-doubling barrier of the runs before that start.
if [[ ${1:-} == paper ]]; then
  n=${2:-1152}
  platform=${3:-tests/smpi/platforms/ib-cluster-36x32.xml}
  [[ $n =~ ^[0-9]+$ && $n -ge 2 ]] || { echo "smpi.sh paper: ranks must be a number >= 2 (got '$n')" >&2; exit 2; }
  [[ -f $platform ]] || { echo "smpi.sh paper: no platform file $platform" >&2; exit 2; }
  name=$(basename "$platform" .xml)
  python3 scripts/smpi_hostfile.py "$platform" "$n" >"$build/hosts-paper.txt"
  out=$build/paper-$name-$n.csv
  rm -f "$out"
  model=${PAPER_MODEL:-defaults}
  # Each simulated rank's copy of the program (docs/simulating.md#costs-of-a-simulation):
  # dlopen copies the whole binary a rank (about 1.1 MB of memory a rank, and
  # a start-up that grows faster than the ranks), into tmpfs here so that no
  # copy reaches the disk; mmap copies the data segment alone (about 0.1 MB a
  # rank with the run's own data) but swaps it at each context switch (a
  # third more CPU). Above 4096 ranks dlopen would not fit 10 GB.
  privatization=${PAPER_PRIVATIZATION:-$( ((n > 4096)) && echo mmap || echo dlopen)}
  [[ $privatization == dlopen || $privatization == mmap ]] \
    || { echo "smpi.sh paper: PAPER_PRIVATIZATION must be dlopen or mmap (got '$privatization')" >&2; exit 2; }
  tmpdir=${TMPDIR:-/tmp}
  [[ -d /dev/shm && -w /dev/shm ]] && tmpdir=/dev/shm
  hood=${PAPER_HOOD:-moore}
  allreduce=${PAPER_ALLREDUCE:-rdb}
  barrier=${PAPER_BARRIER:-ompi_recursivedoubling}
  [[ $allreduce =~ ^[a-z_]+$ && $barrier =~ ^[a-z_]+$ ]] \
    || { echo "smpi.sh paper: PAPER_ALLREDUCE and PAPER_BARRIER name SMPI algorithms (got '$allreduce', '$barrier')" >&2; exit 2; }
  # A relative model file is the caller's (this script runs from the root).
  [[ $model == defaults || $model == platform || $model == /* ]] || model=$OLDPWD/$model
  [[ $model == defaults || $model == platform || -f $model ]] \
    || { echo "smpi.sh paper: PAPER_MODEL must be defaults, platform or a model file (got '$model')" >&2; exit 2; }
  for d in ${PAPER_DIMS:-2 3}; do
  for r in ${PAPER_RADII:-1}; do
    # A balanced process grid (SMPI's MPI_Dims_create does not always balance).
    procs=$(python3 -c 'import sys
n, d = int(sys.argv[1]), int(sys.argv[2]); dims = [1] * d; f = 2; primes = []
while n > 1:
    while n % f == 0: primes.append(f); n //= f
    f += 1
for p in sorted(primes, reverse=True): dims[dims.index(min(dims))] *= p
print(",".join(map(str, sorted(dims, reverse=True))))' "$n" "$d")
    run=$build/paper-$name-$n-$hood-d$d-r${r//,/-}
    # auto's cost model, given from outside the simulation (no calibration
    # inside it): the built-in figures, a file, or the one scripts/smpi_model.py
    # derives from the platform and this run's layout.
    iso_model=$model
    if [[ $model == platform ]]; then
      iso_model=$run.model
      python3 scripts/smpi_model.py "$platform" --procs "$procs" --neighborhood "$hood:$d:$r" -o "$iso_model"
    fi
    start=$(date +%s.%N)
    TMPDIR=$tmpdir ISO_COST_MODEL=$iso_model /usr/bin/time -f "%M %U %S" -o "$run.rss" smpirun -np "$n" \
      -platform "$platform" -hostfile "$build/hosts-paper.txt" --cfg=smpi/display-timing:no --log=root.thres:error \
      --cfg=smpi/barrier:"$barrier" --cfg=smpi/allreduce:"$allreduce" \
      --cfg=smpi/privatization:"$privatization" \
      "$build/iso-bench" collectives -o "${PAPER_OPS:-alltoall}" -n "$hood:$d:$r" -s "${PAPER_SIZES:-8,128,2048}" \
      -c "${PAPER_CONTENDERS:-linear,torus,direct}" -r 1 --warmup 1 -l 1 --max-seconds 0 --procs "$procs" -q \
      --csv "$run.csv" >"$run.log" 2>&1 \
      || { tail -20 "$run.log" >&2; echo "smpi.sh paper: the run at d=$d r=$r failed ($run.log)" >&2; exit 1; }
    wall=$(echo "$(date +%s.%N) - $start" | bc)
    read -r rss cpu_user cpu_sys < <(tail -1 "$run.rss")
    cpu=$(echo "$cpu_user + $cpu_sys" | bc)
    # Every point must be there and right (iso-bench checks each result
    # against the sent data and linear's): a wrong or missing one fails.
    python3 - "$run.csv" "${PAPER_OPS:-alltoall}" "${PAPER_SIZES:-8,128,2048}" \
        "${PAPER_CONTENDERS:-linear,torus,direct}" "$n" <<'EOF' || { echo "smpi.sh paper: d=$d r=$r: see $run.csv" >&2; exit 1; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = len(sys.argv[2].split(",")) * len(sys.argv[3].split(",")) * len(sys.argv[4].split(","))
bad = [f"{r['operation']} {r['size_bytes']} B {r['contender']}: {r['status']} {r['note']}" for r in rows
       if r["status"] != "ok" or r["np"] != sys.argv[5] or not float(r["median_us"]) > 0]
if bad or len(rows) != want:
    sys.exit(f"smpi.sh paper: {len(rows)} of {want} points, not ok: {'; '.join(bad) or '-'}")
EOF
    # iso-bench's rows, each with the simulation's wall time and peak memory.
    [[ -f $out ]] || sed -n '1s/$/,platform,sim_wall_s,sim_peak_rss_mb,sim_cpu_s,privatization/p' "$run.csv" >"$out"
    sed -n "2,\$ s/\$/,$name,$(printf %.1f "$wall"),$((rss / 1024)),$(printf %.1f "$cpu"),$privatization/p" "$run.csv" >>"$out"
    echo "smpi paper: $name, $n ranks, $hood:$d:$r: $(printf %.1f "$wall") s wall ($(printf %.1f "$cpu") s CPU), $((rss / 1024)) MB peak"
  done
  done
  echo "smpi paper: $out"
  exit 0
fi

# iso-bench starts each timed call at one simulated instant
# (docs/simulating.md#a-common-start): the collectives before it must not
# move its time. The paper mode at N ranks on the InfiniBand cluster, 3-D
# Moore r = 1, 8 B and 128 B, under SMPI's default and recursive-doubling
# allreduce and barrier; every time must be the same (the CSV's 4 decimals).
if [[ ${1:-} == start ]]; then
  n=${2:-64}
  platform=tests/smpi/platforms/ib-cluster-36x32.xml
  for variant in rdb:ompi_recursivedoubling default:ompi_recursivedoubling rdb:default; do
    PAPER_ALLREDUCE=${variant%%:*} PAPER_BARRIER=${variant#*:} PAPER_DIMS=3 PAPER_RADII=1 PAPER_HOOD=moore \
      PAPER_SIZES=8,128 PAPER_CONTENDERS=linear,torus,direct PAPER_OPS=alltoall PAPER_MODEL=defaults \
      bash "$root/scripts/smpi.sh" paper "$n" "$platform" >/dev/null
    cp "$build/paper-$(basename "$platform" .xml)-$n.csv" "$build/start-$n-${variant%%:*}-${variant#*:}.csv"
  done
  exec python3 - "$build"/start-"$n"-{rdb-ompi_recursivedoubling,default-ompi_recursivedoubling,rdb-default}.csv <<'EOF'
import csv, sys
runs = [{(r["size_bytes"], r["contender"]): r["median_us"] for r in csv.DictReader(open(path))} for path in sys.argv[1:]]
first = runs[0]
bad = [f"{size} B {who}: " + " / ".join(run.get((size, who), "-") for run in runs)
       for (size, who) in first if len({run.get((size, who)) for run in runs}) != 1]
if bad or len(first) != 6:
    sys.exit("smpi.sh start: the timed calls depend on the allreduce and barrier around them "
             "(allreduce rdb / default / rdb, barrier recursive doubling / recursive doubling / default; us): "
             + "; ".join(bad or ["missing points"]))
print(f"smpi start: {len(first)} points alike under SMPI's default and recursive-doubling allreduce and barrier")
EOF
fi

# iso-bench's alltoall, Moore d=2 r=1, for real and simulated on the
# calibrated platforms; every point within 25 % or the mode fails.
if [[ ${1:-} == accuracy ]]; then
  shift
  ranks=("$@")
  [[ ${#ranks[@]} -gt 0 ]] || ranks=(2 4 8)
  real=${REAL_ISO_BENCH:-build/apps/bench/iso-bench}
  [[ -x $real ]] || { echo "smpi.sh: $real not found: build iso-bench with the real MPI first (or set REAL_ISO_BENCH)" >&2; exit 1; }
  calibrate
  out=$build/calibration
  bench=(collectives -o alltoall -n moore:2:1 -s 8,512,4096 -c linear,torus -q)
  rm -f "$out"/real-*.csv "$out"/sim-*.csv
  for transport in shm:vader tcp:tcp; do
    t=${transport%%:*}
    for n in "${ranks[@]}"; do
      over=()
      ((n <= $(nproc))) || over=(--oversubscribe)
      mpirun "${over[@]}" -np "$n" --mca btl "self,${transport#*:}" "$real" "${bench[@]}" -r 200 --warmup 20 -l 3 \
        --csv "$out/real-$t-$n.csv" >"$out/real-$t-$n.log" 2>&1 \
        || { cat "$out/real-$t-$n.log" >&2; echo "smpi.sh: the real run ($t, $n ranks) failed" >&2; exit 1; }
      echo "local-0:$n" >"$out/hosts-$n.txt"
      ISO_COST_MODEL=defaults smpirun -np "$n" -platform "$out/local-$t.xml" -hostfile "$out/hosts-$n.txt" \
        --cfg=smpi/display-timing:no --log=root.thres:error "$build/iso-bench" "${bench[@]}" -r 3 --warmup 1 -l 1 \
        --csv "$out/sim-$t-$n.csv" >"$out/sim-$t-$n.log" 2>&1 \
        || { cat "$out/sim-$t-$n.log" >&2; echo "smpi.sh: the simulated run ($t, $n ranks) failed" >&2; exit 1; }
    done
  done
  exec python3 scripts/smpi_accuracy.py --tolerance 0.25 -o "$out/accuracy.csv" "$out"
fi

[[ ${1:-} == test ]] || exit 0
shift
ranks=("$@")
[[ ${#ranks[@]} -gt 0 ]] || ranks=(64)
for n in "${ranks[@]}"; do
  # One host a rank on a small fat tree (tests/smpi/platform-small.xml).
  hostfile=$build/hosts-$n.txt
  for ((i = 0; i < n; i++)); do echo "node-$i.smpi"; done >"$hostfile"
  log=$build/differential-np$n.log
  start=$(date +%s)
  if ! ISO_COST_MODEL=defaults smpirun -np "$n" -platform tests/smpi/platform-small.xml -hostfile "$hostfile" \
      --cfg=smpi/display-timing:no --log=root.thres:error \
      "$build/smpi_differential" "${CASES:-6}" >"$log" 2>&1; then
    cat "$log" >&2
    echo "smpi.sh: the differential check failed at $n simulated ranks ($log)" >&2
    exit 1
  fi
  grep -q "smpi_differential: $n ranks, .* 0 failing cases" "$log" \
    || { cat "$log" >&2; echo "smpi.sh: no passing summary at $n ranks ($log)" >&2; exit 1; }
  # The examples check their own blocks and say so.
  for example in c_collectives cpp_collectives; do
    smpirun -np "$n" -platform tests/smpi/platform-small.xml -hostfile "$hostfile" --cfg=smpi/display-timing:no \
      --log=root.thres:error "$build/$example" >"$build/$example-np$n.log" 2>&1 \
      && grep -q "verified over 3 rounds" "$build/$example-np$n.log" \
      || { cat "$build/$example-np$n.log" >&2; echo "smpi.sh: $example failed at $n simulated ranks" >&2; exit 1; }
  done
  echo "smpi: differential check and examples at $n simulated ranks passed ($(( $(date +%s) - start )) s wall)" >>"$build/test.log"
done
