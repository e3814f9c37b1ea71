/* policy's line of `pairbound run`'s one-screen summary, read back from its
 * report TSV (pairbound/report_tsv.h). */
#include "config.h"

#include <stdio.h>

#include "pairbound/report_tsv.h"
#include "policy_internal.h"

void pb_policy_summary(FILE *fp, const char *dir)
{
  struct pb_report_tsv t;
  if (pb_report_tsv_load(dir, "policy_figure5.tsv", &t) != 0) return;
  fprintf(fp, "policy  share of cells with an ordering certified only under a shared correspondence, lambda = 0.5:\n        ");
  for (int r = 1; r < t.n_rows; r++)
    if (pb_report_tsv_num(&t, r, "lambda") == 0.5)
      fprintf(fp, "  %s %.3f", pb_report_tsv_at(&t, r, "source"), pb_report_tsv_num(&t, r, "shared"));
  fprintf(fp, "\n");
  pb_report_tsv_free(&t);
}
