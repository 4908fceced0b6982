#!/bin/bash
# Produces Placement/Placement_raw.log: a real OpenStack Placement 16.0 API service (PyPI
# openstack-placement, logging through oslo.log with debug on, its default format: time, pid,
# level, logger, [request context]) on a SQLite database, driven by placement_drive.py as a
# cloud's compute and scheduler services would, with faults; two restarts, one while the
# database is gone. Usage: placement.sh OUTDIR [VENV]   (127.0.0.1:58778; VENV holds
# `pip install openstack-placement`, default /opt/placement)
set -eu
out=$1
venv=${2:-/opt/placement}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/unseen-placement.XXXXXX)
cat >"$w/placement.conf" <<C
[DEFAULT]
debug = True
log_file = $w/placement.log
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///$w/placement.sqlite
[placement]
randomize_allocation_candidates = True
C
export OS_PLACEMENT_CONFIG_DIR=$w
"$venv/bin/placement-manage" --config-file "$w/placement.conf" db sync >/dev/null 2>&1
start() {
  "$venv/bin/python" "$here/placement_serve.py" 58778 >>"$w/stderr" 2>&1 &
  srv=$!
  for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:58778/ && return; sleep 0.2; done
}
start
"$venv/bin/python" "$here/placement_drive.py" http://127.0.0.1:58778 100 || true
kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true
mv "$w/placement.sqlite" "$w/placement.sqlite.away"
start
curl -s -o /dev/null -H 'X-Auth-Token: admin' http://127.0.0.1:58778/resource_providers || true
curl -s -o /dev/null -H 'X-Auth-Token: admin' http://127.0.0.1:58778/traits || true
kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true
mv "$w/placement.sqlite.away" "$w/placement.sqlite"
start
"$venv/bin/python" "$here/placement_drive.py" http://127.0.0.1:58778 50 || true
kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true
mkdir -p "$out/Placement"
cp "$w/placement.log" "$out/Placement/Placement_raw.log"
rm -rf "$w"
