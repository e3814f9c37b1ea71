/* screen's lines of `pairbound run`'s one-screen summary and its finding on
 * REPORT.md's first page, read back from its report TSVs
 * (pairbound/report_tsv.h). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
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

/* The seed's values of source @p src (screen_seed.tsv, from the store's seed values) after its stdout line. */
static void pb_screen__summary_seed(FILE *fp, const struct pb_report_tsv *sd, const char *src)
{
  for (int j = 1; sd && j < sd->n_rows; j++) {
    if (strcmp(pb_report_tsv_at(sd, j, "source"), src)) continue;
    const double v[4] = {pb_report_tsv_num(sd, j, "auroc_U"), pb_report_tsv_num(sd, j, "auroc_S"),
                         pb_report_tsv_num(sd, j, "coverage_U"), pb_report_tsv_num(sd, j, "coverage_S")};
    if (isnan(v[0]) && isnan(v[1]) && isnan(v[2]) && isnan(v[3])) return;
    char t[4][16];
    for (int k = 0; k < 4; k++) snprintf(t[k], sizeof t[k], isnan(v[k]) ? "-" : "%.3f", v[k]);
    fprintf(fp, "\n          %-10s seed 000: AUROC %s vs %s; coverage %s vs %s", "", t[0], t[1], t[2], t[3]);
    return;
  }
}

/* One mild row: its stdout line (with the seed's values where the store declares them) and its markdown row. */
static int pb_screen__summary_source(FILE *fp, struct pb_text *md, const struct pb_report_tsv *a, int r,
                                     const struct pb_report_tsv *c, const struct pb_report_tsv *iv,
                                     const struct pb_report_tsv *sd)
{
  const char *src = pb_report_tsv_at(a, r, "source");
  const double u = pb_report_tsv_num(a, r, "U"), s = pb_report_tsv_num(a, r, "S"), d = pb_report_tsv_num(a, r, "U-S");
  const int k = iv ? pb_screen__summary_row(iv, src, "contrast", "U-S") : -1;
  const int have_iv = k > 0 && !isnan(pb_report_tsv_num(iv, k, "auroc_group_lo"));
  const double lo = have_iv ? pb_report_tsv_num(iv, k, "auroc_group_lo") : NAN;
  const double hi = have_iv ? pb_report_tsv_num(iv, k, "auroc_group_hi") : NAN;
  const int q = c ? pb_screen__summary_row(c, src, "q", "0.2") : -1;
  if (fp) {
    fprintf(fp, "          %-10s AUROC %.3f vs %.3f (%+.3f", src, u, s, d);
    if (have_iv) fprintf(fp, " [%+.3f, %+.3f]", lo, hi);
    fprintf(fp, ")");
    if (q > 0) fprintf(fp, "; coverage %.3f vs %.3f", pb_report_tsv_num(c, q, "U"), pb_report_tsv_num(c, q, "S"));
    pb_screen__summary_seed(fp, sd, src);
    fprintf(fp, "\n");
  }
  if (md) {
    pb_text_printf(md, "| %s | %.3f | %.3f | %+.3f", src, u, s, d);
    if (have_iv) pb_text_printf(md, " [%+.3f, %+.3f]", lo, hi);
    if (q > 0) pb_text_printf(md, " | %.3f | %.3f |\n", pb_report_tsv_num(c, q, "U"), pb_report_tsv_num(c, q, "S"));
    else pb_text_printf(md, " | n/a | n/a |\n");
  }
  return have_iv && lo > 0;
}

void pb_screen_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel)
{
  struct pb_report_tsv a, c, iv, sd;
  if (pb_report_tsv_load(dir, "screen_auroc.tsv", &a) != 0) return;
  int have_cov = pb_report_tsv_load(dir, "screen_coverage.tsv", &c) == 0;
  int have_iv = pb_report_tsv_load(dir, "screen_intervals.tsv", &iv) == 0;
  int have_seed = pb_report_tsv_load(dir, "screen_seed.tsv", &sd) == 0; /* none: the store declares no seed values */
  if (fp) fprintf(fp, "screen  mild conditions: AUROC U vs S (U-S, 95%% model-group interval); coverage at q = 0.2:\n");
  if (md)
    pb_text_printf(md, "\n### Which images deserve physical re-testing (screening)\n\n"
                       "Mild conditions of each target source: how well the probe-based failure score U ranks the "
                       "images the perturbation breaks, against the model's own confidence S (AUROC, failure "
                       "positive; U - S with its 95%% model-group interval) and the share of failures found when "
                       "20%% of the images are re-tested:\n\n"
                       "| source | AUROC U | AUROC S | U - S | coverage U | coverage S |\n|---|---|---|---|---|---|\n");
  int better = 0, sure = 0, rows = 0;
  for (int r = 1; r < a.n_rows; r++) {
    if (strcmp(pb_report_tsv_at(&a, r, "tier"), "mild")) continue;
    sure += pb_screen__summary_source(fp, md, &a, r, have_cov ? &c : NULL, have_iv ? &iv : NULL,
                                      have_seed ? &sd : NULL);
    better += pb_report_tsv_num(&a, r, "U-S") > 0;
    rows++;
  }
  if (md && rows) {
    pb_text_printf(md, "\nThe synthetic probes rank failures better than confidence alone in %d of %d target "
                       "sources", better, rows);
    if (have_iv) pb_text_printf(md, " (with the whole 95%% interval above zero in %d)", sure);
    pb_text_printf(md, ": %s\n\n![AUROC by score](%sfigure2a_auroc.png)\n",
                   better == rows ? "re-test first the images that the probes break, not the least confident ones."
                   : better == 0 ? "on this store the probes add nothing over the model's confidence."
                                 : "whether the probes help depends on the capture source.",
                   rel);
  }
  pb_report_tsv_free(&a);
  if (have_cov) pb_report_tsv_free(&c);
  if (have_iv) pb_report_tsv_free(&iv);
  if (have_seed) pb_report_tsv_free(&sd);
}
