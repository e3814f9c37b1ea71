/* verify's line of `pairbound run`'s one-screen summary: the verdict of its
 * REPORT.md and the cells of its report TSV (pairbound/report_tsv.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/report_tsv.h"
#include "verify_internal.h"

void pb_verify_summary(FILE *fp, const char *dir)
{
  char *rep = pb_output_path_join(dir, "report"), *path = pb_output_path_join(rep, "REPORT.md");
  char *text = pb_output_text_load(path);
  if (!text) pb_error_clear();
  const char *v = text ? strstr(text, "**Verdict: ") : NULL;
  struct pb_report_tsv t;
  int cells = pb_report_tsv_load(dir, "verify.tsv", &t) == 0 ? t.n_rows - 1 : -1;
  if (v) fprintf(fp, "verify  %.*s on %d cells (independent enumeration of the bounds)\n", (int)strcspn(v + 11, "*"),
                 v + 11, cells);
  if (cells >= 0) pb_report_tsv_free(&t);
  free(text);
  free(path);
  free(rep);
}
