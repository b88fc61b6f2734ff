# build-lib.sh - sourced by the scripts that build the project's C programs
# (tools/e2e/build-c-clients.sh, benchmarks/rdma-vs-c/build.sh): one toolchain check and one
# compiler line for all of them, so that the test peers and the benchmark build alike.
# The shared header rdma_proc.h beside this file is on every program's include path.

C_LIB_DIR=$(dirname "${BASH_SOURCE[0]}")

# c_build_deps NAME: gcc, librpma-dev and libibverbs-dev, installed with apt-get when missing
# and root; otherwise NAME (the calling script) asks for them and the build stops (exit 1)
c_build_deps() {
  local need=()
  command -v gcc >/dev/null || need+=(gcc libc6-dev)
  [ -f /usr/include/librpma.h ] || need+=(librpma-dev)
  [ -f /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)   # librpma-dev does not depend on it
  if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "$1: please install ${need[*]}" >&2; exit 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2 \
      || { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}" >&2; }
  fi
}

# c_build SRC_DIR OUT_DIR PROG: SRC_DIR/PROG.c, one program per file, into OUT_DIR/PROG
c_build() {
  mkdir -p "$2"
  gcc -O2 -g -std=gnu11 -Wall -Wextra -Werror -pthread -I "$C_LIB_DIR" \
    -o "$2/$3" "$1/$3.c" -lrpma -libverbs -lpthread
}
