#!/bin/bash
# summarize.sh - the comparison table (Markdown) from compare-in-vm.sh's results file.
#
#   summarize.sh [RESULTS_FILE]    (default target/compare-results.txt)
#
# Per test and server: the median over the rounds of the client's rate, p50 and p99. Ratio =
# Java's median / C's median. Targets (issue 6): connection rate >= 0.9 of C's; ping-pong p50
# <= 1.15 and p99 <= 1.5 of C's. "per round" lists each round's Java/C ratio (the two servers ran
# back to back), which shows how much the emulator's noise moves a ratio. Server CPU is the
# server process's user+system time during a run divided by the operations in it (warm-up round
# trips included). Exit 0 when every target is met, 1 when one is missed, 2 without results.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
FILE=${1:-$HERE/target/compare-results.txt}
[ -s "$FILE" ] || { echo "summarize.sh: no results in $FILE" >&2; exit 2; }

awk '
function kv(line, key,   m) {
  if (match(line, "(^| )" key "=[^ ]*")) { m = substr(line, RSTART, RLENGTH); sub(/^ /, "", m); return substr(m, length(key) + 2) }
  return ""
}
function median(list,   a, n, i, j, t) {
  n = split(list, a, " ")
  if (n == 0) return ""
  for (i = 2; i <= n; i++) { t = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
  return (n % 2) ? a[(n + 1) / 2] + 0 : (a[n / 2] + a[n / 2 + 1]) / 2
}
function fmt(v) { if (v == "") return "n/a"; return (v >= 100) ? sprintf("%.0f", v) : (v >= 10) ? sprintf("%.1f", v) : sprintf("%.2f", v) }
function row(label, test, metric, unit, target, better,   c, j, r, ok, per, rep, k) {
  c = median(val["c", test, metric]); j = median(val["java", test, metric])
  if (c == "" || j == "" || c == 0) { printf "| %s | %s | %s | n/a | %s | n/a |\n", label, fmt(c), fmt(j), target; missing = 1; return }
  r = j / c
  ok = (better == "high") ? (r >= target_value[label]) : (r <= target_value[label])
  if (!ok) missed = 1
  per = ""
  for (k = 1; k <= reps; k++) {
    rep = repname[k]
    if ((("c", test, metric, rep) in one) && (("java", test, metric, rep) in one) && one["c", test, metric, rep] > 0)
      per = per (per == "" ? "" : " ") sprintf("%.2f", one["java", test, metric, rep] / one["c", test, metric, rep])
  }
  printf "| %s | %s %s | %s %s | **%.2f** (%s) | %s | %s |\n", label, fmt(c), unit, fmt(j), unit, r, per, target, ok ? "yes" : "**NO**"
}
/^INFO / && kv($0, "pingpong_warmup") != "" { warmup = kv($0, "pingpong_warmup") + 0 }
/^INFO / && kv($0, "java_cmd") != "" { info_cmd = $0; sub(/.*java_cmd=/, "", info_cmd); java_start = kv($0, "java_start_seconds") }
/^== kernel/ { header = $0 }
/^RESULT / {
  rep = kv($0, "rep"); if (rep == "warmup") next
  proto = $2; server = kv($0, "server"); conc = kv($0, "concurrency"); test = proto "/" conc
  if (!(rep in seenrep)) { seenrep[rep] = 1; repname[++reps] = rep }
  if (kv($0, "errors") + 0 > 0) errors += kv($0, "errors")
  if (proto == "hello") { p50 = kv($0, "p50_ms"); p99 = kv($0, "p99_ms"); ops = kv($0, "cycles") }
  else { p50 = kv($0, "p50_us"); p99 = kv($0, "p99_us"); ops = kv($0, "rounds") + conc * warmup }
  put(server, test, "rate", kv($0, "rate"), rep); put(server, test, "p50", p50, rep); put(server, test, "p99", p99, rep)
  if (ops > 0) put(server, test, "cpu", kv($0, "cpu_ms") * 1000 / ops, rep)
}
/^MEM after-warmup/ { memw = $0 }
/^MEM end/ { meme = $0 }
/^FAIL/ { fails++ }
function put(server, test, metric, v, rep) { val[server, test, metric] = val[server, test, metric] " " v; one[server, test, metric, rep] = v }
END {
  target_value["connection rate, sequential"] = 0.9; target_value["connection rate, 8 clients"] = 0.9
  target_value["ping-pong p50, 1 client"] = 1.15; target_value["ping-pong p99, 1 client"] = 1.5
  target_value["ping-pong p50, 4 clients"] = 1.15; target_value["ping-pong p99, 4 clients"] = 1.5
  print "| metric | C server | Java server | Java / C (per round) | target | met |"
  print "|---|---|---|---|---|---|"
  row("connection rate, sequential", "hello/1", "rate", "/s", ">= 0.90", "high")
  row("connection rate, 8 clients", "hello/8", "rate", "/s", ">= 0.90", "high")
  row("ping-pong p50, 1 client", "pingpong/1", "p50", "us", "<= 1.15", "low")
  row("ping-pong p99, 1 client", "pingpong/1", "p99", "us", "<= 1.50", "low")
  row("ping-pong p50, 4 clients", "pingpong/4", "p50", "us", "<= 1.15", "low")
  row("ping-pong p99, 4 clients", "pingpong/4", "p99", "us", "<= 1.50", "low")
  if (memw != "") {
    printf "| Java resident memory after warm-up (VmRSS) | %.1f MiB (hello + pingpong processes) | %.1f MiB | | | |\n",
      (kv(memw, "c_hello_rss_kb") + kv(memw, "c_pingpong_rss_kb")) / 1024, kv(memw, "java_rss_kb") / 1024
    printf "| Java heap used / committed after warm-up | | %.1f / %.1f MiB (non-heap used %.1f MiB) | | | |\n",
      kv(memw, "java_heap_used_b") / 1048576, kv(memw, "java_heap_committed_b") / 1048576, kv(memw, "java_nonheap_used_b") / 1048576
  }
  print ""
  print "Not targets, for the reasons behind the ratios (medians over the rounds):"
  print ""
  print "| test | C: rate, p50, p99, server CPU per op | Java: rate, p50, p99, server CPU per op |"
  print "|---|---|---|"
  split("hello/1 hello/8 pingpong/1 pingpong/4", tests, " ")
  for (i = 1; i <= 4; i++) {
    t = tests[i]; u = (t ~ /^hello/) ? "ms" : "us"
    printf "| %s | %s/s, %s %s, %s %s, %s us | %s/s, %s %s, %s %s, %s us |\n", t,
      fmt(median(val["c", t, "rate"])), fmt(median(val["c", t, "p50"])), u, fmt(median(val["c", t, "p99"])), u, fmt(median(val["c", t, "cpu"])),
      fmt(median(val["java", t, "rate"])), fmt(median(val["java", t, "p50"])), u, fmt(median(val["java", t, "p99"])), u, fmt(median(val["java", t, "cpu"]))
  }
  if (meme != "")
    printf "\nJava at the end: VmRSS %.1f MiB (peak %.1f MiB), heap used %.1f MiB, %s threads.\n",
      kv(meme, "java_rss_kb") / 1024, kv(meme, "java_hwm_kb") / 1024, kv(meme, "java_heap_used_b") / 1048576, kv(meme, "java_threads")
  printf "%s rounds; %s; Java started in %s s.\n", reps, substr(header, 4), java_start
  if (errors > 0 || fails > 0) printf "\n**%d client errors, %d FAIL lines: see the results file.**\n", errors, fails
  exit (missing || errors > 0 || fails > 0) ? 2 : (missed ? 1 : 0)
}
' "$FILE"
