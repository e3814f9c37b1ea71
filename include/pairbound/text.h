/* Growable text: the rows of TSV tables and markdown, built in memory with
 * numbers as the shortest text that reads back exactly.  Pure (no MPI, no
 * I/O): kernels' and reports' text goes through here. */
#ifndef PAIRBOUND_TEXT_H
#define PAIRBOUND_TEXT_H

#include <stddef.h>

struct pb_text {
  char *buf;
  size_t len, cap;
};
void pb_text_printf(struct pb_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append @p n bytes of @p s (a copy, no format scan: joining blocks of rows). */
void pb_text_append(struct pb_text *t, const char *s, size_t n);
void pb_text_double(struct pb_text *t, double x);  /* tab + shortest round-trip text or nan */
/* pb_text_double through a per-thread memo of recent values: the same text,
 * faster where rows repeat few distinct values (counts over N) and the
 * shortest round-trip formatting would dominate the output cost. */
void pb_text_num(struct pb_text *t, double x);
/* pb_text_printf(t, "\t%lld", v), faster. */
void pb_text_int(struct pb_text *t, long long v);
void pb_text_free(struct pb_text *t);

/* ---- numbers as text */
/* Shortest decimal text that reads back as exactly the same float. */
void pb_text_format_float(float x, char buf[32]);
/* Format a double for TSV output: shortest round-trip text, "nan" when undefined. */
void pb_text_format_double(double x, char buf[40]);

#endif /* PAIRBOUND_TEXT_H */
