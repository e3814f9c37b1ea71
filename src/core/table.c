/* Report tables (include/pairbound/table.h): TSV and markdown side by side. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/table.h"

static int pb_table__in_tsv(const struct pb_column *c) { return c->side != PB_COL_MD_ONLY; }
static int pb_table__in_md(const struct pb_column *c) { return c->side != PB_COL_TSV_ONLY; }

void pb_table_tsv_open(struct pb_text *tsv, const struct pb_table_spec *spec)
{
  int first = 1;
  for (const struct pb_column *c = spec->cols; c->name; c++)
    if (pb_table__in_tsv(c)) pb_text_printf(tsv, "%s%s", first ? "" : "\t", c->name), first = 0;
  pb_text_printf(tsv, "\n");
}

void pb_table_open(struct pb_table *t, const struct pb_table_spec *spec)
{
  pb_text_printf(&t->md, "\n### %s\n\n%s\n\n|", spec->title, spec->note);
  int n = 0;
  for (const struct pb_column *c = spec->cols; c->name; c++)
    if (pb_table__in_md(c)) pb_text_printf(&t->md, " %s |", c->md ? c->md : c->name), n++;
  pb_text_printf(&t->md, "\n|");
  while (n--) pb_text_printf(&t->md, "---|");
  pb_text_printf(&t->md, "\n");
  pb_table_tsv_open(&t->tsv, spec);
}

int pb_table_n_cols(const struct pb_table_spec *spec)
{
  int n = 0;
  while (spec->cols[n].name) n++;
  return n;
}

/* One TSV cell; the first of a row has no separator before it.  Written
 * without the printf machinery (pb_text_int, pb_text_num: the same text,
 * faster), since some tables have a row per record. */
static void pb_table__tsv_cell(struct pb_text *tsv, const struct pb_column *c, union pb_cell v, int first)
{
  switch (c->fmt) {
  case PB_COL_STR:
    if (!first) pb_text_append(tsv, "\t", 1);
    pb_text_append(tsv, v.s, strlen(v.s));
    break;
  case PB_COL_INT:
    if (first) pb_text_printf(tsv, "%lld", (long long)v.i);
    else pb_text_int(tsv, (long long)v.i);
    break;
  case PB_COL_NUM:
    if (first) {
      /* pb_text_num writes a leading tab: a number that opens a row drops it */
      size_t at = tsv->len;
      pb_text_num(tsv, v.x);
      memmove(tsv->buf + at, tsv->buf + at + 1, tsv->len - at);
      tsv->len--;
    } else {
      pb_text_num(tsv, v.x);
    }
    break;
  }
}

/* One markdown cell; the first of a row opens it. */
static void pb_table__md_cell(struct pb_text *md, const struct pb_column *c, union pb_cell v, int first)
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

/* Every column of a row, each value asked once; no markdown when @p md is NULL. */
static void pb_table__row(struct pb_text *tsv, struct pb_text *md, const struct pb_table_spec *spec,
                          pb_table_get_fn get, const void *ctx)
{
  int tsv_first = 1, md_first = 1;
  for (const struct pb_column *c = spec->cols; c->name; c++) {
    if (!pb_table__in_tsv(c) && !md) continue;
    const union pb_cell v = get(ctx, c);
    if (pb_table__in_tsv(c)) pb_table__tsv_cell(tsv, c, v, tsv_first), tsv_first = 0;
    if (md && pb_table__in_md(c)) pb_table__md_cell(md, c, v, md_first), md_first = 0;
  }
  pb_text_printf(tsv, "\n");
  if (md) pb_text_printf(md, " |\n");
}

void pb_table_row(struct pb_table *t, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx)
{
  pb_table__row(&t->tsv, &t->md, spec, get, ctx);
}

void pb_table_tsv_row(struct pb_text *tsv, const struct pb_table_spec *spec, pb_table_get_fn get, const void *ctx)
{
  pb_table__row(tsv, NULL, spec, get, ctx);
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

struct pb_column *pb_table_cols_new(int n) { return pb_calloc((size_t)n + 1, sizeof(struct pb_column)); }

void pb_table_col_name(struct pb_column *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  const int len = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *name = pb_malloc((size_t)len + 1);
  va_start(ap, fmt);
  vsnprintf(name, (size_t)len + 1, fmt, ap);
  va_end(ap);
  c->name = name;
}

void pb_table_cols_free(struct pb_column *cols)
{
  for (struct pb_column *c = cols; c && c->name; c++) free((char *)c->name);
  free(cols);
}
