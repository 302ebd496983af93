#!/usr/bin/env bash
# Two builds of `snowflake serve` and the bare axum route, interleaved:
# req/s under wrk and the server's CPU per request (perf stat's task-clock
# over the run, divided by the requests served). For "did this change make
# the service faster", on a machine whose speed wanders between runs.
#
#   bench/http/ab.sh BEFORE_BIN AFTER_BIN [ROUNDS]      (default 4 rounds)
#
# Build BEFORE_BIN from an older commit in a worktree, e.g.
#   git worktree add /tmp/before REV && (cd /tmp/before &&
#     CARGO_TARGET_DIR=/tmp/before-target cargo build --release -p snowflake-cli)
# Needs wrk and perf.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -ge 2 ] || { echo "usage: $0 BEFORE_BIN AFTER_BIN [ROUNDS]" >&2; exit 2; }
BEFORE=$1 AFTER=$2 ROUNDS=${3:-4}
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
BARE="$HERE/target/release/bare-hello"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/http-ab.XXXXXX")
PID=
trap '[ -n "$PID" ] && kill "$PID" 2>/dev/null; true' EXIT

# name port path command... : one 8 s wrk run against a server started for it
measure() {
  local name=$1 port=$2 path=$3 i
  shift 3
  "$@" >"$OUT/$name.log" 2>&1 &
  PID=$!
  for i in $(seq 100); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port$path" 2>/dev/null && break
    sleep 0.1
  done
  perf stat -e task-clock -p "$PID" -o "$OUT/perf.txt" -- sleep 8 &
  local stat=$!
  wrk -t1 -c32 -d8s "http://127.0.0.1:$port$path" >"$OUT/wrk.txt"
  wait "$stat"
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  PID=
  python3 - "$name" "$OUT/wrk.txt" "$OUT/perf.txt" <<'PY'
import re, sys
name, wrk, perf = sys.argv[1:]
w = open(wrk).read()
reqs = int(re.search(r"(\d+) requests in", w).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", w).group(1))
ms = float(re.search(r"([\d,.]+) msec task-clock", open(perf).read()).group(1).replace(",", ""))
print(f"| {name} | {rps:,.0f} | {ms * 1000 / reqs:.2f} |")
PY
}

echo "| server | req/s | server CPU µs/req |"
echo "| --- | ---: | ---: |"
for round in $(seq "$ROUNDS"); do
  measure "bare, round $round" 23456 /hello "$BARE" 23456
  measure "before, round $round" 23458 /api/v1/ids env RUST_LOG=warn "$BEFORE" serve --listen 127.0.0.1:23458
  measure "after, round $round" 23457 /api/v1/ids env RUST_LOG=warn "$AFTER" serve --listen 127.0.0.1:23457
done
