# Sourced by the test scripts: starts a `snowflake serve` (or a wrapper
# around one, such as valgrind or strace) on port 0 and reads back the
# address it bound from its log, so no script races another process for a
# port, and nothing but the server started here can answer.
#
#   start_served LOG CMD...   runs CMD in the background, its output into
#                             LOG; waits for its "listening on http://ADDR/"
#                             line. Sets served_pid (CMD's PID) and
#                             served_addr (host:port). CMD must bind
#                             127.0.0.1:0 itself (serve --listen 127.0.0.1:0).
#   served_server_pid         the PID of the snowflake process itself: CMD's
#                             PID, or its child's when CMD is a wrapper that
#                             forks it (strace).

start_served() {
  local log=$1
  shift
  # Nothing of CMD's on the caller's stdout: a script that starts it
  # inside $(...) would otherwise wait for it to exit before going on,
  # even after the script has failed.
  # Emptied here, before CMD starts: the background job opens LOG only
  # once it runs, and a log kept from an earlier server on the same path
  # (the guard starts one at N calls and again at 2N) would otherwise
  # hand the loop below that server's address, where nothing listens.
  : >"$log"
  "$@" </dev/null >"$log" 2>&1 &
  served_pid=$!
  served_addr=
  # Under valgrind start-up takes seconds: up to two minutes.
  for _ in $(seq 1200); do
    served_addr=$(sed -n '\|listening on http://|{s|.*listening on http://\([^/]*\)/.*|\1|p;q}' "$log")
    [ -n "$served_addr" ] && return 0
    if ! kill -0 "$served_pid" 2>/dev/null; then
      echo "the server exited before it listened:" >&2
      cat "$log" >&2
      return 1
    fi
    sleep 0.1
  done
  echo "the server did not say where it listens within two minutes:" >&2
  cat "$log" >&2
  return 1
}

served_server_pid() {
  local child
  child=$(pgrep -P "$served_pid" -x snowflake 2>/dev/null | sed -n 1p || true)
  echo "${child:-$served_pid}"
}
