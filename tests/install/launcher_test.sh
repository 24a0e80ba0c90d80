#!/usr/bin/env bash
# scripts/isostencil-run.sh (and through scripts/mpi-launcher.sh run.sh and
# bench.sh) start ranks with MPIEXEC / MPIEXEC_NUMPROC_FLAG, and add
# --oversubscribe for Open MPI's launcher only, only for more ranks than cores.
# Fake launchers print the command they were given.
#   launcher_test.sh SOURCE_DIR BUILD_DIR WORK_DIR
set -euo pipefail
source_dir="$1" build_dir="$2" work="$3"
rm -rf "$work" && mkdir -p "$work"
cat >"$work/fake-srun" <<'FAKE'
#!/bin/sh
[ "$1" = --version ] && { echo "slurm 22.05"; exit 0; }
echo "LAUNCH $*"
FAKE
cat >"$work/fake-ompi" <<'FAKE'
#!/bin/sh
[ "$1" = --version ] && { echo "mpirun (Open MPI) 4.1.4"; exit 0; }
echo "LAUNCH $*"
FAKE
chmod +x "$work/fake-srun" "$work/fake-ompi"
cores="$(nproc)"
failures=0
check() {  # name expected-regex unexpected-regex command...
  local name="$1" want="$2" unwanted="$3"; shift 3
  local out
  out="$(env "$@" BUILD_DIR="$build_dir" bash "$source_dir/scripts/isostencil-run.sh" --version 2>&1 | grep '^LAUNCH' || true)"
  if [[ ! "$out" =~ $want ]] || { [[ -n "$unwanted" ]] && [[ "$out" =~ $unwanted ]]; }; then
    echo "FAILED: $name: got '$out'"; failures=$((failures + 1))
  else
    echo "ok: $name: $out"
  fi
}
check "srun -n" "^LAUNCH -n $((cores + 4)) " "oversubscribe" \
  MPIEXEC="$work/fake-srun" MPIEXEC_NUMPROC_FLAG=-n NP=$((cores + 4))
check "Open MPI, more ranks than cores" "^LAUNCH -np $((cores + 1)) --oversubscribe " "" \
  MPIEXEC="$work/fake-ompi" NP=$((cores + 1))
check "Open MPI, ranks within the cores" "^LAUNCH -np 1 " "oversubscribe" MPIEXEC="$work/fake-ompi" NP=1
check "MPIEXEC_PREFLAGS" "^LAUNCH -np 1 --bind-to none " "" \
  MPIEXEC="$work/fake-ompi" NP=1 MPIEXEC_PREFLAGS="--bind-to none"
((failures == 0)) && echo PASSED
