#!/usr/bin/env bash
# Output that cannot be written stops the run with a clear error naming the
# rank and a non-zero exit, never a hang, and what was written before stays
# intact: the last checkpoint is readable and a restart from it ends
# bit-identical to an uninterrupted run; the output file still holds the
# earlier steps.
#
#   output_fault.sh CASE NP MPIEXEC EXE DECK H5DIFF H5DUMP WORK
#
# CASE file_size: the run starts under `ulimit -f` below the size the output
#                 file reaches (a full disk, as far as the writer can tell);
#                 writes must fail with EFBIG, not kill a rank with SIGXFSZ.
# CASE read_only: once the first checkpoint is on disk the output directory
#                 is made immutable (chattr +i: it stops root as well, which
#                 permissions do not); the next XDMF update cannot be created.
# CASE read_only_checkpoint: the same without the output series
#                 (output.format = "none"), so the next checkpoint's temporary
#                 file is what cannot be created (an HDF5 error on every rank).
# Exit code 77 (skipped) when chattr +i is not available here.
set -u
if [ $# -lt 8 ]; then
  echo "usage: $0 file_size|read_only|read_only_checkpoint NP MPIEXEC EXE DECK H5DIFF H5DUMP WORK" >&2
  exit 2
fi
CASE=$1 NP=$2 MPIEXEC=$3 EXE=$4 DECK=$5 H5DIFF=$6 H5DUMP=$7 WORK=$8
PREFLAGS=(${MPIEXEC_PREFLAGS:-})
NAME=$(basename "$DECK" .toml)
# 100 steps between writes: the directory must turn immutable (below) while
# writes remain, and the poll that does it may wait for a core on a loaded
# machine; with 10 steps between writes the run could end within 15 ms of its
# first checkpoint, and a late chattr let it succeed.
STEPS=1000
EVERY=100
SETTINGS=(--set grid.extent=384,384 --set run.steps=$STEPS --set run.residual_every=$EVERY
          --set output.every=$EVERY --set output.checkpoint_every=$EVERY --set halo.validate_every=0
          --set output.dir=out)
FINAL=$(printf '/step_%06d/u' $STEPS)
# The output file grows by 1.1 MiB per output step, a checkpoint is 1.1 MiB;
# Open MPI's shared-memory segment (4 MiB) must still fit.
LIMIT_KB=6144

[ -d "$WORK" ] && chattr -R -i "$WORK" 2>/dev/null
rm -rf "$WORK" && mkdir -p "$WORK/ref" "$WORK/fault" || exit 1
cd "$WORK" || exit 1
trap 'chattr -i "$WORK/fault/out" 2>/dev/null' EXIT
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
step_of() {
  "$H5DUMP" -a /step "$1" 2>/dev/null | sed -n 's/.*(0): *\([0-9][0-9]*\).*/\1/p'
}

(cd ref && "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" "$EXE" run "$DECK" "${SETTINGS[@]}" --quiet \
   > run.log 2>&1) || { echo "FAILED: the reference run failed"; cat ref/run.log; exit 1; }

RESTART_SETTINGS=()
if [ "$CASE" = read_only_checkpoint ]; then
  FAULT_SETTINGS=(--set output.format=none)
  RESTART_SETTINGS=(--set output.format=hdf5)
else
  FAULT_SETTINGS=()
fi

if [ "$CASE" = read_only ] || [ "$CASE" = read_only_checkpoint ]; then
  mkdir probe && chattr +i probe 2>/dev/null && ! touch probe/x 2>/dev/null
  usable=$?
  chattr -i probe 2>/dev/null; rm -rf probe
  if [ $usable -ne 0 ]; then echo "SKIPPED: chattr +i does not work here"; exit 77; fi
  # The directory turns immutable as soon as the first checkpoint exists.
  (cd fault && exec timeout 120 "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" "$EXE" run "$DECK" \
     "${SETTINGS[@]}" "${FAULT_SETTINGS[@]}" > run.log 2>&1) &
  job=$!
  mkdir -p fault/out
  for ((poll = 0; poll < 6000; ++poll)); do
    [ -e "fault/out/$NAME.checkpoint.h5" ] && break
    kill -0 $job 2>/dev/null || break
    sleep 0.005
  done
  chattr +i fault/out || { echo "FAILED: chattr +i fault/out"; exit 1; }
  wait $job
  rc=$?
  chattr -i fault/out
elif [ "$CASE" = file_size ]; then
  # The limit goes on the ranks alone: mpiexec's own shared-memory files
  # (PMIx) would not start under it.
  (cd fault && exec timeout 120 "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" \
     bash -c 'ulimit -f '$LIMIT_KB' && exec "$0" "$@"' "$EXE" run "$DECK" "${SETTINGS[@]}" \
     > run.log 2>&1)
  rc=$?
else
  echo "unknown case $CASE" >&2
  exit 2
fi

echo "--- the faulty run ($CASE, $NP ranks): exit $rc"
cat fault/run.log
echo "---"
[ $rc -eq 0 ] && fail "the run succeeded although its output could not be written"
[ $rc -eq 124 ] && fail "the run hung (killed by timeout after 120 s)"
# SIGXFSZ would show as 128 + 25 or as Open MPI's "exited on signal 25".
grep -q "signal 25\|File size limit" fault/run.log && fail "a rank was killed by SIGXFSZ"
grep -Eq "error on rank [0-9]+: .*(rank [0-9]+|out/)" fault/run.log ||
  fail "no error message naming the rank and the file"
grep -q "Solution validates" fault/run.log && fail "the run claims success"
# HDF5 errors in the user's terms: the file, what could not be done, why.
grep -q "HDF5 call" fault/run.log && fail "an HDF5 error names internal calls"
if [ "$CASE" != read_only ]; then
  # The directory may turn immutable between a checkpoint's temporary file
  # and its rename over the last one: that rename's error is right too.
  grep -Eq "error on rank [0-9]+: out/[^ ]+: cannot (create the file|write dataset|close the file|flush the file)|error on rank [0-9]+: .*cannot rename out/[^ ]+\.tmp to out/" fault/run.log ||
    fail "no HDF5 error naming the file and what could not be done"
fi

# The output as the faulty run left it: the XDMF file is complete and the
# steps it lists before the fault hold the uninterrupted run's fields.
cp "fault/out/$NAME.h5" fault/left.h5 2>/dev/null
listed=$(grep -o 'step_[0-9]*/u' "fault/out/$NAME.xmf" 2>/dev/null | sort -u)
if [ "$CASE" = read_only_checkpoint ]; then
  grep -q "$NAME.checkpoint.h5.tmp" fault/run.log ||
    fail "the error does not name the checkpoint's temporary file"
elif ! grep -q "</Xdmf>" "fault/out/$NAME.xmf" 2>/dev/null || [ -z "$listed" ]; then
  fail "the XDMF file is missing or truncated"
fi
for item in $listed; do
  if "$H5DIFF" "ref/out/$NAME.h5" fault/left.h5 "/$item" "/$item" > /dev/null 2>&1; then
    echo "earlier output /$item: intact"
  else
    fail "earlier output /$item listed in the XDMF file is unreadable or differs"
  fi
done

ckpt="fault/out/$NAME.checkpoint.h5"
step=$(step_of "$ckpt")
if [ -z "$step" ]; then
  fail "the last checkpoint ($ckpt) is missing or unreadable"
else
  echo "last checkpoint: step $step, readable"
  (cd fault && "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" "$EXE" run --restart "out/$NAME.checkpoint.h5" \
     "${RESTART_SETTINGS[@]}" --quiet > restart.log 2>&1) || { fail "the restart from step $step failed"; cat fault/restart.log; }
  if "$H5DIFF" "ref/out/$NAME.h5" "fault/out/$NAME.h5" "$FINAL" "$FINAL" > h5diff.log 2>&1; then
    echo "restart from step $step: $FINAL bit-identical to the uninterrupted run"
  else
    fail "after the restart $FINAL differs from the uninterrupted run's"; head h5diff.log
  fi
fi
if [ $failures -gt 0 ]; then echo "FAILED ($failures)"; exit 1; fi
echo "PASSED"
