#!/usr/bin/env bash
# A new user's project, made from scratch: a Spring Boot application with the starter, one connection
# handler, one message handler and an @RpmaTest test, built with `mvn verify` while librpma (and the
# RDMA libraries under it) cannot be loaded, as on a laptop or a CI machine without RDMA. It shows that
# the loopback needs no librpma. Needs this repository's artifacts in the local Maven repository
# (`mvn -B install -DskipTests` first) and root, to hide the libraries in a private mount namespace.
set -euo pipefail
HERE=$(dirname "$(realpath "$0")")
ROOT=$(realpath "$HERE/../..")
VERSION=$(sed -n 's|^  <version>\(.*\)</version>$|\1|p' "$ROOT/pom.xml" | head -1)
WORK=$(mktemp -d /tmp/rpma-new-user.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp -r "$HERE/project/." "$WORK/"
sed -i "s/@RPMA_VERSION@/$VERSION/" "$WORK/pom.xml"

# every RDMA library the binding could load, replaced by an empty file in this command's mount namespace
HIDE=""
for lib in librpma.so librpma.so.0 librpma.so.1 librdmacm.so.1 libibverbs.so.1; do
  for dir in /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib64 /usr/local/lib; do
    [ -e "$dir/$lib" ] && HIDE="$HIDE $(realpath "$dir/$lib")"
  done
done
HIDE=$(echo "$HIDE" | tr ' ' '\n' | sort -u | tr '\n' ' ')
if ! unshare --mount --propagation private true 2>/dev/null; then
  # a container without CAP_SYS_ADMIN: the libraries stay visible, the project is still built and tested
  echo "new-user check: cannot make a mount namespace here (no CAP_SYS_ADMIN); building with librpma visible"
  (cd "$WORK" && mvn -B ${MVN_ARGS:-} verify)
  echo "new-user check: passed (librpma was not hidden)"
  exit 0
fi
echo "new-user check: building $WORK with these hidden: ${HIDE:-none installed}"
unshare --mount --propagation private bash -euo pipefail -c '
  empty=$(mktemp)
  for lib in '"$HIDE"'; do mount --bind "$empty" "$lib"; [ ! -s "$lib" ]; done
  cd "'"$WORK"'"
  mvn -B ${MVN_ARGS:-} verify
'
echo "new-user check: passed without librpma"
