#!/bin/bash
# A run under a real Slurm, stopped and restarted as docs/signals.md
# describes: a one-node cluster on this machine (munged,
# slurmctld, slurmd on loopback, configuration in WORK), that page's batch
# script (mpirun in the background, SIGUSR1/SIGTERM passed on as SIGUSR1,
# resubmission on exit code 3):
#   job 1 runs without an end in sight; `scancel --batch --signal=USR1` (what
#         `--signal=B:USR1@120` does at the time limit) stops it: exit 3, a
#         checkpoint; it submits job 2;
#   job 2 restarts from it; a plain `scancel` (SIGTERM) stops it again (the
#         summary JSON says so); the test submits job 3;
#   job 3 restarts and runs to 50 steps after that stop, exit 0;
# and the final field equals an uninterrupted run's (h5diff).
# Exit 77 (ctest's skip) with the reason where Slurm is missing or cannot start.
#   slurm_signal_test.sh EXE DECK H5DIFF MPIEXEC PREFLAGS("a|b") WORK
set -u
exe=$1 deck=$2 h5diff=$3 mpiexec=$4 preflags=${5//|/ } work=$6
name=$(basename "$deck" .toml)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAILED: $*"; for f in "$work"/slurm-*.out; do echo "--- $f"; cat "$f"; done; exit 1; }
for tool in munged slurmctld slurmd sbatch scancel squeue scontrol; do
  command -v $tool >/dev/null || skip "$tool not found (apt-get install slurm-wlm munge)"
done
rm -rf "$work" && mkdir -p "$work" && chmod 700 "$work" || exit 1
cd "$work" || exit 1
s=$work/slurm
mkdir -p "$s/state" "$s/spool" "$s/munge" && chmod 700 "$s" "$s/munge"

pids=()
cleanup() {
  scancel --quiet --user="$(id -un)" 2>/dev/null
  for p in "${pids[@]}"; do [ -f "$p" ] && kill "$(cat "$p")" 2>/dev/null; done
}
trap cleanup EXIT

head -c 1024 /dev/urandom >"$s/munge/munge.key" && chmod 400 "$s/munge/munge.key"
munged --key-file="$s/munge/munge.key" --socket="$s/munge/socket" --pid-file="$s/munge/pid" \
  --log-file="$s/munge/log" --seed-file="$s/munge/seed" --force ||
  skip "munged does not start: $(tail -n 2 "$s/munge/log" 2>/dev/null)"
pids+=("$s/munge/pid")
host=$(hostname -s)
port=$((20000 + $$ % 20000))
cat >"$s/slurm.conf" <<CONF
ClusterName=isostencil
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
AuthInfo=socket=$s/munge/socket
CredType=cred/munge
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$s/slurm.conf
slurmctld -i || skip "slurmctld does not start: $(tail -n 3 "$s/slurmctld.log" 2>/dev/null)"
pids+=("$s/slurmctld.pid")
slurmd || skip "slurmd does not start: $(tail -n 3 "$s/slurmd.log" 2>/dev/null)"
pids+=("$s/slurmd.pid")
for _ in $(seq 40); do
  sinfo -h -o %t 2>/dev/null | grep -q idle && break
  sleep 0.5
done
sinfo -h -o %t 2>/dev/null | grep -q idle ||
  skip "the node does not come up: $(tail -n 3 "$s/slurmd.log" "$s/slurmctld.log" 2>/dev/null)"

# The batch script of docs/signals.md, with this build's paths; each continuation is
# submitted held so the test can change run.steps (the file steps) first.
echo 1000000000 >steps
cat >job.sbatch <<JOB
#!/bin/bash
#SBATCH --ntasks=1
#SBATCH --output=$work/slurm-%j.out
checkpoint=b/$name.checkpoint.h5
restart=()
[ -f "\$checkpoint" ] && restart=(--restart "\$checkpoint")
export OMPI_MCA_odls_base_sigkill_timeout=4
$mpiexec -n 2 $preflags "$exe" run "$deck" "\${restart[@]}" --set run.steps=\$(cat steps) \\
  --set run.tolerance=0 --set run.residual_every=1000000000 --set output.every=0 \\
  --set output.checkpoint_every=0 --set halo.validate_every=0 --set output.dir=b &
pid=\$!
trap 'kill -USR1 \$pid' USR1 TERM
while wait \$pid; rc=\$?; kill -0 \$pid 2>/dev/null; do :; done
echo "exit code \$rc"
if [ "\$rc" -eq 3 ]; then
  sbatch --hold --parsable "$work/job.sbatch" >next_job
fi
exit "\$rc"
JOB

wait_for() {  # wait_for SECONDS COMMAND...: until COMMAND succeeds
  local end=$((SECONDS + $1)); shift
  until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.2; done
}
gone() { ! squeue -h -j "$1" 2>/dev/null | grep -q .; }
started() { grep -q "^step  *$2/" "slurm-$1.out" 2>/dev/null; }
stopped_step() {  # stopped_step JOB SIGNAL-REGEX: the step of its stop line
  sed -n "s/^stopped by \\($2\\) at step \\([0-9]*\\): checkpoint .*/\\2/p" "slurm-$1.out"
}

job=$(sbatch --parsable job.sbatch) || fail "sbatch"
wait_for 60 started "$job" 0 || fail "job $job did not start its run"
sleep 1
scancel --batch --signal=USR1 "$job"
wait_for 60 gone "$job" || fail "job $job did not end after SIGUSR1"
first=$(stopped_step "$job" SIGUSR1)
[ -n "$first" ] || fail "job $job: no 'stopped by SIGUSR1' line"
grep -q "^exit code 3$" "slurm-$job.out" || fail "job $job: exit code not 3"
echo "job $job: stopped by SIGUSR1 at step $first"

job=$(cat next_job) && rm next_job && scontrol release "$job" || fail "job 1 submitted no continuation"
wait_for 60 started "$job" "$first" || fail "job $job did not restart at step $first"
grep -q "restart from b/$name.checkpoint.h5 at step $first)" "slurm-$job.out" || fail "job $job: not a restart"
sleep 1
# A plain scancel signals every process of the job with SIGTERM, mpirun too:
# the ranks stop and write the checkpoint and summary, but mpirun, ending
# itself, reports exit code 1 and may drop the ranks' last lines. The
# summary's "stopped" tells; the test submits the continuation itself.
scancel "$job"
wait_for 60 gone "$job" || fail "job $job did not end after scancel"
[ -f next_job ] && scancel "$(cat next_job)"
second=$(/usr/bin/python3 -c '
import json, sys
stopped = json.load(open(sys.argv[1]))["stopped"]
print(stopped["step"] if stopped and stopped["signal"] == "SIGTERM" else "")' "b/$name.summary.json")
[ -n "$second" ] && [ "$second" -gt "$first" ] || fail "job $job: the summary has no SIGTERM stop after step $first"
echo "job $job: stopped by scancel (SIGTERM) at step $second"

last=$((second + 50))
echo $last >steps
job=$(sbatch --parsable job.sbatch) || fail "sbatch"
wait_for 60 gone "$job" || fail "job $job did not end"
grep -q "restart from b/$name.checkpoint.h5 at step $second)" "slurm-$job.out" || fail "job $job: not a restart from $second"
grep -q "^exit code 0$" "slurm-$job.out" || fail "job $job: the last segment did not validate (exit code 0)"
echo "job $job: steps $second -> $last"

$mpiexec -n 2 $preflags "$exe" run "$deck" --quiet --set run.steps=$last --set run.tolerance=0 \
  --set run.residual_every=1000000000 --set output.every=0 --set output.checkpoint_every=0 \
  --set halo.validate_every=0 --set output.dir=a || fail "the uninterrupted run"
dataset=/step_$(printf %06d $last)/u
"$h5diff" a/$name.h5 b/$name.h5 $dataset $dataset || fail "$dataset differs from the uninterrupted run's"
echo "PASSED: stopped at $first (SIGUSR1) and $second (scancel), $dataset identical"
