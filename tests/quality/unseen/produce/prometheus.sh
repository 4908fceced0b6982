#!/bin/bash
# Produces Prometheus/Prometheus_raw.log: a real Prometheus server's own log (go-kit logfmt on
# stderr, --log.level=debug) while it scrapes good and failing targets (prom_targets.py, a
# closed port, an unresolvable name), evaluates recording and alerting rules (one that fails)
# and sends alerts and remote writes to endpoints that are down, compacts its TSDB; the admin
# API snapshots and deletes series; reloads with good and broken configs; a clean stop, a
# SIGKILL and the WAL replay after it. Usage: prometheus.sh OUTDIR   (127.0.0.1:59090, targets
# on 59100)
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d /tmp/unseen-prometheus.XXXXXX)
python3 "$here/prom_targets.py" 59100 &
targets=$!
cat >"$w/rules.yml" <<R
groups:
- name: app
  interval: 2s
  rules:
  - record: job:app_requests:rate10s
    expr: sum by (job) (rate(app_requests_total[10s]))
  - alert: TargetDown
    expr: up == 0
    for: 4s
    labels: {severity: page}
    annotations: {summary: "{{ \$labels.instance }} is down"}
  - alert: QueueDeep
    expr: app_queue_depth > 12
    labels: {severity: ticket}
  - record: bad:join
    expr: app_requests_total * on() group_left app_requests_total
R
write_config() { # write_config EXTRA-JOBS...
  {
    cat <<C
global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 2s}
rule_files: ["$w/rules.yml"]
alerting: {alertmanagers: [{static_configs: [{targets: ["127.0.0.1:59093"]}]}]}
remote_write: [{url: "http://127.0.0.1:59094/api/v1/write", queue_config: {max_shards: 1, min_backoff: 500ms, max_backoff: 2s}}]
scrape_configs:
- {job_name: self, static_configs: [{targets: ["127.0.0.1:59090"]}]}
- {job_name: app, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: flip, metrics_path: /flip, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: garbage, metrics_path: /garbage, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: badtype, metrics_path: /badtype, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: error, metrics_path: /error, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: slow, metrics_path: /slow, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: many, metrics_path: /many, sample_limit: 50, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: dup, metrics_path: /dup, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: ooo, metrics_path: /ooo, honor_timestamps: true, static_configs: [{targets: ["127.0.0.1:59100"]}]}
- {job_name: closed, static_configs: [{targets: ["127.0.0.1:59101", "127.0.0.1:59102"]}]}
- {job_name: nxdomain, static_configs: [{targets: ["metrics.nowhere.invalid:9100"]}]}
- {job_name: files, file_sd_configs: [{files: ["$w/sd/*.json"], refresh_interval: 2s}]}
C
    for j in "$@"; do echo "$j"; done
  } >"$w/prometheus.yml"
}
mkdir -p "$w/sd"
echo '[{"targets": ["127.0.0.1:59100"], "labels": {"env": "lab"}}]' >"$w/sd/a.json"
write_config
api=http://127.0.0.1:59090
start() {
  prometheus --config.file="$w/prometheus.yml" --storage.tsdb.path="$w/data" \
    --web.listen-address=127.0.0.1:59090 --web.enable-lifecycle --web.enable-admin-api \
    --log.level=debug --storage.tsdb.min-block-duration=20s --storage.tsdb.max-block-duration=1m \
    --storage.tsdb.retention.time=3m 2>>"$w/prometheus.log" &
  prom=$!
  for _ in $(seq 1 100); do curl -sf "$api/-/ready" >/dev/null 2>&1 && return; sleep 0.2; done
}
c() { curl -s -m 5 "$@" >/dev/null 2>&1 || true; }
start
for i in $(seq 1 60); do
  c "$api/api/v1/query?query=up"
  c "$api/api/v1/query?query=sum(rate(app_requests_total[1m]))"
  [ $((i % 5)) = 0 ] && c "$api/api/v1/query?query=app_requests_total{"
  [ $((i % 7)) = 0 ] && c "$api/api/v1/query_range?query=up&start=$(($(date +%s) - 60))&end=$(date +%s)&step=1"
  [ $((i % 9)) = 0 ] && echo '[{"targets": ["127.0.0.1:59100", "127.0.0.1:5910'$((i % 3 + 1))'"]}]' >"$w/sd/b.json"
  [ $((i % 13)) = 0 ] && echo '[{"targets": [' >"$w/sd/c.json"
  [ $((i % 14)) = 0 ] && rm -f "$w/sd/c.json"
  [ $((i % 15)) = 0 ] && c -X POST "$api/api/v1/admin/tsdb/snapshot"
  [ $((i % 16)) = 0 ] && c -X POST "$api/api/v1/admin/tsdb/delete_series?match[]=app_queue_depth"
  [ $((i % 17)) = 0 ] && c -X POST "$api/api/v1/admin/tsdb/clean_tombstones"
  [ $((i % 20)) = 0 ] && c -X POST "$api/-/reload"
  [ $i = 25 ] && { write_config "- {job_name: extra, static_configs: [{targets: [\"127.0.0.1:59100\"]}]}"; c -X POST "$api/-/reload"; }
  [ $i = 30 ] && { write_config "- {job_name: broken, scrape_interval: 5x, static_configs: []}"; c -X POST "$api/-/reload"; }
  [ $i = 32 ] && { echo "groups: [{name: x, rules: [{record: y, expr: 'sum(('}]}]" >"$w/bad_rules.yml"; \
    write_config; sed -i "s|rule_files: \[|rule_files: [\"$w/bad_rules.yml\", |" "$w/prometheus.yml"; c -X POST "$api/-/reload"; }
  [ $i = 34 ] && { write_config; c -X POST "$api/-/reload"; }
  [ $i = 40 ] && { kill "$prom"; wait "$prom" || true; start; }
  sleep 1
done
kill -9 "$prom"; wait "$prom" 2>/dev/null || true
start
for i in $(seq 1 40); do
  c "$api/api/v1/query?query=up"
  [ $((i % 10)) = 0 ] && c -X POST "$api/-/reload"
  sleep 1
done
c -X POST "$api/-/quit"
wait "$prom" || true
kill "$targets"
mkdir -p "$out/Prometheus"
cp "$w/prometheus.log" "$out/Prometheus/Prometheus_raw.log"
rm -rf "$w"
