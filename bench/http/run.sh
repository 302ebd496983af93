#!/usr/bin/env bash
# The HTTP service under load: `snowflake serve` against a bare axum route,
# both measured the same way with wrk on loopback, then the web page's first
# contentful paint in headless Chromium. Prints a markdown report on stdout;
# wrk's raw output stays in the folder named at the end.
#
#   bench/http/run.sh                  # about 2.5 minutes once built
#   DURATION=5s RUNS=3 bench/http/run.sh
#
# Knobs (environment): DURATION (wrk -d per run, default 10s), BATCH_DURATION
# (for the count=4096 runs, default 5s: they sit at the generator's ceiling
# within a second), RUNS (interleaved repetitions, default 3), THREADS and
# CONNECTIONS (wrk -t/-c, default 1 and 32), LOADS (page loads, default 10),
# SNOWFLAKE_BIN (measure this binary instead of building the work tree's,
# e.g. one built from a clean checkout while the tree is mid-edit).
#
# On a 2-core machine wrk and the server share the CPU, so req/s here is a
# property of the pair; the ratio between the two servers is what to read.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-10s}
BATCH_DURATION=${BATCH_DURATION:-5s}
RUNS=${RUNS:-3}
THREADS=${THREADS:-1}
CONNECTIONS=${CONNECTIONS:-32}
LOADS=${LOADS:-10}
WRK=(wrk "-t$THREADS" "-c$CONNECTIONS" --latency)
OUT=$(mktemp -d "${TMPDIR:-/tmp}/http-bench.XXXXXX")

for tool in wrk curl node ss; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done

log() { echo "run.sh: $*" >&2; }

if [ -n "${SNOWFLAKE_BIN:-}" ]; then
  SNOWFLAKE=$SNOWFLAKE_BIN
else
  log "building (release): snowflake-cli"
  (cd "$ROOT" && cargo build --release --quiet -p snowflake-cli)
  SNOWFLAKE="$ROOT/target/release/snowflake"
fi
log "building (release): bare-hello"
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
BARE="$HERE/target/release/bare-hello"

# shellcheck source=free-port.sh
source "$HERE/free-port.sh"

PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${PIDS[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_up() {
  local url=$1 i
  for i in $(seq 100); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && return 0
    sleep 0.1
  done
  log "no answer from $url; see $OUT"
  exit 1
}

OURS_PORT=$(free_port)
BARE_PORT=$(free_port)
while [ "$BARE_PORT" = "$OURS_PORT" ]; do BARE_PORT=$(free_port); done
# RUST_LOG=warn: only warnings reach stderr, so nothing is written per request.
RUST_LOG=warn "$SNOWFLAKE" serve --listen "127.0.0.1:$OURS_PORT" 2>"$OUT/snowflake.stderr" &
OURS_PID=$!
PIDS+=("$OURS_PID")
"$BARE" "$BARE_PORT" 2>"$OUT/bare.stderr" &
BARE_PID=$!
PIDS+=("$BARE_PID")
OURS="http://127.0.0.1:$OURS_PORT"
BARE_URL="http://127.0.0.1:$BARE_PORT"
wait_up "$OURS/healthz"
wait_up "$BARE_URL/hello"

# CPU time (user+system, clock ticks) a process has used so far.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
TICK=$(getconf CLK_TCK)

# wrk's latency figure in milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    if (v ~ /us$/) { sub(/us$/, "", v); printf "%.3f", v / 1000 }
    else if (v ~ /ms$/) { sub(/ms$/, "", v); printf "%.3f", v }
    else if (v ~ /s$/) { sub(/s$/, "", v); printf "%.3f", v * 1000 }
    else print v }'
}

# bench NAME PID DURATION URL [wrk args...]: one wrk run; appends
# "name rps p50 p99 mb_per_s cpu_us_per_req errors" to $OUT/results.
bench() {
  local name=$1 pid=$2 duration=$3 url=$4
  shift 4
  local file="$OUT/$name.$(date +%s%N).txt" before after
  before=$(cpu_ticks "$pid")
  "${WRK[@]}" -d"$duration" "$@" "$url" >"$file"
  after=$(cpu_ticks "$pid")
  local rps p50 p99 mbps errors requests cpu
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$file")
  requests=$(awk '/requests in/ {print $1}' "$file")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$file")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$file")")
  mbps=$(awk '/^Transfer\/sec:/ {v = $2; if (v ~ /GB$/) m = v * 1024; else if (v ~ /KB$/) m = v / 1024; else m = v + 0; printf "%.1f", m}' "$file")
  errors=$(awk '/Non-2xx|Socket errors/ {n++} END {print n + 0}' "$file")
  cpu=$(awk -v t=$((after - before)) -v hz="$TICK" -v n="$requests" 'BEGIN {printf "%.1f", t / hz * 1e6 / n}')
  [ "$errors" = 0 ] || log "$name: wrk reported errors, see $file"
  echo "$name $rps $p50 $p99 $mbps $cpu $errors" >>"$OUT/results"
  log "$name: $rps req/s, p50 ${p50} ms, p99 ${p99} ms, server CPU ${cpu} us/req"
}

# median NAME COLUMN: the median of one column over a name's runs.
median() {
  awk -v n="$1" -v c="$2" '$1 == n {print $c}' "$OUT/results" | sort -g |
    awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
runs_of() { awk -v n="$1" '$1 == n {printf "%s%.0f", sep, $2; sep = ", "}' "$OUT/results"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.1f", 100 * a / b}'; }

LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
log "warming up both servers"
"${WRK[@]}" -d2s "$BARE_URL/hello" >/dev/null
"${WRK[@]}" -d2s "$OURS/api/v1/ids" >/dev/null

for i in $(seq "$RUNS"); do
  log "round $i of $RUNS"
  bench bare "$BARE_PID" "$DURATION" "$BARE_URL/hello"
  bench ids "$OURS_PID" "$DURATION" "$OURS/api/v1/ids"
  bench healthz "$OURS_PID" "$DURATION" "$OURS/healthz"
done
for i in $(seq "$RUNS"); do
  bench batch_json "$OURS_PID" "$BATCH_DURATION" "$OURS/api/v1/ids?count=4096"
  bench batch_plain "$OURS_PID" "$BATCH_DURATION" "$OURS/api/v1/ids?count=4096" -H 'Accept: text/plain'
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
# Checks the server gave 4096 IDs a request in both shapes.
JSON_IDS=$(curl -fsS "$OURS/api/v1/ids?count=4096" | grep -o '"[0-9]*"' | wc -l)
PLAIN_IDS=$(curl -fsS -H 'Accept: text/plain' "$OURS/api/v1/ids?count=4096" | wc -l)

PLAYWRIGHT_CORE=${PLAYWRIGHT_CORE:-}
if [ -z "$PLAYWRIGHT_CORE" ]; then
  for candidate in "$HERE/node_modules/playwright-core/index.mjs" \
    "$ROOT/crates/snowflake-server/tests/browser/node_modules/playwright-core/index.mjs"; do
    if [ -f "$candidate" ]; then PLAYWRIGHT_CORE=$candidate; break; fi
  done
fi
if [ -z "$PLAYWRIGHT_CORE" ]; then
  log "installing playwright-core into bench/http/node_modules"
  (cd "$HERE" && npm install --no-save --no-audit --no-fund playwright-core@1.65.1 >&2)
  PLAYWRIGHT_CORE="$HERE/node_modules/playwright-core/index.mjs"
fi
export PLAYWRIGHT_CORE
log "page loads in headless Chromium: ours, then the bare route as the floor"
node "$HERE/fcp.mjs" "$OURS/" "$LOADS" >"$OUT/fcp-ours.json"
node "$HERE/fcp.mjs" "$BARE_URL/hello" "$LOADS" >"$OUT/fcp-bare.json"
json() { node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1])); const v = process.argv[2].split(".").reduce((o, k) => o[k], o); console.log(Array.isArray(v) ? v.join(", ") : typeof v === "number" ? Math.round(v * 10) / 10 : v)' "$1" "$2"; }

# The report.
BARE_RPS=$(median bare 2)
IDS_RPS=$(median ids 2)
HEALTH_RPS=$(median healthz 2)
BJ_RPS=$(median batch_json 2)
BP_RPS=$(median batch_plain 2)
BJ_IDS=$(awk -v r="$BJ_RPS" 'BEGIN {printf "%.0f", r * 4096}')
BP_IDS=$(awk -v r="$BP_RPS" 'BEGIN {printf "%.0f", r * 4096}')
IDS_RATIO=$(ratio "$IDS_RPS" "$BARE_RPS")
# Each round's ids run follows its bare run, so the two saw the same load from
# the rest of the machine; the per-round ratios show how much that moves.
ROUND_RATIOS=$(awk '$1 == "bare" {b = $2} $1 == "ids" {printf "%s%.1f %%", sep, 100 * $2 / b; sep = ", "}' "$OUT/results")
BJ_RATIO=$(ratio "$BJ_IDS" 4096000)
BP_RATIO=$(ratio "$BP_IDS" 4096000)
verdict() { awk -v v="$1" -v t="$2" 'BEGIN {print (v >= t) ? "met" : "not met"}'; }

fcp_row() { # file label
  local f=$1
  echo "| $2 | $(json "$f" fcp_median_ms) | $(json "$f" fcp_min_ms)–$(json "$f" fcp_max_ms) | $(json "$f" assets_done_median_ms) | $(json "$f" dcl_median_ms) | $(json "$f" load_median_ms) | $(json "$f" page_requests) | $(json "$f" page_body_bytes) ($(json "$f" page_wire_bytes)) |"
}

row() { # name label
  printf '| %s | %.0f | %s | %s | %s | %s | %s |\n' "$2" "$(median "$1" 2)" "$(runs_of "$1")" \
    "$(median "$1" 3)" "$(median "$1" 4)" "$(median "$1" 6)" "$(median "$1" 5)"
}

cat <<EOF
Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(uname -sr).
Date: $(date -u +%Y-%m-%dT%H:%MZ). Load average before/after: $LOAD_BEFORE / $LOAD_AFTER.
wrk: \`${WRK[*]} -d$DURATION\` (count=4096: \`-d$BATCH_DURATION\`), $RUNS runs each, interleaved; medians shown.
Servers: \`RUST_LOG=warn $SNOWFLAKE serve --listen 127.0.0.1:$OURS_PORT\` (release) and \`bare-hello $BARE_PORT\` (bench/http, axum 0.8, tokio multi-thread, GET /hello).
wrk and the server share the $(nproc) cores.

| route | req/s (median) | runs | p50 ms | p99 ms | server CPU µs/req | MB/s |
| --- | ---: | --- | ---: | ---: | ---: | ---: |
$(row bare "bare axum \`GET /hello\`")
$(row ids "ours \`GET /api/v1/ids\`")
$(row healthz "ours \`GET /healthz\` (same middleware, trivial handler)")

\`GET /api/v1/ids\` / bare: **$IDS_RATIO %** (target ≥ 85 %: $(verdict "$IDS_RATIO" 85)); round by round: $ROUND_RATIOS.
\`GET /healthz\` / bare: $(ratio "$HEALTH_RPS" "$BARE_RPS") %.
Server CPU per request, which the rest of the machine moves less than req/s: ours \`/api/v1/ids\` $(median ids 6) µs, bare $(median bare 6) µs (×$(awk -v a="$(median ids 6)" -v b="$(median bare 6)" 'BEGIN {printf "%.2f", a / b}')).

| \`GET /api/v1/ids?count=4096\` | req/s (median) | runs | IDs/s | of 4,096,000/s | p50 ms | p99 ms | MB/s |
| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |
| JSON | $BJ_RPS | $(runs_of batch_json) | $BJ_IDS | $BJ_RATIO % | $(median batch_json 3) | $(median batch_json 4) | $(median batch_json 5) |
| \`Accept: text/plain\` | $BP_RPS | $(runs_of batch_plain) | $BP_IDS | $BP_RATIO % | $(median batch_plain 3) | $(median batch_plain 4) | $(median batch_plain 5) |

IDs per second through count=4096 (target ≥ 90 % of the ceiling): JSON $(verdict "$BJ_RATIO" 90), text/plain $(verdict "$BP_RATIO" 90).
A spot check returned $JSON_IDS IDs (JSON) and $PLAIN_IDS (text/plain) per request.

| page in headless Chromium, $LOADS fresh-context loads (medians) | FCP ms | FCP min–max ms | CSS+JS arrived ms | DOMContentLoaded ms | load ms | HTML+CSS+JS requests | HTML+CSS+JS bytes (with headers) |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
$(fcp_row "$OUT/fcp-ours.json" "ours \`GET /\`")
$(fcp_row "$OUT/fcp-bare.json" "bare \`GET /hello\` (13 bytes of text: the browser's floor)")

Our page's parts (body bytes): $(node -e 'const o = JSON.parse(require("fs").readFileSync(process.argv[1])); console.log(o.resources.map((r) => r.path + " " + r.body + " (" + r.type + ")").join(", "))' "$OUT/fcp-ours.json");
after the HTML, CSS and JS, the script makes $(json "$OUT/fcp-ours.json" api_requests) API calls ($(json "$OUT/fcp-ours.json" api_body_bytes) bytes). The server does not compress.
FCP per load (ms): $(json "$OUT/fcp-ours.json" fcp_ms).

Raw wrk output and server logs: $OUT
EOF
