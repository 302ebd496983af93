#!/usr/bin/env bash
# Prints, as a markdown table, the median time per iteration of every
# benchmark of the last `cargo bench --bench burst` run, from criterion's
# estimates (robust to the odd sample a preemption spoiled, unlike the mean
# criterion prints). The next_ids rows are per batch of 4,096 IDs, with the
# cost per ID beside them. Needs jq.
set -euo pipefail
dir="$(cd "$(dirname "$0")" && pwd)/target/criterion"
echo "| benchmark | median (ns) | 95 % interval (ns) | per ID (ns) |"
echo "| --- | ---: | ---: | ---: |"
for est in "$dir"/*/*/new/estimates.json; do
    bench=$(jq -r '.full_id // empty' "$(dirname "$est")/benchmark.json")
    jq -r --arg b "$bench" '
        .median as $m
        | ($b | test("^next_ids")) as $batch
        | "| \($b) | \($m.point_estimate * 1000 | round / 1000) | \($m.confidence_interval.lower_bound * 1000 | round / 1000)–\($m.confidence_interval.upper_bound * 1000 | round / 1000) | \(if $batch then ($m.point_estimate / 4096 * 10000 | round / 10000 | tostring) else "" end) |"
    ' "$est"
done
