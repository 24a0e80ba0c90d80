#!/bin/bash
# A run across hosts, restarted on one host, equals a one-host run bit for bit.
# The hosts are network namespaces on this machine (scripts/multihost.sh:
# veth links to a bridge, a hostname each, Open MPI over TCP only):
#   where: 2 hosts x 2 ranks report hostname and network namespace: two of
#          each, neither the test's own;
#   A:     1 host (plain mpirun here), 2 ranks, steps 0 -> STEPS (a 20^3
#          box-stencil Jacobi from a random field);
#   B:     2 hosts x 2 ranks, steps 0 -> CHECKPOINT with a checkpoint there,
#          the halo validated against the naive exchange every 2 steps and
#          halo.algorithm = "tune", whose cache names the hosts MPI saw
#          (MPI_COMM_TYPE_SHARED domains: must be 2) and the transport;
#   B':    restart from that checkpoint on 1 host, 3 ranks, to STEPS
#          (plain mpirun, halo.algorithm = "auto");
#   h5diff (exact) of the final field of A and B'.
# Exit 77 (ctest's skip) with the reason where hosts cannot be made here
# (not root, no CAP_NET_ADMIN, no iproute2, no namespaces) or MPI is not
# Open MPI. The script tears its hosts down on every exit; each of the four
# runs stops after 25 s (30 s with the kill), so all of them end inside
# ctest's 150 s and ctest never kills the script uncleanly.
#   multihost_test.sh EXE DECK H5DIFF MPIEXEC PREFLAGS("a|b") MULTIHOST WORK
set -u
exe=$1 deck=$2 h5diff=$3 mpiexec=$4 preflags=${5//|/ } multihost=$6 work=$7
name=$(basename "$deck" .toml)
steps=16 checkpoint=8
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAILED: $*"; exit 1; }

[[ $("$mpiexec" --version 2>&1) =~ Open\ MPI|OpenRTE ]] || skip "$mpiexec is not Open MPI's (multihost.sh uses its rsh launch agent)"
check=$(bash "$multihost" --check 2>&1)
case $? in
  0) echo "$check" ;;
  77) skip "${check#multihost: SKIP: }" ;;
  *) fail "multihost.sh --check: $check" ;;
esac

rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1

# Runs in the background so that ctest's TERM reaches multihost.sh (which
# then tears its hosts down) instead of waiting behind a foreground child.
child=""
trap '[[ -n $child ]] && kill -TERM "$child" 2>/dev/null; wait; exit 143' TERM INT
run() {  # run LABEL COMMAND...: output in LABEL.log, printed; exit status kept
  local label=$1 start=$SECONDS rc
  shift
  "$@" >"$label.log" 2>&1 &
  child=$!
  wait "$child"
  rc=$?
  child=""
  echo "--- $label: exit $rc ($((SECONDS - start)) s): $*"
  cat "$label.log"
  return $rc
}
# A random start: a ghost from the wrong place or step changes the field.
# shellcheck disable=SC2054  # 20,20,20 is one word
common=(--set grid.extent=20,20,20 --set init.type=random --set init.seed=7 --set output.every=0)

# shellcheck disable=SC2016  # expanded by the ranks' shells
run where bash "$multihost" -n 2 -r 2 -t 25 -- \
  sh -c 'echo "rank $OMPI_COMM_WORLD_RANK on $(hostname) $(readlink /proc/self/ns/net)"' ||
  fail "the placement run"
own=$(readlink /proc/self/ns/net)
for host in host0 host1; do
  [[ $(grep -c "on $host net:" where.log) == 2 ]] || fail "not 2 ranks on $host"
done
[[ $(grep -o 'net:\[[0-9]*\]' where.log | sort -u | wc -l) == 2 ]] || fail "the ranks are not in 2 network namespaces"
grep -qF "$own" where.log && fail "a rank ran in the test's own network namespace"

# shellcheck disable=SC2086  # preflags is a word list
run A timeout --kill-after=5 25 "$mpiexec" -n 2 $preflags "$exe" run "$deck" --quiet "${common[@]}" \
  --set run.steps=$steps --set output.dir=a || fail "A: 1 host, 2 ranks"

run B env ISO_TUNE_CACHE="$work/tune_cache.txt" bash "$multihost" -n 2 -r 2 -t 25 -- "$exe" run "$deck" "${common[@]}" \
  --set run.steps=$checkpoint --set output.checkpoint_every=$checkpoint --set output.dir=b \
  --set halo.validate_every=2 --set halo.algorithm=tune || fail "B: 2 hosts x 2 ranks"
grep -q "on 4 ranks" B.log || fail "B did not run on 4 ranks"
grep -q "4 validations against the naive exchange, all matched" B.log || fail "B's halo validations"
grep -q "Solution validates: .*halo ok" B.log || fail "B's verdict"
echo "--- tune_cache.txt"
cat tune_cache.txt
grep -q "; hosts 2;" tune_cache.txt || fail "MPI did not see 2 hosts (MPI_COMM_TYPE_SHARED domains)"
grep -q "OMPI_MCA_btl=tcp,self" tune_cache.txt || fail "B did not run with btl tcp,self"

# The checkpoint's deck says tune; the restart runs auto instead (every
# algorithm gives the same ghosts) and writes no tune cache anywhere.
# shellcheck disable=SC2086
run B2 timeout --kill-after=5 25 "$mpiexec" -n 3 $preflags "$exe" run --restart "b/$name.checkpoint.h5" \
  --set run.steps=$steps --set halo.algorithm=auto || fail "B': restart on 1 host, 3 ranks"
grep -q "restart from b/$name.checkpoint.h5 at step $checkpoint)" B2.log || fail "B' did not restart at step $checkpoint"
grep -q "on 3 ranks" B2.log || fail "B' did not run on 3 ranks"

dataset=$(printf '/step_%06d/u' $steps)
run h5diff "$h5diff" "a/$name.h5" "b/$name.h5" "$dataset" "$dataset" ||
  fail "$dataset after 2 hosts + restart differs from the 1-host run's"
echo "PASSED: $dataset of 2 hosts x 2 ranks restarted on 1 host x 3 ranks equals 1 host x 2 ranks bitwise"
