# One table of environment variables (include/pairbound/env.h): no file of
# src/ but src/core/env.c (and its header) reads or sets the environment
# itself, and docs/run.md ("Environment") lists every variable of the table.
# docs/testing.md, "Lints".
set -u
: "${TOP_SRCDIR:?}"
fails=0
for f in $(grep -lE '\b(secure_)?getenv|\b(set|unset|put)env|\benviron\b' "$TOP_SRCDIR"/src/*/*.c "$TOP_SRCDIR"/src/*/*.h \
  "$TOP_SRCDIR"/include/pairbound/*.h); do
  case "$f" in "$TOP_SRCDIR/src/core/env.c" | "$TOP_SRCDIR/include/pairbound/env.h") continue ;; esac
  echo "not ok - ${f#"$TOP_SRCDIR"/} reads or sets the environment itself: use pb_env_* (include/pairbound/env.h)"
  fails=$((fails + 1))
done
n=0
for v in $(sed -n 's/^ *\[PB_ENV_[A-Z0-9_]*\] *= *{"\([A-Za-z0-9_]*\)".*/\1/p' "$TOP_SRCDIR/src/core/env.c"); do
  n=$((n + 1))
  if ! grep -q "\`$v\`" "$TOP_SRCDIR/docs/run.md"; then
    echo "not ok - $v (src/core/env.c) is not listed in docs/run.md"
    fails=$((fails + 1))
  fi
done
echo "# $n variables in the table, $fails problems"
[ "$fails" -eq 0 ] && [ "$n" -gt 10 ]
