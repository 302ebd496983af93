#!/usr/bin/env bash
# Instructions per `next_id` call of ours and the peers, under callgrind, in
# one run: a comparison that does not need a quiet machine (instructions are
# not time: a cache miss or a contended CAS costs more than its count says,
# so take the wall-clock rows of BENCHMARKS.md on a quiet machine as well).
#
#   bench/callgrind-peers.sh [COUNT]
#
# Each generator runs COUNT and 2*COUNT calls; the difference divided by
# COUNT is its cost per call, construction and start-up left out. Only the
# calling thread's loop is counted (see src/bin/percall.rs).
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-100000}
cargo build --release -q --bin percall
bin=target/release/percall
out=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-peers.XXXXXX")
trap 'rm -rf "$out"' EXIT

ir() { # generator count -> instructions counted inside its run_* loop
  valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=percall::run_*" \
    --callgrind-out-file="$out/cg" "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-14s %10s\n' generator "Ir/call"
for which in ours-cached ferroid ours-tsc ours-system snowflaked rs-snowflake; do
  a=$(ir "$which" "$n")
  b=$(ir "$which" $((n * 2)))
  printf '%-14s %10s\n' "$which" "$(python3 -c "print(f'{($b - $a) / $n:.1f}')")"
done
