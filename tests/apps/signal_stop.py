#!/usr/bin/env python3
"""Stops `isostencil run` with a signal and checks the stop.

  signal_stop.py --signal TERM [--expect-rc 3] --summary FILE [--step-file FILE]
                 [--second USR2] -- COMMAND...

Starts COMMAND (mpirun ... isostencil run ..., or isostencil alone), waits
for its first progress line, lets it run a second, sends the signal to the
command's process (mpirun forwards it to the ranks) and checks: the exit code
(--expect-rc; "nonzero" accepts any but 0), the one "stopped by SIG... at step
N: checkpoint P; restart with --restart P" line, the summary JSON's
"stopped": {"signal": ..., "step": N}, and the checkpoint P. --step-file
receives N (restart_test.cmake restarts from P).

--second SIG: a second signal 4 s after the first, while the run stops
slowly (ISOSTENCIL_TEST_STOP_DELAY): the run must end at once, by that
signal, with no stop line and no exit code 3.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--signal", required=True)
    parser.add_argument("--expect-rc", default="3")
    parser.add_argument("--summary", required=True)
    parser.add_argument("--step-file")
    parser.add_argument("--second")
    parser.add_argument("--run-for", type=float, default=1.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    first = getattr(signal, "SIG" + args.signal)
    failures = []

    if os.path.exists(args.summary):
        os.remove(args.summary)
    env = dict(os.environ)
    if args.second:
        env["ISOSTENCIL_TEST_STOP_DELAY"] = "20"
    print("command:", " ".join(command), flush=True)
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, env=env)
    lines = []
    started = threading.Event()

    def read():
        for line in process.stdout:
            lines.append(line)
            sys.stdout.write(line)
            if re.match(r"step +0/", line):
                started.set()
        started.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    if not started.wait(120) or process.poll() is not None:
        process.kill()
        sys.exit("FAILED: the run ended (or never printed its step-0 line) before the signal")
    time.sleep(args.run_for)
    if process.poll() is not None:
        sys.exit("FAILED: the run ended before the signal")
    print(f"--- sending SIG{args.signal} to {process.pid}", flush=True)
    sent = time.monotonic()
    process.send_signal(first)
    if args.second:
        # After the 3 s in which a signal counts as the first one delivered
        # again; the ranks have agreed to stop and wait in the stop delay.
        time.sleep(4.0)
        print(f"--- sending SIG{args.second} to {process.pid}", flush=True)
        process.send_signal(getattr(signal, "SIG" + args.second))
    try:
        rc = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        sys.exit(f"FAILED: the run did not stop within 60 s of SIG{args.signal}")
    elapsed = time.monotonic() - sent
    reader.join(10)
    out = "".join(lines)
    print(f"--- exit code {rc} after {elapsed:.2f} s", flush=True)
    stopped = re.findall(r"^stopped by (SIG\w+) at step (\d+): checkpoint (\S+); "
                         r"restart with --restart (\S+)$", out, re.M)

    if args.second:
        if rc in (0, 3):
            failures.append(f"exit code {rc}: the second signal did not end the run")
        if elapsed > 15:  # the stop delay is 20 s
            failures.append(f"the run took {elapsed:.1f} s to end after the second signal")
        if stopped:
            failures.append("a stop line after the second signal")
    else:
        if args.expect_rc == "nonzero":
            if rc == 0:
                failures.append("exit code 0, expected nonzero")
        elif rc != int(args.expect_rc):
            failures.append(f"exit code {rc}, expected {args.expect_rc}")
        if len(stopped) != 1:
            failures.append(f"{len(stopped)} stop lines, expected one")
        else:
            name, step, checkpoint, restart = stopped[0]
            step = int(step)
            if name != "SIG" + args.signal:
                failures.append(f"stopped by {name}, expected SIG{args.signal}")
            if checkpoint != restart:
                failures.append("the restart hint names another file than the checkpoint")
            if not os.path.isfile(checkpoint):
                failures.append(f"no checkpoint {checkpoint}")
            if os.path.exists(checkpoint + ".tmp"):
                failures.append(f"a temporary checkpoint {checkpoint}.tmp is left")
            if step <= 0:
                failures.append(f"stopped at step {step}: the run did not run")
            try:
                with open(args.summary) as f:
                    summary = json.load(f)
                want = {"signal": "SIG" + args.signal, "step": step, "checkpoint": checkpoint}
                if summary.get("stopped") != want:
                    failures.append(f"summary stopped = {summary.get('stopped')}, expected {want}")
                if summary["steps"]["last"] != step:
                    failures.append(f"summary steps.last = {summary['steps']['last']}, expected {step}")
            except (OSError, ValueError, KeyError) as error:
                failures.append(f"summary {args.summary}: {error}")
            if args.step_file:
                with open(args.step_file, "w") as f:
                    f.write(str(step))
    if failures:
        sys.exit("FAILED:\n  " + "\n  ".join(failures))
    print("PASSED")


if __name__ == "__main__":
    main()
