# Sourced by the scripts beside it: free_port prints a TCP port nothing
# listens on, from 20000–49999 (clear of the usual ephemeral range).
free_port() {
  local port taken
  taken=$(ss -Htln | awk '{print $4}' | sed 's/.*://')
  while :; do
    port=$((20000 + RANDOM % 30000))
    grep -qx "$port" <<<"$taken" || { echo "$port"; return; }
  done
}
