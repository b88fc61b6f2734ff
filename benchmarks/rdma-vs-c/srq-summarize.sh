#!/bin/bash
# srq-summarize.sh [RESULTS]: the table of srq-in-vm.sh's results: per test, the median over the
# rounds of the per-round ratio shared receive queue / slots per connection (with the spread),
# for p50, p99, message rate and server CPU per message.
RESULTS=${1:-$(dirname "$(realpath "$0")")/target/srq-results-c.txt}
awk '
  /^RESULT / {
    test = $2; split($3, s, "="); split($4, r, "="); server = s[2]; rep = r[2]
    for (i = 5; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
    key = test "/" v["concurrency"]
    cpu[key, server, rep] = v["cpu_ms"] * 1000 / v["rounds"]
    p50[key, server, rep] = v["p50_us"]; p99[key, server, rep] = v["p99_us"]; rate[key, server, rep] = v["rate"]
    if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    if (rep > maxrep) maxrep = rep
  }
  function median(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function row(name, arr, key,   i, n, ra, c, q, lo, hi) {
    n = 0; lo = 1e18; hi = 0
    for (i = 1; i <= maxrep; i++) if ((key, "conn", i) in arr && arr[key, "conn", i] > 0) {
      ra[++n] = arr[key, "srq", i] / arr[key, "conn", i]; c[n] = arr[key, "conn", i]; q[n] = arr[key, "srq", i]
      if (ra[n] < lo) lo = ra[n]; if (ra[n] > hi) hi = ra[n]
    }
    if (n == 0) return
    printf "| %s, %s | %.1f | %.1f | **%.2f** (%.2f-%.2f, %d rounds) |\n", key, name, median(c, n), median(q, n), median(ra, n), lo, hi, n
  }
  END {
    print "| test, metric | slots per connection | shared receive queue | SRQ / per connection: median of rounds (spread) |"
    print "|---|---|---|---|"
    for (k = 1; k <= nk; k++) {
      key = order[k]
      if (key ~ /^rate/) { row("messages/s", rate, key); row("server CPU us/message", cpu, key) }
      else { row("p50 us", p50, key); row("p99 us", p99, key); row("server CPU us/message", cpu, key) }
    }
  }' "$RESULTS"
grep '^INFO' "$RESULTS"
