#!/usr/bin/env bash
# build-images.sh - build the project's container images locally, with no registry and nothing
# downloaded but Debian's prometheus package: every image is FROM scratch, made of files of this
# machine and the libraries they load.
#
#   tools/container/build-images.sh [--no-build] [--save DIR] [IMAGE...]
#
# IMAGE (default: all of them):
#   sample-app   rpma/sample-app         the sample app's jar, extracted, on a Java runtime made with
#                                        jlink from this machine's JDK 17 (the modules the jar needs),
#                                        with a class data sharing archive of the app's start (made by
#                                        a training start of the image on this machine), librpma,
#                                        libibverbs, librdmacm and the verbs providers
#   c-clients    rpma/c-clients          the C test clients (sample-app/src/test/c), the libraries
#                                        they load and the verbs providers
#   prometheus   rpma/prometheus         Debian's prometheus binary and its libraries
#
#   --no-build   use the jar and C clients already built (else: mvn package and build-c-clients.sh)
#   --save DIR   also `docker save` each image to DIR/<image>.tar (to load it elsewhere, e.g. the VM)
#
# Needs root, a running dockerd (tools/container/ensure-dockerd.sh starts one where there is no
# systemd), librpma0 and ibverbs-providers, and for sample-app the JDK 17 with its jmods
# (openjdk-17-jdk-headless; RPMA_JDK points at another JDK 17). The Java runtime is cached as
# RPMA_CONTAINER_CACHE/jre-<key> (default /var/cache/rpma-containers; a new one when the jar needs
# other modules or the JDK changes), Debian's prometheus package unpacked beside it; delete the cache
# to start afresh. Prints each image's size and build time.
set -euo pipefail
cd "$(dirname "$(realpath "$0")")/../.."
ROOT=$PWD
HERE=$ROOT/tools/container
CACHE=${RPMA_CONTAINER_CACHE:-/var/cache/rpma-containers}
BUILD=1
SAVE=
IMAGES=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift;;
    --save) SAVE=$(realpath -m "$2"); shift 2;;
    -h|--help) sed -n '2,24p' "$0"; exit 0;;
    sample-app|c-clients|prometheus) IMAGES+=("$1"); shift;;
    *) echo "build-images: unknown argument $1" >&2; exit 2;;
  esac
done
[ ${#IMAGES[@]} -gt 0 ] || IMAGES=(sample-app c-clients prometheus)
die() { echo "build-images: $*" >&2; exit 1; }
DOCKER=/usr/bin/docker
[ -x "$DOCKER" ] || DOCKER=$(command -v docker) || die "no docker: apt-get install docker.io"
$DOCKER info >/dev/null 2>&1 || die "no docker daemon answers: start one (tools/container/ensure-dockerd.sh, as root)"
mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"; flock 9
now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.1f\", $(now)-$1}"; }
report() { # image start
  local size
  size=$($DOCKER image inspect -f '{{.Size}}' "$1")
  echo "build-images: $1: $(awk "BEGIN{printf \"%.1f\", $size/1e6}") MB, built in $(since "$2") s" >&2
  if [ -n "$SAVE" ]; then
    mkdir -p "$SAVE"
    local t; t=$(now)
    $DOCKER save -o "$SAVE/${1#rpma/}.tar" "$1"
    echo "build-images: $1 saved to $SAVE/${1#rpma/}.tar in $(since "$t") s" >&2
  fi
}

# ------------------------------------------------------------------ FROM scratch: files and their libraries
# libraries DIR FILE...: copy every library the FILEs load (ldd) into DIR, at their own paths; the
# ones that resolve inside DIR (a Java runtime's own) are there already. A library this machine
# lacks stops the build: the image would fail when the file is loaded. (libjvm.so is the exception:
# the JRE's libraries find it because the JVM has loaded it before them.)
libraries() {
  local dir=$1; shift
  local f lib out missing
  for f in "$@"; do
    out=$(ldd "$f" 2>/dev/null) || out=    # a static binary loads none
    missing=$(awk '/=> not found/ && $1 != "libjvm.so" {print $1}' <<<"$out" | sort -u | tr '\n' ' ')
    [ -z "$missing" ] || die "${f#"$dir"} needs ${missing% }, which this machine does not have"
    for lib in $(awk '/=> \//{print $3} /^[[:space:]]*\/.*ld-linux/{print $1}' <<<"$out"); do
      case "$lib" in "$dir"/*) continue;; esac
      [ -e "$dir$lib" ] || cp -L --parents "$lib" "$dir/"
    done
  done
}

# verbs_providers DIR: the verbs providers libibverbs opens by name at run time (ldd does not see
# them), their libraries, and the list of them (/etc/libibverbs.d); without a provider no device opens
verbs_providers() {
  local dir=$1 provider_dir
  provider_dir=$(dirname "$(ls /usr/lib/*/libibverbs/librxe-rdmav*.so 2>/dev/null | head -1)")
  [ "$provider_dir" != . ] || die "no verbs providers on this machine: apt-get install ibverbs-providers"
  cp -L --parents "$provider_dir"/*.so "$dir/"
  libraries "$dir" "$provider_dir"/*.so
  cp -L --parents /etc/libibverbs.d/*.driver "$dir/"
}

# copyrights DIR FILE...: the copyright notices (/usr/share/doc/<package>/copyright) of the Debian
# packages that own the FILEs (paths on this machine) and the libraries DIR has under /lib, /lib64
# and /usr/lib
copyrights() {
  local dir=$1; shift
  local pkg
  # each library under both of its names: merged /usr makes /lib/x the same file as /usr/lib/x, and
  # dpkg knows only the one its package installed
  for pkg in $( { printf '%s\n' "$@"; find "$dir/lib" "$dir/lib64" "$dir/usr/lib" -type f 2>/dev/null | sed "s|^$dir||"; } \
      | sed 's|^/usr/lib/|/lib/|; p; s|^/lib/|/usr/lib/|' | sort -u \
      | xargs dpkg -S 2>/dev/null | awk -F: '{print $1}' | sort -u); do
    [ ! -e "/usr/share/doc/$pkg/copyright" ] || cp -L --parents "/usr/share/doc/$pkg/copyright" "$dir/"
  done
}

c_clients_image() {
  local t; t=$(now)
  [ $BUILD = 0 ] || bash tools/e2e/build-c-clients.sh >/dev/null
  local bin=$ROOT/sample-app/target/c-clients
  [ -x "$bin/pingpong_client" ] || die "no C clients in $bin: run tools/e2e/build-c-clients.sh"
  local ctx; ctx=$(mktemp -d); mkdir -p "$ctx/rootfs/usr/local/bin" "$ctx/rootfs/tmp"
  cp "$bin"/{hello_client,read_client,pingpong_client,conn_holder,bad_client} "$ctx/rootfs/usr/local/bin/"
  libraries "$ctx/rootfs" "$ctx"/rootfs/usr/local/bin/*
  verbs_providers "$ctx/rootfs"
  cp "$HERE/c-clients/Dockerfile" "$ctx/"
  $DOCKER build -q -t rpma/c-clients "$ctx" >/dev/null
  rm -rf "$ctx"
  report rpma/c-clients "$t"
}

prometheus_image() {
  local t; t=$(now)
  local pdir=$CACHE/prometheus
  if [ ! -x "$pdir/usr/bin/prometheus" ]; then
    # the package only, unpacked: installing it would bring 449 MB of dependencies
    local d; d=$(mktemp -d); chmod 755 "$d"
    ( cd "$d" && apt-get download -o APT::Sandbox::User=root prometheus >&2 ) \
      || { apt-get update -q >&2; ( cd "$d" && apt-get download -o APT::Sandbox::User=root prometheus >&2 ); } \
      || die "apt-get download prometheus failed"
    rm -rf "$pdir"; mkdir -p "$pdir"; dpkg-deb -x "$d"/prometheus_*.deb "$pdir"; rm -rf "$d"
  fi
  local ctx; ctx=$(mktemp -d); mkdir -p "$ctx/rootfs/bin" "$ctx/rootfs/prometheus" "$ctx/rootfs/etc/prometheus" "$ctx/rootfs/tmp"
  cp "$pdir/usr/bin/prometheus" "$ctx/rootfs/bin/prometheus"
  libraries "$ctx/rootfs" "$ctx/rootfs/bin/prometheus"
  cp "$HERE/prometheus/Dockerfile" "$HERE/prometheus/prometheus.yml" "$ctx/"
  $DOCKER build -q -t rpma/prometheus "$ctx" >/dev/null
  rm -rf "$ctx"
  report rpma/prometheus "$t"
}

# ------------------------------------------------------------------ sample-app: a jlink'ed JRE
JDK=${RPMA_JDK:-/usr/lib/jvm/java-17-openjdk-amd64}
# Modules the jar's classes do not name but the JDK loads as service providers or by name (jdeps
# cannot see those; a start in a full JDK loads the first four): Linux socket options (jdk.net), JFR's
# platform MBean, TLS with elliptic-curve keys (SunEC), Kerberos for SASL (ZooKeeper's, for
# discovery) and JAAS's login modules, zip and jar files as file systems, DNS through JNDI, and JMX
# over the network for operators (-Dcom.sun.management.jmxremote in JAVA_TOOL_OPTIONS).
# Left out: other locales' data (jdk.localedata, 9 MB: formats are English) and legacy charsets.
EXTRA_MODULES=jdk.net,jdk.management.jfr,jdk.crypto.ec,jdk.security.jgss,jdk.security.auth,jdk.zipfs,jdk.naming.dns,jdk.management.agent
# AWT's native libraries for windows, fonts, images and sound: a headless server never loads them
# (java.desktop is in the runtime for java.beans), and they would bring X11, freetype and ALSA along
JLINK_EXCLUDE='**/libawt_xawt.so,**/libjawt.so,**/libsplashscreen.so,**/libjsound.so,**/libfontmanager.so,**/libjavajpeg.so,**/liblcms.so,**/libmlib_image.so'
# --generate-cds-archive: the JDK's own class data sharing archive, which the app's archive extends
JLINK_OPTIONS=(--strip-debug --no-header-files --no-man-pages --compress=2 "--exclude-files=$JLINK_EXCLUDE"
  --generate-cds-archive)

# java_runtime APP_DIR: the path of a Java runtime with the modules the app extracted in APP_DIR
# (sample-app.jar and lib/) needs, made with jlink once per module list and JDK and cached
java_runtime() {
  local app=$1 modules key jre
  # the application's classes and its libraries name the modules (a library's multi-release classes
  # as Java 17 sees them)
  modules=$("$JDK/bin/jdeps" --print-module-deps --ignore-missing-deps --multi-release 17 \
    "$app/sample-app.jar" "$app"/lib/*.jar 2>"$CACHE/jdeps.log" | tail -1) \
    || { tail -20 "$CACHE/jdeps.log" >&2; die "jdeps failed"; }
  case "$modules" in java.base*) ;; *) tail -20 "$CACHE/jdeps.log" >&2; die "jdeps printed no modules";; esac
  modules=$modules,$EXTRA_MODULES
  echo "build-images: the Java runtime's modules: $modules" >&2
  key=$( { echo "$modules ${JLINK_OPTIONS[*]}"; cat "$JDK/release"; stat -c '%s %Y' "$JDK/jmods/java.base.jmod" "$JDK/lib/server/libjvm.so"; } \
    | sha256sum | cut -c1-16)
  jre=$CACHE/jre-$key
  if [ ! -x "$jre/bin/java" ]; then
    rm -rf "$CACHE"/jre-*
    "$JDK/bin/jlink" --module-path "$JDK/jmods" --add-modules "$modules" "${JLINK_OPTIONS[@]}" \
      --output "$jre.tmp" >&2 || { rm -rf "$jre.tmp"; die "jlink failed"; }
    mv "$jre.tmp" "$jre"
  fi
  echo "$jre"
}

sample_app_image() {
  local t; t=$(now)
  if [ $BUILD = 1 ]; then
    mvn -B -q -Dstyle.color=never package -pl sample-app -am -DskipTests >&2
  fi
  local jar; jar=$(ls "$ROOT"/sample-app/target/sample-app-*.jar 2>/dev/null | grep -v -- '-plain\.jar$' | head -1 || true)
  [ -n "$jar" ] || die "no runnable jar in sample-app/target: run without --no-build"
  [ -d "$JDK/jmods" ] || die "no jmods in $JDK: apt-get install openjdk-17-jdk-headless (or set RPMA_JDK to a JDK 17)"
  local ctx; ctx=$(mktemp -d)
  local rootfs=$ctx/rootfs app=$ctx/app
  mkdir -p "$rootfs/opt" "$rootfs/tmp" "$rootfs/etc" "$rootfs/root" "$ctx/native" "$ctx/cds"
  chmod 1777 "$rootfs/tmp"     # JNA and Tomcat write there, whatever the user
  # the jar extracted (/app/sample-app.jar and /app/lib/): the JVM reads the libraries directly, and a
  # class data sharing archive can name them
  "$JDK/bin/java" -Djarmode=tools -jar "$jar" extract --destination "$app" --application-filename sample-app.jar \
    >"$CACHE/extract.log" 2>&1 || { cat "$CACHE/extract.log" >&2; die "extracting $jar failed"; }
  local jre; jre=$(java_runtime "$app")
  cp -a "$jre" "$rootfs/opt/java"
  # the JDK's archive for heaps past 32 GB (no compressed oops), 11 MB: the app's archive extends the other
  rm -f "$rootfs/opt/java/lib/server/classes_nocoops.jsa"
  libraries "$rootfs" "$rootfs/opt/java/bin/java" "$rootfs"/opt/java/lib/*.so "$rootfs/opt/java/lib/server/libjvm.so"
  # librpma, which the app binds by name (librpma.so.0), and through it libibverbs and librdmacm
  local librpma; librpma=$(ls /usr/lib/*/librpma.so.0 2>/dev/null | head -1)
  [ -n "$librpma" ] || die "no librpma.so.0 on this machine: apt-get install librpma0"
  cp -L --parents "$librpma" "$rootfs/"
  libraries "$rootfs" "$librpma"
  # libpmem, which a region on a device DAX binds by name (libpmem.so.1), and its libraries
  local libpmem; libpmem=$(ls /usr/lib/*/libpmem.so.1 2>/dev/null | head -1)
  [ -n "$libpmem" ] || die "no libpmem.so.1 on this machine: apt-get install libpmem1"
  cp -L --parents "$libpmem" "$rootfs/"
  libraries "$rootfs" "$libpmem"
  verbs_providers "$rootfs"
  # the native code of the jar's libraries (JNA's dispatcher, rpma-jna's JNI calls), which they
  # extract to /tmp at run time: only their libraries go into the image
  local nested entries
  local native='(^|/)linux-x86-64/[^/]+\.so$|/lib[^/]*linux[^/]*x86_64\.so$'   # JNA's and Netty's names
  for nested in $(grep -l -a -E 'linux-x86-64/|x86_64\.so' "$app"/lib/*.jar || true); do
    entries=$("$JDK/bin/jar" tf "$nested" | grep -E "$native" || true)
    [ -z "$entries" ] || ( cd "$ctx/native" && "$JDK/bin/jar" xf "$nested" $entries )
  done
  local so
  while IFS= read -r -d '' so; do libraries "$rootfs" "$so"; done < <(find "$ctx/native" -name '*.so' -print0)
  copyrights "$rootfs" "$JDK/lib/server/libjvm.so"
  # the JVM's user name and home (root's), and host names from /etc/hosts before DNS: glibc asks DNS
  # first without nsswitch.conf, which on a machine without a resolver costs a timeout per lookup
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\n' > "$rootfs/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' > "$rootfs/etc/group"
  printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
  cp "$HERE/sample-app/Dockerfile" "$ctx/"
  $DOCKER build -q -t rpma/sample-app "$ctx" >/dev/null
  # the archive of the classes the app's start loads (Spring Boot's CDS recipe): one training start of
  # the image that stops once the context is refreshed, before any endpoint listens, so it needs no
  # RDMA device; any address of this machine passes the address check. The archive is valid for the
  # image's JVM and files (their paths, sizes and times, which the second build keeps).
  local address
  address=$(ip -4 -o addr show scope global 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')
  [ -n "$address" ] || die "no IPv4 address on this machine for the training start of the class data sharing archive"
  $DOCKER run --rm --network host -v "$ctx/cds:/cds" --entrypoint /opt/java/bin/java rpma/sample-app \
    -XX:ArchiveClassesAtExit=/cds/app.jsa -Xlog:cds=off -Xlog:cds+dynamic=off -Dspring.context.exit=onRefresh \
    -jar /app/sample-app.jar --rpma.server.address="$address" --server.port=0 >"$CACHE/training.log" 2>&1 \
    && [ -s "$ctx/cds/app.jsa" ] || { tail -40 "$CACHE/training.log" >&2; die "the training start for the archive failed"; }
  $DOCKER build -q -t rpma/sample-app "$ctx" >/dev/null
  rm -rf "$ctx"
  # the image's start as it will run, with -Xshare:on, which fails when the archive does not map: every
  # library the JVM and its modules load is there, and the archive fits the image's JVM and files
  $DOCKER run --rm --network host --entrypoint /opt/java/bin/java rpma/sample-app -Xshare:on \
    -XX:SharedArchiveFile=/app/app.jsa -Dspring.context.exit=onRefresh -jar /app/sample-app.jar \
    --rpma.server.address="$address" --server.port=0 >"$CACHE/check.log" 2>&1 \
    || { tail -40 "$CACHE/check.log" >&2; die "rpma/sample-app does not start with its archive"; }
  report rpma/sample-app "$t"
}

for image in "${IMAGES[@]}"; do
  case "$image" in
    sample-app) sample_app_image;;
    c-clients) c_clients_image;;
    prometheus) prometheus_image;;
  esac
done
