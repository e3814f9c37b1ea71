# The paper-scale store that bounds_ranks, screen_ranks and states_ranks read
# (Makefile.am orders them, and synth_ranks, after this test): synthesised once per suite at
# 2 ranks x 1 thread instead of once in each, into the build tree.
. "$TOP_SRCDIR/tests/mpi/common.sh"

store=$(paper_store_path)
rm -f "$store" "$store.part" "$store.txt"
# the summary too: synth_ranks compares it with its 1-rank synthesis's
pb 2 1 synth -o "$store.part" > "$store.txt"
check "the paper store is written" test -s "$store.part"
mv "$store.part" "$store"
check "the paper store is in place" test -s "$store"
finish
