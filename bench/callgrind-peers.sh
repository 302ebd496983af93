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
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
callgrind_per_call percall generator 14 call "${1:-100000}" \
  ours-cached ferroid ours-tsc ours-system snowflaked rs-snowflake
