# lib-servers.sh - sourced by the scripts here that run inside the VM (they set HERE and ADDR).

# wait_for_line FILE PATTERN SECONDS PID: waits until FILE has a line matching PATTERN; 1 when
# SECONDS passed or process PID exited first
wait_for_line() {
  local i
  for i in $(seq $(( $3 * 10 ))); do
    grep -q "$2" "$1" && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# start_java_server LOG HELLO_PORT PINGPONG_PORT [TIMEOUT_SECONDS, default 300]
#   starts java-server.sh both ADDR HELLO_PORT PINGPONG_PORT in the background, its output in LOG,
#   and waits for its "listening" line; sets java_wrapper (the wrapper's pid) and java_pid (the
#   JVM's). Returns 1 when the server did not start (it exited, or the timeout passed).
start_java_server() {
  "$HERE/java-server.sh" both "$ADDR" "$2" "$3" > "$1" 2>&1 &
  java_wrapper=$!
  wait_for_line "$1" 'java-server: listening' "${4:-300}" "$java_wrapper" || return 1
  java_pid=$(sed -n 's/^java-server: listening .* pid=\([0-9]*\).*/\1/p' "$1")
}

# cpu_ticks PID: user + system CPU time of the process so far, in clock ticks (getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
