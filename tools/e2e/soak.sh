#!/usr/bin/env bash
# soak.sh - the sample app under mixed traffic over real soft-RoCE for MINUTES (default 20):
# dev.rpma.sample.e2e.SoakEndToEndTests alone, in one boot of the soft-RoCE VM (or directly on a
# machine with an RDMA device), through tools/e2e/run-e2e.sh with -Drpma.e2e.soak.minutes.
# A sample every minute (every 15 s below 5 minutes); at the end the table of samples and each
# series' slope with its verdict (docs/sample-app.md, "Soak").
#
#   tools/e2e/soak.sh [MINUTES] [run-e2e.sh option]...      e.g. tools/e2e/soak.sh 20 --no-build
#
# Exit code: run-e2e.sh's (0 the soak passed).
set -euo pipefail

cd "$(dirname "$(realpath "$0")")/../.."
MINUTES=20
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; then MINUTES=$1; shift; fi
# the VM's limit: the soak, plus the app's start and the clients' last runs (run-e2e.sh's 1500 s covers
# the short run with a loaded host's slow start)
LIMIT=$(awk "BEGIN{printf \"%d\", $MINUTES * 60 * 1.25 + 1500}")
set +e
tools/e2e/run-e2e.sh --select-class dev.rpma.sample.e2e.SoakEndToEndTests -t "$LIMIT" \
  -Drpma.e2e.soak.minutes="$MINUTES" "$@"
rc=$?
set -e
echo "----- soak of $MINUTES min: samples and slopes -----"
grep -F '[e2e soak]' sample-app/target/e2e-reports/measurements.txt 2>/dev/null | sed 's/^\[e2e soak\] //' \
  || echo "(none recorded: see sample-app/target/e2e-reports/console.txt)"
exit $rc
