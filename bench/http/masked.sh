#!/usr/bin/env bash
# `POST /api/v1/ids?count=100000` masked against unmasked, through one
# `snowflake serve` with a masking key: ROUNDS interleaved pairs, each
# request timed by curl to its last byte, the medians and their ratio.
#
#   bench/http/masked.sh                 # 15 rounds
#   ROUNDS=31 bench/http/masked.sh
#   SNOWFLAKE_BIN=path/to/snowflake bench/http/masked.sh
set -euo pipefail
shopt -s inherit_errexit
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
ROUNDS=${ROUNDS:-15}
SNOWFLAKE=${SNOWFLAKE_BIN:-$ROOT/target/release/snowflake}
[ -n "${SNOWFLAKE_BIN:-}" ] || cargo build --release -q --manifest-path "$ROOT/Cargo.toml" -p snowflake-cli --features cluster
# shellcheck source=../../scripts/lib/served.sh
source "$ROOT/scripts/lib/served.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/masked-bench.XXXXXX")
served_pid=
trap 'kill "$served_pid" 2>/dev/null || true; wait "$served_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
"$SNOWFLAKE" mask-key new "$work/mask.key" >/dev/null
start_served "$work/serve.log" env NO_COLOR=1 "$SNOWFLAKE" serve --listen 127.0.0.1:0 \
  --mask-key-file "$work/mask.key"

take() { # masked(true|false) -> seconds to the last byte
  curl -fsS -o /dev/null -w '%{time_total}\n' -X POST \
    "http://$served_addr/api/v1/ids?count=100000&masked=$1"
}
take false >/dev/null
take true >/dev/null
for _ in $(seq "$ROUNDS"); do
  take false >>"$work/plain"
  take true >>"$work/masked"
done
python3 - "$work/plain" "$work/masked" <<'PY'
import statistics, sys
plain = [float(l) for l in open(sys.argv[1])]
masked = [float(l) for l in open(sys.argv[2])]
p, m = statistics.median(plain), statistics.median(masked)
print(f"count=100000 unmasked: median {p * 1000:.0f} ms ({len(plain)} requests)")
print(f"count=100000 masked:   median {m * 1000:.0f} ms ({len(masked)} requests)")
print(f"masked / unmasked: {m / p:.1f}; masking adds {(m - p) / 100000 * 1e9:.0f} ns an ID")
PY
