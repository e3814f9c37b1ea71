/* verify's lines of `pairbound run`'s one-screen summary and its finding on
 * REPORT.md's first page: the verdict of its REPORT.md and the cells of its
 * report TSV (pairbound/report_tsv.h), and on a store with label sets the
 * counts of verify_label_sets.tsv. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
#include "verify_internal.h"

void pb_verify_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel)
{
  char *rep = pb_output_path_join(dir, "report"), *path = pb_output_path_join(rep, "REPORT.md");
  char *text = pb_output_text_load(path);
  if (!text) pb_error_clear();
  const char *v = text ? strstr(text, "**Verdict: ") : NULL;
  struct pb_report_tsv t;
  int cells = pb_report_tsv_load(dir, "verify.tsv", &t) == 0 ? t.n_rows - 1 : -1;
  const int n = v ? (int)strcspn(v + 11, "*") : 0;
  if (v && fp) fprintf(fp, "verify  %.*s on %d cells (independent enumeration of the bounds)\n", n, v + 11, cells);
  if (v && md)
    pb_text_printf(md, "\n### Are the intervals right (verification)\n\n**%.*s** on %d cells: every endpoint was "
                       "recomputed by enumerating the within-class correspondences of each class, independently "
                       "of the integer algorithms that produced it ([its report](%sREPORT.md)).\n",
                   n, v + 11, cells, rel);
  if (cells >= 0) pb_report_tsv_free(&t);
  /* Appendix J on a store with label sets: the table's counts over its sources */
  if (v && pb_report_tsv_load(dir, "verify_label_sets.tsv", &t) == 0) {
    double e = 0, a = 0, h = 0;
    for (int r = 1; r < t.n_rows; r++)
      e += pb_report_tsv_num(&t, r, "enumerated"), a += pb_report_tsv_num(&t, r, "L_dMk_equal_Ik_I5"),
      h += pb_report_tsv_num(&t, r, "H_narrower_I5");
    if (fp)
      fprintf(fp, "verify  label sets: %.0f classes enumerated under set correctness, %.0f with L and dM_k equal at "
                  "Ik and I5, %.0f with a narrower H at I5 (Appendix J)\n", e, a, h);
    if (md)
      pb_text_printf(md, "\nUnder label sets (set correctness, Appendix J) %.0f classes were enumerated: L and dM_k "
                         "are equal at Ik and I5 in %.0f, H is strictly narrower at I5 in %.0f.\n", e, a, h);
    pb_report_tsv_free(&t);
  }
  free(text);
  free(path);
  free(rep);
}
