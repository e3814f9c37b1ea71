/* The one number parser (include/pairbound/parse.h). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/parse.h"

/* True when only white space is left. */
static int pb_parse__rest_blank(const char *end)
{
  while (isspace((unsigned char)*end)) end++;
  return *end == '\0';
}

int pb_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (errno || end == s || !pb_parse__rest_blank(end) || x < lo || x > hi) return PB_FAIL;
  *out = x;
  return PB_OK;
}

int pb_parse_uint(const char *s, uint64_t hi, uint64_t *out)
{
  char *end;
  while (isspace((unsigned char)*s)) s++;
  if (!isdigit((unsigned char)*s)) return PB_FAIL; /* strtoull would negate "-3" */
  errno = 0;
  unsigned long long x = strtoull(s, &end, 10);
  if (errno || !pb_parse__rest_blank(end) || x > hi) return PB_FAIL;
  *out = x;
  return PB_OK;
}

/* Whether @p s is a finite decimal, [+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS] (".5" and "5." too), between optional
 * white space: what strtod reads besides it -- hexadecimal floats (0x1p-2), inf, infinity, nan(...) -- is no
 * number in an input file. */
static int pb_parse__decimal(const char *s)
{
  while (isspace((unsigned char)*s)) s++;
  s += *s == '+' || *s == '-';
  size_t digits = strspn(s, "0123456789");
  s += digits;
  if (*s == '.') {
    const size_t frac = strspn(s + 1, "0123456789");
    digits += frac;
    s += 1 + frac;
  }
  if (digits == 0) return 0;
  if (*s == 'e' || *s == 'E') {
    s++;
    s += *s == '+' || *s == '-';
    const size_t exp = strspn(s, "0123456789");
    if (exp == 0) return 0;
    s += exp;
  }
  return pb_parse__rest_blank(s);
}

int pb_parse_double(const char *s, double lo, double hi, int open_lo, double *out)
{
  char *end;
  if (!pb_parse__decimal(s)) return PB_FAIL;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || end == s || !pb_parse__rest_blank(end) || !isfinite(x) || x < lo || x > hi || (open_lo && x == lo))
    return PB_FAIL;
  *out = x;
  return PB_OK;
}

int pb_parse_list(const char *s, double lo, double hi, int max, double *out, int *n)
{
  char *copy = pb_strdup(s), *save = NULL;
  int status = PB_OK;
  *n = 0;
  for (char *w = strtok_r(copy, ",", &save); w && status == PB_OK; w = strtok_r(NULL, ",", &save)) {
    if (*n >= max || pb_parse_double(w, lo, hi, 0, &out[*n])) status = PB_FAIL;
    else (*n)++;
  }
  free(copy);
  return status == PB_OK && *n > 0 ? PB_OK : PB_FAIL;
}

int pb_parse_int_list(const char *s, int64_t lo, int64_t hi, int max, int64_t *out, int *n)
{
  char *copy = pb_strdup(s), *save = NULL;
  int status = PB_OK;
  *n = 0;
  for (char *w = strtok_r(copy, ",", &save); w && status == PB_OK; w = strtok_r(NULL, ",", &save)) {
    if (*n >= max || pb_parse_int(w, lo, hi, &out[*n])) status = PB_FAIL;
    else (*n)++;
  }
  free(copy);
  return status == PB_OK && *n > 0 ? PB_OK : PB_FAIL;
}

int32_t pb_parse_words(const char *s, const char *sep, char ***words)
{
  char *copy = pb_strdup(s), *save = NULL;
  int32_t n = 0;
  *words = NULL;
  for (char *w = strtok_r(copy, sep, &save); w; w = strtok_r(NULL, sep, &save)) {
    *words = pb_realloc(*words, (size_t)(n + 1) * sizeof **words);
    (*words)[n++] = pb_strdup(w);
  }
  free(copy);
  return n;
}

void pb_parse_words_free(char **words, int32_t n)
{
  for (int32_t i = 0; i < n; i++) free(words[i]);
  free(words);
}

int pb_parse_real(const char *s, double *out)
{
  char *end;
  double x = strtod(s, &end); /* ERANGE: inf or 0, kept */
  if (end == s || !pb_parse__rest_blank(end)) return PB_FAIL;
  *out = x;
  return PB_OK;
}

int pb_parse_int_prefix(const char *s, int64_t lo, int64_t hi, int64_t *out, const char **end)
{
  if (!isdigit((unsigned char)*s)) return PB_FAIL;
  char *e;
  errno = 0;
  unsigned long long x = strtoull(s, &e, 10);
  if (errno || x > INT64_MAX || (int64_t)x < lo || (int64_t)x > hi) return PB_FAIL;
  *out = (int64_t)x;
  if (end) *end = e;
  return PB_OK;
}

int pb_parse_csv_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
  /* the common field, one to nine digits: strtoll's value without its cost */
  int64_t v = 0;
  int n = 0;
  while (n < 10 && s[n] >= '0' && s[n] <= '9') v = 10 * v + (s[n++] - '0');
  if (n > 0 && n < 10 && s[n] == '\0') {
    if (v < lo || v > hi) return PB_PARSE_RANGE;
    *out = v;
    return PB_OK;
  }
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end != '\0') return PB_FAIL;
  if (errno == ERANGE || x < lo || x > hi) return PB_PARSE_RANGE;
  *out = x;
  return PB_OK;
}

int pb_parse_csv_float(const char *s, float *out)
{
  char *end;
  float x = strtof(s, &end); /* ERANGE: inf or 0, kept (the caller says why it refuses them) */
  if (end == s || *end != '\0') return PB_FAIL;
  *out = x;
  return PB_OK;
}
