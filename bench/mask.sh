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
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
callgrind_per_call maskcalls subject 22 ID "${1:-20000}" \
  ours-twitter-mask ours-twitter-unmask ours-js53-mask fpe-bigint-twitter aes256-block
