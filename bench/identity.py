#!/usr/bin/env python3
"""Checks that two logfold binaries group every line alike and write the same events:
`replay --format raw --annotate` (every line with its group) and `replay --format raw` (first
and summary events) byte-identical, event times masked (they follow the wall clock), on each
labelled system (its raw lines as score_wholeline.py sends them, and its message column as
score_loghub.py does) and on each bench/shapes.py shape. For speed work, which must change no
group. Exits 1 and names the inputs that differ.

  bench/identity.py BASE/logfold NEW/logfold [--shared DIR] [-n LINES] [--dir DIR]
"""
import argparse
import csv
import hashlib
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import shapes  # noqa: E402  (write_inputs: the shapes' files)


def system_inputs(roots):
    """(name, bytes) for each system under roots: its raw lines and its message column."""
    for root in roots:
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            log = os.path.join(root, name, name + "_2k.log")
            csv_path = os.path.join(root, name, name + "_2k.log_structured_corrected.csv")
            if os.path.isfile(log):
                raw = open(log, "rb").read().decode("utf-8", "replace").splitlines()
                yield name + " (whole line)", ("\n".join(
                    l.replace("\r", "") for l in raw) + "\n").encode()
            if os.path.isfile(csv_path):
                with open(csv_path, newline="", encoding="utf-8") as f:
                    contents = [r["Content"] for r in csv.DictReader(f)]
                yield name + " (message)", ("\n".join(contents) + "\n").encode()


# Event times: replay stamps line i at the wall clock of its start plus i ms.
WALL_CLOCK = re.compile(rb'"(time|received|first_seen|last_seen)":"[^"]*"')


def digest(binary, data, mode):
    out = subprocess.run([binary, "replay", "--format", "raw"] + mode, input=data,
                         stdout=subprocess.PIPE, check=True).stdout
    out = WALL_CLOCK.sub(rb'"\1":""', out)
    return hashlib.sha256(out).hexdigest(), out.count(b"\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--shared", default="/work/shared", help="holds data/loghub2k")
    ap.add_argument("-n", type=int, default=50_000, help="lines per shape (50000)")
    ap.add_argument("--long-lines", type=int, default=5_000)
    ap.add_argument("--dir", default=os.path.join(HERE, "..", "build", "identity-inputs"))
    a = ap.parse_args()
    inputs = list(system_inputs([os.path.join(a.shared, "data", "loghub2k"),
                                 os.path.join(HERE, "..", "tests", "quality", "unseen")]))
    for shape, (path, _, _) in shapes.write_inputs(a.dir, a.n, a.long_lines, 5).items():
        inputs.append(("shape " + shape, open(path, "rb").read()))
    differ = []
    for name, data in inputs:
        for mode in (["--annotate"], []):
            label = "%s%s" % (name, " annotate" if mode else "")
            base, new = digest(a.base, data, mode), digest(a.new, data, mode)
            same = base == new
            print("%-42s %6d events  %s" % (label, new[1], "identical" if same else "DIFFERS"))
            if not same:
                differ.append(label)
    print("%d inputs in two modes, %d differ%s" % (len(inputs), len(differ),
                                      (": " + ", ".join(differ)) if differ else ""))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
