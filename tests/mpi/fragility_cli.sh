# pairbound fragility --law: exact profiles of law files (docs/fragility.md),
# output format, errors with file and line, identical output at 1-3 ranks.
. "$TOP_SRCDIR/tests/mpi/common.sh"

# Witness law B of docs/fragility.md: eta 0.3, 0.5, 0.8 with masses 2/5, 1/3, 4/15.
cat > "$WORK/b.law" <<'LAW'
# value mass
0.3 0.4

0.5 0.333333333333333333
0.8 0.266666666666666667
LAW
pb 1 1 fragility --law "$WORK/b.law" --rho 0,0.5,1,2,2.75,3 > "$WORK/b1.txt"
check "--law exits 0" test $? -eq 0
check "--law prints 3 + 6 lines" test "$(wc -l < "$WORK/b1.txt")" -eq 9
check "line names" test "$(cut -d' ' -f1 "$WORK/b1.txt" | head -3 | tr '\n' ' ')" = "G rho_plus rho_sat "
check "radii echoed as shortest decimals" test "$(tail -n 6 "$WORK/b1.txt" | cut -d' ' -f1 | tr '\n' ' ')" = "0 0.5 1 2 2.75 3 "
# hand values: G = 0.04, rho_plus = 1, rho_sat = 11/4; up: sqrt(0.04 rho) on [0,1],
# 2/15 + sqrt((rho - 2/3)/75) to 0.3 at 11/4; down: sqrt(0.04 rho) on [0, 4/9],
# 6/55 + sqrt(2 (rho - 4/11)/275) to 0.2 at 3/2
expect() { # expect NAME-OR-RHO FIELD VALUE
  awk -v k="$1" -v f="$2" -v want="$3" '$1 == k { v = $f; found = 1 }
    END { exit !(found && (v - want) ^ 2 < 1e-24) }' "$WORK/b1.txt"
}
check "G" expect G 2 0.04
check "rho_plus" expect rho_plus 2 1
check "rho_sat" expect rho_sat 2 2.75
check "up(0.5) = sqrt(0.02)" expect 0.5 2 0.14142135623730950488
check "down(0.5) on the middle piece" expect 0.5 3 "$(awk 'BEGIN { printf "%.17g", 6/55 + sqrt(2 * (0.5 - 4/11) / 275) }')"
check "up(1) = 0.2" expect 1 2 0.2
check "up(2) = 4/15" expect 2 2 0.26666666666666666667
check "up(2.75) saturated at 0.3" expect 2.75 2 0.3
check "down(2) saturated at 0.2" expect 2 3 0.2
for np in 2 3; do
  pb "$np" 2 fragility --law "$WORK/b.law" --rho 0,0.5,1,2,2.75,3 > "$WORK/b$np.txt"
  check "identical output at $np ranks" cmp -s "$WORK/b1.txt" "$WORK/b$np.txt"
done

# G = 0: rho_plus is inf, every profile value 0
printf '0.7 0.5\n0.7 0.5\n' > "$WORK/g0.law"
"$PAIRBOUND" fragility --law "$WORK/g0.law" --rho 0.3,10 > "$WORK/g0.txt"
check "G = 0 output" test "$(tr '\n' '|' < "$WORK/g0.txt")" = "G 0|rho_plus inf|rho_sat 0|0.3 0 0|10 0 0|"

bad_law() { # bad_law DESCRIPTION CONTENT EXPECTED-MESSAGE
  printf "$2" > "$WORK/bad.law"
  "$PAIRBOUND" fragility --law "$WORK/bad.law" --rho 1 > "$WORK/out.txt" 2> "$WORK/err.txt"
  local rc=$?
  check "$1: exit status 1" test "$rc" -eq 1
  check "$1: nothing on stdout" test ! -s "$WORK/out.txt"
  check "$1: message" test "$(cat "$WORK/err.txt")" = "pairbound fragility: error: $WORK/bad.law:$3"
}
bad_law "value above 1" '0.3 0.5\n1.5 0.5\n' "2: value 1.5 is not in [0, 1]"
bad_law "negative mass" '# c\n0.3 1.5\n0.5 -0.5\n' "3: mass -0.5 is not a non-negative number"
bad_law "masses off by 1e-9" '0.3 0.5\n0.7 0.500000001\n' "2: masses sum to 1.000000001, not 1 (tolerance 1e-12)"
bad_law "one number" '0.3 0.5\n0.7\n' "2: expected 'value mass'"
bad_law "trailing text" '0.3 0.5 x\n0.7 0.5\n' "1: unexpected text after the mass"
bad_law "empty" '# nothing\n' "1: no 'value mass' lines"
bad_law "hexadecimal value" '0x1p-2 0.5\n0.5 0.5\n' "1: expected 'value mass'"
bad_law "hexadecimal mass" '0.25 0X.8\n0.5 0.5\n' "1: expected 'value mass'"
bad_law "infinite mass" '0.25 inf\n' "1: expected 'value mass'"
bad_law "nan value" 'nan 1\n' "1: expected 'value mass'"
# 100,000 atoms of mass 1e-5 on two values: the masses' exact sum is 1 (summed naively 1 - 1.9e-12, refused
# before), and the law is the two-point law of masses 1/2 and 1/2, gap 1: G = 1/4, rho_plus = rho_sat = 1,
# up(0.5) = sqrt(0.5 / 4), up(rho) = 1/2 from rho = 1 on
awk 'BEGIN { for (i = 0; i < 100000; i++) print i % 2, "1e-5" }' > "$WORK/many.law"
"$PAIRBOUND" fragility --law "$WORK/many.law" --rho 0.5,1,2 > "$WORK/many.txt"
check "100,000 atoms of mass 1e-5: exit 0" test $? -eq 0
check "100,000 atoms of mass 1e-5: the two-point law's exact profile" \
  test "$(tr '\n' '|' < "$WORK/many.txt")" = "G 0.25|rho_plus 1|rho_sat 1|0.5 0.3535533905932738 0.3535533905932738|1 0.5 0.5|2 0.5 0.5|"
printf '0.3 0.5\n0.7 0.5000000000000004\n' > "$WORK/ok.law"
"$PAIRBOUND" fragility --law "$WORK/ok.law" --rho 1 > /dev/null
check "masses within 1e-12 accepted" test $? -eq 0

"$PAIRBOUND" fragility --law "$WORK/none.law" --rho 1 2> "$WORK/err.txt"
check "missing file: exit 1" test $? -eq 1
check "missing file: message" grep -q "none.law: cannot open" "$WORK/err.txt"
"$PAIRBOUND" fragility --law "$WORK/b.law" --rho 1,-1 2> "$WORK/err.txt"
check "negative radius: usage error" test $? -eq 2
check "negative radius: message" grep -q -- "--rho takes comma-separated radii >= 0" "$WORK/err.txt"
"$PAIRBOUND" fragility --law "$WORK/b.law" 2> /dev/null
check "missing --rho: usage error" test $? -eq 2
"$PAIRBOUND" fragility --law="$WORK/b.law" --rho=0,0.5,1,2,2.75,3 > "$WORK/eq.txt"
check "--law=FILE --rho=LIST: same output" cmp -s "$WORK/b1.txt" "$WORK/eq.txt"
"$PAIRBOUND" fragility --law "$WORK/b.law" --rho 1,,2 2> /dev/null
check "empty radius: usage error" test $? -eq 2
# --law is another command: no STORE, no -o, no store options with it; --rho only with it
usage() { # usage DESCRIPTION MESSAGE ARGS...
  local d=$1 m=$2
  shift 2
  "$PAIRBOUND" fragility "$@" > "$WORK/out.txt" 2> "$WORK/err.txt"
  check "$d: exit 2" test $? -eq 2
  check "$d: message" test "$(head -1 "$WORK/err.txt")" = "pairbound fragility: $m"
  check "$d: nothing on stdout" test ! -s "$WORK/out.txt"
}
usage "STORE with --law" "takes no STORE with --law" "$WORK/s.h5" --law "$WORK/b.law" --rho 1
usage "-o with --law" "takes no -o with --law" --law "$WORK/b.law" --rho 1 -o "$WORK/o"
usage "store option with --law" "store options are not taken with --law" --law "$WORK/b.law" --rho 1 --bins 3
usage "--rho without --law" "--rho needs --law FILE" "$WORK/s.h5" -o "$WORK/o" --rho 1
usage "--seed with --law" "store options are not taken with --law" --law "$WORK/b.law" --rho 1 --seed 3
usage "neither STORE nor --law" "missing STORE (or --law FILE, or --study known-propensity)"
usage "STORE without -o" "missing -o OUTDIR" "$WORK/s.h5"
"$PAIRBOUND" fragility --help > "$WORK/h.txt"
check "--help documents --law and --rho" sh -c "grep -q -- '--law FILE' '$WORK/h.txt' && grep -q -- '--rho r1' '$WORK/h.txt'"
finish
