/* The one number parser: command-line options, run and synth configurations
 * and comma-separated lists all read numbers through it. */
#ifndef PAIRBOUND_PARSE_H
#define PAIRBOUND_PARSE_H

#include <stdint.h>

/* Leading and trailing white space is allowed; the
 * rest must be the whole number.  Return PB_OK or PB_FAIL (no message). */
/** Decimal integer in [lo, hi]. */
int pb_parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out);
/** Non-negative decimal integer at most hi (the full uint64_t range for seeds). */
int pb_parse_uint(const char *s, uint64_t hi, uint64_t *out);
/** Finite real in [lo, hi] (in (lo, hi] when open_lo). */
int pb_parse_double(const char *s, double lo, double hi, int open_lo, double *out);
/** 1 to max comma-separated reals in [lo, hi]; *n gets their count. */
int pb_parse_list(const char *s, double lo, double hi, int max, double *out, int *n);
/** 1 to max comma-separated decimal integers in [lo, hi]; *n gets their count. */
int pb_parse_int_list(const char *s, int64_t lo, int64_t hi, int max, int64_t *out, int *n);

#endif /* PAIRBOUND_PARSE_H */
