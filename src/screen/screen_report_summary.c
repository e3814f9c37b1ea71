/* screen's lines of `pairbound run`'s one-screen summary, read back from its
 * report TSVs (pairbound/report_tsv.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pairbound/report_tsv.h"
#include "screen_internal.h"

/* The data row of @p t whose source is @p src, tier mild and column @p key is @p value; -1 when none. */
static int pb_screen__summary_row(const struct pb_report_tsv *t, const char *src, const char *key, const char *value)
{
  for (int j = 1; j < t->n_rows; j++)
    if (!strcmp(pb_report_tsv_at(t, j, "source"), src) && !strcmp(pb_report_tsv_at(t, j, "tier"), "mild") &&
        !strcmp(pb_report_tsv_at(t, j, key), value))
      return j;
  return -1;
}

void pb_screen_summary(FILE *fp, const char *dir)
{
  struct pb_report_tsv a, c, iv;
  if (pb_report_tsv_load(dir, "screen_auroc.tsv", &a) != 0) return;
  int have_cov = pb_report_tsv_load(dir, "screen_coverage.tsv", &c) == 0;
  int have_iv = pb_report_tsv_load(dir, "screen_intervals.tsv", &iv) == 0;
  fprintf(fp, "screen  mild conditions: AUROC U vs S (U-S, 95%% model-group interval); coverage at q = 0.2:\n");
  for (int r = 1; r < a.n_rows; r++) {
    const char *src = pb_report_tsv_at(&a, r, "source");
    if (strcmp(pb_report_tsv_at(&a, r, "tier"), "mild")) continue;
    fprintf(fp, "          %-10s AUROC %.3f vs %.3f (%+.3f", src, pb_report_tsv_num(&a, r, "U"),
            pb_report_tsv_num(&a, r, "S"), pb_report_tsv_num(&a, r, "U-S"));
    int k = have_iv ? pb_screen__summary_row(&iv, src, "contrast", "U-S") : -1;
    if (k > 0 && !isnan(pb_report_tsv_num(&iv, k, "auroc_group_lo")))
      fprintf(fp, " [%+.3f, %+.3f]", pb_report_tsv_num(&iv, k, "auroc_group_lo"),
              pb_report_tsv_num(&iv, k, "auroc_group_hi"));
    fprintf(fp, ")");
    int q = have_cov ? pb_screen__summary_row(&c, src, "q", "0.2") : -1;
    if (q > 0) fprintf(fp, "; coverage %.3f vs %.3f", pb_report_tsv_num(&c, q, "U"), pb_report_tsv_num(&c, q, "S"));
    fprintf(fp, "\n");
  }
  pb_report_tsv_free(&a);
  if (have_cov) pb_report_tsv_free(&c);
  if (have_iv) pb_report_tsv_free(&iv);
}
