#!/usr/bin/env bash
# IDs per second from `snowflake sql --generator`'s <prefix>_next_id()
# against nextval() of a plain sequence on the same server, with 1 and 16
# connections, in interleaved rounds so that the machine's mood hits every
# subject alike. Runs against the private servers of scripts/sql-test:
#
#   ./scripts/sql-test bench/sql/run.sh        (ROUNDS=3 SECS=5 by default)
#
# PostgreSQL (pgbench, SELECT one ID a transaction):
#   nextval    SELECT nextval('bench_plain')
#   next_id    SELECT bench_next_id()
#   unlocked   the same function without its LOCK TABLE: wrong under
#              concurrency (IDs repeat), here only to show what the lock costs
#   previous   SELECT prev.prev_next_id(): the script before issue 25
#              (tests/sql/previous/), which took turns under an advisory lock
# MariaDB (mariadb-slap, SELECT one ID a statement):
#   nextval    SELECT NEXTVAL(bench_plain)   (a MariaDB SEQUENCE)
#   next_id    SELECT bench_next_id()
#   compose    SELECT bench_compose(SYSDATE(3), 1, 1, 0): a stored function
#              with no state and no lock, what any stored function costs
#   previous   SELECT bench_prev.prev_next_id(): the script before issue 25,
#              without the check of the binary log's format
#
# Prints one line a run (subject, connections, round, IDs/s), then the
# median of each and its ratio to nextval.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
rounds=${ROUNDS:-3}
secs=${SECS:-5}
: "${SNOWFLAKE_TEST_POSTGRES:?run it through scripts/sql-test, which starts the servers}"
: "${SNOWFLAKE_TEST_MARIADB_SOCKET:?run it through scripts/sql-test, which starts the servers}"

cargo build -q -p snowflake-cli --manifest-path "$root/Cargo.toml"
snowflake=$root/target/debug/snowflake
pgbench=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)/pgbench
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-sql.XXXXXX")
trap 'rm -rf "$work"' EXIT

psql_() { psql "$SNOWFLAKE_TEST_POSTGRES" -X -q -v ON_ERROR_STOP=1 "$@"; }
maria() { mariadb --no-defaults --socket="$SNOWFLAKE_TEST_MARIADB_SOCKET" -u root "$@"; }

# Setup: a database each, the generator, the plain sequence, the variants.
previous=$root/crates/snowflake-cli/tests/sql/previous
psql_ -c 'DROP DATABASE IF EXISTS bench' -c 'CREATE DATABASE bench'
pg="${SNOWFLAKE_TEST_POSTGRES/dbname=postgres/dbname=bench}"
node=(-f datacenter=1 -f machine=1)
{ echo 'CREATE SCHEMA prev; SET search_path = prev;'; cat "$previous/postgres.sql"; } |
  psql "$pg" -X -q -v ON_ERROR_STOP=1
"$snowflake" sql --dialect postgres --prefix bench --generator "${node[@]}" |
  psql "$pg" -X -q -v ON_ERROR_STOP=1
"$snowflake" sql --dialect postgres --prefix unlocked --generator -f datacenter=1 -f machine=2 |
  grep -v 'LOCK TABLE unlocked_next_id_lock' | psql "$pg" -X -q -v ON_ERROR_STOP=1
psql "$pg" -X -q -c 'CREATE SEQUENCE bench_plain'
echo "SELECT nextval('bench_plain');" >"$work/nextval.sql"
echo "SELECT bench_next_id();" >"$work/next_id.sql"
echo "SELECT unlocked_next_id();" >"$work/unlocked.sql"
echo "SELECT prev.prev_next_id();" >"$work/previous.sql"

maria -e 'DROP DATABASE IF EXISTS bench; CREATE DATABASE bench'
maria -e 'DROP DATABASE IF EXISTS bench_prev; CREATE DATABASE bench_prev'
maria bench_prev <"$previous/mysql.sql"
"$snowflake" sql --dialect mysql --prefix bench --generator "${node[@]}" | maria bench
maria bench -e 'CREATE SEQUENCE bench_plain'

pg_run() { # subject connections -> IDs/s
  "$pgbench" -n -c "$2" -j 2 -T "$secs" -f "$work/$1.sql" "$pg" 2>/dev/null |
    awk '/^tps/ { printf "%.0f", $3 }'
}
maria_run() { # subject connections -> IDs/s
  local query n
  case $1 in
    nextval) query="SELECT NEXTVAL(bench_plain)" ;;
    next_id) query="SELECT bench_next_id()" ;;
    compose) query="SELECT bench_compose(SYSDATE(3), 1, 1, 0)" ;;
    previous) query="SELECT bench_prev.prev_next_id()" ;;
  esac
  # About $secs seconds' worth, from a short run's rate.
  n=$((2 * 1000 * $2))
  local t
  t=$(mariadb-slap --no-defaults --socket="$SNOWFLAKE_TEST_MARIADB_SOCKET" -u root \
    --create-schema=bench --concurrency="$2" --iterations=1 --number-of-queries="$n" \
    --query="$query" 2>/dev/null | awk '/Average number of seconds/ { print $(NF-1) }')
  n=$(awk -v n="$n" -v t="$t" -v s="$secs" 'BEGIN { printf "%d", n / t * s }')
  t=$(mariadb-slap --no-defaults --socket="$SNOWFLAKE_TEST_MARIADB_SOCKET" -u root \
    --create-schema=bench --concurrency="$2" --iterations=1 --number-of-queries="$n" \
    --query="$query" 2>/dev/null | awk '/Average number of seconds/ { print $(NF-1) }')
  awk -v n="$n" -v t="$t" 'BEGIN { printf "%.0f", n / t }'
}

echo "started $(date -u +%FT%TZ) at $(git -C "$root" rev-parse --short HEAD); $(uptime)"
echo "server subject connections round IDs/s"
results=$work/results
for round in $(seq "$rounds"); do
  for c in 1 16; do
    for s in nextval next_id unlocked previous; do
      echo "postgres $s $c $round $(pg_run "$s" "$c")" | tee -a "$results"
    done
    for s in nextval next_id compose previous; do
      echo "mariadb $s $c $round $(maria_run "$s" "$c")" | tee -a "$results"
    done
  done
done
echo "ended $(date -u +%FT%TZ); $(uptime)"

echo
echo "| server | connections | subject | IDs/s, median of $rounds | of nextval in the same round: median (lowest-highest) |"
echo "| --- | ---: | --- | ---: | ---: |"
median_ratio_table "$results" | sort -t'|' -k2,2 -k3,3n -k6,6r
