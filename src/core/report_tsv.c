/* Report TSVs read back by column name (include/pairbound/report_tsv.h). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/report_tsv.h"

int pb_report_tsv_load(const char *dir, const char *name, struct pb_report_tsv *t)
{
  memset(t, 0, sizeof *t);
  char *rep = pb_output_path_join(dir, "report"), *path = pb_output_path_join(rep, name);
  t->text = pb_output_text_load(path);
  free(rep);
  free(path);
  if (!t->text) {
    pb_error_clear();
    return PB_FAIL;
  }
  int cap = 64, n = 0;
  t->cell = pb_malloc((size_t)cap * sizeof *t->cell);
  for (char *line = t->text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    int cols = 0;
    for (char *c = line, *tab;; c = tab + 1, cols++) {
      if (n == cap) t->cell = pb_realloc(t->cell, (size_t)(cap *= 2) * sizeof *t->cell);
      t->cell[n++] = c;
      if (!(tab = strchr(c, '\t'))) break;
      *tab = '\0';
    }
    if (t->n_rows == 0) t->n_cols = cols + 1;
    if (cols + 1 != t->n_cols) n -= cols + 1; /* ragged line: not a table row */
    else t->n_rows++;
  }
  return PB_OK;
}

void pb_report_tsv_free(struct pb_report_tsv *t)
{
  free(t->text);
  free(t->cell);
  memset(t, 0, sizeof *t);
}

const char *pb_report_tsv_at(const struct pb_report_tsv *t, int row, const char *col)
{
  for (int j = 0; j < t->n_cols; j++)
    if (strcmp(t->cell[j], col) == 0) return row > 0 && row < t->n_rows ? t->cell[row * t->n_cols + j] : NULL;
  return NULL;
}

double pb_report_tsv_num(const struct pb_report_tsv *t, int row, const char *col)
{
  const char *s = pb_report_tsv_at(t, row, col);
  double x;
  return s && pb_parse_real(s, &x) == PB_OK ? x : NAN;
}
