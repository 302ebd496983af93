#!/usr/bin/env bash
# Cluster mode at the twitter layout's size (issue 22): 1,024 nodes and a
# 1,025th against a local three-member etcd, all nodes in one process on one
# tokio runtime (each with its own etcd connections, lease, renewals, slot
# key, mark writes and watch; none serving HTTP). Prints the time until all
# 1,024 are ready, that every slot is taken once and the 1,025th refused,
# etcd's writes, reads and renewals per second with the CPU of each member
# and of the nodes' process over 30 s of renewing and issuing (100 IDs per
# node per second), and how long a killed node's slot takes to be held and
# issuing again. The run is the ignored test `many::a_thousand_and_twenty_
# four_nodes_measured` of the cluster test binary, built with --release;
# the 64-node version runs in the test command.
#
#   bench/cluster.sh          (about 2 minutes once built)
#
# Needs etcd (Debian: apt-get install -y etcd-server). Each node holds a
# connection to each of the three members: about 3,100 open files in the
# nodes' process and 1,100 in each member, so the soft limit on open files
# is raised to the hard limit, and the run refuses to start below 8,192.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")

command -v etcd >/dev/null || {
    echo "cluster.sh: etcd is missing; install it (apt-get install -y etcd-server)" >&2
    exit 1
}
ulimit -n "$(ulimit -Hn)"
if [[ $(ulimit -n) != unlimited && $(ulimit -n) -lt 8192 ]]; then
    echo "cluster.sh: at most $(ulimit -n) open files per process; 1,024 nodes need about 3,100 (raise the hard limit: ulimit -Hn, LimitNOFILE=)" >&2
    exit 1
fi

cd "$root"
cargo test --release -p snowflake-cli --features cluster --test cluster --no-run >&2
echo "commit $(git rev-parse --short HEAD), $(date -u '+%Y-%m-%d %H:%M UTC'), $(etcd --version | head -1)"
echo "before: $(uptime)"
cargo test --release -q -p snowflake-cli --features cluster --test cluster -- \
    --ignored --exact --nocapture many::a_thousand_and_twenty_four_nodes_measured
echo "after: $(uptime)"
