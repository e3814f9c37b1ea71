/* bounds' lines of `pairbound run`'s one-screen summary, read back from its
 * report TSV (pairbound/report_tsv.h). */
#include "config.h"

#include <stdio.h>

#include "pairbound/report_tsv.h"
#include "bounds_stage_internal.h"

void pb_bounds_summary(FILE *fp, const char *dir)
{
  struct pb_report_tsv t;
  if (pb_report_tsv_load(dir, "identification_panel.tsv", &t) != 0) return;
  fprintf(fp, "bounds  panel mean H width, pp of N, marginal I0 -> overlap Ik -> five-state I5:\n");
  for (int r = 1; r < t.n_rows; r++)
    fprintf(fp, "          %-10s %6.2f -> %6.2f -> %6.2f   (%s cells)\n", pb_report_tsv_at(&t, r, "source"),
            pb_report_tsv_num(&t, r, "H_I0"), pb_report_tsv_num(&t, r, "H_Ik"), pb_report_tsv_num(&t, r, "H_I5"),
            pb_report_tsv_at(&t, r, "cells"));
  pb_report_tsv_free(&t);
}
