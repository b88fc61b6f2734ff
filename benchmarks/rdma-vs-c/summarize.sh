#!/bin/bash
# summarize.sh - the comparison table (Markdown) from compare-in-vm.sh's results file.
#
#   summarize.sh [RESULTS_FILE]    (default target/compare-results.txt)
#
# Per test and server: each round's rate, p50 and p99 (the RESULT lines) and the server's CPU per
# operation (its user+system time over the run divided by the run's operations, warm-up round trips
# included). Each row gives the median of the per-round Java/C ratios (the two servers ran back to
# back in every round, in alternating order), their spread (min-max), and the ratio of the pooled
# figures (rates summed over all rounds; percentiles over every operation of every round: the
# POOLED lines). A target is met when the median of the per-round ratios meets it, over at least 5
# rounds. The rows are measured against the C server that sleeps in poll() after each completion
# (c) and against the one that busy-polls for the same time as the starter (cspin); the data-path
# targets hold against both.
#
# Targets: connection rate >= 0.9 of C's (hello); ping-pong p50 <= 1.10 and p99 <= 1.30 of C's
# with 1, 4 and 64 clients; message rate with 16 clients x 8 in flight >= 0.9 of C's; server CPU
# per message in that test <= 1.2 of C's.
# Exit 0 when every target is met, 1 when one is missed, 2 when results are missing, a client
# failed, or there were fewer than 5 rounds.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
FILE=${1:-$HERE/target/compare-results.txt}
[ -s "$FILE" ] || { echo "summarize.sh: no results in $FILE" >&2; exit 2; }

# the program after the shared part (lib-ratios.awk), on standard input
awk -f "$HERE/lib-ratios.awk" -f /dev/stdin -v ratetest="rate/$(sed -n 's/.*rate_clients=\([0-9]*\).*/\1/p' "$FILE" | head -1)" \
  -v ratelabel="$(sed -n 's/.*rate_clients=\([0-9]*\) rate_inflight=\([0-9]*\).*/\1 clients x \2 in flight/p' "$FILE" | head -1)" \
  "$FILE" <<'EOF'
/^INFO / && kv($0, "java_start_seconds") != "" { java_start = kv($0, "java_start_seconds") }
/^== kernel/ { header = substr($0, 4) }
/^MEM after-warmup/ { memw = $0 }
/^MEM end/ { meme = $0 }
/^INFO churn / { churn = $0 }
# the Java server's threads in a measured round of the rate test: its JIT compilers' share
/^THREADS / && $2 == "rate" && $4 != "rep=warmup:" {
  jitrounds++
  for (i = 5; i <= NF; i++) { split($i, th, "="); threadms += th[2]; if (th[1] ~ /^C[12]_Compiler/) jitms += th[2] }
}
END {
  spin = (("cspin", "pingpong/1", "p50") in pooled) || (("cspin", ratetest, "p50") in pooled)
  print "| metric | C server | Java server | Java / C: median of rounds (spread) | pooled | target | met |"
  print "|---|---|---|---|---|---|---|"
  row("connection rate, sequential (cycles/s)", "hello/1", "rate", "/s", 0.90, 1, "c")
  row("connection rate, 8 clients (cycles/s)", "hello/8", "rate", "/s", 0.90, 1, "c")
  nrefs = split(spin ? "c cspin" : "c", refs, " ")
  for (k = 1; k <= nrefs; k++) {
    ref = refs[k]; against = (ref == "cspin") ? ", C busy-polling" : ", C sleeping"
    split("1 4 64", clients, " ")
    for (i = 1; i <= 3; i++) {
      t = "pingpong/" clients[i]
      row("ping-pong p50, " clients[i] " client" (clients[i] > 1 ? "s" : "") against, t, "p50", "us", 1.10, 0, ref)
      row("ping-pong p99, " clients[i] " client" (clients[i] > 1 ? "s" : "") against, t, "p99", "us", 1.30, 0, ref)
    }
    row("message rate, " ratelabel " (msg/s)" against, ratetest, "rate", "/s", 0.90, 1, ref)
    row("server CPU per message, " ratelabel against, ratetest, "cpu", "us", 1.20, 0, ref)
  }
  if (memw != "") {
    printf "| resident memory after warm-up (VmRSS) | %.1f MiB (both processes) | %.1f MiB | | | | |\n",
      (kv(memw, "c_hello_rss_kb") + kv(memw, "c_pingpong_rss_kb")) / 1024, kv(memw, "java_rss_kb") / 1024
    printf "| Java heap used / committed after warm-up | | %.1f / %.1f MiB | | | | |\n",
      kv(memw, "java_heap_used_b") / 1048576, kv(memw, "java_heap_committed_b") / 1048576
  }
  print ""
  print "Behind the ratios (all rounds): operations measured, latency p50 / p99, server CPU time per operation."
  print ""
  print "| test | C server | Java server |" (spin ? " C server, busy-polling |" : "")
  print "|---|---|---|" (spin ? "---|" : "")
  ntests = split("hello/1 hello/8 pingpong/1 pingpong/4 pingpong/64 " ratetest, tests, " ")
  split("c java cspin", names, " ")
  for (i = 1; i <= ntests; i++) {
    t = tests[i]; s = (t ~ /^hello/) ? 1000 : 1; u = (t ~ /^hello/) ? "ms" : "us"
    line = "| " t
    for (k = 1; k <= (spin ? 3 : 2); k++) {
      sv = names[k]
      if (sv == "cspin" && t ~ /^hello/) { line = line " | -"; continue }
      line = line sprintf(" | %d, %s / %s %s, %s us CPU", pooledn[sv, t], fmt(pooled[sv, t, "p50"] / s), fmt(pooled[sv, t, "p99"] / s), u,
        (cpuops[sv, t] > 0) ? fmt(cpu[sv, t] * 1000 / cpuops[sv, t]) : "n/a")
    }
    print line " |"
  }
  if (meme != "")
    printf "\nJava at the end: VmRSS %.1f MiB (peak %.1f MiB), heap used %.1f MiB, non-heap used %.1f MiB, %s threads.\n",
      kv(meme, "java_rss_kb") / 1024, kv(meme, "java_hwm_kb") / 1024, kv(meme, "java_heap_used_b") / 1048576,
      kv(meme, "java_nonheap_used_b") / 1048576, kv(meme, "java_threads")
  printf "%d rounds; %s; the JVM took %s s to serve.\n", reps, header, java_start
  if (churn != "")
    printf "Warm-up: %d short sessions through the Java server (%s s), its JIT compilers %.1f s of CPU meanwhile.\n",
      kv(churn, "sessions"), kv(churn, "seconds"), kv(churn, "compiler_ms") / 1000
  if (jitrounds > 0)
    printf "Java's JIT compiler threads in the measured runs of the rate test: %.0f ms per run, %.1f %% of its busiest threads' CPU.\n",
      jitms / jitrounds, (threadms > 0) ? 100 * jitms / threadms : 0
  if (errors > 0 || fails > 0) printf "\n**%d client errors, %d FAIL lines: see the results file.**\n", errors, fails
  if (few) printf "\n**Fewer than 5 rounds: no target can be called met.**\n"
  exit (missing || few || errors > 0 || fails > 0) ? 2 : (missed ? 1 : 0)
}
EOF
