#!/usr/bin/env python3
"""Per-line cost of adversarial inputs (issue #19 item 2): `logfold replay` of lines built to
open a group each, one file per shape, timed in user CPU seconds, binaries alternated.

Shapes (each line unique; deterministic for a seed):
  random   random printable 20-120-byte lines (adversarial.py's flood text)
  tokens   10-40 short letter tokens ("qa b xyz ..."), every line a sentence of words
  digits   digit-heavy lines: numbers, hex and digit-bearing words with a few separators
  prefix   one fixed 9-word prefix, then a unique last word (a free argument: folds once
           the merger has learned the position, engine.variable_after_values)
  prefix2  the same frame with two unique words in every line, so that no two lines are
           siblings and none folds: the per-line cost of a crowd that never folds
  long     1-4 KB lines of random printable words
  corpus   bench/gen_corpus.py --seed 5 (the syslog corpus: the speed that must not drop)

  bench/shapes.py --logfold build/logfold                       # one binary
  bench/shapes.py --logfold base/logfold --logfold build/logfold --rounds 3 --cpu 1
  bench/shapes.py --write DIR                                   # only write the inputs
  bench/shapes.py --callgrind -n 50000 --shapes random,tokens,digits,prefix2,corpus \
      --logfold base/logfold --logfold build/logfold             # instructions, not seconds

--callgrind counts each replay's instructions under valgrind (deterministic, so one run of
each binary compares on a noisy machine) and prints each binary's ratio to the first.
"""
import argparse
import os
import random
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import adversarial  # noqa: E402  (garbage(): the flood benchmark's text)

SHAPES = ["random", "tokens", "digits", "prefix", "prefix2", "long", "corpus"]
LETTERS = "abcdefghijklmnopqrstuvwxyz"
PRINTABLE = "".join(chr(c) for c in range(33, 127))


def random_lines(n, seed):
    """The first n lines of adversarial.garbage (a lead's figures used seed 1)."""
    out = adversarial.garbage(n * 72, seed).split(b"\n")[:n]
    while len(out) < n:  # garbage() averages ~71 bytes a line; top up if short
        out += adversarial.garbage(n * 8, seed + len(out)).split(b"\n")[:n - len(out)]
    return [l.decode() for l in out]


def token_lines(n, rng):
    return [" ".join("".join(rng.choice(LETTERS) for _ in range(rng.randint(1, 3)))
                     for _ in range(rng.randint(10, 40))) for _ in range(n)]


def digit_lines(n, rng):
    def token():
        k = rng.randrange(4)
        if k == 0:
            return str(rng.randrange(10 ** rng.randint(1, 9)))
        if k == 1:
            return "%x" % rng.getrandbits(rng.randint(8, 48))
        if k == 2:
            return "%d.%d.%d" % (rng.randrange(1000), rng.randrange(1000), rng.randrange(1000))
        # a digit-bearing word: letters and digits interleaved
        return "".join(rng.choice("0123456789" + LETTERS) for _ in range(rng.randint(3, 10)))
    return [rng.choice(" :/-,").join(token() for _ in range(rng.randint(4, 16)))
            for _ in range(n)]


def prefix_lines(n, rng):
    prefix = "session manager closed connection for remote peer because of "
    return [prefix + "".join(rng.choice(LETTERS) for _ in range(rng.randint(6, 14)))
            for _ in range(n)]


def prefix2_lines(n, rng):
    def word():
        return "".join(rng.choice(LETTERS) for _ in range(rng.randint(6, 14)))
    return ["session manager closed connection %s remote peer because of %s" % (word(), word())
            for _ in range(n)]


def long_lines(n, rng):
    lines = []
    for _ in range(n):
        size, words = rng.randint(1024, 4096), []
        total = 0
        while total < size:
            w = "".join(rng.choice(PRINTABLE) for _ in range(rng.randint(1, 12)))
            words.append(w)
            total += len(w) + 1
        lines.append(" ".join(words)[:size])
    return lines


def write_inputs(directory, n, n_long, seed):
    """Writes one file per shape (kept if present); returns {shape: (path, lines, bytes)}."""
    os.makedirs(directory, exist_ok=True)
    files = {}
    for shape in SHAPES:
        count = n_long if shape == "long" else n
        path = os.path.join(directory, "%s-%d-s%d.log" % (shape, count, seed))
        if not os.path.exists(path):
            rng = random.Random(seed)
            if shape == "corpus":
                with open(path + ".tmp", "w") as f:
                    subprocess.run([sys.executable, os.path.join(HERE, "gen_corpus.py"), "--seed",
                                    str(seed), "-n", str(count)], stdout=f, check=True)
            else:
                make = {"random": lambda: random_lines(count, seed),
                        "tokens": lambda: token_lines(count, rng),
                        "digits": lambda: digit_lines(count, rng),
                        "prefix": lambda: prefix_lines(count, rng),
                        "prefix2": lambda: prefix2_lines(count, rng),
                        "long": lambda: long_lines(count, rng)}[shape]
                with open(path + ".tmp", "w") as f:
                    f.write("\n".join(make()) + "\n")
            os.replace(path + ".tmp", path)
        files[shape] = (path, count, os.path.getsize(path))
    return files


def user_seconds(cmd):
    """Runs cmd with stdout discarded; its user CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before


def instructions(cmd):
    """Instructions executed by cmd under callgrind (its "Collected" total)."""
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True, text=True)
    for line in out.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    raise RuntimeError("no instruction count in callgrind's output:\n" + out.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logfold", action="append", default=[], help="binary (repeat to compare)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="comma list of " + ",".join(SHAPES))
    ap.add_argument("-n", type=int, default=300_000, help="lines per shape (300000)")
    ap.add_argument("--long-lines", type=int, default=30_000, help="lines of shape long (30000)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=1, help="alternated runs per binary and shape")
    ap.add_argument("--cpu", type=int, default=None, help="pin each replay to this core")
    ap.add_argument("--window", default="1h",
                    help="replay --window: long enough that unique lines reach max_groups and "
                         "evict, as in the daemon under a flood (1h)")
    ap.add_argument("--dir", default=os.path.join(HERE, "..", "build", "shapes-inputs"))
    ap.add_argument("--write", metavar="DIR", help="only write the inputs to DIR")
    ap.add_argument("--callgrind", action="store_true",
                    help="count instructions under valgrind instead of timing")
    a = ap.parse_args()
    if a.write:
        for shape, (path, count, size) in write_inputs(a.write, a.n, a.long_lines,
                                                       a.seed).items():
            print("%s %s %d lines %.1f MB" % (shape, path, count, size / 1e6))
        return
    if not a.logfold:
        ap.error("--logfold is needed (or --write)")
    shapes = [s for s in a.shapes.split(",") if s]
    unknown = set(shapes) - set(SHAPES)
    if unknown:
        ap.error("unknown shapes: " + ",".join(sorted(unknown)))
    files = write_inputs(a.dir, a.n, a.long_lines, a.seed)
    pin = ["taskset", "-c", str(a.cpu)] if a.cpu is not None else []
    if a.callgrind:
        counts = {(b, s): instructions([b, "replay", "--format", "syslog", "--window", a.window,
                                        files[s][0]])
                  for s in shapes for b in a.logfold}
        print("| shape | lines | " + " | ".join("%s instructions | x first" % b
                                              for b in a.logfold) + " |")
        print("|---|---|" + "---|---|" * len(a.logfold))
        for s in shapes:
            first = counts[(a.logfold[0], s)]
            cells = ["%d | %.4f" % (counts[(b, s)], counts[(b, s)] / first) for b in a.logfold]
            print("| %s | %d | %s |" % (s, files[s][1], " | ".join(cells)))
        return
    times = {(b, s): [] for b in a.logfold for s in shapes}
    for _ in range(a.rounds):
        for s in shapes:
            for b in a.logfold:
                times[(b, s)].append(user_seconds(
                    pin + [b, "replay", "--format", "syslog", "--window", a.window, files[s][0]]))
    print("| shape | lines | MB | " + " | ".join("%s user s | k lines/s" % b for b in a.logfold)
          + " |")
    print("|---|---|---|" + "---|---|" * len(a.logfold))
    for s in shapes:
        _, count, size = files[s]
        cells = []
        for b in a.logfold:
            t = times[(b, s)]
            cells.append(", ".join("%.2f" % x for x in t))
            cells.append("%.0f" % (count / min(t) / 1e3))
        print("| %s | %d | %.1f | %s |" % (s, count, size / 1e6, " | ".join(cells)))


if __name__ == "__main__":
    main()
