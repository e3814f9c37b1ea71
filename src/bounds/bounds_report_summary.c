/* bounds' lines of `pairbound run`'s one-screen summary and its finding on
 * REPORT.md's first page, read back from its report TSV
 * (pairbound/report_tsv.h): what is printed is what a reader finds in the
 * file. */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
#include "bounds_stage_internal.h"

void pb_bounds_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel)
{
  struct pb_report_tsv t;
  if (pb_report_tsv_load(dir, "identification_panel.tsv", &t) != 0) return;
  if (fp) {
    fprintf(fp, "bounds  panel mean H width, pp of N, marginal I0 -> overlap Ik -> five-state I5:\n");
    for (int r = 1; r < t.n_rows; r++)
      fprintf(fp, "          %-10s %6.2f -> %6.2f -> %6.2f   (%s cells)\n", pb_report_tsv_at(&t, r, "source"),
              pb_report_tsv_num(&t, r, "H_I0"), pb_report_tsv_num(&t, r, "H_Ik"), pb_report_tsv_num(&t, r, "H_I5"),
              pb_report_tsv_at(&t, r, "cells"));
  }
  if (md) {
    double i0 = 0, i5 = 0;
    pb_text_printf(md, "\n### What the perturbation did to accepted predictions (identification)\n\n"
                       "Mean width of the identified interval of H (correct clean answers that the perturbation "
                       "made wrong, percentage points of N) over each source's panel cells, as the information "
                       "grows from the marginal records (I0) to the classwise correct-correct counts (Ik) and all "
                       "five classwise counts (I5):\n\n| source | cells | I0 | Ik | I5 |\n|---|---|---|---|---|\n");
    for (int r = 1; r < t.n_rows; r++) {
      i0 += pb_report_tsv_num(&t, r, "H_I0");
      i5 += pb_report_tsv_num(&t, r, "H_I5");
      pb_text_printf(md, "| %s | %s | %.2f | %.2f | %.2f |\n", pb_report_tsv_at(&t, r, "source"),
                     pb_report_tsv_at(&t, r, "cells"), pb_report_tsv_num(&t, r, "H_I0"),
                     pb_report_tsv_num(&t, r, "H_Ik"), pb_report_tsv_num(&t, r, "H_I5"));
    }
    if (i0 > 0)
      pb_text_printf(md, "\nOn this store the five classwise counts (I5) leave %.0f%% of the width of H that the "
                         "marginal records alone (I0) leave, summed over the sources: the counts identify the rest, "
                         "and what remains only the record-level correspondence itself could resolve.\n",
                     100 * i5 / i0);
    pb_text_printf(md, "\n![H widths](%sfigure1_identified_widths.png)\n", rel);
  }
  pb_report_tsv_free(&t);
}
