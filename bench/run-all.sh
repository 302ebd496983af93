#!/usr/bin/env bash
# Every benchmark of BENCHMARKS.md in sequence, each writing its report into
# one folder, with the commit and the load average between them. Run it on a
# machine doing nothing else; about 15 minutes once built.
#
#   bench/run-all.sh [OUT]        (default: a new folder under $TMPDIR)
#
# Needs valgrind, jq, wrk, GNU time and python3 (Debian: apt-get install -y
# valgrind jq wrk time python3); the HTTP page timing also wants Chromium and
# node with playwright-core, as ./scripts/browser-test installs them; the
# cluster step needs etcd, as ./scripts/test installs it.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bench-all.XXXXXX")}
mkdir -p "$out"
cd "$root"
git rev-parse --short HEAD >"$out/commit"
load() { echo "$1: $(uptime)" >>"$out/load"; }
load start
(cd bench && ./callgrind-peers.sh 100000) >"$out/callgrind-peers.txt" 2>&1
./scripts/callgrind-guard >"$out/callgrind-guard.txt" 2>&1
load throughput
(cd bench && cargo run --release -q --bin throughput -- --repeat 3) >"$out/throughput.txt" 2>&1
load wakeup
(cd bench && cargo run --release -q --bin wakeup -- sleep --count 3000) >"$out/wakeup-sleep.txt" 2>&1
(cd bench && cargo run --release -q --bin wakeup -- sleep --slack 1 --count 3000) >"$out/wakeup-sleep-slack1.txt" 2>&1
(cd bench && cargo run --release -q --bin wakeup -- generator --secs 5) >"$out/wakeup-gen.txt" 2>&1
(cd bench && cargo run --release -q --bin wakeup -- generator --slack 1 --secs 5) >"$out/wakeup-gen-slack1.txt" 2>&1
load burst
(cd bench && cargo bench -q --bench burst >"$out/burst-raw.txt" 2>&1 && ./medians.sh) >"$out/burst.txt" 2>&1
load generate
bench/generate.sh >"$out/generate.txt" 2>&1
load decode
RUNS=5 bench/decode.sh >"$out/decode.txt" 2>&1
load http
RUNS=5 bench/http/run.sh >"$out/http.txt" 2>&1
load cluster
bench/cluster.sh >"$out/cluster.txt" 2>&1
load end
echo "reports in $out"
