# Sourced by the benchmark scripts of bench/ and its folders, never run: what
# they share. Sets `root` (the repository) and defines the functions below.

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# release_cli_under_gnu_time SCRIPT: the snowflake command built for
# release, in $bin, for a script that times it with GNU time (refused,
# naming SCRIPT, where there is none).
release_cli_under_gnu_time() {
    if [[ ! -x /usr/bin/time ]]; then
        echo "$1: /usr/bin/time is missing; install GNU time (apt-get install -y time)" >&2
        exit 1
    fi
    cargo build --release -p snowflake-cli --manifest-path "$root/Cargo.toml" >&2
    bin="$root/target/release/snowflake"
}

# timed_ids_bench SCRIPT RUNS [N]: the start of SCRIPT, which times the
# snowflake command over N IDs (default 10,000,000), each measurement $RUNS
# times (default RUNS): sets n and runs, bin (release_cli_under_gnu_time),
# and work, a folder that keeps the script's inputs from one call to the next.
timed_ids_bench() {
    n=${3:-10000000}
    runs=${RUNS:-$2}
    work=${TMPDIR:-/tmp}/snowflake-${1%.sh}-bench
    mkdir -p "$work"
    release_cli_under_gnu_time "$1"
}

# timed_head COLUMN...: the head of a markdown table of timed_row's rows:
# the COLUMNs (left-aligned), then the run and timed_row's measures.
timed_head() {
    local heads="" rule="" column
    for column in "$@"; do
        heads+="| $column "
        rule+="| --- "
    done
    echo "$heads| run | wall (s) | CPU (s) | IDs/s (wall) | peak RSS (MiB) |"
    echo "$rule| ---: | ---: | ---: | ---: | ---: |"
}

# timed_row CELLS COUNT INPUT OUTPUT COMMAND...: runs COMMAND, INPUT on its
# stdin and OUTPUT its stdout, under GNU time, and prints a markdown row:
# CELLS (the first cells, `|` between them), then the wall time (the
# shell's clock, in nanoseconds, not GNU time's 10 ms steps), the CPU time,
# COUNT IDs a second of wall time and the peak RSS.
timed_row() {
    local cells=$1 count=$2 input=$3 output=$4 stats start end user sys rss
    shift 4
    stats=$(mktemp)
    start=$(date +%s%N)
    /usr/bin/time -f '%U %S %M' -o "$stats" "$@" <"$input" >"$output"
    end=$(date +%s%N)
    read -r user sys rss <"$stats"
    rm -f "$stats"
    awk -v c="$cells" -v n="$count" -v ns=$((end - start)) -v u="$user" -v s="$sys" -v m="$rss" 'BEGIN {
        w = ns / 1e9
        printf "| %s | %.2f | %.2f | %.2fM | %.1f |\n", c, w, u + s, n / w / 1e6, m / 1024
    }'
}

# callgrind_per_call BIN COLUMN WIDTH UNIT COUNT SUBJECT...: builds BIN, a
# binary of the bench workspace that runs a subject's loop in a function
# named run_*, and prints a table of each SUBJECT's instructions per UNIT
# (call, ID) under callgrind, counted only inside run_*: the difference
# between COUNT and 2*COUNT rounds, over COUNT, so that set-up is left out.
# COLUMN and WIDTH name and size the first column.
callgrind_per_call() {
    local name=$1 column=$2 width=$3 unit=$4 n=$5 which a b
    shift 5
    (cd "$root/bench" && cargo build --release -q --bin "$name")
    callgrind_bin=$root/bench/target/release/$name
    callgrind_out=$(mktemp -d "${TMPDIR:-/tmp}/callgrind-$name.XXXXXX")
    trap 'rm -rf "$callgrind_out"' EXIT
    printf "%-${width}s %10s\n" "$column" "Ir/$unit"
    for which in "$@"; do
        a=$(callgrind_ir "$which" "$n")
        b=$(callgrind_ir "$which" $((n * 2)))
        printf "%-${width}s %10s\n" "$which" "$(python3 -c "print(f'{($b - $a) / $n:.1f}')")"
    done
}

# callgrind_ir SUBJECT COUNT: the instructions counted inside
# callgrind_per_call's binary's run_* loop.
callgrind_ir() {
    valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=$(basename "$callgrind_bin")::run_*" \
        --callgrind-out-file="$callgrind_out/cg" "$callgrind_bin" "$1" "$2" 2>&1 |
        sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

# median_ratio_table RESULTS: reads lines of `[SERVER] SUBJECT CONNECTIONS
# ROUND IDS/s` and prints a markdown row for each server, connection count
# and subject: its median IDs/s over the rounds, then the median, lowest and
# highest of its ratio to nextval's in the same round, nextval asked the
# same way (the subject's leading word replaced: `next_id/prep` is divided
# by `nextval/prep`). Unsorted.
median_ratio_table() {
    awk '
      {
        group = ""
        for (i = 1; i <= NF - 4; i++) group = group $i " "
        group = group $(NF - 2)
        rate[group, $(NF - 3), $(NF - 1)] = $NF
        rows[group, $(NF - 3)] = 1
        if ($(NF - 1) > rounds) rounds = $(NF - 1)
      }
      function median(a, n,    i, j, t) {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
      }
      END {
        for (k in rows) {
          split(k, p, SUBSEP)
          base = p[2]; sub(/^[a-z_]*/, "nextval", base)
          for (r = 1; r <= rounds; r++) {
            v[r] = rate[p[1], p[2], r]
            q[r] = v[r] / rate[p[1], base, r]
          }
          m = median(v, rounds)
          qm = median(q, rounds)
          cells = p[1]; gsub(/ /, " | ", cells)
          printf "| %s | %s | %.0f | %.2f (%.2f-%.2f) |\n", cells, p[2], m, qm, q[1], q[rounds]
        }
      }' "$1"
}
