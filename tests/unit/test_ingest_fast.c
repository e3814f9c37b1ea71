/* The fast paths of CSV ingest (src/ingest/ingest_read.c, ingest.c): plain lines split without
 * libcsv must give exactly libcsv's fields, and plain decimals parsed without
 * strtof exactly strtof's float.  Expected values come from strtof itself and
 * from the same records written in libcsv-only forms (quoted fields), never
 * from the fast paths. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errno.h>

#include <csv.h>

#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/ingest.h"
#include "pairbound/store.h"

#include "testlib.h"
#include "../../src/ingest/ingest_internal.h"
#include "../../src/ingest/ingest_number.h"

#define HDR "model,group,source,condition,image,label,split,pred,smax,ptrue\n"


static void write_all(const char *path, const char *text, size_t n)
{
  FILE *fp = fopen(path, "wb");
  ck_assert(fp != NULL);
  ck_assert(fwrite(text, 1, n, fp) == n);
  fclose(fp);
}

/* A probability string in one of the forms exports and spreadsheets write. */
static void prob_string(char *buf, size_t n, int kind)
{
  const float f = (float)((rng_next() >> 11) * 0x1.0p-53);
  const float g = nextafterf(f, 2.0f);
  switch (kind % 8) {
  case 0: snprintf(buf, n, "%.9g", (double)f); break;                 /* round-trip float (export) */
  case 1: snprintf(buf, n, "%.15g", ((double)f + (double)g) / 2); break;   /* next to a float midpoint */
  case 2: snprintf(buf, n, "%.*f", 1 + (int)(rng_next() % 15), (double)f); break;
  case 3: snprintf(buf, n, "0.%017llu", (unsigned long long)(rng_next() % 100000000000000000ull)); break;
  case 4: snprintf(buf, n, "%.3e", (double)f); break;                  /* exponent */
  case 5: snprintf(buf, n, "%s", (rng_next() & 1) ? "1" : "0.0"); break;
  case 6: snprintf(buf, n, "%.*g", 1 + (int)(rng_next() % 9), (double)f * 1e-3); break; /* small: e-05 (export) */
  default: snprintf(buf, n, "%.24f", (double)f * 1e-30); break;        /* tiny: subnormal or zero */
  }
}

START_TEST(test_decimals_equal_strtof)
{
  enum { N = 30000 };
  rng_state = test_seed();
  char *csv = malloc((size_t)N * 160 + 100), (*str)[64] = malloc((size_t)N * sizeof *str);
  size_t len = (size_t)sprintf(csv, HDR);
  for (int i = 0; i < N; i++) {
    prob_string(str[i], sizeof str[i], i);
    len += (size_t)sprintf(csv + len, "m,g,S,clean,i%d,0,eval,1,%s,0\n", i, str[i]);
  }
  char *path = pb_test_path("decimals.csv");
  write_all(path, csv, len);
  struct pb_meta meta;
  struct pb_rows *rows = NULL;
  ck_assert_msg(pb_ingest_parse(path, NULL, &meta, &rows) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(meta.sources[0].n_images, N);
  for (int i = 0; i < N; i++) {
    const float want = strtof(str[i], NULL);
    ck_assert_msg(memcmp(&rows[0].smax[i], &want, sizeof want) == 0, "'%s': ingest %a, strtof %a", str[i],
                  (double)rows[0].smax[i], (double)want);
  }
  pb_store_rows_free(&rows[0]);
  free(rows);
  pb_meta_free(&meta);
  free(csv);
  free(str);
}
END_TEST

/* pb_ingest__decimal on @p s: strtof's float whenever it takes the string (1 when it did). */
static int decimal_is_strtof(const char *s)
{
  float got = -42.0f;
  const int took = pb_ingest__decimal(s, &got);
  const float want = strtof(s, NULL);
  ck_assert_msg(!took || memcmp(&got, &want, sizeof got) == 0, "'%s': pb_ingest__decimal %a, strtof %a", s,
                (double)got, (double)want);
  return took;
}

/* Decimals within a few units of the double's last place of a point halfway
 * between two floats, where a product m * 10^-k that is not exact can round
 * to the other float than strtof: the fast path must leave them to strtof.
 * A check that left them to it too narrowly fails here. */
START_TEST(test_decimal_near_midpoints)
{
  rng_state = test_seed();
  char buf[64];
  for (int i = 0; i < 200000; i++) {
    float f = (float)((rng_next() >> 11) * 0x1.0p-53);
    if (i % 4 == 3) f = ldexpf(f, -(int)(rng_next() % 40)); /* small, down to 1e-13 */
    const double mid = ((double)f + (double)nextafterf(f, 2.0f)) / 2;
    /* 13 to 15 significant digits and the neighbours of the last one */
    const int digits = 12 + (int)(rng_next() % 3);
    snprintf(buf, sizeof buf, "%.*e", digits, mid);
    char *e = strchr(buf, 'e');
    decimal_is_strtof(buf);
    for (int step = -2; step <= 2; step += 4) { /* the last digit +-2, kept a digit */
      const char last = e[-1];
      if (last + step < '0' || last + step > '9') continue;
      e[-1] = (char)(last + step);
      decimal_is_strtof(buf);
      e[-1] = last;
    }
    snprintf(buf, sizeof buf, "%.*f", 15 + (int)(rng_next() % 2), mid); /* fixed point, no exponent */
    decimal_is_strtof(buf);
  }
  /* midpoints that are integers (binades 2^24 .. 2^52): exact ties, strtof rounds them to even */
  for (int E = 24; E <= 52; E++)
    for (int j = 0; j < 64; j++) {
      const uint64_t odd = 2 * (rng_next() % ((uint64_t)1 << 23)) + 1;
      const uint64_t mid = ((uint64_t)1 << E) + (odd << (E - 24));
      for (int d = -1; d <= 1; d++) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)(mid + (uint64_t)d));
        decimal_is_strtof(buf);
        snprintf(buf, sizeof buf, "%llu.0", (unsigned long long)(mid + (uint64_t)d));
        decimal_is_strtof(buf);
      }
    }
}
END_TEST

/* The fast path takes the shapes export writes and equals strtof on them and
 * on random plain decimals, exponents, zeros, ones and long digit strings;
 * it leaves every other form to strtof. */
START_TEST(test_decimal_shapes)
{
  rng_state = test_seed();
  char buf[64];
  int took = 0;
  enum { N = 100000 };
  for (int i = 0; i < N; i++) { /* export's text: shortest round trip (%.9g at most) */
    const float f = (float)((rng_next() >> 11) * 0x1.0p-53);
    snprintf(buf, sizeof buf, "%.*g", 1 + (int)(rng_next() % 9), i % 3 ? (double)f : (double)f * 1e-4);
    took += decimal_is_strtof(buf);
  }
  /* near midpoints only (a few in a billion) go to strtof */
  ck_assert_msg(took > N - 10, "fast path took %d of %d", took, N);
  for (int i = 0; i < N; i++) { /* any digits: 1 to 20 of them, a point anywhere, an exponent or none */
    int n = 1 + (int)(rng_next() % 20), at = (int)(rng_next() % (uint64_t)(n + 1)), len = 0;
    for (int j = 0; j < n; j++) {
      if (j == at && j > 0) buf[len++] = '.';
      buf[len++] = (char)('0' + rng_next() % 10);
    }
    if (rng_next() % 2)
      len += snprintf(buf + len, sizeof buf - (size_t)len, "%se%s%d", "", (rng_next() % 2) ? "-" : "+",
                      (int)(rng_next() % 30));
    buf[len] = '\0';
    decimal_is_strtof(buf);
  }
  static const char *const take[] = {"0", "0.0", "000", "1", "1.0", "1.", "5.e-3", "1e0", "1e+0", "1E-0",
                                     "0.5", "1e-22", "9007199254740991", "0.000000000000000001", "3.40282e+2",
                                     "123456789012345e-22", "1234567890123456e-7", "0.999999999999999", "0.99999997"};
  for (size_t k = 0; k < sizeof take / sizeof *take; k++) ck_assert_msg(decimal_is_strtof(take[k]), "'%s'", take[k]);
  static const char *const leave[] = {"", ".5", "-0.5", "+0.5", " 1", "1 ", "1e5", "1e-23", "1e-1234", "1e",
                                      "1e+", "0x1p-3", "nan", "inf", "1.2.3", "9007199254740992",
                                      "12345678901234567890", "00000000000000000000.5", "1,5", "1e-5x"};
  for (size_t k = 0; k < sizeof leave / sizeof *leave; k++) {
    float v;
    ck_assert_msg(!pb_ingest__decimal(leave[k], &v), "'%s' taken", leave[k]);
  }
}
END_TEST

/* The same records written plainly (fast path) with blanks, tabs and CRLF,
 * and with every field quoted (libcsv only), interleaved with quoted lines
 * and blank lines: identical stores. */
START_TEST(test_plain_lines_equal_libcsv)
{
  enum { N = 400 };
  rng_state = test_seed() + 1;
  char *plain = malloc((size_t)N * 1000 + 100), *quoted = malloc((size_t)N * 1000 + 100);
  size_t lp = (size_t)sprintf(plain, " model ,group,\tsource,condition,image,label,split,pred,smax,ptrue\r\n");
  size_t lq = (size_t)sprintf(quoted, "\"model\",\"group\",\"source\",\"condition\",\"image\",\"label\",\"split\","
                                      "\"pred\",\"smax\",\"ptrue\"\n");
  static const char *const conds[2] = {"clean", "fog"};
  for (int mo = 0; mo < 2; mo++)
  for (int c = 0; c < 2; c++)
    for (int i = 0; i < N; i++) {
      char p[64];
      prob_string(p, sizeof p, (int)(rng_next() % 4));
      const int label = i % 3, pred = (int)(rng_next() % 3);
      const char *pt = pred == label ? p : "0";
      const char *eol = (i % 3) ? "\n" : "\r\n";
      if (i % 7 == 3) /* a quoted line amid plain ones: libcsv, then back to the fast path */
        lp += (size_t)sprintf(plain + lp, "m%d,g,\"S\",%s,img%d,%d,eval,%d,%s,%s%s", mo, conds[c], i, label, pred,
                              p, pt, eol);
      else
        lp += (size_t)sprintf(plain + lp, " m%d ,\tg ,S,%s,  img%d,%d , eval,%d,%s\t,%s%s", mo, conds[c], i, label,
                              pred, p, pt, eol);
      if (i % 11 == 5) lp += (size_t)sprintf(plain + lp, "   \n\r\n");
      lq += (size_t)sprintf(quoted + lq, "\"m%d\",\"g\",\"S\",\"%s\",\"img%d\",\"%d\",\"eval\",\"%d\",\"%s\",\"%s\"\n",
                            mo, conds[c], i, label, pred, p, pt);
    }
  char *a = pb_test_path("plain.csv");
  write_all(a, plain, lp);
  char *b = pb_test_path("quoted.csv");
  write_all(b, quoted, lq);
  struct pb_meta ma, mb;
  struct pb_rows *ra = NULL, *rb = NULL;
  ck_assert_msg(pb_ingest_parse(a, NULL, &ma, &ra) == PB_OK, "%s", pb_error_message());
  ck_assert_msg(pb_ingest_parse(b, NULL, &mb, &rb) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(ma.n_models, mb.n_models);
  ck_assert_int_eq(ma.sources[0].n_images, N);
  ck_assert_int_eq(mb.sources[0].n_images, N);
  for (int i = 0; i < N; i++) ck_assert_str_eq(ma.sources[0].image_ids[i], mb.sources[0].image_ids[i]);
  const size_t n = (size_t)ra[0].n_rows * (size_t)ra[0].n_images;
  ck_assert_int_eq(ra[0].n_rows, rb[0].n_rows);
  ck_assert(memcmp(ra[0].pred, rb[0].pred, n * sizeof *ra[0].pred) == 0);
  ck_assert(memcmp(ra[0].smax, rb[0].smax, n * sizeof *ra[0].smax) == 0);
  ck_assert(memcmp(ra[0].ptrue, rb[0].ptrue, n * sizeof *ra[0].ptrue) == 0);
  pb_store_rows_free(&ra[0]);
  pb_store_rows_free(&rb[0]);
  free(ra);
  free(rb);
  pb_meta_free(&ma);
  pb_meta_free(&mb);
  free(plain);
  free(quoted);
}
END_TEST

/* A line with a NUL byte or a bare CR is not split by the fast path: the
 * messages are libcsv's path's. */
/* The reader hands out lines from blocks of 1 MiB: lines across a block's
 * end and lines longer than a block (blanks of up to 3 MiB in a field,
 * trimmed) give the same records as the file without the blanks. */
START_TEST(test_lines_across_blocks)
{
  enum { N = 6000 };
  const size_t pad_max = (size_t)3 << 20;
  char *pad = malloc(pad_max + 1), *plain = malloc((size_t)N * 100 + 100);
  char *padded = malloc((size_t)N * 200 + 100 + 2 * pad_max);
  memset(pad, ' ', pad_max);
  pad[pad_max] = '\0';
  size_t lp = (size_t)sprintf(plain, HDR), ld = (size_t)sprintf(padded, HDR);
  for (int i = 0; i < N; i++) {
    const char *smax = (i % 5) ? "0.625" : "0.9980469";
    lp += (size_t)sprintf(plain + lp, "m,g,S,clean,i%d,%d,eval,%d,%s,0\n", i, i % 3, (i + 1) % 3, smax);
    /* two lines longer than a block, the rest crossing the blocks' ends wherever they fall */
    const size_t blanks = i == 700 ? ((size_t)3 << 19) : i == 4000 ? pad_max : (size_t)(i % 97);
    ld += (size_t)sprintf(padded + ld, "m,g,S,clean,i%d,%d,eval,%d,%.*s%s,0\n", i, i % 3, (i + 1) % 3, (int)blanks,
                          pad, smax);
  }
  char *a = pb_test_path("unpadded.csv"), *b = pb_test_path("padded.csv");
  write_all(a, plain, lp);
  write_all(b, padded, ld);
  struct pb_meta ma, mb;
  struct pb_rows *ra = NULL, *rb = NULL;
  ck_assert_msg(pb_ingest_parse(a, NULL, &ma, &ra) == PB_OK, "%s", pb_error_message());
  ck_assert_msg(pb_ingest_parse(b, NULL, &mb, &rb) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(mb.sources[0].n_images, N);
  for (int i = 0; i < N; i++) {
    ck_assert_str_eq(ma.sources[0].image_ids[i], mb.sources[0].image_ids[i]);
    ck_assert_int_eq(mb.sources[0].labels[i], i % 3);
  }
  ck_assert(memcmp(ra[0].smax, rb[0].smax, (size_t)N * sizeof *ra[0].smax) == 0);
  ck_assert(rb[0].smax[0] == 0.9980469f && rb[0].smax[1] == 0.625f);
  pb_store_rows_free(&ra[0]);
  pb_store_rows_free(&rb[0]);
  free(ra);
  free(rb);
  pb_meta_free(&ma);
  pb_meta_free(&mb);
  free(pad);
  free(plain);
  free(padded);
}
END_TEST

/* Fields as libcsv gives them (the definition: strict, blanks trimmed):
 * each row's fields, each ending with '\x1f' and each row with '\n'. */
struct fields {
  char *text;
  size_t len, cap;
};

static void fields_add(struct fields *f, const char *s, size_t n, char end)
{
  if (f->len + n + 2 > f->cap) {
    f->cap = 2 * (f->len + n + 2);
    f->text = realloc(f->text, f->cap);
  }
  memcpy(f->text + f->len, s, n);
  f->len += n;
  f->text[f->len++] = end;
}

static void ref_field(void *s, size_t n, void *data) { fields_add(data, s, n, '\x1f'); }
static void ref_row(int c, void *data)
{
  (void)c;
  fields_add(data, "", 0, '\n');
}

static struct fields got_rows;
static int got_row(struct pb_ingest__ctx *ctx, char **f, int n, int64_t line)
{
  (void)ctx;
  (void)line;
  for (int k = 0; k < n; k++) fields_add(&got_rows, f[k], strlen(f[k]), '\x1f');
  fields_add(&got_rows, "", 0, '\n');
  return PB_OK;
}

/* Lines of every length from 2 to 130 bytes (and some to 156), of 1 to 16 fields with
 * blanks, tabs, CRLF ends, and now and then a quoted field (with a comma, a
 * quote, blanks) at any place: the reader gives every row's fields as libcsv
 * does, splitting 16 bytes at a time and as wide as the processor allows
 * (32 with AVX2), whatever part of a block the line's end and its special
 * bytes fall in. */
START_TEST(test_split_equals_libcsv)
{
  enum { N = 6000 };
  rng_state = test_seed() + 2;
  static const char alphabet[] = "ab9.-_  \t";
  char *text = malloc((size_t)N * 200), line[256];
  size_t len = 0;
  struct fields want = {0};
  for (int i = 0; i < N; i++) {
    int n = 0;
    const int nfield = 1 + (int)(rng_next() % 16), quoted = (int)(rng_next() % 10) == 0 ? 1 + (int)(rng_next() % 15) : -1;
    line[n++] = 'x'; /* not blank: libcsv would skip the line */
    for (int k = 0; k < nfield && n < 200; k++) {
      if (k > 0) line[n++] = ',';
      if (k == quoted) {
        n += sprintf(line + n, "\"q,%s\"", (const char *[]){"\"\"", " \t", "z", ""}[rng_next() % 4]);
        continue;
      }
      for (int j = (int)(rng_next() % 13); j > 0; j--) line[n++] = alphabet[rng_next() % (sizeof alphabet - 1)];
    }
    if (rng_next() % 3 == 0) line[n++] = '\r';
    line[n++] = '\n';
    memcpy(text + len, line, (size_t)n);
    len += (size_t)n;
    struct csv_parser p;
    ck_assert(csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) == 0);
    ck_assert(csv_parse(&p, line, (size_t)n, ref_field, ref_row, &want) == (size_t)n);
    ck_assert(csv_fini(&p, ref_field, ref_row, &want) == 0);
    csv_free(&p);
  }
  char *path = pb_test_path("split.csv");
  write_all(path, text, len);
  for (int level = 2; level >= 0; level -= 2) { /* as wide as the processor allows, then 16 bytes */
    struct pb_ingest__file file = {.path = path, .name = path};
    struct pb_ingest__ctx ctx = {.path = path, .file = &file, .files = &file, .n_files = 1};
    got_rows.len = 0;
    pb_clones_isa_cap(level);
    ck_assert_msg(pb_ingest__read(&ctx, got_row, 0, 0, 1) == PB_OK, "%s", pb_error_message());
    ck_assert_int_eq(got_rows.len, want.len);
    ck_assert_msg(memcmp(got_rows.text, want.text, want.len) == 0, "level %d: fields differ", level);
    ck_assert_int_lt(ctx.csv_lines, N / 5); /* most lines split in place */
  }
  pb_clones_isa_cap(2);
  free(got_rows.text);
  free(want.text);
  free(text);
}
END_TEST

START_TEST(test_fast_path_hands_over)
{
  char *path = pb_test_path("nul.csv");
  const char text[] = HDR "m,g,S,clean,i1,0,eval,0,0.5,0.5\nm,g,S,clean,i\0002,0,eval,0,0.5,0.5\n";
  write_all(path, text, sizeof text - 1);
  struct pb_meta meta;
  struct pb_rows *rows = NULL;
  ck_assert_int_eq(pb_ingest_parse(path, NULL, &meta, &rows), PB_FAIL);
  char want[1024];
  snprintf(want, sizeof want, "%s:3: field 5 contains a NUL byte", path);
  ck_assert_str_eq(pb_error_message(), want);
}
END_TEST

/* A NUL byte anywhere in a long line (every position of the 16-byte blocks
 * the splitter scans, and the bytes after them) still hands the line to
 * libcsv, which reports it in the field that holds it. */
START_TEST(test_nul_at_any_position)
{
  char *path = pb_test_path("nul_pos.csv");
  for (int at = 0; at < 48; at++) {
    char text[512], want[1024];
    int n = snprintf(text, sizeof text, HDR "m,g,S,clean,i1,0,eval,0,0.5,0.5\nm,g,S,clean,");
    const int name = n; /* the image name: 48 letters, one of them NUL */
    for (int k = 0; k < 48; k++) text[n++] = 'a';
    n += snprintf(text + n, sizeof text - (size_t)n, ",0,eval,0,0.5,0.5\n");
    text[name + at] = '\0';
    write_all(path, text, (size_t)n);
    struct pb_meta meta;
    struct pb_rows *rows = NULL;
    ck_assert_int_eq(pb_ingest_parse(path, NULL, &meta, &rows), PB_FAIL);
    snprintf(want, sizeof want, "%s:3: field 5 contains a NUL byte", path);
    ck_assert_str_eq(pb_error_message(), want);
  }
}
END_TEST

/* pb_parse_csv_int reads plain digit strings without strtoll: the same
 * verdicts and values as the definition (strtoll, whole field, range). */
static int int_by_strtoll(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end != '\0') return PB_FAIL;
  if (errno == ERANGE || x < lo || x > hi) return PB_PARSE_RANGE;
  *out = x;
  return PB_OK;
}

START_TEST(test_ints_equal_strtoll)
{
  static const char *cases[] = {"0", "7", "007", "000000000", "123456789", "999999999", "1234567890",
                                "2147483647", "2147483648", "0000000001", "-1", "+5", " 5", "5 ", "", "12a",
                                "1.0", "99999999999999999999", "-2147483648", "-2147483649"};
  static const int64_t range[3][2] = {{INT32_MIN, INT32_MAX}, {0, 1000}, {5, 5}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
    for (int r = 0; r < 3; r++) {
      int64_t a = -42, b = -42;
      const int sa = pb_parse_csv_int(cases[k], range[r][0], range[r][1], &a);
      const int sb = int_by_strtoll(cases[k], range[r][0], range[r][1], &b);
      ck_assert_msg(sa == sb && (sa != PB_OK || a == b), "'%s' in [%lld, %lld]: %d %lld, strtoll %d %lld", cases[k],
                    (long long)range[r][0], (long long)range[r][1], sa, (long long)a, sb, (long long)b);
    }
}
END_TEST

/* Classes as ingest reads them (one to four digits without a call, the rest
 * by pb_parse_csv_int): strtoll's value for every form it accepts, and the
 * same refusal for one it does not. */
START_TEST(test_classes_equal_strtoll)
{
  static const char *const take[] = {"0", "7", "07", "007", "0007", "00007", "000000007", "1234", "9999",
                                     "12345", "99999", "123456", "1048575", "+5", "+0012"};
  enum { N = sizeof take / sizeof *take };
  char csv[4096];
  size_t len = (size_t)sprintf(csv, HDR);
  for (int i = 0; i < N; i++) /* label and pred the same, so ptrue = smax */
    len += (size_t)sprintf(csv + len, "m,g,S,clean,i%d,%s,eval,%s,0.5,0.5\n", i, take[i], take[i]);
  char *path = pb_test_path("classes.csv");
  write_all(path, csv, len);
  struct pb_meta meta;
  struct pb_rows *rows = NULL;
  ck_assert_msg(pb_ingest_parse(path, NULL, &meta, &rows) == PB_OK, "%s", pb_error_message());
  for (int i = 0; i < N; i++) {
    const long long want = strtoll(take[i], NULL, 10);
    ck_assert_msg(meta.sources[0].labels[i] == want && rows[0].pred[i] == want, "'%s': label %d, pred %d", take[i],
                  meta.sources[0].labels[i], rows[0].pred[i]);
  }
  ck_assert_int_eq(meta.sources[0].n_classes, 1048576);
  pb_store_rows_free(&rows[0]);
  free(rows);
  pb_meta_free(&meta);
  static const char *const leave[] = {"1a", "12a", "1234a", "-1", "1.0", "0x1", "1e3"};
  for (size_t k = 0; k < sizeof leave / sizeof *leave; k++) {
    len = (size_t)sprintf(csv, HDR "m,g,S,clean,i0,%s,eval,0,0.5,0.4\n", leave[k]);
    write_all(path, csv, len);
    ck_assert_msg(pb_ingest_parse(path, NULL, &meta, &rows) == PB_FAIL, "'%s' taken", leave[k]);
    char want[256];
    snprintf(want, sizeof want, strcmp(leave[k], "-1") == 0 ? "column 'label': negative class -1"
                                                             : "column 'label': not an integer: '%s'", leave[k]);
    ck_assert_msg(strstr(pb_error_message(), want) != NULL, "'%s': %s", leave[k], pb_error_message());
  }
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("ingest_fast");
  TCase *tc = tcase_create("fast");
  tcase_add_test(tc, test_decimals_equal_strtof);
  tcase_add_test(tc, test_decimal_near_midpoints);
  tcase_add_test(tc, test_decimal_shapes);
  tcase_add_test(tc, test_nul_at_any_position);
  tcase_add_test(tc, test_plain_lines_equal_libcsv);
  tcase_add_test(tc, test_lines_across_blocks);
  tcase_add_test(tc, test_split_equals_libcsv);
  tcase_add_test(tc, test_fast_path_hands_over);
  tcase_add_test(tc, test_ints_equal_strtoll);
  tcase_add_test(tc, test_classes_equal_strtoll);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
