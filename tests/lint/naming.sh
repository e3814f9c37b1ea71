# Global names follow pb_module_verb (STYLE.md, "Names and comments"): every
# function or object that an object file of src/ exports starts with
# pb_<module>_ (pb_<module>__ for what only the module's own files share),
# the module being the file's name up to its first '_'
# (src/screen/screen_kernel_tta.c: pb_screen_; src/core/results_tsv.c:
# pb_results_).  A file whose established prefix differs is listed in the
# exception table below with the names or prefixes it may use besides; keep
# the table small, and remove a row when its file comes under the rule.
# docs/testing.md, "Lints".
set -u
: "${TOP_BUILDDIR:?}" "${TOP_SRCDIR:?}"

# FILE (a shell pattern on the file's name without .c) | the names it may
# export besides pb_<module>_ (ending in '_': a prefix; else an exact name) |
# why.
exceptions() {
  cat <<'EOF'
results_tsv    | pb_tsv_        | its own type, struct pb_tsv (include/pairbound/results.h)
results        | pb_table_flush | a table's flush writes through the results (table.c is pure)
h5io           | pb_h5_         | the HDF5 helpers (src/core/h5io.h)
signals        | pb_signal_     | one signal at a time: pb_signal_install, pb_signal_pending, ...
error          | pb_malloc pb_calloc pb_realloc pb_strdup pb_abort pb_message pb_warning pb_log_ | allocation and logging, named as STYLE.md names them
main           | main           | the program's entry point (src/cli/main.c)
EOF
}

fails=0 checked=0 files=0
for obj in "$TOP_BUILDDIR"/src/*.o "$TOP_BUILDDIR"/src/*/*.o; do
  [ -f "$obj" ] || continue
  # an object whose source is gone (left by an earlier build of this tree) is not part of it
  src=${obj#"$TOP_BUILDDIR"/}
  [ -f "$TOP_SRCDIR/${src%.o}.c" ] || continue
  files=$((files + 1))
  stem=$(basename "$obj" .o)
  rel=${obj#"$TOP_BUILDDIR"/}
  allowed="pb_${stem%%_*}_"
  while IFS='|' read -r pat names _; do
    # shellcheck disable=SC2254,SC2086
    case "$stem" in $(echo $pat)) allowed="$allowed $names" ;; esac
  done <<EOF
$(exceptions)
EOF
  # (__odr_asan*: the ODR indicators of an AddressSanitizer build;
  # .gomp_critical_user_*: the locks OpenMP makes for named critical sections)
  for sym in $(nm -g --defined-only "$obj" | awk '$2 ~ /^[TDRBC]$/ && $3 !~ /^(__odr_asan|\.gomp_critical_user_)/ { print $3 }'); do
    checked=$((checked + 1))
    ok=0
    for a in $allowed; do
      case "$a" in
        *_) case "$sym" in "$a"[a-z0-9_]*) ok=1 ;; esac ;;
        *) [ "$sym" = "$a" ] && ok=1 ;;
      esac
      [ $ok -eq 1 ] && break
    done
    if [ $ok -eq 0 ]; then
      echo "not ok - ${rel%.o}.c exports '$sym', not pb_${stem%%_*}_verb"
      fails=$((fails + 1))
    fi
  done
done
# shellcheck disable=SC2086
exceptions | while IFS='|' read -r pat names why; do echo "# exception: $(echo $pat): $(echo $names) ($(echo $why))"; done
echo "# $checked global names of $files objects checked, $fails bad"
[ "$fails" -eq 0 ] && [ "$files" -gt 80 ] && [ "$checked" -gt 500 ]
