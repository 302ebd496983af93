#!/usr/bin/env bash
# IDs per second from the extension's snowflake.next_id() against nextval()
# of a plain sequence and the plain-SQL generator (`snowflake sql
# --generator`) on the same private server, with 1 and 16 connections, in
# interleaved rounds so that the machine's mood hits every subject alike;
# then what limits next_id() at 16 connections: the backends' wait events,
# sampled, and where the server's and pgbench's CPU goes (perf cpu-clock
# samples of the machine, read for those two programs). Run through scripts/pg-extension, which installs the extension
# first:
#
#   ./scripts/pg-extension bench [ROUNDS]      (5 rounds, SECS=4 by default)
#
# The server is set up as scripts/sql-test's (fsync=off), as in section 11
# of BENCHMARKS.md; pgbench runs on the same machine, one ID a transaction
# (SELECT), simple protocol.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
rounds=${1:-${ROUNDS:-5}}
secs=${SECS:-4}
bin=${SNOWFLAKE_PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)}

cargo build -q -p snowflake-cli --manifest-path "$root/Cargo.toml"
snowflake=$root/target/debug/snowflake

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-pg-extension.XXXXXX")
chmod 755 "$work"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg=()
if [ "$(id -u)" = 0 ]; then
  as_pg=(runuser -u postgres --)
  chown postgres "$work"
fi
stop() {
  "${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap stop EXIT

"${as_pg[@]}" "$bin/initdb" -D "$work/data" -U postgres --auth=trust -E UTF8 --locale=C >/dev/null
cat >>"$work/data/postgresql.conf" <<EOF
shared_preload_libraries = 'snowflake'
snowflake.fields = 'datacenter=1,machine=1'
fsync = off
max_connections = 50
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$work'
EOF
"${as_pg[@]}" "$bin/pg_ctl" -D "$work/data" -l "$work/log" -w start >/dev/null
db="host=127.0.0.1 port=$port user=postgres dbname=postgres"
psql_() { psql "$db" -X -q -v ON_ERROR_STOP=1 "$@"; }

psql_ -c 'CREATE EXTENSION snowflake' -c 'CREATE SEQUENCE bench_plain'
"$snowflake" sql --dialect postgres --prefix bench --generator -f datacenter=1 -f machine=2 | psql_
psql_ -c 'SELECT snowflake.next_id()' >/dev/null # resumes the state: waits out the reserve window once
# Three ways to ask, each subject divided by nextval() asked the same way:
#   NAME         one ID a transaction, simple protocol (as section 11)
#   NAME/prep    one ID a transaction, prepared: no parsing or planning
#   NAME/x1000   1,000 IDs a statement, prepared: mostly the function itself
for mode in "" /prep /x1000; do
  rows=""
  [ "$mode" = /x1000 ] && rows=" FROM generate_series(1, 1000)"
  echo "SELECT nextval('bench_plain')$rows;" >"$work/nextval${mode/\//-}.sql"
  echo "SELECT snowflake.next_id()$rows;" >"$work/next_id${mode/\//-}.sql"
  echo "SELECT bench_next_id()$rows;" >"$work/sql_generator${mode/\//-}.sql"
done

run() { # subject connections -> IDs/s
  local protocol=simple ids=1
  case $1 in */prep) protocol=prepared ;; */x1000) protocol=prepared ids=1000 ;; esac
  "$bin/pgbench" -n -M "$protocol" -c "$2" -j 2 -T "$secs" -f "$work/${1/\//-}.sql" "$db" 2>/dev/null |
    awk -v ids="$ids" '/^tps/ { printf "%.0f", $3 * ids }'
}

echo "started $(date -u +%FT%TZ) at $(git -C "$root" rev-parse --short HEAD); $(uptime)"
"$bin/postgres" --version
echo "subject connections round IDs/s"
results=$work/results
for round in $(seq "$rounds"); do
  for c in 1 16; do
    for mode in "" /prep /x1000; do
      for s in nextval next_id sql_generator; do
        echo "$s$mode $c $round $(run "$s$mode" "$c")" | tee -a "$results"
      done
    done
  done
done
echo "ended $(date -u +%FT%TZ); $(uptime)"

echo
echo "| connections | subject | IDs/s, median of $rounds | of nextval() asked the same way in the same round: median (lowest-highest) |"
echo "| ---: | --- | ---: | ---: |"
median_ratio_table "$results" | sort -t'|' -k2,2n -k3,3

echo
echo "what next_id() waits on at 16 connections: pg_stat_activity sampled every 50 ms"
"$bin/pgbench" -n -c 16 -j 2 -T 8 -f "$work/next_id.sql" "$db" >/dev/null 2>&1 &
load=$!
sleep 1
for _ in $(seq 100); do
  psql "$db" -X -At -F ' ' -c "SELECT coalesce(wait_event_type, 'CPU'), coalesce(wait_event, state)
    FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
      AND application_name = 'pgbench'"
  sleep 0.05
done | sort | uniq -c | sort -rn | head -8
wait "$load"

if command -v perf >/dev/null 2>&1; then
  echo
  echo "where the CPU of the server and its client goes at 16 connections: perf cpu-clock samples, by program and library"
  "$bin/pgbench" -n -c 16 -j 2 -T 8 -f "$work/next_id.sql" "$db" >/dev/null 2>&1 &
  load=$!
  sleep 1
  perf record -q -e cpu-clock -a -o "$work/perf.data" -- sleep 5 >/dev/null 2>&1 || true
  wait "$load"
  perf report -q -i "$work/perf.data" --comms postgres,pgbench --percentage relative \
    --sort comm,dso --stdio 2>/dev/null | head -10 || true
  echo "in snowflake.so, by symbol (of the same samples):"
  perf report -q -i "$work/perf.data" --comms postgres,pgbench --percentage relative \
    --dso snowflake.so --sort sym --stdio 2>/dev/null | head -8 || true
fi
