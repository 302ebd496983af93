"""A process holding a slot on etcd, for test_cluster: prints its slot as
one JSON line, then, until killed, the smallest and largest ID of each batch
it issues, one line a batch."""

import json
import sys

import snowflake_toolkit as sf

endpoint, cluster, spec = sys.argv[1:4]
node = sf.ClusterNode(endpoint, cluster=cluster, layout=spec, lease_ttl=2, timeout=60)
print(json.dumps(node.slot), flush=True)
while True:
    ids = node.next_ids(100)
    print(ids[0], ids[-1], flush=True)
