# pairbound run's comparison with seed 000 (docs/run.md, "Synthetic panel
# against seed 000"): on a small store whose configuration declares seed
# values ([panel] and per source), seed_panel.tsv is recomputed here with awk
# from the stages' own TSVs -- the key-to-statistic table below is this
# test's, not the code's -- and the verdict line, REPORT.md's section and
# screen's "seed 000" lines agree with it; a store without seed values prints
# none of them.
. "$TOP_SRCDIR/tests/mpi/common.sh"
: "${H5POKE:?}"

# The seed values this store declares: SOURCE KEY VALUE (panel: the root's).  Seed 000's published values, so that
# some of the small panel's numbers fall within tolerance and some do not.
cat > "$WORK/decl" <<'EOF'
panel orderings_shared 0.693
panel orderings_plus_k 0.536
panel orderings_plus_5 0.093
Syn grid_H_I0 8.44
Syn grid_L_Ik 4.63
Syn panel_H_I0 8.45
Syn panel_H_I5 2.40
ES grid_H_I0 1.56
ES grid_H_Ik 0.79
ES grid_L_I0 5.52
ES grid_dMk_Ik 3.52
ES panel_H_Ik 0.77
ES auroc_S_mild 0.778
ES auroc_U_mild 0.854
ES auroc_U_severe 0.647
ES coverage_S_mild 0.578
ES coverage_U_mild 0.672
ES coverage_U_severe 0.254
ES natural_coverage_TTA18 0.596
ES mae_c1_gain_a1 -0.12
ES mae_unpaired_gain_R80 2.65
Diverse auroc_S_severe 0.601
Diverse coverage_S_severe 0.248
Diverse natural_coverage_TTA18 0.366
Diverse mae_c1_gain_R80 0.38
Diverse mae_unpaired_gain_a1 3.58
EOF
# the small configuration with those values: [panel] and each source section get a seed_values line (continued on
# indented lines: the INI's lines are limited to 200 characters); the sources' own seed_values lines are dropped
awk 'NR == FNR { v[$1] = v[$1] (v[$1] == "" ? "" : ",\n  ") $2 ":" $3; next }
     /^seed_values/ { next }
     { print }
     /^\[panel\]/ && v["panel"] != "" { print "seed_values = " v["panel"] }
     /^\[source / { s = $2; sub(/\]$/, "", s); if (v[s] != "") print "seed_values = " v[s] }' \
  "$WORK/decl" "$TOP_SRCDIR/inputs/small.ini" > "$WORK/seeded.ini"
pb 1 1 synth --config "$WORK/seeded.ini" --no-summary -o "$WORK/s.h5"
# the root's seed_values is part of the root's checksum (docs/store.md, "Integrity")
check "the store with a root seed_values passes check" sh -c "'$PAIRBOUND' -v 0 check '$WORK/s.h5' | grep -q '^metadata: 38 objects match'"
cp "$WORK/s.h5" "$WORK/bad.h5"
"$H5POKE" --attr-flip "$WORK/bad.h5" / seed_values 0 0
check "a flipped bit in the root's seed_values is found" \
  sh -c "'$PAIRBOUND' -v 0 check '$WORK/bad.h5' 2>&1 | grep -q '^metadata: the attributes of the root: values do not match'"
# run_ini STORE OUTDIR STAGES: a run configuration of those stages
run_ini() { printf '[run]\nsynth = none\nstore = %s\noutput = %s\nstages = %s\n' "$1" "$2" "$3"; }
run_ini "$WORK/s.h5" "$WORK/r" "bounds, policy, screen, predict" > "$WORK/r.ini"
pb 1 2 run "$WORK/r.ini" > "$WORK/stdout"
check "run writes seed_panel.tsv" test -s "$WORK/r/seed_panel.tsv"

# KEY STAGE/FILE SOURCE-COLUMN (- : panel row Total) SELECTORS COLUMN DIVISOR PROPORTION: the statistic each key names
cat > "$WORK/map" <<'EOF'
grid_H_I0 bounds/report/identification_grid.tsv source - H_I0 - 0
grid_H_Ik bounds/report/identification_grid.tsv source - H_Ik - 0
grid_L_I0 bounds/report/identification_grid.tsv source - L_I0 - 0
grid_L_Ik bounds/report/identification_grid.tsv source - L_Ik - 0
grid_dMk_Ik bounds/report/identification_grid.tsv source - dMk_Ik - 0
panel_H_I0 bounds/report/identification_panel.tsv source - H_I0 - 0
panel_H_Ik bounds/report/identification_panel.tsv source - H_Ik - 0
panel_H_I5 bounds/report/identification_panel.tsv source - H_I5 - 0
orderings_shared policy/report/policy_orderings.tsv - source=Total shared cells 1
orderings_plus_k policy/report/policy_orderings.tsv - source=Total plus_k cells 1
orderings_plus_5 policy/report/policy_orderings.tsv - source=Total plus_5 cells 1
auroc_S_mild screen/report/screen_auroc.tsv source tier=mild S - 1
auroc_U_mild screen/report/screen_auroc.tsv source tier=mild U - 1
auroc_S_severe screen/report/screen_auroc.tsv source tier=severe S - 1
auroc_U_severe screen/report/screen_auroc.tsv source tier=severe U - 1
coverage_S_mild screen/report/screen_coverage.tsv source tier=mild,q=0.2 S - 1
coverage_U_mild screen/report/screen_coverage.tsv source tier=mild,q=0.2 U - 1
coverage_S_severe screen/report/screen_coverage.tsv source tier=severe,q=0.2 S - 1
coverage_U_severe screen/report/screen_coverage.tsv source tier=severe,q=0.2 U - 1
natural_coverage_TTA18 screen/report/screen_natural.tsv source tier=mild TTA - 1
mae_c1_gain_a1 predict/report/predict_table43.tsv target_source target=a1 c1_gain - 0
mae_c1_gain_R80 predict/report/predict_table43.tsv target_source target=R80 c1_gain - 0
mae_unpaired_gain_a1 predict/report/predict_table46.tsv source target=a1 gain - 0
mae_unpaired_gain_R80 predict/report/predict_table46.tsv source target=R80 gain - 0
EOF
# ours SOURCE FILE SRCCOL SELECTORS COLUMN DIVISOR: the value of the first matching row (its first such column)
ours() {
  awk -F'\t' -v src="$1" -v scol="$3" -v sel="$4" -v col="$5" -v per="$6" '
    NR == 1 { for (i = 1; i <= NF; i++) if (!(($i) in c)) c[$i] = i; n = split(sel, s, ","); next }
    { if (scol != "-" && $(c[scol]) != src) next
      for (k = 1; k <= n; k++) { split(s[k], kv, "="); if (kv[1] != "-" && $(c[kv[1]]) != kv[2]) next }
      x = $(c[col]) + 0; if (per != "-") x /= $(c[per]); printf "%.10g\n", x; exit }' "$WORK/r/$2"
}
# the expected table in the code's row order (the vocabulary's order, then the store's sources in order; the
# sources of small.ini: Syn, ES, Diverse, Syn-B, TTA, Syn-B5)
: > "$WORK/want"
while read -r key file scol sel col per prop; do
  for src in panel Syn ES Diverse Syn-B TTA Syn-B5; do
    { [ "$scol" = - ] && [ "$src" = panel ]; } || { [ "$scol" != - ] && [ "$src" != panel ]; } || continue
    seed=$(awk -v s="$src" -v k="$key" '$1 == s && $2 == k { print $3 }' "$WORK/decl")
    [ -n "$seed" ] || continue
    x=$(ours "$src" "$file" "$scol" "$sel" "$col" "$per")
    awk -v k="$key" -v s="$src" -v seed="$seed" -v x="$x" -v prop="$prop" 'BEGIN {
      a = seed < 0 ? -seed : seed; tol = 0.25 * a; if (prop == 1 && tol < 0.02) tol = 0.02
      d = x - seed; ad = d < 0 ? -d : d
      printf "%s\t%s\t%.6g\t%.6f\t%s\n", k, s, seed, x, ad <= tol ? "yes" : "no" }' >> "$WORK/want"
  done
done < "$WORK/map"
awk -F'\t' 'NR > 1 { printf "%s\t%s\t%.6g\t%.6f\t%s\n", $1, $2, $3, $4, $8 }' "$WORK/r/seed_panel.tsv" > "$WORK/got"
check "seed_panel.tsv has one row per declared seed value ($(wc -l < "$WORK/decl"))" \
  test "$(wc -l < "$WORK/got")" -eq "$(wc -l < "$WORK/decl")"
check "seed_panel.tsv (number, source, seed, ours, within) equals the table recomputed from the stage TSVs" \
  cmp -s "$WORK/want" "$WORK/got"
[ "$FAILS" -eq 0 ] || diff "$WORK/want" "$WORK/got"
n_in=$(awk -F'\t' '$5 == "yes"' "$WORK/want" | wc -l)
n_all=$(wc -l < "$WORK/want")
check "some of the numbers are within tolerance and some are not ($n_in of $n_all)" \
  test "$n_in" -gt 0 -a "$n_in" -lt "$n_all"
verdict="synthetic panel: $n_in of $n_all headline numbers within tolerance of seed 000"
check "stdout has the verdict line" grep -q "^seed    $verdict (median relative deviation" "$WORK/stdout"
check "REPORT.md has the section with the verdict" \
  grep -q "^## Synthetic panel against seed 000" "$WORK/r/REPORT.md"
check "REPORT.md's section has one row per compared number" \
  test "$(grep -c '^| [a-zA-Z_0-9]* | [A-Za-z-]* | [-0-9.]* | ' "$WORK/r/REPORT.md")" -ge "$n_all"
check "REPORT.md's verdict" grep -q "$verdict" "$WORK/r/REPORT.md"
# screen's stdout lines: the seed's mild AUROC and coverage under a target that declares them, and none under one
# that declares none of them (Diverse declares only severe and natural values)
check "stdout shows ES's seed AUROC and coverage under its screen line" \
  grep -A1 "^          ES  *AUROC" "$WORK/stdout" | grep -q "seed 000: AUROC 0.854 vs 0.778; coverage 0.672 vs 0.578"
check "no seed line under Diverse, which declares no mild AUROC or coverage" \
  sh -c "! grep -A1 '^          Diverse  *AUROC' '$WORK/stdout' | grep -q 'seed 000: AUROC'"

# without seed values: no table, no verdict, no section, no seed lines
grep -v '^seed_values' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/plain.ini"
pb 1 1 synth --config "$WORK/plain.ini" --no-summary -o "$WORK/p.h5"
run_ini "$WORK/p.h5" "$WORK/q" "bounds, screen" > "$WORK/q.ini"
pb 1 2 run "$WORK/q.ini" > "$WORK/stdout2"
check "a run on a store without seed values writes its report and summary" \
  test -s "$WORK/q/REPORT.md" -a -s "$WORK/stdout2"
check "no seed_panel.tsv for a store without seed values" test ! -e "$WORK/q/seed_panel.tsv"
check "no verdict and no seed lines on stdout" sh -c "! grep -q 'seed 000\|synthetic panel' '$WORK/stdout2'"
check "no section in REPORT.md" sh -c "! grep -q 'Synthetic panel against seed 000' '$WORK/q/REPORT.md'"
finish
