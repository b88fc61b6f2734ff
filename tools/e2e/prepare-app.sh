#!/usr/bin/env bash
# prepare-app.sh - the sample app laid out for a fast JVM start: the runnable jar extracted
# (`java -Djarmode=tools -jar JAR extract`: the application jar and lib/, which the JVM reads
# directly instead of through the nested-jar loader) and a class data sharing archive of the
# classes its start loads (Spring Boot's CDS recipe: one training start that stops once the
# context is refreshed, before any endpoint listens, so no RDMA device is needed).
#
#   tools/e2e/prepare-app.sh JAR OUT_DIR [JVM option]...
#
# Writes OUT_DIR/app/<jar name> (start the app with `java -jar` on it) and OUT_DIR/app.jsa, and
# prints the JVM option that uses the archive: -XX:SharedArchiveFile=OUT_DIR/app.jsa
# The archive is valid only for the same JVM and the same files (paths, sizes and times): the
# soft-RoCE VM sees this machine's files and JDK, so an archive made here serves the app there.
# Pass the JVM options the app will run with (the archive records the garbage collector). When the
# training start fails, the archive is left out (the JVM would start without it anyway) and
# nothing is printed.
set -euo pipefail

[ $# -ge 2 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
JAR=$(realpath "$1")
OUT=$(realpath -m "$2")
shift 2
NAME=$(basename "$JAR")
# the JVM the tests start the app with (tools/rxe-vm/run-java-tests.sh): JAVA_HOME's, else the PATH's
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/}java

rm -rf "$OUT"
mkdir -p "$OUT"
"$JAVA" -Djarmode=tools -jar "$JAR" extract --destination "$OUT/app" >"$OUT/extract.log" 2>&1 \
  || { cat "$OUT/extract.log" >&2; echo "prepare-app: extracting $JAR failed" >&2; exit 1; }

# any address of this machine that is not loopback passes the address check; nothing listens on it
ADDRESS=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
if [ -n "$ADDRESS" ] && "$JAVA" "$@" -XX:ArchiveClassesAtExit="$OUT/app.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off \
     -Dspring.context.exit=onRefresh -jar "$OUT/app/$NAME" --rpma.server.address="$ADDRESS" \
     --server.port=0 >"$OUT/training.log" 2>&1 && [ -s "$OUT/app.jsa" ]; then
  echo "-XX:SharedArchiveFile=$OUT/app.jsa"
else
  echo "prepare-app: no class data sharing archive (the training start failed: $OUT/training.log)" >&2
  rm -f "$OUT/app.jsa"
fi
