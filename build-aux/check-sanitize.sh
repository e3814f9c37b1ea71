#!/bin/sh
# `make check-sanitize`: the whole test suite on an AddressSanitizer +
# UndefinedBehaviorSanitizer build, made in a copy of the tracked sources
# (BUILDDIR/build-sanitize) so the normal build is left alone.
# usage: check-sanitize.sh SRCDIR BUILDDIR
set -eu
src=$1 build=$2
dir="$build/build-sanitize"
command -v git >/dev/null && git -C "$src" rev-parse --git-dir >/dev/null 2>&1 ||
  { echo "check-sanitize: needs a git checkout of pairbound (it copies the tracked files)" >&2; exit 1; }
rm -rf "$dir"
mkdir -p "$dir"
# tracked files plus new ones not yet committed (but not ignored build outputs)
git -C "$src" ls-files -z --cached --others --exclude-standard | (cd "$src" && xargs -0 cp --parents -t "$dir")
cd "$dir"
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
autoreconf -fi >/dev/null 2>&1
./configure -q CFLAGS="-g -O1 $san" LDFLAGS="$san"
make -j2 >/dev/null
# Open MPI, PMIx and hwloc unload their plugins at MPI_Finalize, and what
# those plugins keep until exit would reach LeakSanitizer as frames of an
# "<unknown module>": tests/tools/nodlclose.so keeps them loaded (preloaded
# into every process of the suite; verify_asan_link_order=0 lets it precede
# libasan, which it does not interpose), so their leaks are suppressed by
# library name (tests/fuzz/lsan.supp) and every other leak is reported.
# use_tls=0: GCC 12's LeakSanitizer crashes ("Tracer caught signal 11")
# scanning thread-local storage under Debian 12's glibc in a singleton MPI
# process; pairbound keeps no heap pointer only in thread-local storage.
${CC:-gcc} -shared -fPIC -O1 tests/tools/nodlclose.c -o tests/tools/nodlclose.so
# LeakSanitizer matches a suppression by module first and symbolises every
# frame before the one that matches, so the first frame of each suppressed
# leak (libasan's malloc) made libbacktrace decompress and parse libasan's
# 7 MB of DWARF at every process exit: 0.1 s of each of the suite's
# processes.  The suite runs against a copy without the DWARF (symbol table
# kept, so reports still name its functions).
asan=$(ldd ./pairbound | awk '$1 ~ /^libasan[.]so/ {print $3}')
mkdir -p tests/tools/lib
if [ -n "$asan" ] && strip -g -o "tests/tools/lib/$(basename "$asan")" "$asan"; then
  LD_LIBRARY_PATH="$dir/tests/tools/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
# OMPI_MCA_fcoll=individual: at 3 ranks (not at 2) Open MPI's OMPIO picks
# its aggregating collective-write component (vulcan, a 32 MB aggregation
# buffer per collective write), which under ASan spends its time in memset
# and page faults: a 3-rank screen on a small store spent 8.4 of its 10.8 s
# writing results.h5 (bounds 7.5 -> 2.5 s, policy 14.3 -> 3.2 s).  The
# independent-write component runs the same pairbound code (the same MPI-IO
# and HDF5 calls); the normal suite keeps Open MPI's choice (docs/testing.md).
OMPI_MCA_fcoll=${OMPI_MCA_fcoll:-individual}
export OMPI_MCA_fcoll
# PB_TEST_SANITIZERS=1: fewer ranks x threads layouts, no paper-scale
# synth_ranks (docs/testing.md, Sanitizers);
# PB_TEST_SANITIZERS=0 make check-sanitize runs the full set
PB_TEST_SANITIZERS=${PB_TEST_SANITIZERS:-1} ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 \
LSAN_OPTIONS=suppressions="$dir/tests/fuzz/lsan.supp":print_suppressions=0:use_tls=0 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 LD_PRELOAD="$dir/tests/tools/nodlclose.so" \
  make -j2 check
