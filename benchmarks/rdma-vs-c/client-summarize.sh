#!/bin/bash
# client-summarize.sh - the table (Markdown) of the Java client against the C client, from
# client-compare-in-vm.sh's results file.
#
#   client-summarize.sh [RESULTS_FILE]    (default target/client-compare-results.txt)
#
# Per test: each round's p50, p99 and rate of both clients, and each client process's CPU time per
# message (user+system over the run, connection set-up and warm-up messages included, divided by the
# run's messages). Each row gives the median of the per-round Java/C ratios (the two clients ran back
# to back in every round, in alternating order), their spread (min-max), and the ratio of the pooled
# figures (rates summed over all rounds; percentiles over every message of every round). A target is
# met when the median of the per-round ratios meets it, over at least 5 rounds.
#
# With CLIENT_JAR_B results (client=javab), a second table compares that build with the first, round
# by round; it informs, the targets are the first build's.
# A last line gives each client's request/reply p50 in its quieter rounds: the lower quartile of its
# per-round p50s. The emulator's noise does not fall on both clients alike (the C client, which sleeps
# after one empty look, loses more in noisy rounds), so the median of the per-round ratios can sit
# nearer 1 than the clients are where the emulator is quiet; the line informs. The next gives each
# client's p25 over all rounds pooled (POOLED p25_us), the fast round trips, which slow ones move least.
# Targets: request/reply (1 connection, 1 in flight) p50 <= 1.10 of the C client's; message rate with
# 16 in flight >= 0.9 of the C client's, both with 1 connection x 16 and with 16 connections x 8. The
# p99 and the CPU rows inform.
# Exit 0 when every target is met, 1 when one is missed, 2 when results are missing, a run failed, or
# there were fewer than 5 rounds.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
FILE=${1:-$HERE/target/client-compare-results.txt}
[ -s "$FILE" ] || { echo "client-summarize.sh: no results in $FILE" >&2; exit 2; }

# the program after the shared part (lib-ratios.awk), on standard input
awk -v side=client -f "$HERE/lib-ratios.awk" -f /dev/stdin "$FILE" <<'EOF'
/^== kernel/ { header = substr($0, 4) }
/^INFO / && kv($0, "rate1_inflight") != "" {
  k1 = kv($0, "rate1_inflight"); kc = kv($0, "rate_clients"); ki = kv($0, "rate_inflight")
  args = kv($0, "java_client_args"); gsub(/_/, " ", args)
}
/^RESULT / && kv($0, "rep") != "warmup" { servercpu[kv($0, "client"), $2 "/" kv($0, "concurrency")] += kv($0, "server_cpu_ms") }
/^RESULT / && kv($0, "client") == "javab" { hasb = 1 }
/^INFO / && kv($0, "javab_jar") != "" { jarb = kv($0, "javab_jar") }
# the lower quartile of WHO's per-round values of TEST and METRIC ("" without rounds)
function lowerquartile(who, test, metric,   k, n, v) {
  n = 0
  for (k = 1; k <= reps; k++)
    if ((who, test, metric, repname[k]) in one) v[++n] = one[who, test, metric, repname[k]] + 0
  if (n == 0) return ""
  sortn(v, n)
  return v[int(n / 4) + 1]
}
# ", LABEL v us (v/c of C's)", or "" without v or c
function against(label, v, c) {
  return (v == "" || v == 0 || c == 0) ? "" : sprintf(", %s %s us (%.2f of C's)", label, fmt(v), v / c)
}
# WHO's request/reply p25 over all rounds pooled, 0 without one
function fast(who) {
  return ((who, "pingpong/1", "p25") in pooled) ? pooled[who, "pingpong/1", "p25"] + 0 : 0
}
END {
  rate1 = "1 connection x " k1 " in flight"; ratec = kc " connections x " ki " in flight"
  print "| metric | C client | Java client | Java / C: median of rounds (spread) | pooled | target | met |"
  print "|---|---|---|---|---|---|---|"
  row("request/reply p50, 1 connection x 1 in flight", "pingpong/1", "p50", "us", 1.10, 0, "c")
  row("request/reply p99, 1 connection x 1 in flight", "pingpong/1", "p99", "us", 0, 0, "c")
  row("message rate, " rate1 " (msg/s)", "rate/1", "rate", "/s", 0.90, 1, "c")
  row("message rate, " ratec " (msg/s)", "rate/" kc, "rate", "/s", 0.90, 1, "c")
  row("client CPU per message, 1 x 1", "pingpong/1", "cpu", "us", 0, 0, "c")
  row("client CPU per message, " rate1, "rate/1", "cpu", "us", 0, 0, "c")
  row("client CPU per message, " ratec, "rate/" kc, "cpu", "us", 0, 0, "c")
  print ""
  print "Behind the ratios (all rounds): messages measured, latency p50 / p99, rate, client and server CPU time per message."
  print ""
  print "| test | C client | Java client |"
  print "|---|---|---|"
  ntests = split("pingpong/1 rate/1 rate/" kc, tests, " ")
  split("1 x 1|" rate1 "|" ratec, labels, "|")
  split("c java", names, " ")
  for (i = 1; i <= ntests; i++) {
    t = tests[i]; line = "| " labels[i]
    for (k = 1; k <= 2; k++) {
      w = names[k]
      line = line sprintf(" | %d, %s / %s us, %s msg/s, client %s us, server %s us CPU", pooledn[w, t], fmt(pooledvalue(w, t, "p50")),
        fmt(pooledvalue(w, t, "p99")), fmt(pooledvalue(w, t, "rate")), fmt(pooledvalue(w, t, "cpu")),
        (cpuops[w, t] > 0) ? fmt(servercpu[w, t] * 1000 / cpuops[w, t]) : "n/a")
    }
    print line " |"
  }
  if (hasb) {
    # CLIENT_JAR_B: the second build (B) against the first (A), round by round; the rows inform
    printf "\nA/B: the Java client built as %s (B) against the one above (A) and against C, in the same rounds.\n\n", jarb
    print "| metric | A or C | B | B / A or B / C: median of rounds (spread) | pooled | target | met |"
    print "|---|---|---|---|---|---|---|"
    subject = "javab"
    row("request/reply p50, 1 x 1, B / A", "pingpong/1", "p50", "us", 0, 0, "java")
    row("request/reply p50, 1 x 1, B / C", "pingpong/1", "p50", "us", 0, 0, "c")
    row("message rate, " rate1 ", B / A", "rate/1", "rate", "/s", 0, 1, "java")
    row("message rate, " rate1 ", B / C", "rate/1", "rate", "/s", 0, 1, "c")
    row("message rate, " ratec ", B / A", "rate/" kc, "rate", "/s", 0, 1, "java")
    row("client CPU per message, 1 x 1, B / A", "pingpong/1", "cpu", "us", 0, 0, "java")
    row("client CPU per message, " rate1 ", B / A", "rate/1", "cpu", "us", 0, 0, "java")
    subject = "java"
  }
  quietc = lowerquartile("c", "pingpong/1", "p50")
  if (quietc != "")
    printf "\nRequest/reply p50 in the quieter rounds (lower quartile of the per-round p50s): C %s us%s%s.\n",
      fmt(quietc), against("Java", lowerquartile("java", "pingpong/1", "p50"), quietc),
      hasb ? against("B", lowerquartile("javab", "pingpong/1", "p50"), quietc) : ""
  fastc = fast("c")
  if (fastc > 0)
    printf "Request/reply p25 over all rounds pooled (the fast round trips): C %s us%s%s.\n",
      fmt(fastc), against("Java", fast("java"), fastc), hasb ? against("B", fast("javab"), fastc) : ""
  printf "\n%d rounds; %s; the C server busy-polls (baseline_server --busy-poll-us), the Java client runs with %s.\n",
    reps, header, (args == "") ? "its defaults" : args
  if (errors > 0 || fails > 0) printf "\n**%d client errors, %d FAIL lines: see the results file.**\n", errors, fails
  if (few) printf "\n**Fewer than 5 rounds: no target can be called met.**\n"
  exit (missing || few || errors > 0 || fails > 0) ? 2 : (missed ? 1 : 0)
}
EOF
