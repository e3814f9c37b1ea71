/* Report tables (include/pairbound/table.h): TSV and markdown side by side. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/table.h"

void pb_table_open(struct pb_table *t, const struct pb_table_spec *spec)
{
  pb_text_printf(&t->md, "\n### %s\n\n%s\n\n|", spec->title, spec->note);
  for (const struct pb_column *c = spec->cols; c->name; c++) pb_text_printf(&t->md, " %s |", c->md ? c->md : c->name);
  pb_text_printf(&t->md, "\n|");
  for (const struct pb_column *c = spec->cols; c->name; c++) pb_text_printf(&t->md, "---|");
  pb_text_printf(&t->md, "\n");
  for (const struct pb_column *c = spec->cols; c->name; c++)
    pb_text_printf(&t->tsv, "%s%s", c == spec->cols ? "" : "\t", c->name);
  pb_text_printf(&t->tsv, "\n");
}

int pb_table_n_cols(const struct pb_table_spec *spec)
{
  int n = 0;
  while (spec->cols[n].name) n++;
  return n;
}

/* One cell; the first of a row has no separator before it in the TSV and
 * opens the markdown row. */
static void pb_table__cell(struct pb_table *t, const struct pb_column *c, union pb_cell v, int first)
{
  const char *sep = first ? "" : "\t", *md = first ? "|" : " |";
  switch (c->fmt) {
  case PB_COL_STR:
    pb_text_printf(&t->tsv, "%s%s", sep, v.s);
    pb_text_printf(&t->md, "%s %s", md, v.s);
    break;
  case PB_COL_INT:
    pb_text_printf(&t->tsv, "%s%lld", sep, (long long)v.i);
    pb_text_printf(&t->md, "%s %lld", md, (long long)v.i);
    break;
  case PB_COL_NUM:
    if (first) {
      /* pb_text_double writes a leading tab: a number that opens a row drops it */
      size_t at = t->tsv.len;
      pb_text_double(&t->tsv, v.x);
      memmove(t->tsv.buf + at, t->tsv.buf + at + 1, t->tsv.len - at);
      t->tsv.len--;
    } else {
      pb_text_double(&t->tsv, v.x);
    }
    if (isnan(v.x)) pb_text_printf(&t->md, "%s n/a", md);
    else if (c->digits < 0) pb_text_printf(&t->md, "%s %+.*f", md, -c->digits, v.x);
    else pb_text_printf(&t->md, "%s %.*f", md, c->digits, v.x);
    break;
  }
}

void pb_table_row(struct pb_table *t, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx)
{
  for (const struct pb_column *c = spec->cols; c->name; c++) pb_table__cell(t, c, get(ctx, c), c == spec->cols);
  pb_table_end_row(t);
}

void pb_table_begin(struct pb_table *t, const char *title, const char *note, const char *cols, const char *md_cols)
{
  pb_text_printf(&t->md, "\n### %s\n\n%s\n\n|", title, note);
  char *c = pb_strdup(md_cols ? md_cols : cols), *save = NULL;
  int n = 0;
  for (char *w = strtok_r(c, "\t", &save); w; w = strtok_r(NULL, "\t", &save), n++) pb_text_printf(&t->md, " %s |", w);
  pb_text_printf(&t->md, "\n|");
  while (n--) pb_text_printf(&t->md, "---|");
  pb_text_printf(&t->md, "\n");
  pb_text_printf(&t->tsv, "%s\n", cols);
  free(c);
}

void pb_table_str(struct pb_table *t, const char *s, int first)
{
  pb_text_printf(&t->tsv, "%s%s", first ? "" : "\t", s);
  pb_text_printf(&t->md, "%s %s", first ? "|" : " |", s);
}

void pb_table_int(struct pb_table *t, int64_t v)
{
  pb_text_printf(&t->tsv, "\t%lld", (long long)v);
  pb_text_printf(&t->md, " | %lld", (long long)v);
}

void pb_table_num(struct pb_table *t, double x, int digits)
{
  pb_text_double(&t->tsv, x);
  if (isnan(x)) pb_text_printf(&t->md, " | n/a");
  else if (digits < 0) pb_text_printf(&t->md, " | %+.*f", -digits, x);
  else pb_text_printf(&t->md, " | %.*f", digits, x);
}

void pb_table_end_row(struct pb_table *t)
{
  pb_text_printf(&t->tsv, "\n");
  pb_text_printf(&t->md, " |\n");
}
