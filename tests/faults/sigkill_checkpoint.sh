#!/usr/bin/env bash
# A run killed with SIGKILL at a random moment (often while a checkpoint is
# being written) loses nothing: the latest checkpoint on disk is readable, and
# a restart from it runs to the end with a final field bit-identical to an
# uninterrupted run.
#
#   sigkill_checkpoint.sh MPIEXEC EXE DECK H5DIFF H5DUMP WORK [ITERATIONS [SEED]]
#
# Every iteration starts a 2-rank `isostencil run` of DECK on a grid large
# enough, and with checkpoints frequent enough, that a good share of the run
# is spent writing them. Odd iterations kill at a uniformly random moment of
# the run; even ones wait for a random progress line, then for the next
# checkpoint's temporary file to appear, and kill a random few ms later. The kill goes to mpirun and every rank at
# once. A temporary checkpoint file left behind shows that the kill landed
# inside a checkpoint write. MPIEXEC_PREFLAGS (environment) go after -n N.
set -u
if [ $# -lt 6 ]; then
  echo "usage: $0 MPIEXEC EXE DECK H5DIFF H5DUMP WORK [ITERATIONS [SEED]]" >&2
  exit 2
fi
MPIEXEC=$1 EXE=$2 DECK=$3 H5DIFF=$4 H5DUMP=$5 WORK=$6
ITERATIONS=${7:-10}
SEED=${8:-$(date +%s)}
PREFLAGS=(${MPIEXEC_PREFLAGS:-})
NAME=$(basename "$DECK" .toml)
STEPS=200
EVERY=10
SETTINGS=(--set grid.extent=512,512 --set run.steps=$STEPS --set run.residual_every=$EVERY
          --set output.every=50 --set output.checkpoint_every=$EVERY
          --set halo.validate_every=0 --set output.dir=out)
FINAL=$(printf '/step_%06d/u' $STEPS)

rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
RANDOM=$SEED
echo "sigkill_checkpoint: seed $SEED, $ITERATIONS iterations, deck $NAME, $STEPS steps," \
     "checkpoint every $EVERY steps (rerun with this seed: same kill moments)"

now_ms() { date +%s%3N; }
descendants() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    echo "$child"
    descendants "$child"
  done
}
step_of() {  # the step attribute of a checkpoint, or nothing when unreadable
  "$H5DUMP" -a /step "$1" 2>/dev/null | sed -n 's/.*(0): *\([0-9][0-9]*\).*/\1/p'
}

# The uninterrupted reference.
mkdir ref
start=$(now_ms)
(cd ref && "$MPIEXEC" -n 2 "${PREFLAGS[@]}" "$EXE" run "$DECK" "${SETTINGS[@]}" > run.log 2>&1)
rc=$?
duration=$(( $(now_ms) - start ))
if [ $rc -ne 0 ] || ! grep -q "Solution validates" ref/run.log; then
  echo "FAILED: the reference run exited with $rc"; cat ref/run.log; exit 1
fi
echo "reference: $duration ms, $(grep -c . ref/run.log) log lines"

failures=0 in_write=0 restarts=0 identical=0 no_checkpoint=0
fail() { echo "FAILED (iteration $i): $*"; failures=$((failures + 1)); }
for ((i = 1; i <= ITERATIONS; ++i)); do
  dir=$(printf 'kill_%02d' $i)
  mkdir "$dir"
  ckpt="out/$NAME.checkpoint.h5"
  (cd "$dir" && exec setsid "$MPIEXEC" -n 2 "${PREFLAGS[@]}" "$EXE" run "$DECK" "${SETTINGS[@]}" \
     > run.log 2>&1) &
  job=$!
  begin=$(now_ms)
  if ((i % 2)); then
    mode="at random"
    delay=$(( duration * 15 / 100 + RANDOM % (duration * 80 / 100) ))
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    pids="$job $(descendants $job)"
  else
    # Past a random progress line, into the next checkpoint write (so there
    # is an earlier checkpoint that must survive), 0-3 ms into it. The ranks
    # are known before the write starts and the wait spins on a builtin test,
    # so the kill follows within microseconds even on a loaded machine.
    target=$((EVERY * (2 + RANDOM % (STEPS / EVERY - 4))))
    extra_us=$((RANDOM % 3000))
    mode="in a write after step $target"
    for ((poll = 0; poll < 6000; ++poll)); do
      grep -q "^step *$target/" "$dir/run.log" 2>/dev/null && break
      kill -0 $job 2>/dev/null || break
      sleep 0.01
    done
    pids="$job $(descendants $job)"
    tmpfile="$dir/$ckpt.tmp"
    # Bounded by time, not by a poll count: on a loaded machine a count
    # runs out before the write starts, and no kill lands inside one.
    give_up_us=$(( ${EPOCHREALTIME/./} + 60000000 ))
    for ((poll = 0; ; ++poll)); do
      [ -e "$tmpfile" ] && break
      if ((poll % 4096 == 0)); then
        kill -0 $job 2>/dev/null || break
        (( ${EPOCHREALTIME/./} < give_up_us )) || break
      fi
    done
    until_us=$(( ${EPOCHREALTIME/./} + extra_us ))
    while (( ${EPOCHREALTIME/./} < until_us )); do :; done
  fi
  kill -KILL $pids 2>/dev/null
  elapsed=$(( $(now_ms) - begin ))
  wait $job 2>/dev/null
  for ((poll = 0; poll < 100; ++poll)); do
    alive=""
    for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive="$alive $pid"; done
    [ -z "$alive" ] && break
    sleep 0.05
  done
  [ -n "$alive" ] && fail "processes$alive survived SIGKILL"
  tmp="no"
  [ -e "$dir/$ckpt.tmp" ] && tmp="yes" && in_write=$((in_write + 1))
  finished=$(grep -c "^summary:" "$dir/run.log")
  seen=$(sed -n 's/^step *\([0-9]*\)\/.*/\1/p' "$dir/run.log" | tail -n 1)
  line="iteration $i: killed $mode after $elapsed ms (progress seen: step ${seen:-none});"
  line="$line temporary checkpoint present: $tmp;"
  if [ "$finished" -gt 0 ]; then
    echo "$line the run had already finished (kill too late)"
    continue
  fi
  if [ ! -e "$dir/$ckpt" ]; then
    no_checkpoint=$((no_checkpoint + 1))
    echo "$line no checkpoint yet"
    # Only a kill before the first checkpoint was committed may leave none.
    [ -n "$seen" ] && [ "$seen" -gt $EVERY ] &&
      fail "no checkpoint although step $seen was reached (the one of step $((seen - EVERY)) is lost)"
    continue
  fi
  step=$(step_of "$dir/$ckpt")
  if [ -z "$step" ]; then
    fail "the checkpoint $dir/$ckpt is not readable"
    continue
  fi
  # When progress line S was printed, the checkpoint of S - EVERY had been
  # committed: a kill in the next write must leave it (or a later one).
  if [ -n "$seen" ] && [ "$step" -lt $((seen - EVERY)) ]; then
    fail "checkpoint at step $step, but step $seen was reached: a committed checkpoint was lost"
  fi
  ranks=2
  ((i % 4 == 0)) && ranks=3
  (cd "$dir" && "$MPIEXEC" -n $ranks "${PREFLAGS[@]}" "$EXE" run --restart "$ckpt" \
     > restart.log 2>&1)
  rc=$?
  restarts=$((restarts + 1))
  if [ $rc -ne 0 ] || ! grep -q "restart from $ckpt at step $step)" "$dir/restart.log"; then
    echo "$line checkpoint of step $step"
    fail "the restart on $ranks ranks exited with $rc"; tail -n 20 "$dir/restart.log"
    continue
  fi
  if "$H5DIFF" "ref/out/$NAME.h5" "$dir/out/$NAME.h5" "$FINAL" "$FINAL" > "$dir/h5diff.log" 2>&1; then
    identical=$((identical + 1))
    echo "$line restarted from step $step on $ranks ranks: $FINAL bit-identical"
  else
    echo "$line restarted from step $step on $ranks ranks"
    fail "$FINAL differs from the uninterrupted run's"; head -n 20 "$dir/h5diff.log"
  fi
done

echo "summary: $ITERATIONS kills, $in_write inside a checkpoint write, $no_checkpoint before" \
     "the first checkpoint, $restarts restarts, $identical bit-identical, $failures failures (seed $SEED)"
if [ $in_write -eq 0 ]; then
  echo "FAILED: no kill landed inside a checkpoint write; the test did not test that"
  exit 1
fi
if [ $failures -gt 0 ] || [ $identical -ne $restarts ]; then
  echo "FAILED"
  exit 1
fi
echo "PASSED"
