/* policy's line of `pairbound run`'s one-screen summary and its finding on
 * REPORT.md's first page, read back from its report TSV
 * (pairbound/report_tsv.h). */
#include "config.h"

#include <stdio.h>

#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
#include "policy_internal.h"

void pb_policy_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel)
{
  struct pb_report_tsv t;
  if (pb_report_tsv_load(dir, "policy_figure5.tsv", &t) != 0) return;
  if (fp)
    fprintf(fp, "policy  share of cells with an ordering certified only under a shared correspondence, lambda = 0.5:\n        ");
  if (md)
    pb_text_printf(md, "\n### Which rejection threshold is safer (policies)\n\n"
                       "Share of cells in which one perturbed-side threshold is certified better than another "
                       "only when both are judged on the same (unknown) correspondence, at lambda = 0.5:\n\n"
                       "| source | share |\n|---|---|\n");
  for (int r = 1; r < t.n_rows; r++)
    if (pb_report_tsv_num(&t, r, "lambda") == 0.5) {
      if (fp) fprintf(fp, "  %s %.3f", pb_report_tsv_at(&t, r, "source"), pb_report_tsv_num(&t, r, "shared"));
      if (md)
        pb_text_printf(md, "| %s | %.3f |\n", pb_report_tsv_at(&t, r, "source"), pb_report_tsv_num(&t, r, "shared"));
    }
  if (fp) fprintf(fp, "\n");
  if (md)
    pb_text_printf(md, "\nIn those cells, separate intervals for the two thresholds overlap, yet their difference "
                       "has one sign under every feasible correspondence: comparing policies pair by pair decides "
                       "what comparing their intervals cannot.\n\n![certified orderings](%s"
                       "figure5_certified_orderings.png)\n", rel);
  pb_report_tsv_free(&t);
}
