#!/bin/sh
# Build the libFuzzer harnesses with clang (through mpicc, ASan + UBSan) into
# BUILD/fuzz and run each for SECONDS on its corpus.  A crash keeps its input
# under tests/fuzz/crashes/ (a regression case to add to the corpus once
# fixed) and fails.  usage: run.sh SECONDS SRCDIR BUILDDIR CPPFLAGS LIBS [TARGET...]
set -eu
secs=$1 src=$2 build=$3 cppflags=$4 libs=$5
shift 5
targets=${*:-csv ini store law cases}
out="$build/tests/fuzz/bin"
mkdir -p "$out" "$src/tests/fuzz/crashes"
# -Wno-pass-failed: at -O1 clang does not vectorise, so it warns on every
# "omp simd" loop; those pragmas only ask gcc's optimised build for speed
# (their sums are exact or integer in any order)
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1 -Wno-pass-failed"
export OMPI_CC=clang OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# plugins stay loaded so that leak reports name their library (suppressed,
# lsan.supp); see docs/testing.md
clang -shared -fPIC -O1 "$src/tests/tools/nodlclose.c" -o "$out/nodlclose.so"
# harnesses run (and objects compile) up to one per core at a time: each
# harness still gets SECONDS of a whole core
jobs=$(nproc 2> /dev/null || echo 1)
# the library once, as objects instrumented for coverage, shared by every harness
objs='' n=0
# (every folder but src/cli/; embedded.c is generated in the build tree)
for f in $(ls "$src"/src/*/*.c | grep -v -e '/src/cli/') "$build/src/embedded.c"; do
  o="$out/$(basename "$f" .c).o"
  # the worlds (src/world/) without coverage feedback: fuzz_cases opens one per input, and the enumeration of
  # its states, no input parsing, took 70 % of each run in the coverage callbacks (5 runs a second)
  case "$f" in */src/world/*) cov='' ;; *) cov=-fsanitize=fuzzer-no-link ;; esac
  if [ ! -e "$o" ] || [ "$f" -nt "$o" ] || [ "$0" -nt "$o" ]; then
    # removed first: a failed compile leaves no object, so the link below fails on it
    rm -f "$o"
    mpicc -std=gnu11 -fopenmp $san $cov -I"$build" -I"$src/include" -I"$src/src" $cppflags \
      -c "$f" -o "$o" &
    n=$((n + 1))
    if [ $n -ge "$jobs" ]; then wait; n=0; fi
  fi
  objs="$objs $o"
done
wait
for t in $targets; do
  # -I src: fuzz_cases and fuzz_store reach a folder's internal header (the CASES reader, the checksum writer)
  mpicc -std=gnu11 -fopenmp $san -fsanitize=fuzzer -I"$build" -I"$src/include" -I"$src/src" $cppflags \
    "$src/tests/fuzz/fuzz_$t.c" $objs $libs -o "$out/fuzz_$t"
done
# fuzz_one TARGET: its run, its log in BUILD/tests/fuzz/fuzz_TARGET.log
fuzz_one() {
  work="$build/tests/fuzz/corpus-$1"
  mkdir -p "$work"
  # the seed corpus is read-only input; new inputs go to the work corpus
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
    LSAN_OPTIONS=suppressions=$src/tests/fuzz/lsan.supp:print_suppressions=0:use_tls=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LD_PRELOAD="$out/nodlclose.so" \
    "$out/fuzz_$1" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
    -artifact_prefix="$src/tests/fuzz/crashes/$1-" -print_final_stats=1 "$work" "$src/tests/fuzz/corpus/$1" \
    > "$build/tests/fuzz/fuzz_$1.log" 2>&1
}
status=0
set -- $targets
while [ $# -gt 0 ]; do
  batch='' i=0
  while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do batch="$batch $1"; shift; i=$((i + 1)); done
  for t in $batch; do
    echo "fuzz_$t: ${secs} s"
    fuzz_one "$t" &
    eval "pid_$t=$!"
  done
  for t in $batch; do
    if ! eval "wait \$pid_$t"; then
      echo "fuzz_$t: FAILED (input kept under tests/fuzz/crashes/, log $build/tests/fuzz/fuzz_$t.log)"
      tail -40 "$build/tests/fuzz/fuzz_$t.log"
      status=1
    fi
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units)' "$build/tests/fuzz/fuzz_$t.log" | tail -2
  done
done
exit $status
