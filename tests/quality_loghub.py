#!/usr/bin/env python3
"""Merge-quality floor on the labelled Loghub-2k logs (CTest `quality_loghub`).

Runs `logfold replay --format raw --annotate` with default settings through the shared scorer
and fails if any floor below is missed. Exits 77 (reported by CTest as skipped, not passed)
when the shared data or scorer is absent, since the project builds and tests without it.
Usage: quality_loghub.py PATH/TO/logfold [SHARED_DIR]
"""
import json
import os
import subprocess
import sys

# Floors: precision first (a wrong merge destroys information), then grouping.
FLOORS_AVERAGE = {"precision": 0.995, "GA": 0.86, "F1": 0.97, "reduction": 0.95}
FLOOR_PRECISION_EACH = 0.98


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "..", "..", "shared")
    scorer = os.path.join(shared, "eval", "score_loghub.py")
    data = os.path.join(shared, "data", "loghub2k")
    if not (os.path.isfile(scorer) and os.path.isdir(data)):
        print("SKIP: no labelled data at %s" % data)
        return 77
    cmd = "%s replay --format raw --annotate" % binary
    proc = subprocess.run([sys.executable, scorer, "--cmd", cmd, "--data", data, "--json"],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr, file=sys.stderr)
        return 1
    result = json.loads(proc.stdout)
    failures = []
    print("%-12s %6s %6s %6s %6s %6s" % ("dataset", "GA", "P", "R", "F1", "red"))
    for name, r in sorted(result["datasets"].items()):
        print("%-12s %6.3f %6.3f %6.3f %6.3f %6.3f" % (
            name, r["GA"], r["precision"], r["recall"], r["F1"], r["reduction"]))
        if r["precision"] < FLOOR_PRECISION_EACH:
            failures.append("%s precision %.4f < %.3f" % (name, r["precision"],
                                                          FLOOR_PRECISION_EACH))
    avg = result["average"]
    print("%-12s %6.3f %6.3f %6.3f %6.3f %6.3f" % (
        "average", avg["GA"], avg["precision"], avg["recall"], avg["F1"], avg["reduction"]))
    for metric, floor in FLOORS_AVERAGE.items():
        if avg[metric] < floor:
            failures.append("average %s %.4f < %.3f" % (metric, avg[metric], floor))
    if result.get("failed"):
        failures.append("the command failed on some dataset")
    for f in failures:
        print("FAIL: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
