/* The one number parser: command-line options, run and synth configurations,
 * comma-separated lists, environment variables, CSV fields, law, CASES and
 * PREDICTIONS files and the files pairbound reads back all read numbers
 * through it.  What a person writes (everything but pb_parse_real, which reads
 * pairbound's own outputs) is decimal only. */
#ifndef PAIRBOUND_PARSE_H
#define PAIRBOUND_PARSE_H

#include <stdint.h>

/* Leading and trailing white space is allowed; the
 * rest must be the whole number.  Return PB_OK or PB_FAIL (no message). */
/** Decimal integer in [lo, hi]. */
int pb_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/** Non-negative decimal integer at most hi (the full uint64_t range for seeds). */
int pb_parse_uint(const char *s, uint64_t hi, uint64_t *out);
/** Finite real in [lo, hi] (in (lo, hi] when open_lo), written as a decimal: [+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS]
 * (".5" and "5." too); hexadecimal floats, inf and nan are no number here.  So is a decimal whose magnitude a
 * normal double cannot hold (1e999; 1e-320, below 2.2250738585072014e-308, strtod's ERANGE). */
int pb_parse_double(const char *s, double lo, double hi, int open_lo, double *out);
/** 1 to max comma-separated reals in [lo, hi]; *n gets their count. */
int pb_parse_list(const char *s, double lo, double hi, int max, double *out, int *n);
/** 1 to max comma-separated decimal integers in [lo, hi]; *n gets their count. */
int pb_parse_int_list(const char *s, int64_t lo, int64_t hi, int max, int64_t *out, int *n);
/** The words of @p s between the characters of @p sep (empty ones dropped), copied into *@p words (NULL when
 * none; release with pb_parse_words_free); returns their number. */
int32_t pb_parse_words(const char *s, const char *sep, char ***words);
void pb_parse_words_free(char **words, int32_t n);
/** Any real as the outputs write it, nan and inf included; a value beyond the doubles is inf or 0. */
int pb_parse_real(const char *s, double *out);
/** The digits at the start of @p s (no white space, no sign) as an integer in [lo, hi]; *end (unless NULL): past
 * them. */
int pb_parse_int_prefix(const char *s, int64_t lo, int64_t hi, int64_t *out, const char **end);

/* A CSV field: white space may lead (as strtol and strtof allow) but nothing
 * may follow the number. */
#define PB_PARSE_RANGE (-2) /* an integer, outside the range */
/** Decimal integer in [lo, hi]: PB_OK, PB_FAIL when not an integer, PB_PARSE_RANGE. */
int pb_parse_csv_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/** A float32, correctly rounded from the text (not through a double), inf and nan as strtof reads them, a value
 * beyond the floats as inf or 0: PB_OK, or PB_FAIL when not a number. */
int pb_parse_csv_float(const char *s, float *out);

#endif /* PAIRBOUND_PARSE_H */
