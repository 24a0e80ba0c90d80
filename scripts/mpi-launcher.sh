# Sourced by scripts/run.sh, isostencil-run.sh and bench.sh: the command that
# starts N ranks. MPIEXEC (default mpirun) and MPIEXEC_NUMPROC_FLAG (default
# -np) name another launcher, e.g. MPIEXEC=srun MPIEXEC_NUMPROC_FLAG=-n; extra
# launcher flags go in MPIEXEC_PREFLAGS (a word list). Only Open MPI's
# launcher gets --oversubscribe, and only when N exceeds the cores (nproc); it
# also runs as root with the two variables Open MPI asks for. MPICH's and
# Slurm's launchers get nothing added.
#   mpi_launcher N    # fills the array `launcher`
mpi_launcher() {
  local ranks="$1"
  local exe="${MPIEXEC:-mpirun}"
  # shellcheck disable=SC2206  # MPIEXEC_PREFLAGS is a word list by design
  launcher=("$exe" "${MPIEXEC_NUMPROC_FLAG:--np}" "$ranks" ${MPIEXEC_PREFLAGS:-})
  if "$exe" --version 2>&1 | grep -q "Open MPI\|OpenRTE"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    local cores
    cores="$(nproc 2>/dev/null || echo 1)"
    if ((ranks > cores)) && [[ " ${launcher[*]} " != *" --oversubscribe "* ]]; then
      launcher+=(--oversubscribe)
    fi
  fi
}
