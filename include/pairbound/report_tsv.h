/* A stage's report TSV read back by column name: what `pairbound run`'s
 * one-screen summary prints comes from the same files a reader gets, so the
 * two can never disagree. */
#ifndef PAIRBOUND_REPORT_TSV_H
#define PAIRBOUND_REPORT_TSV_H

struct pb_report_tsv {
  char *text;
  int n_cols, n_rows;  /* rows including the header (row 0) */
  char **cell;         /* row-major */
};

/** Read DIR/report/NAME (DIR: a stage's output directory); PB_FAIL, with no message kept, when it cannot. */
int pb_report_tsv_load(const char *dir, const char *name, struct pb_report_tsv *t);
void pb_report_tsv_free(struct pb_report_tsv *t);
/** The text in data row @p row (1 = first) of column @p col, or NULL. */
const char *pb_report_tsv_at(const struct pb_report_tsv *t, int row, const char *col);
/** That text as a number; NaN when absent or not a finite number ("nan"). */
double pb_report_tsv_num(const struct pb_report_tsv *t, int row, const char *col);

#endif /* PAIRBOUND_REPORT_TSV_H */
