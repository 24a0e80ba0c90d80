#!/usr/bin/env bash
# An exception on one rank only ends the whole job: non-zero exit, a message
# naming the rank, no hang (each run has 60 s), no rank left behind, and the
# checkpoint committed before the fault stays readable.
#
#   one_rank_fault.sh NP MPIEXEC EXE DECK H5DUMP WORK
#
# The fault comes from the driver's testing hook ISOSTENCIL_FAULT_INJECT=
# RANK:STEP[:PHASE] (docs/faults.md), in three places: the time loop (the
# other ranks wait in a halo exchange), the middle of an output step and the
# middle of a checkpoint write (the other ranks wait in collective HDF5 calls).
set -u
if [ $# -lt 6 ]; then
  echo "usage: $0 NP MPIEXEC EXE DECK H5DUMP WORK" >&2
  exit 2
fi
NP=$1 MPIEXEC=$2 EXE=$3 DECK=$4 H5DUMP=$5 WORK=$6
PREFLAGS=(${MPIEXEC_PREFLAGS:-})
NAME=$(basename "$DECK" .toml)
SETTINGS=(--set grid.extent=96,96 --set run.steps=60 --set run.residual_every=10
          --set output.every=10 --set output.checkpoint_every=10 --set halo.validate_every=0)
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0
fail() { echo "FAILED ($1): $2"; failures=$((failures + 1)); }

last=$((NP - 1))
middle=$((NP / 2))
# label|rank|step|phase
cases=("loop|$last|30|step" "output|0|20|output" "checkpoint|$middle|40|checkpoint")
for item in "${cases[@]}"; do
  IFS='|' read -r label rank step phase <<< "$item"
  mkdir "$label"
  start=$(date +%s)
  (cd "$label" && ISOSTENCIL_FAULT_INJECT="$rank:$step:$phase" exec timeout 60 \
     "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" "$EXE" run "$DECK" "${SETTINGS[@]}" \
     --set output.dir=out > run.log 2>&1)
  rc=$?
  seconds=$(( $(date +%s) - start ))
  echo "--- fault on rank $rank at step $step ($phase), $NP ranks: exit $rc after $seconds s"
  grep -v "^step " "$label/run.log" | head -n 30
  [ $rc -eq 0 ] && fail "$label" "exit code 0"
  [ $rc -eq 124 ] && fail "$label" "hung: still running after 60 s"
  grep -q "error on rank $rank: fault injected by ISOSTENCIL_FAULT_INJECT" "$label/run.log" ||
    fail "$label" "no message naming rank $rank"
  grep -q "Solution validates" "$label/run.log" && fail "$label" "the run claims success"
  # The checkpoint written before the fault is intact.
  ckpt_step=$("$H5DUMP" -a /step "$label/out/$NAME.checkpoint.h5" 2>/dev/null |
              sed -n 's/.*(0): *\([0-9][0-9]*\).*/\1/p')
  # Steps go by tens: the fault at STEP strikes before STEP's checkpoint.
  want=$((step - 10))
  if [ "${ckpt_step:-none}" != "$want" ]; then
    fail "$label" "checkpoint at step ${ckpt_step:-none}, expected the one of step $want"
  else
    echo "checkpoint of step $ckpt_step: readable"
  fi
done
# mpirun reaps its ranks; a rank still alive would hold the work directory.
if command -v fuser > /dev/null && fuser -s "$WORK"/*/out 2>/dev/null; then
  fail all "processes still use the output directories"
fi
if [ $failures -gt 0 ]; then echo "FAILED ($failures)"; exit 1; fi
echo "PASSED: ${#cases[@]} faults on one rank of $NP, each ended the job with a message naming the rank"
