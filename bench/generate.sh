#!/usr/bin/env bash
# Times `snowflake generate -n N > /dev/null` against the twitter layout's
# ceiling (4,096,000 IDs/s, so 10,000,000 IDs take at least 2.44 s) and
# reports its peak memory, then checks the output once: N lines, strictly
# increasing.
#
#   bench/generate.sh [N]        (default 10000000; RUNS=3 timed runs)
#
# Needs GNU time at /usr/bin/time (Debian: apt-get install -y time).
set -euo pipefail

# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
n=${1:-10000000}
runs=${RUNS:-3}
ceiling=4096000

release_cli_under_gnu_time generate.sh
if ! "$bin" generate --help >/dev/null 2>&1; then
    echo "generate.sh: $bin has no generate subcommand yet" >&2
    exit 1
fi

floor=$(awk -v n="$n" -v c="$ceiling" 'BEGIN { printf "%.3f", n / c }')
echo "| run | IDs | wall (s) | ceiling-bound time (s) | % of ceiling | peak RSS (MiB) |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: |"
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
for run in $(seq "$runs"); do
    # GNU time's wall clock has 10 ms steps; the shell's has nanoseconds
    # (and counts GNU time's own fork and exec, well under a millisecond).
    start=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$stats" "$bin" generate -n "$n" >/dev/null
    end=$(date +%s%N)
    read -r rss_kib <"$stats"
    awk -v r="$run" -v n="$n" -v ns="$((end - start))" -v f="$floor" -v k="$rss_kib" \
        'BEGIN { w = ns / 1e9; printf "| %d | %d | %.3f | %.3f | %.1f %% | %.1f |\n", r, n, w, f, 100 * f / w, k / 1024 }'
done

# Untimed: every line an ID, each greater than the one before. All IDs of
# the layout have the same number of digits for decades, so comparing them
# as strings is comparing them as numbers (awk's doubles would round them).
"$bin" generate -n "$n" | awk '
    { if (NR > 1 && (length($0) < length(p) || (length($0) == length(p) && ($0 "") <= (p "")))) bad++; p = $0 }
    END { printf "\nchecked: %d lines, %d not greater than the line before\n", NR, bad }'
