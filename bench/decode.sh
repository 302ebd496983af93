#!/usr/bin/env bash
# Times `snowflake decode --csv -` over N IDs read from a file (issue 10's
# goal: 10 million at no less than 5 million IDs a second on one core, in
# constant memory) and reports each run's wall time, CPU time, IDs per
# second and peak RSS, writing once to /dev/null (the tool's own speed) and
# once to a file (plus the kernel's copy into the page cache).
#
#   bench/decode.sh [N]          (default 10000000; RUNS=5 runs of each)
#
# Two inputs, made once by python3 with fixed seeds: IDs of random times over
# the whole twitter layout, and IDs of one year in time order (the shape of
# a table's ID column exported by primary key). Needs GNU time.
set -euo pipefail

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
timed_ids_bench decode.sh 5 "$@"

make_ids() { # kind file
    [[ -s "$2" ]] && return
    python3 - "$1" "$n" "$2" <<'PY'
import random, sys
kind, n, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = random.Random(10)
if kind == "random":
    times = (r.randrange(1 << 41) for _ in range(n))
else:  # one year (2024-12-02 to 2025-12-02) in time order
    lo, hi = 1733097600000 - 1288834974657, 1764633600000 - 1288834974657
    times = iter(sorted(r.randrange(lo, hi) for _ in range(n)))
with open(path, "w") as out:
    batch = []
    for t in times:
        batch.append(f"{(t << 22) | (r.randrange(1024) << 12) | r.randrange(4096)}\n")
        if len(batch) == 100000:
            out.write("".join(batch)); batch = []
    out.write("".join(batch))
PY
}

trap 'rm -f "$work/out.csv"' EXIT
timed_head input output
for kind in random sorted; do
    ids="$work/$kind-$n.txt"
    make_ids "$kind" "$ids"
    for target in /dev/null "$work/out.csv"; do
        output=file
        [[ "$target" == /dev/null ]] && output=/dev/null
        for run in $(seq "$runs"); do
            timed_row "$kind | $output | $run" "$n" "$ids" "$target" "$bin" decode --csv -
        done
    done
done
lines=$(wc -l <"$work/out.csv")
[[ "$lines" -eq $((n + 1)) ]] || { echo "decode.sh: expected $((n + 1)) CSV lines, got $lines" >&2; exit 1; }
