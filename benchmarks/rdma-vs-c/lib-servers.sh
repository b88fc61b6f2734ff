# lib-servers.sh - sourced by the scripts here that run inside the VM (they set HERE and ADDR):
# starting servers, CPU time of processes and threads, pooled percentiles.

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

# thread_ticks PID: "tid ticks name" per thread of PID (name with blanks as _), for a CPU profile per thread
thread_ticks() {
  awk '{ match($0, /\(.*\)/); name = substr($0, RSTART + 1, RLENGTH - 2); gsub(/ /, "_", name)
         split(substr($0, RSTART + RLENGTH + 1), f, " "); tid = FILENAME; gsub(/[^0-9]/, " ", tid); split(tid, t, " ")
         print t[2], f[12] + f[13], name }' /proc/"$1"/task/*/stat 2>/dev/null
}

# jit_ms PID: CPU ms of the JIT compiler threads of the JVM PID so far
jit_ms() {
  thread_ticks "$1" | awk -v hz="$(getconf CLK_TCK)" '$3 ~ /^C[12]_CompilerThre/ { t += $2 } END { print int(t * 1000 / hz) }'
}

# settle_jit PID [WHO, default java]: unmeasured rounds of every test in the caller's TESTS with the
# caller's `run WHO TEST... warmup`, until the JVM's compiler threads use less than JIT_QUIET_MS in one
# (at most JIT_SETTLE_ROUNDS); one "INFO jit_settle" line per round
settle_jit() {
  local settle jit0 jit1 test who=${2:-java}
  for settle in $(seq "$JIT_SETTLE_ROUNDS"); do
    jit0=$(jit_ms "$1")
    for test in "${TESTS[@]}"; do
      # shellcheck disable=SC2086
      run "$who" $test warmup
    done
    jit1=$(jit_ms "$1")
    echo "INFO jit_settle who=$who round=$settle compiler_ms=$((jit1 - jit0))"
    [ $((jit1 - jit0)) -lt "$JIT_QUIET_MS" ] && break
  done
  return 0
}

# pooled DIR KEY: percentiles (nearest rank) over every measured operation of all rounds, from the
# latency files DIR/lat-WHO-PROTO-CONCURRENCY (load_client --latency-file): one line per file,
#   POOLED KEY=WHO test=PROTO/CONCURRENCY n=.. p50_us=.. p99_us=.. max_us=.. p25_us=..
pooled() {
  local f name n
  for f in "$1"/lat-*; do
    [ -s "$f" ] && [[ $f != *.sorted ]] || continue
    name=${f##*/lat-}
    sort -n "$f" > "$f.sorted"
    n=$(wc -l < "$f.sorted")
    awk -v n="$n" -v name="$name" -v key="$2" '
      function rank(p,   r) { r = int(n * p); return (r < n * p) ? r + 1 : r }
      BEGIN { split(name, k, "-"); r25 = rank(0.25); r50 = rank(0.50); r99 = rank(0.99) }
      NR == r25 { p25 = $1 } NR == r50 { p50 = $1 } NR == r99 { p99 = $1 } NR == n { max = $1 }
      END { printf "POOLED %s=%s test=%s/%s n=%d p50_us=%.1f p99_us=%.1f max_us=%.1f p25_us=%.1f\n", key, k[1], k[2], k[3], n,
              p50 / 1000, p99 / 1000, max / 1000, p25 / 1000 }' "$f.sorted"
  done
}

# measured_run CLIENT KIND PORT TAG REP ARG...: one run of `load_client KIND ADDR PORT ARG...` (CLIENT c,
# its CPU time from children_ticks, which the caller defines) or of the same line given to the Java load
# client's --commands coproc (CLIENT java: to_java, from_java, java_pid; its stderr in $LOG/java-client.err);
# prints its RESULT line renamed "RESULT TAG client=.. rep=.. cpu_ms=.. server_cpu_ms=.." (server_pid, HZ)
# and, when the run failed, a FAIL line (the caller's fail) with the end of the client's error output
measured_run() {
  local client=$1 kind=$2 port=$3 tag=$4 rep=$5 out rc t0 t1 s0 s1 line err0
  shift 5
  s0=$(cpu_ticks "$server_pid")
  if [ "$client" = c ]; then
    t0=$(children_ticks)
    out=$("$BIN/load_client" "$kind" "$ADDR" "$port" "$@" 2> "$LOG/client.err")
    rc=$?
    t1=$(children_ticks)
  else
    t0=$(cpu_ticks "$java_pid")
    err0=$(wc -l < "$LOG/java-client.err")
    out=
    echo "$kind $ADDR $port $*" >&"$to_java"
    while IFS= read -r -t 330 line <&"$from_java"; do
      case $line in RESULT*|ERROR*) out=$line; break;; esac
    done
    t1=$(cpu_ticks "$java_pid")
    rc=1
    [[ $out == RESULT* && $out == *" errors=0 "* ]] && rc=0
  fi
  s1=$(cpu_ticks "$server_pid")
  echo "$out" | sed "s/^RESULT $kind /RESULT $tag client=$client rep=$rep cpu_ms=$(( (t1 - t0) * 1000 / HZ )) server_cpu_ms=$(( (s1 - s0) * 1000 / HZ )) /"
  if [ "$rc" != 0 ]; then
    fail "$client $tag rep=$rep: exit $rc ${out:-(no RESULT line)}"
    if [ "$client" = c ]; then cat "$LOG/client.err"; else tail -n +$((err0 + 1)) "$LOG/java-client.err"; fi | tail -n 20 | sed 's/^/  client: /'
  fi
}
