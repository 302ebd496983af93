#!/usr/bin/env bash
# Times `snowflake audit` over 10 million IDs made by `snowflake generate`
# (issue 22: the audit's throughput and memory), beside `snowflake decode
# --csv` of the same file to /dev/null, the bulk reading both share, in the
# same run. Reports each run's wall time, CPU time, IDs per second and peak
# RSS (GNU time's maximum resident set).
#
#   bench/audit.sh [N]          (default 10000000; RUNS=3 runs of each)
#
# Two inputs, made once: N IDs from 4 nodes (N/4 each, one node after the
# other, as a table exported by node), and the same file twice over (2N
# IDs, N distinct, every one a duplicate), which makes the audit compact its
# vector of IDs as it grows. Needs GNU time.
set -euo pipefail

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
timed_ids_bench audit.sh 3 "$@"

ids="$work/ids-$n.txt"
twice="$work/twice-$n.txt"
if [[ ! -s "$ids" ]]; then
    for machine in 1 2 3 4; do
        "$bin" generate -n $((n / 4)) --machine "$machine"
    done >"$ids"
fi
[[ -s "$twice" ]] || cat "$ids" "$ids" >"$twice"

report=$(mktemp)
trap 'rm -f "$report"' EXIT
timed_head input command
for input in ids twice; do
    file=${!input}
    count=$(wc -l <"$file")
    for cmd in "audit --json" "decode --csv -"; do
        for run in $(seq "$runs"); do
            # shellcheck disable=SC2086 # the command's words are meant to split
            timed_row "$input ($count IDs) | \`$cmd\` | $run" "$count" "$file" "$report" "$bin" $cmd
        done
        if [[ "$cmd" == audit* ]]; then
            # The audit must have read every ID, and found the copies there are.
            python3 - "$report" "$count" "$input" <<'PY'
import json, sys
report, count, kind = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
distinct = count if kind == "ids" else count // 2
assert report["ids"] == count, report["ids"]
assert report["distinct"] == distinct, report["distinct"]
assert len(report["nodes"]) == 4, report["nodes"]
PY
        fi
    done
done
