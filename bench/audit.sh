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

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
n=${1:-10000000}
runs=${RUNS:-3}
work=${TMPDIR:-/tmp}/snowflake-audit-bench
mkdir -p "$work"

if [[ ! -x /usr/bin/time ]]; then
    echo "audit.sh: /usr/bin/time is missing; install GNU time (apt-get install -y time)" >&2
    exit 1
fi

cargo build --release -p snowflake-cli --manifest-path "$root/Cargo.toml" >&2
bin="$root/target/release/snowflake"

ids="$work/ids-$n.txt"
twice="$work/twice-$n.txt"
if [[ ! -s "$ids" ]]; then
    for machine in 1 2 3 4; do
        "$bin" generate -n $((n / 4)) --machine "$machine"
    done >"$ids"
fi
[[ -s "$twice" ]] || cat "$ids" "$ids" >"$twice"

stats=$(mktemp)
report=$(mktemp)
trap 'rm -f "$stats" "$report"' EXIT
echo "| input | command | run | wall (s) | CPU (s) | IDs/s (wall) | peak RSS (MiB) |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
for input in ids twice; do
    file=${!input}
    count=$(wc -l <"$file")
    for cmd in "audit --json" "decode --csv -"; do
        for run in $(seq "$runs"); do
            start=$(date +%s%N)
            # shellcheck disable=SC2086 # the command's words are meant to split
            /usr/bin/time -f '%U %S %M' -o "$stats" "$bin" $cmd <"$file" >"$report"
            end=$(date +%s%N)
            read -r user sys rss <"$stats"
            awk -v i="$input" -v c="$cmd" -v r="$run" -v n="$count" -v ns=$((end - start)) \
                -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN {
                    w = ns / 1e9
                    printf "| %s (%d IDs) | `%s` | %d | %.2f | %.2f | %.2fM | %.1f |\n",
                        i, n, c, r, w, u + s, n / w / 1e6, m / 1024
                }'
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
