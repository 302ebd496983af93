"""GET one path N times over one kept-alive connection, failing on any
answer but 200: the client of bench/http/callgrind.sh and
scripts/callgrind-guard, which count the server's instructions a request.

    python3 bench/http/keepalive-client.py PORT PATH N
"""
import http.client
import sys
import time

port, path, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
# The server may still be starting (under valgrind, for seconds).
for _ in range(600):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.connect()
        break
    except OSError:
        time.sleep(0.1)
for _ in range(n):
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    assert r.status == 200, r.status
c.close()
