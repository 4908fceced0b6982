#!/usr/bin/env bash
# End-to-end throughput: syslog over one TCP connection -> logfold serve -> NDJSON file.
# Prints lines/s (until the engine has processed every line), logfold CPU seconds, peak RSS,
# and checks the accounting (first events + summary counts == lines sent) after SIGTERM.
# Usage: bench/e2e_tcp_file.sh CORPUS [LOGFOLD_BINARY] [SENDER_BINARY]
# CORPUS: e.g. python3 ../shared/corpus/gen_corpus.py -n 1000000 -o mix1m.log
# SENDER: a fast replay client taking "tcp FILE PORT" (default: ../shared/corpus/sender.c,
# compiled into the temp dir).
set -euo pipefail
corpus=$1
here=$(cd "$(dirname "$0")/.." && pwd)
logfold=${2:-$here/build/logfold}
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
sender=${3:-}
if [ -z "$sender" ]; then
  gcc -O2 -o "$tmp/sender" "$here/../shared/corpus/sender.c"
  sender=$tmp/sender
fi
port=${LOGFOLD_BENCH_PORT:-15514}
mport=${LOGFOLD_BENCH_METRICS_PORT:-19514}
cat > "$tmp/bench.json" <<JSON
{
  "log": {"level": "warn"},
  "inputs": [{"name": "tcp", "type": "tcp", "address": "127.0.0.1", "port": $port,
              "max_message_size": "64KiB"}],
  "engine": {"window": "10s"},
  "outputs": [{"name": "file", "type": "file", "path": "$tmp/events.ndjson"}],
  "metrics": {"enabled": true, "address": "127.0.0.1", "port": $mport}
}
JSON
lines=$(wc -l < "$corpus")
"$logfold" serve --config "$tmp/bench.json" 2> "$tmp/stderr.log" &
pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$mport/metrics" > /dev/null && break
  sleep 0.05
done
processed() {
  curl -sf "http://127.0.0.1:$mport/metrics" | awk '/^logfold_lines_processed_total /{print $2}'
}
start=$(date +%s.%N)
"$sender" tcp "$corpus" "$port" > /dev/null
deadline=$(( $(date +%s) + 600 ))
while [ "$(processed)" != "$lines" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.02; done
end=$(date +%s.%N)
cpu=$(awk '{printf "%.2f", ($14 + $15) / 100}' /proc/$pid/stat)
rss=$(awk '/VmHWM/{print $2}' /proc/$pid/status)
kill -TERM "$pid"
wait "$pid"
accounted=$(python3 - "$tmp/events.ndjson" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    e = json.loads(line)
    n += 1 if e["kind"] == "first" else e.get("count", 0)
print(n)
PY
)
python3 - <<PY
secs = $end - $start
print("lines %d  seconds %.2f  lines/s %.0f  MB/s %.1f  logfold CPU-s %s  peak RSS %s KiB  accounted %s"
      % ($lines, secs, $lines / secs, $(stat -c %s "$corpus") / secs / 1e6, "$cpu", "$rss", "$accounted"))
PY
[ "$accounted" = "$lines" ] || { echo "ACCOUNTING MISMATCH: $accounted != $lines" >&2; exit 1; }
