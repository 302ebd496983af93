#!/usr/bin/env bash
# Instructions a request, under callgrind: `snowflake serve` (`GET
# /api/v1/ids` and `GET /healthz`) against the bare axum route, each served
# SMALL and LARGE times over one kept-alive connection by a Python client.
# The difference between the two runs, divided by LARGE - SMALL, is the cost
# of a request with start-up left out. Unlike req/s under wrk it does not
# depend on what else the machine does; it counts user space only (the
# kernel's share, loopback TCP and wake-ups, is the same for both servers).
#
#   bench/http/callgrind.sh            # about 4 minutes once built
#   SMALL=1000 LARGE=6000 bench/http/callgrind.sh
#
# Two figures a request: the whole process, in which tokio's idle workers
# searching for work add a few hundred instructions of noise from run to
# run, and the connection's own task (the function named below, inclusive),
# which holds parsing, routing, the layers, the handler and the writing.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
SMALL=${SMALL:-2000}
LARGE=${LARGE:-12000}
SNOWFLAKE=${SNOWFLAKE_BIN:-$ROOT/target/release/snowflake}
BARE="$HERE/target/release/bare-hello"
OUT=$(mktemp -d "${TMPDIR:-/tmp}/http-callgrind.XXXXXX")

command -v valgrind >/dev/null || { echo "callgrind.sh: needs valgrind" >&2; exit 1; }
cargo build --release --quiet --manifest-path "$HERE/Cargo.toml"
[ -n "${SNOWFLAKE_BIN:-}" ] || cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" -p snowflake-cli


# shellcheck source=free-port.sh
source "$HERE/free-port.sh"

# run WHO PATH COUNT: the callgrind profile of WHO (bare or ours) answering
# COUNT requests for PATH, in $OUT/WHO-PATH.COUNT.out
run() {
  local who=$1 path=$2 count=$3 p pid server
  p=$(free_port)
  if [ "$who" = bare ]; then
    server=("$BARE" "$p")
  else
    server=("$SNOWFLAKE" serve --listen "127.0.0.1:$p")
  fi
  RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$OUT/$who${path//\//-}.$count.out" \
    "${server[@]}" 2>"$OUT/$who${path//\//-}.$count.log" &
  pid=$!
  python3 "$HERE/keepalive-client.py" "$p" "$path" "$count"
  kill -TERM "$pid"
  wait "$pid" || true
}

# inclusive FILE PATTERN: the inclusive count of the first function matching
inclusive() {
  callgrind_annotate --inclusive=yes --threshold=100 "$1" 2>/dev/null |
    grep -E "$2" | grep -v '=>' | head -1 | awk '{gsub(",", "", $1); print $1}'
}

total() {
  callgrind_annotate "$1" 2>/dev/null | sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,
}

# The connection's task in each server: axum::serve's, and ours (serve.rs).
BARE_TASK='axum::serve::handle_connection::\{\{closure\}\}::\{\{closure\}\} '
OURS_TASK='snowflake_server::serve::connection::connection::\{\{closure\}\} '

per() { python3 -c "print(round(($2 - $1) / ($LARGE - $SMALL)))"; }

echo "Requests: $SMALL and $LARGE over one kept-alive connection; per request = difference ÷ $((LARGE - SMALL))."
echo
echo "| server, route | instructions a request, process | connection task | task ÷ bare's |"
echo "| --- | ---: | ---: | ---: |"
bare_task=
for subject in "bare /hello" "ours /api/v1/ids" "ours /healthz"; do
  read -r who path <<<"$subject"
  run "$who" "$path" "$SMALL"
  run "$who" "$path" "$LARGE"
  small="$OUT/$who${path//\//-}.$SMALL.out"
  large="$OUT/$who${path//\//-}.$LARGE.out"
  task=$OURS_TASK
  [ "$who" = bare ] && task=$BARE_TASK
  process=$(per "$(total "$small")" "$(total "$large")")
  conn=$(per "$(inclusive "$small" "$task")" "$(inclusive "$large" "$task")")
  [ "$who" = bare ] && bare_task=$conn
  ratio=$(python3 -c "print(f'{$conn / $bare_task:.2f}')")
  echo "| $who \`GET $path\` | $process | $conn | $ratio |"
done
echo
echo "Profiles (callgrind_annotate them for the breakdown): $OUT"
