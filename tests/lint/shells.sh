# Every shell script the project runs parses: the tests, the examples, the jobs, the build
# helpers and the benchmark (`make bench` is not run by `make check`, so a
# script that no longer parses would otherwise go unnoticed until someone
# benchmarks).  Parsing only (bash -n / sh -n by each script's interpreter).
set -u
: "${TOP_SRCDIR:?}"
fails=0 n=0
for f in "$TOP_SRCDIR"/tests/*/*.sh "$TOP_SRCDIR"/examples/*/*.sh "$TOP_SRCDIR"/jobs/*.sh "$TOP_SRCDIR"/jobs/*.sbatch "$TOP_SRCDIR"/build-aux/*.sh \
  "$TOP_SRCDIR"/.ci/run; do
  [ -f "$f" ] || continue
  n=$((n + 1))
  case "$(head -1 "$f")" in
    '#!/bin/sh'*) shell=sh ;;
    *) shell=bash ;;
  esac
  if ! err=$($shell -n "$f" 2>&1); then
    echo "not ok - ${f#"$TOP_SRCDIR"/}: $err"
    fails=$((fails + 1))
  fi
done
echo "# $n scripts parsed, $fails failed"
[ "$fails" -eq 0 ] && [ "$n" -gt 30 ]
