#!/usr/bin/env bash
# Checkpoint integrity and non-finite values (docs/reliability.md), through
# `mpiexec isostencil run --restart` on NP ranks, from a checkpoint written on
# another rank count:
# - the stored checksum equals an independent one computed here (Python) in
#   global order, so it does not depend on the writer's decomposition;
# - the intact checkpoint restarts and validates;
# - one altered value (h5py): every rank exits 2 naming the file and the
#   dataset, nothing runs, nothing in the output directory changes;
# - no checksum (a checkpoint from before checksums): a warning, then it runs;
# - a missing dataset, a file that is not HDF5, a missing file: exit 2 on
#   every rank with a message naming the file (and dataset);
# - NaN and -inf injected (checksum recomputed, so only the finite check can
#   see them): every rank exits 1 with the step, field and first global index
#   in row-major order, the same at every NP; "Solution validates" never.
#
#   integrity.sh NP MPIEXEC EXE DECK PYTHON WORK
set -u
if [ $# -lt 6 ]; then
  echo "usage: $0 NP MPIEXEC EXE DECK PYTHON WORK" >&2
  exit 2
fi
NP=$1 MPIEXEC=$2 EXE=$3 DECK=$4 PYTHON=$5 WORK=$6
PREFLAGS=(${MPIEXEC_PREFLAGS:-})
NAME=$(basename "$DECK" .toml)
WRITER_NP=$((NP == 1 ? 2 : 1))
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }  # the script exits 1 then

# Each rank reports its own exit code (mpiexec would cut the others short).
WRAPPER='"$0" "$@"; echo "[rank-exit ${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}} code $?]"; exit 0'
# restart LABEL CODE FILE [ARGS...]: runs the restart, checks every rank's code.
restart() {
  local label=$1 code=$2 file=$3
  shift 3
  timeout 120 "$MPIEXEC" -n "$NP" "${PREFLAGS[@]}" sh -c "$WRAPPER" "$EXE" run --restart "$file" \
    --set run.steps=30 "$@" > "$label.out" 2> "$label.err"
  echo "--- $label (restart from $file on $NP ranks)"
  cat "$label.out" "$label.err"
  local exits
  exits=$(grep -c "\[rank-exit [0-9]* code $code\]" "$label.out")
  [ "$exits" -eq "$NP" ] || fail "$label: $exits of $NP ranks exited with code $code"
}
expect() {  # expect LABEL REGEX: stdout or stderr of LABEL matches
  grep -Eq -- "$2" "$1.out" "$1.err" || fail "$1: no line matches '$2'"
}
nothing_ran() {
  grep -Eq "Solution|summary:|^step +[0-9]" "$1.out" && fail "$1: something ran"
  [ "$(cd out && md5sum ./* | sort)" = "$before" ] || fail "$1: the output directory changed"
}

"$MPIEXEC" -n $WRITER_NP "${PREFLAGS[@]}" "$EXE" run "$DECK" --quiet --set grid.extent=24,20 \
  --set run.steps=20 --set output.checkpoint_every=10 --set output.every=0 \
  --set halo.validate_every=0 --set output.dir=out > write.log 2>&1 ||
  { cat write.log; echo "FAILED: the run writing the checkpoint failed"; exit 1; }
cp "out/$NAME.checkpoint.h5" good.h5
before=$(cd out && md5sum ./* | sort)

# checksum.py FILE [edit]: prints the stored and the independent checksum;
# with an edit, applies it first and stores the recomputed checksum (or none).
cat > checksum.py <<'EOF'
import struct, sys
import h5py
import numpy as np
M = (1 << 64) - 1
def mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)
def checksum(values):
    total = 0
    for index, value in enumerate(values.ravel()):  # global row-major order
        bits = struct.unpack('<Q', struct.pack('<d', float(value)))[0]
        total = (total + mix(mix((index + 0x9E3779B97F4A7C15) & M) ^ bits)) & M
    return 'isostencil-sum64:%016x' % total
path, edit = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else ''
with h5py.File(path, 'r+') as f:
    u = f['/state/u']
    data = u[...]
    if edit == 'alter':       # one value, checksum left as it was
        u[7, 9] = data[7, 9] + 1e-12
    elif edit == 'nonfinite':  # the first in row-major order is (5, 17)
        data[11, 3] = np.nan
        data[5, 17] = -np.inf
        data[20, 2] = np.nan  # on the second rank of a 2x1 decomposition
        u[...] = data
        u.attrs['checksum'] = np.bytes_(checksum(data))
    elif edit == 'strip':
        del u.attrs['checksum']
    elif edit == 'rename':
        f.move('/state/u', '/state/v')
    else:
        print(u.attrs['checksum'].decode(), checksum(data))
EOF

read -r stored computed < <("$PYTHON" checksum.py good.h5)
echo "checksum written on $WRITER_NP rank(s): stored $stored, computed here $computed"
[ -n "$stored" ] && [ "$stored" = "$computed" ] ||
  fail "the stored checksum '$stored' is not the global-order checksum '$computed'"

restart intact 0 good.h5 --set output.dir=intact
expect intact "Solution validates"

cp good.h5 altered.h5 && "$PYTHON" checksum.py altered.h5 alter
restart altered 2 altered.h5
expect altered "checkpoint altered\.h5: dataset /state/u: checksum mismatch \(stored isostencil-sum64:[0-9a-f]{16}, computed isostencil-sum64:[0-9a-f]{16}\): the file is corrupted"
expect altered "nothing was run"
nothing_ran altered

cp good.h5 old.h5 && "$PYTHON" checksum.py old.h5 strip
restart old 0 old.h5 --set output.dir=old
expect old "warning: checkpoint old\.h5: dataset /state/u has no checksum"
expect old "Solution validates"

cp good.h5 renamed.h5 && "$PYTHON" checksum.py renamed.h5 rename
restart renamed 2 renamed.h5
expect renamed "checkpoint renamed\.h5: dataset /state/u is missing .*the file is damaged"
nothing_ran renamed

echo "not HDF5" > text.h5
restart text 2 text.h5
expect text "text\.h5: cannot open the file: .*it is not an HDF5 file"
nothing_ran text

restart missing 2 no_such.checkpoint.h5
expect missing "checkpoint no_such\.checkpoint\.h5: cannot read it: No such file or directory"

cp good.h5 nonfinite.h5 && "$PYTHON" checksum.py nonfinite.h5 nonfinite
restart nonfinite 1 nonfinite.h5 --set output.dir=nonfinite
expect nonfinite "NON-FINITE VALUE at step 20: field u: -inf at global index \(5, 17\)"
grep -q "has no checksum" nonfinite.err && fail "nonfinite: the recomputed checksum was not accepted"
grep -q "Solution validates" nonfinite.out nonfinite.err && fail "nonfinite: the run claims success"
[ -e "nonfinite/$NAME.checkpoint.h5" ] && fail "nonfinite: a checkpoint of non-finite data was written"
# Without the finite check every check involving the NaN still fails.
restart unchecked 1 nonfinite.h5 --set output.dir=unchecked --set run.check_finite_every=0
expect unchecked "residual finite FAILED \(max nan\)"
expect unchecked "residual not increased FAILED"
grep -q "NON-FINITE" unchecked.out unchecked.err && fail "unchecked: the finite check ran although off"
grep -q "Solution validates" unchecked.out unchecked.err && fail "unchecked: the run claims success"

# Field statistics propagate NaN: advection's mass and extrema checks fail.
ADVECTION=$(dirname "$DECK")/advection_2d.toml
"$MPIEXEC" -n $WRITER_NP "${PREFLAGS[@]}" "$EXE" run "$ADVECTION" --quiet --set grid.extent=24,20 \
  --set run.steps=20 --set output.checkpoint_every=20 --set output.format=none \
  --set output.dir=advection > advection.log 2>&1 || { cat advection.log; fail "the advection run failed"; }
cp advection/advection_2d.checkpoint.h5 advection.h5 && "$PYTHON" checksum.py advection.h5 nonfinite
restart advection 1 advection.h5 --set run.check_finite_every=0 --set output.dir=advection_restart
expect advection "mass conserved FAILED"
expect advection "monotone \(no new extrema\) FAILED"
grep -q "Solution validates" advection.out advection.err && fail "advection: the run claims success"

if [ $failures -gt 0 ]; then echo "FAILED ($failures)"; exit 1; fi
echo "PASSED"
