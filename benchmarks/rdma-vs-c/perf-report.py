#!/usr/bin/env python3
"""perf-report.py PERF_SCRIPT|COLLAPSED [TOP] - summarizes perf-in-vm.sh's samples (perf script -F
comm,tid,ip,sym), or async-profiler's collapsed stacks (client-perf-in-vm.sh TOOLS=asprof, a .collapsed
file: one line per stack, "[thread tid=N];frame;...;leaf COUNT"): samples per thread, and per thread the
share of kernel, native library and JIT-compiled Java code, the hottest leaf symbols and Java frames
(the first Java frame above each sample), and, when the script has the libraries (-F ...,dso), the
share of each library."""
import collections
import sys


def samples(path):
    with open(path, errors="replace") as f:
        block = []
        for line in f:
            if line.strip():
                block.append(line.rstrip("\n"))
            elif block:
                yield block
                block = []
        if block:
            yield block


def kind(frame):
    address, _, symbol = frame.strip().partition(" ")
    if address.startswith("ffffffff"):
        return "kernel"
    if symbol.startswith(("Interpreter", "StubRoutines", "[unknown]")):
        return "jvm-stub"
    if symbol.endswith(".map)"):   # with the library (-F ...,dso): the JIT's perf map
        return "java"
    if symbol.endswith(")") and " (" in symbol:
        return "native"   # a library's symbol, e.g. clock_gettime@@GLIBC_2.17 (/usr/lib/.../libc.so.6)
    if "(" in symbol and "." in symbol.split("(")[0]:
        return "java"
    return "native"


def collapsed_kind(frame):
    """async-profiler's names: Java methods as package/Class.method, kernel frames with _[k]."""
    if frame.endswith("_[k]"):
        return "kernel"
    if "/" in frame and not frame.startswith("/") and "." in frame.rpartition("/")[2]:
        return "java"
    return "native"


def collapsed(path, threads, kinds, leaves, java):
    with open(path, errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            frames = stack.split(";")
            thread, n = frames[0].strip("[]").partition(" tid=")[0], int(count)
            frames = frames[1:] or ["?"]
            threads[thread] += n
            kinds[thread][collapsed_kind(frames[-1])] += n
            leaves[thread][frames[-1][:100]] += n
            first_java = next((f for f in reversed(frames) if collapsed_kind(f) == "java"), "no Java frame")
            java[thread][first_java[-90:]] += n


def perf_script(path, threads, kinds, leaves, java, libraries):
    for block in samples(path):
        thread = block[0].split()[0]
        frames = block[1:]
        if not frames:
            continue
        threads[thread] += 1
        kinds[thread][kind(frames[0])] += 1
        leaves[thread][frames[0].strip().partition(" ")[2][:100]] += 1
        first_java = next((f.strip().partition(" ")[2] for f in frames if kind(f) == "java"), "no Java frame")
        java[thread][first_java.split("(")[0][-90:]] += 1
        if frames[0].rstrip().endswith(")"):
            libraries[thread][frames[0].rstrip().rpartition("(")[2][:-1].rpartition("/")[2]] += 1


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    threads = collections.Counter()
    kinds = collections.defaultdict(collections.Counter)
    leaves = collections.defaultdict(collections.Counter)
    java = collections.defaultdict(collections.Counter)
    libraries = collections.defaultdict(collections.Counter)
    if path.endswith(".collapsed"):
        collapsed(path, threads, kinds, leaves, java)
    else:
        perf_script(path, threads, kinds, leaves, java, libraries)
    total = sum(threads.values())
    print(f"{total} samples")
    for thread, count in threads.most_common(8):
        shares = ", ".join(f"{k} {100 * v / count:.0f}%" for k, v in kinds[thread].most_common())
        print(f"\n== {thread}: {count} samples ({100 * count / total:.0f}%): {shares}")
        print("   leaf symbols:")
        for symbol, n in leaves[thread].most_common(top):
            print(f"   {100 * n / count:5.1f}%  {symbol}")
        print("   first Java frame:")
        for symbol, n in java[thread].most_common(top):
            print(f"   {100 * n / count:5.1f}%  {symbol}")
        if libraries[thread]:
            print("   library:")
            for library, n in libraries[thread].most_common(top):
                print(f"   {100 * n / count:5.1f}%  {library}")


if __name__ == "__main__":
    main()
