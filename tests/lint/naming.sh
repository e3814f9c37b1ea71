# Global names follow pb_module_verb (docs: STYLE.md "Names and comments"):
# every function or object a module's file exports starts with the module's
# own prefix.  Checked on the modules listed here (the command line, the
# pipeline, configuration and option parsing); add a module when it is
# brought into the shape.
set -u
: "${TOP_BUILDDIR:?}"
FAILS=0
checked=0
module() { # module FILE-STEM PREFIX
  local obj sym
  obj=$(ls "$TOP_BUILDDIR"/src/*/"$1.o" 2>/dev/null | head -1)
  if [ ! -f "$obj" ]; then
    echo "not ok - $obj: not built"
    FAILS=$((FAILS + 1))
    return
  fi
  # (__odr_asan.*: the ODR indicators an AddressSanitizer build adds per global)
  for sym in $(nm -g --defined-only "$obj" | awk '$2 ~ /^[TDRBC]$/ && $3 !~ /^__odr_asan/ { print $3 }'); do
    checked=$((checked + 1))
    case "$sym" in
      "$2"[a-z]*) ;;
      *) echo "not ok - src/$1.c exports '$sym', not $2verb"; FAILS=$((FAILS + 1)) ;;
    esac
  done
  echo "ok - src/$1.c: every global name starts with $2"
}
module cli pb_cli_
module run pb_run_
module ini pb_ini_
module synth_config pb_synth_config_
module options pb_options_
module parse pb_parse_
module predict_kernel pb_predict_
module predict_kernel_summary pb_predict_
module blocks pb_blocks_
module checksum pb_checksum_
echo "# $checked global names checked, $FAILS bad"
[ "$FAILS" -eq 0 ] && [ "$checked" -gt 10 ]
