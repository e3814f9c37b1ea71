# export -> ingest -> export is byte-identical; ingest under several ranks.
# The CSV carries records, not a panel's seed values (docs/csv.md), so the
# store compared whole is synthesised without them; its roles are all given
# back at ingest.
. "$TOP_SRCDIR/tests/mpi/common.sh"

grep -v '^seed_values' "$TOP_SRCDIR/inputs/small.ini" > "$WORK/small.ini"
pb 1 1 synth --config "$WORK/small.ini" --no-summary -o "$WORK/s.h5"
"$PAIRBOUND" export "$WORK/s.h5" -o "$WORK/a.csv"
check "export header" sh -c "head -1 '$WORK/a.csv' | grep -qx 'model,group,source,condition,image,label,split,labels,pred,smax,ptrue,top1_class,top1_prob,top2_class,top2_prob,top3_class,top3_prob,entropy,collision'"
# export under several ranks (blocks dealt in turn, each written at its offset) and threads
for l in 21 31 12; do
  pb "${l%?}" "${l#?}" export "$WORK/s.h5" -o "$WORK/a$l.csv"
  check "export identical at ${l%?} ranks x ${l#?} threads" cmp -s "$WORK/a.csv" "$WORK/a$l.csv"
done
# past the page cache (O_DIRECT, where the file system takes it) and through it: the same bytes
PAIRBOUND_DIRECT_IO=0 pb 2 1 export "$WORK/s.h5" -o "$WORK/a_cached.csv"
check "export identical through the page cache (PAIRBOUND_DIRECT_IO=0, 2 ranks)" cmp -s "$WORK/a.csv" "$WORK/a_cached.csv"
check "export has one line per record" test "$(($(wc -l < "$WORK/a.csv") - 1))" -eq $((5 * (4 * 120 + 5 * 60 + 7 * 60 + 5 * 60 + 31 * 60 + 3 * 60)))
for np in 1 2; do
  pb "$np" 1 ingest "$WORK/a.csv" --classes Syn=20 --classes ES=12 --classes Diverse=12 \
    --role Syn=synthetic --role ES=real --role Diverse=real --role Syn-B=synthetic \
    --role TTA=natural:18 --role Syn-B5=extra:Syn-B -o "$WORK/r$np.h5"
  "$PAIRBOUND" export "$WORK/r$np.h5" -o "$WORK/b$np.csv"
  check "round trip byte-identical (ingest at $np ranks)" cmp -s "$WORK/a.csv" "$WORK/b$np.csv"
  check "re-ingested store equals the original (ingest at $np ranks)" same_h5 "$WORK/s.h5" "$WORK/r$np.h5"
done
finish
