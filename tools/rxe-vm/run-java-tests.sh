#!/bin/bash
# run-java-tests.sh - run JUnit Platform tests that need real RDMA with plain `java`
# (the JUnit console launcher) inside ONE soft-RoCE VM boot, and bring the JUnit XML
# reports back to the host.
#
#   run-java-tests.sh --classpath-file FILE --reports-dir DIR
#                     [--select-package PKG | --select-class CLASS | --select-method M
#                      | --scan-classpath]...
#                     [--class-path ENTRY]... [--include-tag T]... [--exclude-tag T]...
#                     [--launcher-arg ARG]... [--junit-version V] [--wrapper WORD]...
#                     [--mode vm|direct|auto] [-t SEC] [-m MiB] [-c N] [-w DIR]... [-k] [-v]
#                     [-- JVM-OPTION...]
#
#   --classpath-file FILE  test runtime classpath: entries separated by ':' and/or newlines
#                          (e.g. the output of `mvn dependency:build-classpath
#                          -Dmdep.outputFile=FILE`); lines starting with # are ignored
#   --class-path ENTRY     extra entries put first (target/test-classes, target/classes)
#   --reports-dir DIR      created if needed; shared read-write with the VM; the launcher's
#                          --reports-dir (TEST-junit-jupiter.xml etc.) and console.txt
#   --junit-version V      version of junit-platform-console-standalone; default: the
#                          version of the junit-platform-*.jar found on the classpath
#                          (launcher and tests must use the same platform version)
#   --mode                 vm (default): boot the soft-RoCE VM; direct: run on this
#                          machine (it must have an RDMA device; RPMA_TEST_* come from the
#                          caller's environment); auto: direct if has-rdma-device.sh says so
#   -t/-m/-c/-w/-k/-v      passed to rxe-vm.sh (default -t 1200)
#   --wrapper WORD         put WORD before the java command (repeatable, in order): a program
#                          that prepares the VM and then execs its arguments
#   -- JVM-OPTION...       extra JVM options (before -jar), e.g. -Djna.debug_load=true
#
# Inside the VM the tests see RPMA_TEST_SAME_IP=198.18.0.1, RPMA_TEST_SERVER_IP=198.18.3.2,
# RPMA_TEST_CLIENT_IP=198.18.3.1 and RXE_VM=1.
# Exit code: the console launcher's (0 all passed, 1 failures, 2 no tests found),
# 124 VM timeout, 125 VM or set-up failure.
#
# The console launcher jar is resolved once with Maven into the cache directory
# RXE_VM_JAR_CACHE (default: tools/rxe-vm/target/, git-ignored) and never committed.
set -euo pipefail

HERE=$(dirname "$(realpath "$0")")
die() { echo "run-java-tests: $*" >&2; exit 125; }

CP_FILE=
REPORTS=
JUNIT_VERSION=${JUNIT_PLATFORM_VERSION:-}
MODE=vm
EXTRA_CP=()
SELECT=()
LAUNCHER_ARGS=()
VM_ARGS=()
TIMEOUT=1200
JVM_OPTS=()
WRAPPER=()
while [ $# -gt 0 ]; do
  case "$1" in
    --classpath-file) CP_FILE=$2; shift 2;;
    --reports-dir) REPORTS=$2; shift 2;;
    --class-path|--classpath|-cp) EXTRA_CP+=("$2"); shift 2;;
    --select-package|--select-class|--select-method|--include-tag|--exclude-tag|--include-classname|--exclude-classname)
      SELECT+=("$1" "$2"); shift 2;;
    --scan-classpath) SELECT+=("$1"); shift;;
    --launcher-arg) LAUNCHER_ARGS+=("$2"); shift 2;;
    --junit-version) JUNIT_VERSION=$2; shift 2;;
    --wrapper) WRAPPER+=("$2"); shift 2;;
    --mode) MODE=$2; shift 2;;
    -t) TIMEOUT=$2; shift 2;;
    -m|-c|-w) VM_ARGS+=("$1" "$2"); shift 2;;
    -k|-v) VM_ARGS+=("$1"); shift;;
    --) shift; JVM_OPTS=("$@"); break;;
    *) die "unknown argument $1 (see the header of $0)";;
  esac
done
[ -n "$CP_FILE" ] && [ -f "$CP_FILE" ] || die "--classpath-file FILE is required and must exist"
[ -n "$REPORTS" ] || die "--reports-dir DIR is required"
[ ${#SELECT[@]} -gt 0 ] || die "select something: --select-package/--select-class/--select-method/--scan-classpath"
case "$MODE" in vm|direct|auto) ;; *) die "--mode must be vm, direct or auto";; esac

# ---------------------------------------------------------------- classpath (absolute paths)
CP_ENTRIES=()
for e in "${EXTRA_CP[@]}"; do CP_ENTRIES+=("$(realpath -m "$e")"); done
while IFS= read -r e; do
  [ -n "$e" ] && CP_ENTRIES+=("$(realpath -m "$e")")
done < <(grep -v '^[[:space:]]*#' "$CP_FILE" | tr ':' '\n' | sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
[ ${#CP_ENTRIES[@]} -gt 0 ] || die "$CP_FILE lists no classpath entries"
for e in "${CP_ENTRIES[@]}"; do [ -e "$e" ] || echo "run-java-tests: warning: classpath entry $e does not exist" >&2; done
CLASSPATH_ARG=$(IFS=:; echo "${CP_ENTRIES[*]}")

# ---------------------------------------------------------------- console launcher jar
if [ -z "$JUNIT_VERSION" ]; then
  JUNIT_VERSION=$(printf '%s\n' "${CP_ENTRIES[@]}" \
    | sed -n 's#.*/junit-platform-[a-z-]*-\([0-9][0-9A-Za-z.-]*\)\.jar$#\1#p' | sort -V | tail -1)
  [ -n "$JUNIT_VERSION" ] || die "no junit-platform-*.jar on the classpath: give --junit-version"
fi
JAR_CACHE=${RXE_VM_JAR_CACHE:-$HERE/target}
CONSOLE_JAR=$JAR_CACHE/junit-platform-console-standalone-$JUNIT_VERSION.jar
mkdir -p "$JAR_CACHE"
exec 8>"$JAR_CACHE/.lock"; flock 8     # concurrent runs: one fetch
if [ ! -s "$CONSOLE_JAR" ]; then
  command -v mvn >/dev/null || die "mvn is needed once to fetch $CONSOLE_JAR"
  echo "run-java-tests: fetching junit-platform-console-standalone $JUNIT_VERSION" >&2
  # run outside any project (the repo's pom must not be read); offline first (~/.m2 may have it)
  GOAL=org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy
  ART=-Dartifact=org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION
  ( cd "$JAR_CACHE" && { mvn -B -q -o "$GOAL" "$ART" -DoutputDirectory="$JAR_CACHE" >/dev/null 2>&1 \
      || mvn -B -q "$GOAL" "$ART" -DoutputDirectory="$JAR_CACHE" >&2; } ) \
    || die "could not resolve org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION"
  [ -s "$CONSOLE_JAR" ] || die "$CONSOLE_JAR missing after mvn dependency:copy"
fi
exec 8>&-

# ---------------------------------------------------------------- the command
mkdir -p "$REPORTS"
REPORTS=$(realpath "$REPORTS")
JAVA=${JAVA_HOME:+$JAVA_HOME/bin/java}
[ -n "$JAVA" ] && [ -x "$JAVA" ] || JAVA=$(command -v java) || die "no java on PATH (or set JAVA_HOME)"
COLORS=()
[ -t 1 ] || COLORS=(--disable-ansi-colors)   # plain text in CI logs and console.txt
# C1 only and the serial GC: the JVM is ~10x slower under software emulation and
# C2 compile threads would compete with the test for the 2 vCPUs
CMD=("${WRAPPER[@]}" "$JAVA" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${JVM_OPTS[@]}"
     -jar "$CONSOLE_JAR" execute --disable-banner --details=tree --fail-if-no-tests "${COLORS[@]}"
     --class-path "$CLASSPATH_ARG" "${SELECT[@]}" "${LAUNCHER_ARGS[@]}" --reports-dir "$REPORTS")

if [ "$MODE" = auto ]; then
  if "$HERE/has-rdma-device.sh"; then MODE=direct; else MODE=vm; fi
fi
start=$(date +%s.%N)
set +e
case "$MODE" in
  direct)
    "$HERE/has-rdma-device.sh" || echo "run-java-tests: warning: no RDMA device here" >&2
    "${CMD[@]}" 2>&1 | tee "$REPORTS/console.txt"
    rc=${PIPESTATUS[0]};;
  vm)
    # stdout of rxe-vm.sh = the launcher's merged output; its own messages stay on stderr
    "$HERE/rxe-vm.sh" -t "$TIMEOUT" "${VM_ARGS[@]}" -w "$REPORTS" -- "${CMD[@]}" \
      | tee "$REPORTS/console.txt"
    rc=${PIPESTATUS[0]};;
  *) die "--mode must be vm, direct or auto";;
esac
set -e
echo "run-java-tests: mode=$MODE exit=$rc wall time $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N)-$start}")s, reports in $REPORTS" >&2
exit $rc
