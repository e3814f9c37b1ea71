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
  for (const struct pb_column *c = spec->cols; c->name; c++)
    if (c->side != PB_COL_TSV_ONLY) pb_text_printf(&t->md, " %s |", c->md ? c->md : c->name);
  pb_text_printf(&t->md, "\n|");
  for (const struct pb_column *c = spec->cols; c->name; c++)
    if (c->side != PB_COL_TSV_ONLY) pb_text_printf(&t->md, "---|");
  pb_text_printf(&t->md, "\n");
  int first = 1;
  for (const struct pb_column *c = spec->cols; c->name; c++)
    if (c->side != PB_COL_MD_ONLY) {
      pb_text_printf(&t->tsv, "%s%s", first ? "" : "\t", c->name);
      first = 0;
    }
  pb_text_printf(&t->tsv, "\n");
}

int pb_table_n_cols(const struct pb_table_spec *spec)
{
  int n = 0;
  while (spec->cols[n].name) n++;
  return n;
}

/* One cell of the TSV; the first of a row has no tab before it. */
static void pb_table__tsv(struct pb_text *tsv, const struct pb_column *c, union pb_cell v, int first)
{
  const char *sep = first ? "" : "\t";
  switch (c->fmt) {
  case PB_COL_STR: pb_text_printf(tsv, "%s%s", sep, v.s); break;
  case PB_COL_INT: pb_text_printf(tsv, "%s%lld", sep, (long long)v.i); break;
  case PB_COL_NUM:
    if (first) {
      /* pb_text_double writes a leading tab: a number that opens a row drops it */
      size_t at = tsv->len;
      pb_text_double(tsv, v.x);
      memmove(tsv->buf + at, tsv->buf + at + 1, tsv->len - at);
      tsv->len--;
    } else {
      pb_text_double(tsv, v.x);
    }
    break;
  }
}

/* One cell of the markdown; the first opens the row. */
static void pb_table__md(struct pb_text *md, const struct pb_column *c, union pb_cell v, int first)
{
  const char *sep = first ? "|" : " |";
  switch (c->fmt) {
  case PB_COL_STR: pb_text_printf(md, "%s %s", sep, v.s); break;
  case PB_COL_INT: pb_text_printf(md, "%s %lld", sep, (long long)v.i); break;
  case PB_COL_NUM:
    if (isnan(v.x)) pb_text_printf(md, "%s n/a", sep);
    else if (c->digits < 0) pb_text_printf(md, "%s %+.*f", sep, -c->digits, v.x);
    else pb_text_printf(md, "%s %.*f", sep, c->digits, v.x);
    break;
  }
}

void pb_table_row(struct pb_table *t, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx)
{
  int tsv_first = 1, md_first = 1;
  for (const struct pb_column *c = spec->cols; c->name; c++) {
    const union pb_cell v = get(ctx, c);
    if (c->side != PB_COL_MD_ONLY) {
      pb_table__tsv(&t->tsv, c, v, tsv_first);
      tsv_first = 0;
    }
    if (c->side != PB_COL_TSV_ONLY) {
      pb_table__md(&t->md, c, v, md_first);
      md_first = 0;
    }
  }
  pb_table_end_row(t);
}

union pb_cell pb_table_member(const void *row, const struct pb_column *c)
{
  const char *m = (const char *)row + c->slot;
  switch (c->fmt) {
  case PB_COL_STR: return (union pb_cell){.s = *(const char *const *)m};
  case PB_COL_INT: return (union pb_cell){.i = *(const int64_t *)m};
  default: return (union pb_cell){.x = *(const double *)m};
  }
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
