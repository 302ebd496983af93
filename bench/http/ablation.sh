#!/usr/bin/env bash
# Diagnostic, not part of run.sh: prices each layer snowflake-server puts on a
# request by serving `GET /hello` under one layer at a time (layered-hello),
# next to the bare route and to `snowflake serve`'s own `/healthz`. Each
# server runs only while it is measured, since the clock variant burns CPU
# even when idle. Prints a markdown table of medians.
#
#   bench/http/ablation.sh             # about 3 minutes once built
#   SNOWFLAKE_BIN=/path/to/snowflake DURATION=5s RUNS=3 bench/http/ablation.sh
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-5s}
RUNS=${RUNS:-3}
WRK=(wrk -t1 -c32)
SNOWFLAKE=${SNOWFLAKE_BIN:-$ROOT/target/release/snowflake}
LAYERED="$HERE/target/release/layered-hello"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/http-ablation.XXXXXX")
VARIANTS=(none clock trace record problem timeout body concurrency
  "trace,record,problem,timeout,body,concurrency" all healthz)

cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
[ -x "$SNOWFLAKE" ] || { echo "ablation.sh: no $SNOWFLAKE; build it or set SNOWFLAKE_BIN" >&2; exit 1; }

PID=
stop() {
  if [ -n "$PID" ]; then
    kill "$PID" 2>/dev/null || true
    wait "$PID" 2>/dev/null || true
    PID=
  fi
}
trap stop EXIT
trap 'exit 130' INT TERM

# shellcheck source=free-port.sh
source "$HERE/free-port.sh"

measure() { # variant
  local variant=$1 p url i before after file rps n
  p=$(free_port)
  if [ "$variant" = healthz ]; then
    RUST_LOG=warn "$SNOWFLAKE" serve --listen "127.0.0.1:$p" 2>/dev/null &
    url="http://127.0.0.1:$p/healthz"
  else
    "$LAYERED" "$p" "$variant" 2>/dev/null &
    url="http://127.0.0.1:$p/hello"
  fi
  PID=$!
  for i in $(seq 100); do
    curl -fsS -o /dev/null "$url" 2>/dev/null && break
    sleep 0.1
  done
  "${WRK[@]}" -d1s "$url" >/dev/null
  file="$OUT/$(tr , + <<<"$variant").$(date +%s%N)"
  before=$(awk '{print $14 + $15}' "/proc/$PID/stat")
  "${WRK[@]}" -d"$DURATION" "$url" >"$file"
  after=$(awk '{print $14 + $15}' "/proc/$PID/stat")
  stop
  rps=$(awk '/^Requests\/sec:/ {print $2}' "$file")
  n=$(awk '/requests in/ {print $1}' "$file")
  echo "$variant $rps $(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$n" 'BEGIN {printf "%.2f", t / hz * 1e6 / n}')" >>"$OUT/results"
  echo "ablation.sh: $variant $rps req/s" >&2
}

for r in $(seq "$RUNS"); do
  for v in "${VARIANTS[@]}"; do measure "$v"; done
done

median() {
  awk -v n="$1" -v c="$2" '$1 == n {print $c}' "$OUT/results" | sort -g |
    awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
BASE=$(median none 2)
BASE_CPU=$(median none 3)
echo "| \`GET /hello\` under | req/s (median of $RUNS × $DURATION) | of bare | server CPU µs/req | vs bare |"
echo "| --- | ---: | ---: | ---: | ---: |"
for v in "${VARIANTS[@]}"; do
  label="$v"
  [ "$v" = none ] && label="nothing (bare)"
  [ "$v" = healthz ] && label="ours: \`snowflake serve\` \`GET /healthz\`"
  [ "$v" = "trace,record,problem,timeout,body,concurrency" ] && label="all but the clock thread"
  [ "$v" = all ] && label="all (clock, trace, record, problem, timeout, body, concurrency)"
  rps=$(median "$v" 2)
  cpu=$(median "$v" 3)
  printf '| %s | %.0f | %.1f %% | %.2f | %+.2f |\n' "$label" "$rps" \
    "$(awk -v a="$rps" -v b="$BASE" 'BEGIN {print 100 * a / b}')" "$cpu" \
    "$(awk -v a="$cpu" -v b="$BASE_CPU" 'BEGIN {print a - b}')"
done
echo
echo "Load average after: $(cut -d' ' -f1-3 /proc/loadavg). Raw wrk output: $OUT"
