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
# Open MPI keeps allocations until MPI_Finalize and in components it unloads:
# suppressed by name (tests/fuzz/lsan.supp); everything else is reported.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 LSAN_OPTIONS=suppressions="$dir/tests/fuzz/lsan.supp" \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 OMPI_MCA_mca_base_component_disable_dlclose=1 \
  make -j2 check
