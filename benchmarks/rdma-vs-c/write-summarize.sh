#!/bin/bash
# write-summarize.sh - the table (Markdown) of the Java client's writes plus flushes against the C
# client's, from write-compare-in-vm.sh's results file.
#
#   write-summarize.sh [RESULTS_FILE]    (default target/write-compare-results.txt)
#
# Per size: each round's bandwidth of both clients (the two ran back to back in every round, in
# alternating order), the median of the per-round Java/C ratios with their spread, and the ratio of
# the pooled figures; the p50 and p99 of an operation (a write and its flush) and each client's CPU
# time per operation inform. A target is met when the median of the per-round ratios meets it, over
# at least 5 rounds. Target: bandwidth >= 0.95 of the C client's at 64 KiB and above.
# Exit 0 when every target is met, 1 when one is missed, 2 when results are missing, a run failed, or
# there were fewer than 5 rounds.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
FILE=${1:-$HERE/target/write-compare-results.txt}
[ -s "$FILE" ] || { echo "write-summarize.sh: no results in $FILE" >&2; exit 2; }

awk -v side=client -f "$HERE/lib-ratios.awk" -f /dev/stdin "$FILE" <<'AWK'
/^== kernel/ { header = substr($0, 4) }
/^INFO / && kv($0, "sizes") != "" {
  nsizes = split(kv($0, "sizes"), sizes, ","); conc = kv($0, "concurrency"); inflight = kv($0, "inflight")
  region = kv($0, "region")
}
/^RESULT / { flush = kv($0, "flush") }
function label(size) { return (size >= 1048576) ? (size / 1048576) " MiB" : (size >= 1024) ? (size / 1024) " KiB" : size " B" }
END {
  print "| metric | C client | Java client | Java / C: median of rounds (spread) | pooled | target | met |"
  print "|---|---|---|---|---|---|---|"
  for (i = 1; i <= nsizes; i++) {
    s = sizes[i]; t = "w" s "/" conc
    # ops per second times the size: the ratio of rates is the ratio of bandwidths
    row("write + flush bandwidth, " label(s) " (operations/s)", t, "rate", "/s", (s >= 65536) ? 0.95 : 0, 1, "c")
  }
  for (i = 1; i <= nsizes; i++) {
    s = sizes[i]; t = "w" s "/" conc
    row("write + flush p50, " label(s), t, "p50", "us", 0, 0, "c")
  }
  for (i = 1; i <= nsizes; i++) {
    s = sizes[i]; t = "w" s "/" conc
    row("client CPU per operation, " label(s), t, "cpu", "us", 0, 0, "c")
  }
  print ""
  print "Bandwidth pooled over all rounds (MiB/s):"
  print ""
  print "| size | C client | Java client |"
  print "|---|---|---|"
  for (i = 1; i <= nsizes; i++) {
    s = sizes[i]; t = "w" s "/" conc
    printf "| %s | %s | %s |\n", label(s), fmt(pooledvalue("c", t, "rate") * s / 1048576), fmt(pooledvalue("java", t, "rate") * s / 1048576)
  }
  printf "\n%d rounds; %s; %s connection(s) x %s write+flush operations in flight, flush type %s, into the sample app's %s region.\n",
    reps, header, conc, inflight, flush, region
  if (errors > 0 || fails > 0) printf "\n**%d client errors, %d FAIL lines: see the results file.**\n", errors, fails
  if (few) printf "\n**Fewer than 5 rounds: no target can be called met.**\n"
  exit (missing || few || errors > 0 || fails > 0) ? 2 : (missed ? 1 : 0)
}
AWK
