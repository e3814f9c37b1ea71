/* Option tables (include/pairbound/options.h) and the one number parser. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/options.h"
#include "pairbound/parse.h"

/* ------------------------------------------------------------ one option */

static uint64_t pb_option__imax(const struct pb_option *o)
{
  if (o->imax) return o->imax;
  return o->size == sizeof(int32_t) ? (uint64_t)INT32_MAX : UINT64_MAX;
}

static int pb_option__int(const struct pb_option *o, char *field, const char *label, const char *v)
{
  uint64_t hi = pb_option__imax(o), u = 0;
  int64_t x = 0;
  int bad = o->imin < 0 ? pb_parse_int(v, o->imin, (int64_t)hi, &x) : pb_parse_uint(v, hi, &u);
  if (!bad && o->imin >= 0) bad = u < (uint64_t)o->imin, x = (int64_t)u;
  if (bad) {
    if (o->imin == 0 && !o->imax) pb_error_set("%s must be a non-negative integer, got '%s'", label, v);
    else pb_error_set("%s must be an integer in [%lld, %llu], got '%s'", label, (long long)o->imin,
                      (unsigned long long)hi, v);
    return PB_FAIL;
  }
  if (o->size == sizeof(int32_t)) {
    int32_t y = (int32_t)x;
    memcpy(field, &y, sizeof y);
  } else if (o->imin >= 0) {
    memcpy(field, &u, sizeof u);
  } else {
    memcpy(field, &x, sizeof x);
  }
  return PB_OK;
}

static void pb_option__store_real(char *field, size_t size, double x)
{
  if (size == sizeof(float)) {
    float f = (float)x;
    memcpy(field, &f, sizeof f);
  } else {
    memcpy(field, &x, sizeof x);
  }
}

static int pb_option__double(const struct pb_option *o, char *field, const char *label, const char *v)
{
  double x;
  if (pb_parse_double(v, o->min, o->max, o->open_min, &x)) {
    pb_error_set("%s must be in %c%g, %g], got '%s'", label, o->open_min ? '(' : '[', o->min, o->max, v);
    return PB_FAIL;
  }
  pb_option__store_real(field, o->size, x);
  return PB_OK;
}

static int pb_option__choice(const struct pb_option *o, char *field, const char *label, const char *v)
{
  const char *c = o->choices;
  size_t n = strlen(v);
  for (int index = 0; *c; index++) {
    const char *bar = strchr(c, '|');
    size_t len = bar ? (size_t)(bar - c) : strlen(c);
    if (len == n && strncmp(c, v, n) == 0) {
      memcpy(field, &index, sizeof index);
      return PB_OK;
    }
    c += len + (bar != NULL);
  }
  /* "must be 'a', 'b' or 'c'" */
  char words[256] = "";
  size_t used = 0;
  int count = 1;
  for (c = o->choices; *c; c++) count += *c == '|';
  c = o->choices;
  for (int i = 0; i < count && used < sizeof words; i++) {
    const char *bar = strchr(c, '|');
    int len = bar ? (int)(bar - c) : (int)strlen(c);
    used += (size_t)snprintf(words + used, sizeof words - used, "%s'%.*s'", i == 0 ? "" : i == count - 1 ? " or " : ", ",
                             len, c);
    c += len + 1;
  }
  pb_error_set("%s must be %s, got '%s'", label, words, v);
  return PB_FAIL;
}

static int pb_option__list(const struct pb_option *o, char *field, const char *label, const char *v)
{
  double x[64];
  int n;
  size_t elem = o->size / (size_t)o->max_n;
  if (o->max_n > 64 || pb_parse_list(v, o->min, o->max, o->max_n, x, &n)) {
    pb_error_set("%s takes 1 to %d comma-separated values in [%g, %g], got '%s'", label, o->max_n, o->min, o->max, v);
    return PB_FAIL;
  }
  for (int i = 0; i < n && o->distinct; i++)
    for (int j = 0; j < i; j++)
      if (x[i] == x[j]) {
        pb_error_set("%s lists a value twice: '%s'", label, v);
        return PB_FAIL;
      }
  for (int i = 0; i < n; i++) pb_option__store_real(field + (size_t)i * elem, elem, x[i]);
  int32_t count = n;
  memcpy(field - o->offset + (o->count - 1), &count, sizeof count);
  return PB_OK;
}

/* Store without marking: shared by defaults and pb_options_set. */
static int pb_option__store(const struct pb_option *o, void *opts, const char *label, const char *v)
{
  char *field = (char *)opts + o->offset;
  switch (o->type) {
  case PB_OPTION_FLAG: {
    int64_t b = o->flag;
    if (v && pb_parse_int(v, 0, 1, &b)) {
      pb_error_set("%s must be 0 or 1, got '%s'", label, v);
      return PB_FAIL;
    }
    int i = (int)b;
    memcpy(field, &i, sizeof i);
    return PB_OK;
  }
  case PB_OPTION_INT: return pb_option__int(o, field, label, v);
  case PB_OPTION_DOUBLE: return pb_option__double(o, field, label, v);
  case PB_OPTION_CHOICE: return pb_option__choice(o, field, label, v);
  case PB_OPTION_LIST: return pb_option__list(o, field, label, v);
  case PB_OPTION_CUSTOM: return o->parse(opts, label, v);
  case PB_OPTION_STRING: {
    if (!v[0]) {
      pb_error_set("%s needs a value", label);
      return PB_FAIL;
    }
    char *old;
    memcpy(&old, field, sizeof old);
    free(old);
    char *copy = pb_strdup(v);
    memcpy(field, &copy, sizeof copy);
    return PB_OK;
  }
  }
  pb_error_set("%s: unknown option type %d", label, o->type);
  return PB_FAIL;
}

int pb_options_set(const struct pb_option *o, void *opts, const char *label, const char *value)
{
  if (pb_option__store(o, opts, label, value)) return PB_FAIL;
  if (o->mark) {
    int one = 1;
    memcpy((char *)opts + o->mark - 1, &one, sizeof one);
  }
  return PB_OK;
}

/* ------------------------------------------------------------ tables */

void pb_options_defaults(const struct pb_option *table, void *opts)
{
  for (const struct pb_option *o = table; o->name; o++)
    if (o->def && pb_option__store(o, opts, o->name, o->def) != PB_OK)
      PB_ERROR("option table: default '%s' of --%s does not parse: %s", o->def, o->name, pb_error_message());
}

const char *pb_options_ini_key(const struct pb_option *o, char buf[64])
{
  snprintf(buf, 64, "%s", o->ini ? o->ini : o->name);
  for (char *c = buf; *c; c++)
    if (*c == '-') *c = '_';
  return buf;
}

const struct pb_option *pb_options_find_ini(const struct pb_option *table, const char *key)
{
  char buf[64];
  for (const struct pb_option *o = table; o->name; o++)
    if (pb_options_ini_key(o, buf)[0] && strcmp(buf, key) == 0) return o;
  return NULL;
}

void pb_options_free(const struct pb_option *table, void *opts)
{
  for (const struct pb_option *o = table; o->name; o++)
    if (o->type == PB_OPTION_STRING) {
      char *p;
      memcpy(&p, (char *)opts + o->offset, sizeof p);
      free(p);
      p = NULL;
      memcpy((char *)opts + o->offset, &p, sizeof p);
    }
}

/* "-o, --output OUTDIR" / "--tau X", or as a configuration line "tau = X" */
static int pb_options__head(const struct pb_option *o, int ini, char *buf, size_t cap)
{
  int n = 0;
  if (ini) {
    char key[64];
    const char *meta = o->type == PB_OPTION_FLAG ? "0|1" : o->metavar;
    return snprintf(buf, cap, "%s = %s", pb_options_ini_key(o, key), meta ? meta : "");
  }
  if (o->short_name) n += snprintf(buf, cap, "-%c, ", o->short_name);
  n += snprintf(buf + n, cap - (size_t)n, "--%s", o->name);
  if (o->metavar) n += snprintf(buf + n, cap - (size_t)n, " %s", o->metavar);
  return n;
}

#define PB_OPTIONS__COLUMN 23 /* the help text starts here */
#define PB_OPTIONS__WIDTH 118

/* Word-wrap @p text from column PB_OPTIONS__COLUMN; the cursor is at @p col. */
static void pb_options__wrap(FILE *fp, const char *text, int col)
{
  const char *w = text;
  while (*w) {
    while (*w == ' ') w++;
    size_t len = strcspn(w, " ");
    if (!len) break;
    if (col > PB_OPTIONS__COLUMN && col + 1 + (int)len > PB_OPTIONS__WIDTH) {
      fprintf(fp, "\n%*s", PB_OPTIONS__COLUMN, "");
      col = PB_OPTIONS__COLUMN;
    } else if (col > PB_OPTIONS__COLUMN) {
      fputc(' ', fp);
      col++;
    }
    fprintf(fp, "%.*s", (int)len, w);
    col += (int)len;
    w += len;
  }
  fputc('\n', fp);
}

static void pb_options__help(FILE *fp, const struct pb_option *table, int ini)
{
  char key[64];
  for (const struct pb_option *o = table; o->name; o++) {
    if (ini && !pb_options_ini_key(o, key)[0]) continue;
    char head[128], text[2048];
    int n = pb_options__head(o, ini, head, sizeof head);
    if (ini && o->type == PB_OPTION_FLAG) /* the key names what the flag switches: say which value it is */
      snprintf(text, sizeof text, "%d as --%s: %s (default %s)", o->flag, o->name, o->help, o->def ? o->def : "0");
    else if (o->def && !o->help_default && o->type != PB_OPTION_FLAG)
      snprintf(text, sizeof text, "%s (default %s)", o->help, o->def);
    else
      snprintf(text, sizeof text, "%s", o->help);
    fprintf(fp, "  %s", head);
    int col = 2 + n;
    if (col >= PB_OPTIONS__COLUMN - 1) {
      fprintf(fp, "\n%*s", PB_OPTIONS__COLUMN, "");
    } else {
      fprintf(fp, "%*s", PB_OPTIONS__COLUMN - col, "");
    }
    pb_options__wrap(fp, text, PB_OPTIONS__COLUMN);
  }
}

void pb_options_help(FILE *fp, const struct pb_option *table) { pb_options__help(fp, table, 0); }

void pb_options_help_ini(FILE *fp, const struct pb_option *table) { pb_options__help(fp, table, 1); }

void pb_options_synopsis(char *buf, size_t cap, const struct pb_option *table)
{
  size_t n = strlen(buf);
  for (const struct pb_option *o = table; o->name && n < cap; o++) {
    if (o->short_name) continue; /* required ones (-o) are written by the command */
    char head[128], word[160];
    pb_options__head(o, 0, head, sizeof head);
    int len = snprintf(word, sizeof word, "[%s]%s", head, o->repeatable ? "..." : "");
    const char *line = strrchr(buf, '\n');
    size_t col = n - (line ? (size_t)(line - buf) : 0);
    n += (size_t)snprintf(buf + n, cap - n, "%s%s", col + 1 + (size_t)len > PB_OPTIONS__WIDTH ? "\n      " : "", " ");
    if (n < cap) n += (size_t)snprintf(buf + n, cap - n, "%s", word);
  }
}
