# Sourced by scripts/bench.sh, bench_autotune.sh and bench_network.sh (from
# the checkout's root): the settings they share and their one way to build.
#   bench_settings NAME   BUILD_DIR, NP, JOBS, MPIEXEC defaulted (build, 2, 2,
#                         mpirun); OUT, unless set, bench-results/NAME;
#                         OUT created and made absolute
#   bench_build LOG T...  builds targets T in BUILD_DIR, the output in LOG; on
#                         failure the log's last lines, then exit 1 (uses the
#                         caller's say)
#   bench_option NAME LAST ARGS...  the options every one takes, for the
#                         last arm of its option loop: --out DIR and --out=DIR
#                         set OUT (bench_shift: how many arguments they used);
#                         -h/--help prints lines 2..LAST of the script (its
#                         header) and exits 0; anything else is an error naming
#                         NAME (exit 2)
bench_settings() {
  BUILD_DIR="${BUILD_DIR:-build}"
  NP="${NP:-2}"
  JOBS="${JOBS:-2}"
  MPIEXEC="${MPIEXEC:-mpirun}"
  OUT="${OUT:-bench-results/$1}"
  mkdir -p "$OUT"
  OUT="$(cd "$OUT" && pwd)"
}

bench_build() {
  local log="$1"
  shift
  [[ -f "$BUILD_DIR/CMakeCache.txt" ]] || { say "no configured $BUILD_DIR: run scripts/setup.sh first" >&2; exit 1; }
  cmake --build "$BUILD_DIR" -j"$JOBS" --target "$@" >"$log" 2>&1 ||
    { tail -n 20 "$log" >&2; say "build failed (log: $log)" >&2; exit 1; }
}

bench_option() {
  local name="$1" last="$2"
  shift 2
  case "$1" in
    --out) OUT="${2:?--out needs a folder}"; bench_shift=2 ;;
    --out=*) OUT="${1#--out=}"; bench_shift=1 ;;
    -h|--help) sed -n "2,${last}p" "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "$name: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
}
