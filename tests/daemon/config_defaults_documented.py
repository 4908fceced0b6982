#!/usr/bin/env python3
"""Checks every default in config/README.md's key tables against what
`logfold check-config --print` fills in, so the documentation cannot drift from the option
structs (daemon/config/options/), where the defaults live.

usage: config_defaults_documented.py LOGFOLD_BINARY CONFIG_README
"""
import json
import os
import re
import subprocess
import sys
import tempfile

# Only the keys each entry needs (required ones, and those that make an optional key
# printed: format json, fsync interval, when_full drop, format loki, disk_buffer). A key set here is not
# checked on that entry; the other entries of the type cover it.
SOURCE = {
    "inputs": [
        {"name": "u", "type": "udp", "port": 1},
        {"name": "t", "type": "tcp", "port": 2},
        {"name": "f", "type": "file", "path": "/nonexistent/in.log", "format": "json"},
        {"name": "s", "type": "stdin"},
        {"name": "fm", "type": "file", "path": "/nonexistent/m.log", "multiline_start": "^x"},
        {"name": "x", "type": "unix", "path": "/nonexistent/log.sock"},
        {"name": "j", "type": "journald"},
        {"name": "r", "type": "relp", "port": 3},
        {"name": "k", "type": "kafka", "brokers": "127.0.0.1:9092", "topics": ["logs"]},
        {"name": "l", "type": "tls", "port": 4,
         "tls": {"cert_file": "/nonexistent/c.pem", "key_file": "/nonexistent/k.pem"}},
    ],
    "outputs": [
        {"name": "o", "type": "stdout"},
        {"name": "f1", "type": "file", "path": "/nonexistent/a.ndjson",
         "disk_buffer": "/nonexistent/disk"},
        {"name": "f2", "type": "file", "path": "/nonexistent/b.ndjson", "fsync": "interval",
         "when_full": "drop"},
        {"name": "t", "type": "tcp", "address": "collector", "port": 1},
        {"name": "s", "type": "syslog", "address": "relay", "port": 1},
        {"name": "r", "type": "relp", "address": "collector", "port": 2514},
        {"name": "st", "type": "syslog", "address": "relay", "port": 2, "tls": {}},
        {"name": "kf", "type": "kafka", "brokers": "127.0.0.1:9092", "topic": "events"},
        {"name": "ch", "type": "http", "url": "http://ch:8123/", "format": "clickhouse",
         "table": "t"},
        {"name": "lk", "type": "http", "url": "http://loki:3100/", "format": "loki"},
    ],
}

# README section (## or ### heading) -> where its keys are in the printed config: a
# top-level object, or the array entries of the listed types (None: every type).
SECTIONS = {
    ("log", None): ("log", None),
    ("inputs", "Keys for every input type"): ("inputs", None),
    ("inputs", "udp, tcp and tls"): ("inputs", {"udp", "tcp", "tls"}),
    ("inputs", "udp only"): ("inputs", {"udp"}),
    ("inputs", "tcp and tls"): ("inputs", {"tcp", "tls"}),
    ("inputs", "tls only"): ("inputs", {"tls"}),
    ("inputs", "file only"): ("inputs", {"file"}),
    ("inputs", "relp only"): ("inputs", {"relp"}),
    ("inputs", "unix only"): ("inputs", {"unix"}),
    ("inputs", "journald only"): ("inputs", {"journald"}),
    ("inputs", "kafka only"): ("inputs", {"kafka"}),
    ("engine", None): ("engine", None),
    ("workers", None): ("workers", None),
    ("outputs", "Keys for every output type"): ("outputs", None),
    ("outputs", "file"): ("outputs", {"file"}),
    ("outputs", "tcp"): ("outputs", {"tcp"}),
    ("outputs", "syslog"): ("outputs", {"syslog"}),
    ("outputs", "relp"): ("outputs", {"relp"}),
    ("outputs", "kafka"): ("outputs", {"kafka"}),
    ("outputs", "http"): ("outputs", {"http"}),
    ("outputs", "TLS on outputs"): ("outputs", {"syslog"}),
    ("metrics", None): ("metrics", None),
    ("limits", None): ("limits", None),
    ("state", None): ("state", None),
}

DURATION = re.compile(r"^(\d+)(us|ms|s|m|h|d)$")
SIZE = re.compile(r"^(\d+)(B|KB|MB|GB|KiB|MiB|GiB)?$")
US = {"us": 1, "ms": 10**3, "s": 10**6, "m": 60 * 10**6, "h": 3600 * 10**6,
      "d": 86400 * 10**6}
BYTES = {None: 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "KiB": 2**10,
         "MiB": 2**20, "GiB": 2**30}


def normal(value):
    """Durations and sizes compared by value ("60s" is "1m"); anything else as is."""
    if isinstance(value, str):
        if value == "0":
            return ("number", 0)
        m = DURATION.match(value)
        if m:
            return ("duration", int(m.group(1)) * US[m.group(2)])
        m = SIZE.match(value)
        if m and m.group(2):
            return ("size", int(m.group(1)) * BYTES[m.group(2)])
    return value


def documented_defaults(readme):
    """Yields (section, key, default) for every table row whose default is one literal."""
    h2 = h3 = None
    for line in readme.splitlines():
        if line.startswith("## "):
            h2, h3 = line[3:].strip(), None
            continue
        if line.startswith("### "):
            h3 = line[4:].strip()
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 4 or not cells[0].startswith("`"):
            continue
        key = cells[0].strip("`")
        default = re.fullmatch(r"`([^`]+)`", cells[2])
        if default:
            yield (h2, h3), key, json.loads(default.group(1))


def main():
    binary, readme_path = sys.argv[1], sys.argv[2]
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "config.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(SOURCE, f)
        run = subprocess.run([binary, "check-config", path, "--print"], capture_output=True,
                             text=True, check=False)
    if run.returncode != 0:
        print(run.stdout + run.stderr)
        return 1
    printed = json.loads(run.stdout)

    failures, checked = [], 0
    for section, key, default in documented_defaults(readme):
        if section not in SECTIONS:
            failures.append(f"{section}: key {key} is in a table this test does not know")
            continue
        where, types = SECTIONS[section]
        if types is None and where not in ("inputs", "outputs"):
            entries = [(printed[where], {})]
        else:
            entries = [(e, s) for e, s in zip(printed[where], SOURCE[where])
                       if types is None or e["type"] in types]
        compared = 0
        for entry, source in entries:
            # Keys of a "tls" object are documented in the same section as the key itself.
            if key not in entry and isinstance(entry.get("tls"), dict):
                entry, source = entry["tls"], source.get("tls", {})
            if key in source or key not in entry:
                continue
            compared += 1
            if normal(entry[key]) != normal(default):
                failures.append(f"{where}.{key} ({entry.get('name', where)}): README says "
                                f"{json.dumps(default)}, check-config --print gives "
                                f"{json.dumps(entry[key])}")
        if compared == 0:
            failures.append(f"{section}: default of {key} not checked (not printed for any "
                            "entry of this test's config)")
        checked += compared
    for failure in failures:
        print(failure)
    print(f"{checked} documented defaults compared, {len(failures)} problems")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
