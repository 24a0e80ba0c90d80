"""Every test registered with ctest must run under a timeout of its own, so a
hung MPI job (a rank lost, a collective never joined) fails instead of
stalling CI. Reads `ctest --show-only=json-v1` of the build tree.

    check_timeouts.py CTEST BUILD_DIR [MAX_SECONDS]

Without MAX_SECONDS any positive TIMEOUT passes; the longest are listed.
"""
import json
import subprocess
import sys

ctest, build = sys.argv[1], sys.argv[2]
limit = float(sys.argv[3]) if len(sys.argv) > 3 else float("inf")
listing = subprocess.run([ctest, "--test-dir", build, "--show-only=json-v1"],
                         check=True, capture_output=True, text=True).stdout
tests = json.loads(listing)["tests"]
missing, too_long, mpi = [], [], 0
for test in tests:
    props = {p["name"]: p["value"] for p in test.get("properties", [])}
    command = " ".join(test.get("command", []))
    if "mpi" in props.get("LABELS", []) or "mpiexec" in command or "mpirun" in command:
        mpi += 1
    timeout = props.get("TIMEOUT")
    if timeout is None or float(timeout) <= 0:
        missing.append(test["name"])
    elif float(timeout) > limit:
        too_long.append(f"{test['name']} ({timeout} s)")
timeouts = sorted(((float(p["value"]), t["name"]) for t in tests
                   for p in t.get("properties", []) if p["name"] == "TIMEOUT"), reverse=True)
print(f"{len(tests)} tests ({mpi} run under mpiexec or labelled mpi): "
      f"{len(tests) - len(missing)} have a TIMEOUT; longest: "
      + ", ".join(f"{name} {seconds:.0f} s" for seconds, name in timeouts[:3]))
for name in missing:
    print(f"no TIMEOUT: {name}")
for name in too_long:
    print(f"TIMEOUT above {limit:.0f} s: {name}")
sys.exit(1 if missing or too_long or not tests else 0)
