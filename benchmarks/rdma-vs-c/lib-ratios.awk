# lib-ratios.awk - the part of the Java-vs-C tables that summarize.sh (Java server against C servers)
# and client-summarize.sh (Java client against the C client) share: reading the RESULT and POOLED
# lines, per-round Java/C ratios, their median and spread, and one table row with its target.
#
# Variables (awk -v): side   the key that names who ran (server= or client=; default server)
#                     subject the name of the Java side in it (default java)
# Sets for the END block of the program that includes it: one[who, test, metric, rep] (metric rate,
# p50, p99, cpu: CPU time per message, warm-up messages included), repname[1..reps], ops, sec, cpu,
# cpuops, pooled[who, test, p50|p99], pooledn, errors; row() sets missing, missed and few. The warm-up
# (INFO pingpong_warmup=W) is W messages per connection, however many of them are in flight at once
# (load_client --warmup).
BEGIN {
  if (side == "") side = "server"
  if (subject == "") subject = "java"
}
function kv(line, key,   m) {
  if (match(line, "(^| )" key "=[^ ]*")) { m = substr(line, RSTART, RLENGTH); sub(/^ /, "", m); return substr(m, length(key) + 2) }
  return ""
}
function fmt(v) { if (v == "") return "n/a"; return (v >= 100) ? sprintf("%.0f", v) : (v >= 10) ? sprintf("%.1f", v) : sprintf("%.2f", v) }
# sorts v[1..n] in place (insertion sort: a few dozen rounds at most)
function sortn(v, n,   i, j, t) {
  for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
}
# per-round subject/REF ratios of TEST and METRIC into r[1..n], sorted; returns n
function ratios(ref, test, metric, r,   k, rep, n) {
  n = 0
  for (k = 1; k <= reps; k++) {
    rep = repname[k]
    if (((ref, test, metric, rep) in one) && ((subject, test, metric, rep) in one) && one[ref, test, metric, rep] > 0)
      r[++n] = one[subject, test, metric, rep] / one[ref, test, metric, rep]
  }
  sortn(r, n)
  return n
}
function median(r, n) { return (n % 2) ? r[(n + 1) / 2] : (r[n / 2] + r[n / 2 + 1]) / 2 }
function pooledvalue(who, test, metric,   scale) {
  if (metric == "rate") return (sec[who, test] > 0) ? ops[who, test] / sec[who, test] : ""
  if (metric == "cpu") return (cpuops[who, test] > 0) ? cpu[who, test] * 1000 / cpuops[who, test] : ""
  scale = (test ~ /^hello/) ? 1000 : 1
  return ((who, test, metric) in pooled) ? pooled[who, test, metric] / scale : ""
}
# LABEL TEST METRIC(rate|p50|p99|cpu) UNIT LIMIT HIGHER_IS_BETTER REF; LIMIT 0: no target, the row informs
function row(label, test, metric, unit, limit, higher, ref,   c, j, r, n, m, ok, target, met) {
  c = pooledvalue(ref, test, metric); j = pooledvalue(subject, test, metric)
  n = ratios(ref, test, metric, r)
  target = (limit > 0) ? sprintf("%s %.2f", higher ? ">=" : "<=", limit) : "-"
  if (c == "" || j == "" || c == 0 || n == 0) {
    printf "| %s | %s | %s | n/a | | %s | n/a |\n", label, fmt(c), fmt(j), target
    if (limit > 0) missing = 1
    return
  }
  m = median(r, n)
  met = "-"
  if (limit > 0) {
    ok = (n >= 5) && (higher ? (m >= limit) : (m <= limit))
    if (!ok) missed = 1
    if (n < 5) few = 1
    met = ok ? "yes" : "**NO**"
  }
  printf "| %s | %s %s | %s %s | **%.2f** (%.2f-%.2f, %d rounds) | %.2f | %s | %s |\n", label, fmt(c), unit, fmt(j), unit,
    m, r[1], r[n], n, j / c, target, met
}
/^INFO / && kv($0, "pingpong_warmup") != "" { warmup = kv($0, "pingpong_warmup") + 0 }
/^RESULT / {
  rep = kv($0, "rep"); if (rep == "warmup") next
  proto = $2; who = kv($0, side); conc = kv($0, "concurrency"); test = proto "/" conc
  if (!(rep in seenrep)) { seenrep[rep] = 1; repname[++reps] = rep }
  errors += kv($0, "errors")
  if (proto == "hello") { p50 = kv($0, "p50_ms"); p99 = kv($0, "p99_ms"); n = kv($0, "cycles"); all = n }
  else { p50 = kv($0, "p50_us"); p99 = kv($0, "p99_us"); n = kv($0, "rounds"); all = n + conc * warmup }
  one[who, test, "rate", rep] = kv($0, "rate"); one[who, test, "p50", rep] = p50; one[who, test, "p99", rep] = p99
  if (all > 0) one[who, test, "cpu", rep] = kv($0, "cpu_ms") * 1000 / all
  ops[who, test] += n; sec[who, test] += kv($0, "seconds")
  cpu[who, test] += kv($0, "cpu_ms"); cpuops[who, test] += all
}
/^POOLED / {
  test = kv($0, "test"); who = kv($0, side)
  pooled[who, test, "p50"] = kv($0, "p50_us"); pooled[who, test, "p99"] = kv($0, "p99_us"); pooledn[who, test] = kv($0, "n")
  pooled[who, test, "p25"] = kv($0, "p25_us")
}
/^FAIL/ { fails++ }
