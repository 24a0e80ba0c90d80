#!/usr/bin/env bash
# Runs an MPI program across N emulated hosts on this machine: Linux network
# namespaces joined by veth pairs to a bridge (in a namespace of its own; 2
# hosts on a kernel without bridges: one veth pair), with addresses only on
# those links. Open MPI's mpirun runs in host 0 and starts
# its daemons (orted) in the other hosts through a launch agent that stands in
# for ssh; every message goes over TCP on the veth links. Each host also gets
# its own hostname (a UTS namespace), so Open MPI sees N nodes as it would on
# a cluster. Everything is torn down on every exit path (namespaces, links,
# processes left in them); what a copy killed by SIGKILL left behind, the
# next copy removes. docs/multihost.md has the details.
#
#   scripts/multihost.sh [options] [--] PROGRAM [ARGS...]
#     -n, --hosts N           hosts (default 2)
#     -r, --ranks-per-host R  ranks on each host (default 1): mpirun -np N*R
#     -t, --timeout S         stop the run after S seconds (default 600)
#     --check                 only build the hosts and tear them down: exit 0,
#                             or 77 with the reason where they cannot be built
#     -v, --verbose           print the hosts, hostfile and mpirun command
#   e.g. scripts/multihost.sh -n 2 -r 2 -- build/apps/isostencil run inputs/jacobi_3d_7pt.toml
#        scripts/multihost.sh -n 2 -- build/apps/bench/iso-bench collectives --help
#
# What mpirun gets: --hostfile (the hosts' addresses, R slots each), --map-by
# ppr:R:node, --bind-to none (the hosts share this machine's cores),
# --mca plm_rsh_agent <agent> (it enters the host's namespaces), --mca btl
# tcp,self and oob/btl_tcp_if_include restricted to the hosts' subnet,
# --mca mpi_yield_when_idle 1 where all ranks outnumber the cores and
# --oversubscribe where one host's do; then MPIEXEC_PREFLAGS (a word list) and
# PROGRAM. MPIEXEC names another Open MPI
# mpirun (default: mpirun). Like ssh, the agent starts the daemons in a clean
# environment (PATH, HOME, LD_LIBRARY_PATH, TMPDIR, ...); variables reach the
# remote ranks only as mpirun passes them: OMPI_* always, and these by -x when
# set: ISO_*, OMP_*, KOKKOS_*, XDG_CACHE_HOME, LD_PRELOAD, *SAN_OPTIONS.
#
# Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN), iproute2 (`ip`) and
# util-linux (`unshare`). Exit status: PROGRAM's (mpirun's), 77 when the hosts
# cannot be built (the reason on stderr, starting "multihost: SKIP:"), 124
# after the timeout, 2 for bad usage.
#
# Names: namespaces iso<pid>-<random>-h<i> (and -sw for the bridge), so
# copies running at once do not collide; inside them, host i has interface
# iso0 with address 10.213.0.<i+1>/24 and hostname host<i>.
set -uo pipefail

hosts=2 per_host=1 timeout_s=600 check=0 verbose=0
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit "${1:-2}"; }
while (($#)); do
  case $1 in
    -n|--hosts) hosts=${2:-}; shift 2 ;;
    -r|--ranks-per-host) per_host=${2:-}; shift 2 ;;
    -t|--timeout) timeout_s=${2:-}; shift 2 ;;
    --check) check=1; shift ;;
    -v|--verbose) verbose=1; shift ;;
    -h|--help) usage 0 ;;
    --) shift; break ;;
    -*) echo "multihost: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
for v in hosts per_host timeout_s; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "multihost: $v must be a positive integer" >&2; exit 2; }
done
((hosts <= 250)) || { echo "multihost: at most 250 hosts" >&2; exit 2; }
((check || $# > 0)) || { echo "multihost: no PROGRAM given" >&2; usage; }

skip() { echo "multihost: SKIP: $*" >&2; exit 77; }
say() { ((verbose)) && echo "multihost: $*" >&2; return 0; }

# --- can hosts be made here? ----------------------------------------------------
command -v ip >/dev/null || skip "no ip binary (apt-get install iproute2)"
command -v unshare >/dev/null || skip "no unshare binary (util-linux)"
[[ $(ip netns help 2>&1) == *"netns add"* ]] || skip "this ip has no netns support"
mpiexec=${MPIEXEC:-mpirun}
if ((!check)); then
  command -v "$mpiexec" >/dev/null || { echo "multihost: $mpiexec not found" >&2; exit 2; }
  [[ $("$mpiexec" --version 2>&1) =~ Open\ MPI|OpenRTE ]] ||
    { echo "multihost: $mpiexec is not Open MPI's mpirun (the launch agent is Open MPI's plm_rsh_agent)" >&2; exit 2; }
fi

# Namespaces (and the folder of hostfile and agent) of an earlier copy that
# was killed (SIGKILL: no teardown) are named after its PID: remove those
# whose PID is gone, with what runs in them.
while read -r n _; do
  [[ $n =~ ^iso([0-9]+)-[0-9]+-(h[0-9]+|sw)$ ]] || continue
  kill -0 "${BASH_REMATCH[1]}" 2>/dev/null && continue
  mapfile -t pids < <(ip netns pids "$n" 2>/dev/null)
  ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
  ip netns del "$n" 2>/dev/null && echo "multihost: removed $n, left by a copy that was killed" >&2
done < <(ip netns list 2>/dev/null)
for d in "${TMPDIR:-/tmp}"/isostencil-multihost.iso*; do
  [[ $d =~ multihost\.iso([0-9]+)- && -d $d ]] || continue
  kill -0 "${BASH_REMATCH[1]}" 2>/dev/null || rm -rf "$d"
done

prefix=iso$$-$RANDOM
subnet=10.213.0.0/24
addr() { echo "10.213.0.$(($1 + 1))"; }
ns() { echo "$prefix-h$1"; }
switch=$prefix-sw
made=()   # namespaces made so far, for the teardown
work=""

teardown() {
  local n pids i
  for n in "${made[@]}"; do
    # Processes left in a namespace keep it alive after `ip netns del`:
    # end them first (TERM, then KILL after 2 s).
    mapfile -t pids < <(ip netns pids "$n" 2>/dev/null)
    ((${#pids[@]})) && kill -TERM "${pids[@]}" 2>/dev/null
    for ((i = 0; i < 20 && ${#pids[@]}; i++)); do
      sleep 0.1
      mapfile -t pids < <(ip netns pids "$n" 2>/dev/null)
    done
    ((${#pids[@]})) && kill -KILL "${pids[@]}" 2>/dev/null
  done
  for n in "${made[@]}"; do ip netns del "$n" 2>/dev/null; done
  made=()
  [[ -n $work ]] && rm -rf "$work"
  work=""
}
child=""
# shellcheck disable=SC2317  # called by the traps below
on_signal() {
  trap - INT TERM HUP
  [[ -n $child ]] && kill -TERM "$child" 2>/dev/null
  teardown
  exit $((128 + $1))
}
trap teardown EXIT
trap 'on_signal 2' INT
trap 'on_signal 15' TERM
trap 'on_signal 1' HUP

try() {  # try WHAT COMMAND...: run it, or skip with its error
  local err
  err=$("${@:2}" 2>&1) || { teardown; skip "$1 failed: ${err:-exit $?} (needs root or CAP_NET_ADMIN/CAP_SYS_ADMIN)"; }
}

# --- build the hosts -------------------------------------------------------------
# Both ends of every veth pair are created inside the namespaces: nothing is
# named in the root namespace, so concurrent copies cannot collide there.
try "ip netns add $switch" ip netns add "$switch"
made+=("$switch")
bridge=1
if ! err=$(ip -n "$switch" link add br0 type bridge 2>&1); then
  # A kernel without bridges: 2 hosts still work, joined by one veth pair.
  ((hosts == 2)) || { teardown; skip "a bridge in $switch failed: $err (2 hosts need none)"; }
  bridge=0
  say "no bridge ($err): host0 and host1 joined directly"
fi
((bridge)) && try "bringing the bridge up" ip -n "$switch" link set br0 up
for ((i = 0; i < hosts; i++)); do
  try "ip netns add $(ns $i)" ip netns add "$(ns $i)"
  made+=("$(ns $i)")
done
if ((bridge)); then
  for ((i = 0; i < hosts; i++)); do
    try "a veth pair for host $i" ip link add name iso0 netns "$(ns $i)" type veth peer name h$i netns "$switch"
    try "attaching host $i to the bridge" ip -n "$switch" link set h$i master br0
    try "link up (switch side, host $i)" ip -n "$switch" link set h$i up
  done
else
  try "a veth pair between host 0 and host 1" ip link add name iso0 netns "$(ns 0)" type veth peer name iso0 netns "$(ns 1)"
fi
for ((i = 0; i < hosts; i++)); do
  try "address of host $i" ip -n "$(ns $i)" addr add "$(addr $i)/24" dev iso0
  try "link up (host $i)" ip -n "$(ns $i)" link set iso0 up
  try "loopback up (host $i)" ip -n "$(ns $i)" link set lo up
done
# shellcheck disable=SC2016  # expanded by that shell
try "unshare --uts" ip netns exec "$(ns 0)" unshare --uts sh -c 'hostname host0 && test "$(hostname)" = host0'
say "$hosts hosts: $(for ((i = 0; i < hosts; i++)); do printf '%s=%s(%s) ' host$i "$(addr $i)" "$(ns $i)"; done)"
if ((check)); then
  echo "multihost: $hosts hosts can be made here (network namespaces, veth, $( ((bridge)) && echo bridge || echo "no bridge: a direct link"), UTS)"
  exit 0
fi

# --- hostfile and launch agent ---------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/isostencil-multihost.$prefix.XXXXXX") || exit 1
for ((i = 0; i < hosts; i++)); do echo "$(addr $i) slots=$per_host"; done >"$work/hostfile"
{
  cat <<'AGENT'
#!/bin/sh
# Open MPI plm_rsh_agent made by multihost.sh: AGENT [options] HOST COMMAND...
# runs COMMAND (a remote shell's command line) in HOST's namespaces, with the
# clean environment an ssh login would have.
while [ $# -gt 0 ]; do case $1 in -*) shift ;; *) break ;; esac; done
host=$1; shift
case $host in
AGENT
  for ((i = 0; i < hosts; i++)); do echo "  $(addr $i)|host$i) ns=$(ns $i) name=host$i ;;"; done
  cat <<'AGENT'
  *) echo "multihost agent: unknown host $host" >&2; exit 255 ;;
esac
exec ip netns exec "$ns" unshare --uts sh -c 'hostname "$1" || exit 255; shift
  exec env -i PATH="$PATH" HOME="$HOME" USER="${USER:-}" LOGNAME="${LOGNAME:-}" LANG="${LANG:-C}" \
    TMPDIR="${TMPDIR:-/tmp}" LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" sh -c "$*"' agent "$name" "$@"
AGENT
} >"$work/agent"
chmod +x "$work/agent"

forward=()
while IFS= read -r name; do forward+=(-x "$name"); done < <(
  compgen -e | grep -E '^(ISO_|OMP_|KOKKOS_)|^(XDG_CACHE_HOME|LD_PRELOAD|[A-Z]*SAN_OPTIONS)$')
if [[ $(id -u) == 0 ]]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi
# The hosts share this machine's cores, which Open MPI cannot tell: where
# all ranks together outnumber the cores, they must yield while they wait
# (busy-polling ranks made a step 80x slower), and past a host's cores it is
# oversubscribed.
cores=$(nproc 2>/dev/null || echo 1)
shared=()
((per_host > cores)) && shared+=(--oversubscribe)
((hosts * per_host > cores)) && [[ -z ${OMPI_MCA_mpi_yield_when_idle:-} ]] && shared+=(--mca mpi_yield_when_idle 1)
# shellcheck disable=SC2206,SC2054  # MPIEXEC_PREFLAGS is a word list by design; tcp,self is one word
launch=("$mpiexec" -np $((hosts * per_host)) --hostfile "$work/hostfile" --map-by ppr:$per_host:node
        --bind-to none "${shared[@]}" --mca plm_rsh_agent "$work/agent"
        --mca btl tcp,self --mca oob_tcp_if_include $subnet --mca btl_tcp_if_include $subnet
        "${forward[@]}" ${MPIEXEC_PREFLAGS:-} "$@")
say "hostfile: $(tr '\n' ' ' <"$work/hostfile")"
say "in host0: ${launch[*]}"

# mpirun runs in host 0 (its own hostname too), in the background so that a
# signal to this script is handled at once (bash defers traps until a
# foreground child ends).
ip netns exec "$(ns 0)" unshare --uts sh -c 'hostname host0 && exec "$@"' host0 \
  timeout --kill-after=5 "$timeout_s" "${launch[@]}" &
child=$!
wait "$child"
rc=$?
child=""
((rc == 124)) && echo "multihost: the run took longer than $timeout_s s and was stopped" >&2
exit "$rc"
