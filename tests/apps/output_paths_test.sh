#!/usr/bin/env bash
# The driver's files at paths of every kind (docs/reliability.md#files-at-paths-you-name):
# links (to a file, to a link, dangling) are written through and stay links;
# a directory, a FIFO, a character device or a link to a directory at an
# output's path is a clear error before anything is computed, with a nonzero
# exit code and the path left as it was; ISO_TUNE_CACHE at a private
# character device keeps nothing and leaves the device. Run as root in CI;
# the device cases are skipped (and say so) where mknod is not allowed.
#   output_paths_test.sh EXE MPIEXEC PREFLAGS(a|b) DECK WORK
set -u
EXE=$1 MPIEXEC=$2 PREFLAGS=$3 DECK=$4 WORK=$5
IFS='|' read -r -a preflags <<< "$PREFLAGS"
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }
kind() {  # what is at the path itself, links not followed
  if [ -L "$1" ]; then echo link; elif [ -c "$1" ]; then echo chardev; elif [ -p "$1" ]; then echo fifo
  elif [ -d "$1" ]; then echo directory; elif [ -f "$1" ]; then echo file; else echo missing; fi
}
expect_kind() { [ "$(kind "$1")" = "$2" ] || fail "$1 is a $(kind "$1"), expected a $2"; }
is_hdf5() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = "89484446" ]; }  # \211HDF
can_mknod=yes
mknod "$WORK/.probe" c 1 3 2>/dev/null && rm -f "$WORK/.probe" || can_mknod=no

# run CASE [VAR=VALUE...] -- [--set ...]: the driver on 2 ranks, output in CASE/out
run() {
  local case=$1; shift
  local env=()
  while [ "$1" != "--" ]; do env+=("$1"); shift; done; shift
  env "${env[@]}" timeout 120 "$MPIEXEC" -n 2 "${preflags[@]}" "$EXE" run "$DECK" \
    --set run.steps=4 --set run.residual_every=2 --set run.tolerance=0 --set output.every=2 \
    --set output.checkpoint_every=2 --set output.name=r --set output.dir="$WORK/$case/out" "$@" \
    > "$WORK/$case.log" 2>&1
  rc=$?
  echo "--- $case: exit $rc"; cat "$WORK/$case.log"
}
# A refused run: nonzero exit, the message, nothing computed.
expect_refused() {
  local case=$1 message=$2
  [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "$case: exit $rc, expected an error (124: it hung)"
  grep -qF -- "$message" "$WORK/$case.log" || fail "$case: the output does not say: $message"
  grep -q "nothing was computed" "$WORK/$case.log" || fail "$case: does not say that nothing was computed"
  grep -q "^step " "$WORK/$case.log" && fail "$case: steps ran before the error"
  [ -z "$(find "$WORK/$case" -name '*.tmp*')" ] || fail "$case: temporary files left"
}

# Links: to a missing file in another directory, to an existing file, to a link.
mkdir -p links/out links/store
ln -s ../store/r.h5 links/out/r.h5
echo "old xdmf" > links/store/r.xmf && ln -s "$WORK/links/store/r.xmf" links/out/r.xmf
ln -s ../store/middle.json links/out/r.summary.json && ln -s summary.json links/store/middle.json
echo "old checkpoint" > links/store/ck.h5 && ln -s ../store/ck.h5 links/out/r.checkpoint.h5
run links --
[ "$rc" -eq 0 ] || fail "links: exit $rc"
for f in r.h5 r.xmf r.summary.json r.checkpoint.h5; do expect_kind "links/out/$f" link; done
expect_kind links/store/middle.json link
is_hdf5 links/store/r.h5 || fail "links: store/r.h5 is not the HDF5 output"
is_hdf5 links/store/ck.h5 || fail "links: store/ck.h5 is not the checkpoint"
grep -q "<Xdmf" links/store/r.xmf || fail "links: store/r.xmf is not the XDMF file"
grep -q '"validates": true' links/store/summary.json || fail "links: store/summary.json is not the summary"
[ "$(ls links/out | tr '\n' ' ')" = "r.checkpoint.h5 r.h5 r.summary.json r.xmf " ] ||
  fail "links: out/ holds $(ls links/out | tr '\n' ' ')"
[ -z "$(find links -name '*.tmp*')" ] || fail "links: temporary files left"

# A directory at the HDF5 output's path.
mkdir -p dir/out/r.h5
run dir --
expect_refused dir "\"$WORK/dir/out/r.h5\" is a directory"
expect_kind dir/out/r.h5 directory
[ -z "$(ls dir/out/r.h5)" ] || fail "dir: r.h5/ is no longer empty"

# A FIFO at the summary's path (opening it would block).
mkdir -p fifo/out && mkfifo fifo/out/r.summary.json
run fifo --
expect_refused fifo "\"$WORK/fifo/out/r.summary.json\" is a FIFO"
expect_kind fifo/out/r.summary.json fifo

# A link to a directory at the XDMF file's path.
mkdir -p linkdir/out linkdir/elsewhere && ln -s ../elsewhere linkdir/out/r.xmf
run linkdir --
expect_refused linkdir "\"$WORK/linkdir/out/r.xmf\" is a symbolic link to \"$WORK/linkdir/out/../elsewhere\", which is a directory"
expect_kind linkdir/out/r.xmf link

if [ "$can_mknod" = yes ]; then
  # A character device at the checkpoint's path: an error for an output.
  mkdir -p device/out && mknod device/out/r.checkpoint.h5 c 1 3
  run device --
  expect_refused device "\"$WORK/device/out/r.checkpoint.h5\" is a character device"
  expect_kind device/out/r.checkpoint.h5 chardev
  # ISO_TUNE_CACHE at a character device: keep nothing, the run goes on.
  mkdir -p tune && mknod tune/null c 1 3
  run tune ISO_TUNE_CACHE="$WORK/tune/null" -- --set halo.algorithm=tune
  [ "$rc" -eq 0 ] || fail "tune: exit $rc"
  grep -q "Solution validates" tune.log || fail "tune: the run did not validate"
  expect_kind tune/null chardev
  [ "$(ls tune | tr '\n' ' ')" = "null out " ] || fail "tune: beside the device: $(ls tune | tr '\n' ' ')"
else
  echo "SKIPPED: the character device cases (mknod is not allowed here: not root, or no CAP_MKNOD)"
fi

[ "$failures" -eq 0 ] && echo "PASSED" || { echo "$failures failure(s)"; exit 1; }
