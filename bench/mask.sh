#!/usr/bin/env bash
# Instructions per masked ID under callgrind: our masker (FF1 through its
# fixed-width numeral string), FF1 from the same `fpe` through its
# big-integer numeral string, and one bare AES-256 block, in one run. Not
# time (see BENCHMARKS.md, section 9, for criterion's), but the same on a
# busy machine.
#
#   bench/mask.sh [COUNT]
#
# Each subject runs COUNT and 2*COUNT times; the difference divided by
# COUNT is its cost per ID, set-up left out.
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-20000}
cargo build --release -q --bin maskcalls
bin=target/release/maskcalls
out=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-mask.XXXXXX")
trap 'rm -rf "$out"' EXIT

ir() { # subject count -> instructions counted inside its run_* loop
  valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=maskcalls::run_*" \
    --callgrind-out-file="$out/cg" "$bin" "$1" "$2" 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-22s %10s\n' subject "Ir/ID"
for which in ours-twitter-mask ours-twitter-unmask ours-js53-mask fpe-bigint-twitter aes256-block; do
  a=$(ir "$which" "$n")
  b=$(ir "$which" $((n * 2)))
  printf '%-22s %10s\n' "$which" "$(python3 -c "print(f'{($b - $a) / $n:.1f}')")"
done
