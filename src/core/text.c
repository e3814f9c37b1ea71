/* Growable text (include/pairbound/text.h). */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/text.h"
#include "pairbound/util.h"

void pb_text_printf(struct pb_text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->buf && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
}

void pb_text_append(struct pb_text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap) {
    t->cap = 2 * (t->len + n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

void pb_text_double(struct pb_text *t, double x)
{
  char b[40];
  pb_text_format_double(x, b);
  pb_text_printf(t, "\t%s", b);
}

#define PB_TEXT__MEMO 4096
static _Thread_local struct pb_text__memo {
  uint64_t bits;
  uint8_t used, len;
  char txt[40];
} pb_text__memo[PB_TEXT__MEMO];

void pb_text_num(struct pb_text *t, double x)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  struct pb_text__memo *m = &pb_text__memo[((bits ^ (bits >> 29)) * 0x9e3779b97f4a7c15ull) >> 52 & (PB_TEXT__MEMO - 1)];
  if (!m->used || m->bits != bits) {
    pb_text_format_double(x, m->txt);
    m->bits = bits;
    m->used = 1;
    m->len = (uint8_t)strlen(m->txt);
  }
  if (t->len + m->len + 2 > t->cap) {
    t->cap = 2 * (t->len + m->len + 2) + 4096;
    t->buf = pb_realloc(t->buf, t->cap);
  }
  t->buf[t->len++] = '\t';
  memcpy(t->buf + t->len, m->txt, (size_t)m->len + 1);
  t->len += m->len;
}

void pb_text_int(struct pb_text *t, long long v)
{
  /* what "\t%lld" prints, without the printf machinery: count columns
   * (two in every row of screen_cells.tsv) */
  char d[24];
  int n = 0;
  unsigned long long u = v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
  do d[n++] = (char)('0' + u % 10); while (u /= 10);
  if (v < 0) d[n++] = '-';
  if (t->len + (size_t)n + 2 > t->cap) {
    t->cap = 2 * (t->len + (size_t)n + 2) + 4096;
    t->buf = pb_realloc(t->buf, t->cap);
  }
  t->buf[t->len++] = '\t';
  while (n > 0) t->buf[t->len++] = d[--n];
  t->buf[t->len] = '\0';
}

void pb_text_free(struct pb_text *t)
{
  free(t->buf);
  memset(t, 0, sizeof *t);
}
