/* `pairbound ingest`: reading a CSV file.  Every row goes to a row handler
 * with the line where it began (and the byte offsets where it begins and
 * ends): plain lines are split in place, anything else (quotes, stray CRs,
 * rows spanning lines) goes through libcsv one physical line at a time.  A
 * read covers the whole file or the rows that begin in a byte range; stdin
 * is read once and copied to a spool file that later passes read instead;
 * and reading a field's number (pb_ingest__number).  Format and messages:
 * docs/csv.md. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include <csv.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "pairbound/clones.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/signals.h"
#include "ingest_internal.h"
#include "ingest_number.h"

/* Bytes of a read's block of lines (more when a line is longer). */
#define PB_INGEST__READ_BUFFER (1 << 20)

/* libcsv feeds fields and row ends through callbacks; this carries them,
 * plus the physical line numbers libcsv does not track. */
struct pb_ingest__reader {
  struct pb_ingest__ctx *ctx;
  pb_ingest__row_fn on_row;
  int64_t line;            /* physical line being fed */
  int64_t row_line;        /* line where the current row began, 0 = none */
  off_t line_off, next_off; /* where the physical line being fed begins, and the next one */
  off_t row_off;           /* where the current row began */
  char **field;
  size_t *field_cap;
  int n_field, cap_field;
  char **fast;             /* fields of a line split in place (pb_ingest__fast_row) */
  int cap_fast;
  int wide;                /* split 32 bytes at a time (AVX2) */
  int status;
};

static void pb_ingest__on_field(void *s, size_t len, void *data)
{
  struct pb_ingest__reader *r = data;
  if (r->status != PB_OK) return;
  if (r->row_line == 0) { /* a row that began after a bare CR */
    r->row_line = r->line;
    r->row_off = r->line_off;
  }
  if (r->n_field == r->cap_field) {
    int cap = r->cap_field ? 2 * r->cap_field : 16;
    r->field = pb_realloc(r->field, (size_t)cap * sizeof *r->field);
    r->field_cap = pb_realloc(r->field_cap, (size_t)cap * sizeof *r->field_cap);
    for (int i = r->cap_field; i < cap; i++) {
      r->field[i] = NULL;
      r->field_cap[i] = 0;
    }
    r->cap_field = cap;
  }
  int k = r->n_field++;
  if (r->field_cap[k] < len + 1) {
    r->field_cap[k] = len + 1 > 64 ? len + 1 : 64;
    r->field[k] = pb_realloc(r->field[k], r->field_cap[k]);
  }
  if (len) memcpy(r->field[k], s, len);
  r->field[k][len] = '\0';
  if (len && memchr(s, '\0', len)) {
    pb_error_set("%s:%lld: field %d contains a NUL byte", r->ctx->path, (long long)r->row_line, k + 1);
    r->status = PB_FAIL;
  }
}

static void pb_ingest__on_row(int c, void *data)
{
  struct pb_ingest__reader *r = data;
  (void)c;
  if (r->status == PB_OK) {
    r->ctx->row_off = r->row_line ? r->row_off : r->line_off;
    r->ctx->row_end = r->next_off;
    r->status = r->on_row(r->ctx, r->field, r->n_field, r->row_line ? r->row_line : r->line);
  }
  r->n_field = 0;
  r->row_line = 0;
}

/* A line libcsv skips between rows: only blanks and line ends. */
static int pb_ingest__blank(const char *s, ssize_t n)
{
  for (ssize_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n') return 0;
  return 1;
}

/* More room for field starts in r->fast, which then holds *cap (its new address). */
static char **pb_ingest__more_fields(struct pb_ingest__reader *r, int *cap)
{
  r->cap_fast = r->cap_fast ? 2 * r->cap_fast : 32;
  r->fast = pb_realloc(r->fast, (size_t)r->cap_fast * sizeof *r->fast);
  *cap = r->cap_fast;
  return r->fast;
}

/* The line that pb_ingest__fast_row split up to its n-th comma as it was:
 * the commas back in place of their NULs, then its end. */
static void pb_ingest__unsplit(char **fast, int n, char *end, char saved)
{
  for (int k = 1; k <= n; k++) fast[k][-1] = ',';
  *end = saved;
}

/* The blocks of a line of len bytes (at least W) that pb_ingest__fast_row
 * splits, W bytes at a time: a mask of the bytes that refuse the line, one
 * of the commas, one of the blanks; then the last W bytes, read into LAST
 * before the line end became a comma and any comma a NUL (read after those
 * stores, which it overlaps, the load would wait for them: no store
 * forwarding), with the bytes already split masked off and their last byte
 * the line end (a byte at a time, the tail took a sixth of the splitter's
 * time).  V is the vector type, MASK(v) the bits of its bytes that are -1,
 * EQ(v, c) the bytes of v equal to byte c.  Returns -1 from the function,
 * the line unsplit, when it refuses the line. */
#define PB_INGEST__BLOCKS(W, V, LOAD, MASK, EQ, LAST)                                                              \
  for (int tail = 0; !tail;) {                                                                                     \
    uint64_t keep = ((uint64_t)1 << (W - 1) << 1) - 1, ends = 0;                                                   \
    V v;                                                                                                           \
    if (i + W < len) {                                                                                             \
      v = LOAD(s + i);                                                                                             \
    } else {                                                                                                       \
      v = LAST;                                                                                                    \
      keep = (keep << (i - (len - W))) & (keep >> 1);                                                              \
      ends = (uint64_t)1 << (W - 1);                                                                               \
      i = len - W;                                                                                                 \
      tail = 1;                                                                                                    \
    }                                                                                                              \
    if ((MASK(EQ(v, '"')) | MASK(EQ(v, '\r')) | MASK(EQ(v, '\0'))) & keep) {                                       \
      pb_ingest__unsplit(fast, nf, s + end, saved);                                                                \
      return -1;                                                                                                   \
    }                                                                                                              \
    *blanks |= ((MASK(EQ(v, ' ')) | MASK(EQ(v, '\t'))) & keep) != 0;                                               \
    /* room for the block's W commas at most, checked once a block */                                             \
    if (nf + W + 1 >= cap) fast = pb_ingest__more_fields(r, &cap);                                                 \
    for (uint64_t m = (MASK(EQ(v, ',')) & keep) | ends; m; m &= m - 1) {                                           \
      char *c = s + i + (size_t)__builtin_ctzll(m);                                                                \
      *c = '\0';                                                                                                   \
      fast[++nf] = c + 1;                                                                                          \
    }                                                                                                              \
    i += W;                                                                                                        \
  }

/* The fields of a plain line of len bytes whose last, its end, is taken
 * for a comma, into r->fast: their count past the first (the line's commas),
 * or -1 when the line holds a quote, a CR or a NUL (left as it was); *blanks
 * is set when it holds a space or a tab.  16 bytes at a time where the
 * processor has SSE2 (every x86-64), else and for lines shorter than 16 a
 * byte at a time. */
static int pb_ingest__split16(struct pb_ingest__reader *r, char *s, size_t len, int *blanks)
{
  static const unsigned char stop[256] = {[','] = 1, ['"'] = 2, ['\r'] = 2, ['\0'] = 2, [' '] = 3, ['\t'] = 3};
  const size_t end = len - 1;
  const char saved = s[end];
  char **fast = r->fast;
  size_t i = 0;
  int nf = 0, cap = r->cap_fast;
#ifdef __SSE2__
  const __m128i last = len >= 16 ? _mm_loadu_si128((const __m128i *)(s + len - 16)) : _mm_setzero_si128();
#endif
  s[end] = ',';
  if (cap < 18) fast = pb_ingest__more_fields(r, &cap);
  fast[0] = s;
#ifdef __SSE2__
#define PB_INGEST__LOAD16(p) _mm_loadu_si128((const __m128i *)(p))
#define PB_INGEST__MASK16(v) ((uint64_t)(unsigned)_mm_movemask_epi8(v))
#define PB_INGEST__EQ16(v, c) _mm_cmpeq_epi8((v), _mm_set1_epi8(c))
  if (len >= 16) PB_INGEST__BLOCKS(16, __m128i, PB_INGEST__LOAD16, PB_INGEST__MASK16, PB_INGEST__EQ16, last)
#endif
  for (; i < len; i++) {
    const unsigned char c = stop[(unsigned char)s[i]];
    if (c == 2) {
      pb_ingest__unsplit(fast, nf, s + end, saved);
      return -1;
    }
    *blanks |= c == 3;
    if (c == 1) {
      if (nf + 2 >= cap) fast = pb_ingest__more_fields(r, &cap);
      s[i] = '\0';
      fast[++nf] = s + i + 1;
    }
  }
  return nf;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The same 32 bytes at a time, where the processor has AVX2 (r->wide):
 * reading and splitting the paper CSV's first 400 MB took 0.132 s against
 * 0.139 s 16 at a time (best of 12, alternating). */
__attribute__((target("avx2"))) static int pb_ingest__split32(struct pb_ingest__reader *r, char *s, size_t len,
                                                              int *blanks)
{
  if (len < 32) return pb_ingest__split16(r, s, len, blanks);
  const size_t end = len - 1;
  const char saved = s[end];
  char **fast = r->fast;
  size_t i = 0;
  int nf = 0, cap = r->cap_fast;
  const __m256i last = _mm256_loadu_si256((const __m256i *)(s + len - 32));
  s[end] = ',';
  if (cap < 34) fast = pb_ingest__more_fields(r, &cap);
  fast[0] = s;
#define PB_INGEST__LOAD32(p) _mm256_loadu_si256((const __m256i *)(p))
#define PB_INGEST__MASK32(v) ((uint64_t)(unsigned)_mm256_movemask_epi8(v))
#define PB_INGEST__EQ32(v, c) _mm256_cmpeq_epi8((v), _mm256_set1_epi8(c))
  PB_INGEST__BLOCKS(32, __m256i, PB_INGEST__LOAD32, PB_INGEST__MASK32, PB_INGEST__EQ32, last)
  return nf;
}
#endif

/* The common line, split in place without libcsv: it ends with LF (or CRLF),
 * holds no quote, no other CR and no NUL, and is not blank, so libcsv would
 * deliver exactly its comma-separated fields with blanks (space, tab) trimmed
 * at their ends.  Returns 1 when the line was handled (r->status set), 0 when
 * libcsv must parse it. */
static int pb_ingest__fast_row(struct pb_ingest__reader *r, char *s, ssize_t n)
{
  if (n < 1 || s[n - 1] != '\n') return 0;
  ssize_t end = n - 1;
  if (end > 0 && s[end - 1] == '\r') end--;
  if (pb_ingest__blank(s, end)) return 0;
  /* one pass: field starts at commas, each comma a NUL that ends its field,
   * any quote, CR or NUL hands the line to libcsv, blanks are noted; a comma
   * in place of the line end ends the last field.  A line libcsv takes gets
   * its commas and its end back (pb_ingest__unsplit).  Field k begins at
   * fast[k] and ends at the NUL before fast[k + 1] (fast[nf] lies past the
   * line's last comma).  A NUL is written as its comma is found, not in a
   * loop over the starts afterwards, which reread every start to store one
   * byte (a fifth of the splitter's time).  The starts go to a local array:
   * r's own, written through char stores, would be read again after each. */
  int blanks = 0;
  const size_t len = (size_t)end + 1;
#if defined(__x86_64__) && defined(__GNUC__)
  const int nf = r->wide ? pb_ingest__split32(r, s, len, &blanks) : pb_ingest__split16(r, s, len, &blanks);
#else
  const int nf = pb_ingest__split16(r, s, len, &blanks);
#endif
  if (nf < 0) return 0;
  char **fast = r->fast;
  /* blanks trimmed at both ends of every field where the line holds any */
  if (blanks) {
    for (int k = 0; k < nf; k++) {
      char *p = fast[k], *fe = fast[k + 1] - 1;
      while (p < fe && (*p == ' ' || *p == '\t')) p++;
      while (fe > p && (fe[-1] == ' ' || fe[-1] == '\t')) fe--;
      *fe = '\0';
      fast[k] = p;
    }
  }
  r->ctx->row_off = r->line_off;
  r->ctx->row_end = r->next_off;
  r->status = r->on_row(r->ctx, fast, nf, r->line);
  return 1;
}

/* The stream of ctx->file for a read from @p off0: the file itself, or its
 * spool; stdin the first time (pass 1), with its spool opened into *spool. */
static FILE *pb_ingest__open(struct pb_ingest__ctx *ctx, off_t off0, FILE **spool)
{
  struct pb_ingest__file *f = ctx->file;
  *spool = NULL;
  if (strcmp(f->path, "-") == 0 && !f->spool) {
    /* STORE.stdin.tmp.XXXXXX: not a temporary of the store, which its creation sweeps */
    const char *base = ctx->spool_base ? ctx->spool_base : "stdin";
    const size_t len = strlen(base) + 8;
    char *name = pb_malloc(len);
    snprintf(name, len, "%s.stdin", base);
    int fd = pb_output_temp(name, &f->spool);
    free(name);
    if (fd >= 0) f->spool_sig = pb_signal_cleanup_file(f->spool); /* a signal's immediate exit removes it */
    if (fd < 0 || !(*spool = fdopen(fd, "w"))) {
      if (fd >= 0) close(fd);
      pb_error_set("stdin: cannot create the copy that ingest reads twice: %s", strerror(errno));
      return NULL;
    }
    return stdin;
  }
  const char *path = f->spool ? f->spool : f->path;
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open: %s", ctx->path, strerror(errno));
    return NULL;
  }
  if (off0 > 0 && fseeko(fp, off0, SEEK_SET) != 0) {
    pb_error_set("%s: cannot seek: %s", ctx->path, strerror(errno));
    fclose(fp);
    return NULL;
  }
  return fp;
}

/* Close what pb_ingest__open opened; the spool of stdin must be complete. */
static int pb_ingest__close(struct pb_ingest__ctx *ctx, FILE *fp, FILE *spool, int status)
{
  if (spool && (fclose(spool) != 0 || ferror(fp)) && status == PB_OK) {
    pb_error_set("stdin: cannot write the copy that ingest reads twice (%s): %s", ctx->file->spool, strerror(errno));
    status = PB_FAIL;
  }
  if (fp != stdin) fclose(fp);
  return status;
}

/* One physical line: libcsv gets it with its line number known. */
static void pb_ingest__line(struct pb_ingest__reader *r, struct csv_parser *p, char *text, ssize_t n)
{
  const struct pb_ingest__ctx *ctx = r->ctx;
  /* spreadsheets often start a UTF-8 file with a byte-order mark */
  if (r->line_off == 0 && n >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
    text += 3;
    n -= 3;
  }
  /* libcsv holds no part of a row here: split plain lines directly (a line
   * split so holds no CR but that of its CRLF, so the check below passes it) */
  if (r->row_line == 0 && r->n_field == 0 && pb_ingest__fast_row(r, text, n)) return;
  /* CR-only line ends (classic Mac) would make the whole file one line
   * for the line numbers of every message: refused (docs/csv.md) */
  const char *cr = memchr(text, '\r', (size_t)n);
  if (cr && cr + 1 < text + n && cr[1] != '\n') {
    pb_error_set("%s:%lld: carriage return inside a line: line ends must be LF or CRLF, not CR alone", ctx->path,
                 (long long)r->line);
    r->status = PB_FAIL;
    return;
  }
  r->ctx->csv_lines++;
  if (r->row_line == 0 && !pb_ingest__blank(text, n)) {
    r->row_line = r->line;
    r->row_off = r->line_off;
  }
  if (csv_parse(p, text, (size_t)n, pb_ingest__on_field, pb_ingest__on_row, r) != (size_t)n && r->status == PB_OK) {
    if (csv_error(p) == CSV_EPARSE)
      pb_error_set("%s:%lld: malformed CSV: misplaced quote", ctx->path, (long long)r->line);
    else
      pb_error_set("%s:%lld: CSV parser: %s", ctx->path, (long long)r->line, csv_strerror(csv_error(p)));
    r->status = PB_FAIL;
  }
}

/* A stream's lines from one block of it at a time, handed out in place:
 * getline would copy each into its own buffer. */
struct pb_ingest__lines {
  FILE *fp;
  char *buf;
  size_t cap, beg, end;    /* the bytes not yet handed out are buf[beg, end) */
  int eof;
};

/* The next line (with its LF; the last may have none) into *line, valid
 * until the next call: its length, 0 at the end, -1 on a read error. */
static ssize_t pb_ingest__next_line(struct pb_ingest__lines *l, char **line)
{
  for (;;) {
    /* (no block yet: buf is NULL, which memchr and memmove must not get even for 0 bytes) */
    const char *nl = l->end > l->beg ? memchr(l->buf + l->beg, '\n', l->end - l->beg) : NULL;
    if (nl || (l->eof && l->end > l->beg)) {
      const size_t n = nl ? (size_t)(nl - (l->buf + l->beg)) + 1 : l->end - l->beg;
      *line = l->buf + l->beg;
      l->beg += n;
      return (ssize_t)n;
    }
    if (l->eof) return 0;
    /* the part of a line left to the front, then more of the stream: whole 64 KiB, which stdio reads with no
     * copy through its own buffer (a multiple of it) */
    if (l->beg > 0) {
      memmove(l->buf, l->buf + l->beg, l->end - l->beg);
      l->end -= l->beg;
      l->beg = 0;
    }
    if (l->cap - l->end < PB_INGEST__READ_BUFFER / 2) {
      l->cap = 2 * l->cap > PB_INGEST__READ_BUFFER ? 2 * l->cap : PB_INGEST__READ_BUFFER;
      l->buf = pb_realloc(l->buf, l->cap);
    }
    const size_t got = fread(l->buf + l->end, 1, (l->cap - l->end) & ~(size_t)0xFFFF, l->fp);
    if (got == 0 && ferror(l->fp)) return -1;
    l->eof = got == 0;
    l->end += got;
  }
}

int pb_ingest__read(struct pb_ingest__ctx *ctx, pb_ingest__row_fn on_row, off_t off0, off_t off1, int64_t line0)
{
  struct pb_ingest__reader r = {.ctx = ctx, .on_row = on_row, .status = PB_OK, .line = line0 - 1,
                                .wide = pb_clones_isa() >= 1};
  struct csv_parser p;
  char *line;
  ssize_t n;
  int parser = 0, ended = 0;
  FILE *spool, *fp = pb_ingest__open(ctx, off0, &spool);
  if (!fp) return PB_FAIL;
  struct pb_ingest__lines lines = {.fp = fp};
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) != 0) {
    pb_error_set("%s: cannot initialise the CSV parser", ctx->path);
    r.status = PB_FAIL;
    goto done;
  }
  parser = 1;
  r.next_off = off0;
  while (r.status == PB_OK) {
    /* a range ends before the first row that begins at or after its end */
    if (off1 > 0 && r.next_off >= off1 && r.row_line == 0 && r.n_field == 0) {
      ended = 1;
      break;
    }
    if ((n = pb_ingest__next_line(&lines, &line)) <= 0) break;
    if (spool && fwrite(line, 1, (size_t)n, spool) != (size_t)n) {
      pb_error_set("stdin: cannot write the copy that ingest reads twice (%s): %s", ctx->file->spool, strerror(errno));
      r.status = PB_FAIL;
      break;
    }
    r.line++;
    r.line_off = r.next_off;
    r.next_off += n;
    pb_ingest__line(&r, &p, line, n);
  }
  if (r.status == PB_OK && ferror(fp)) {
    pb_error_set("%s: read error: %s", ctx->path, strerror(errno));
    r.status = PB_FAIL;
  }
  /* csv_fini delivers a last row that has no line end */
  if (r.status == PB_OK && !ended && csv_fini(&p, pb_ingest__on_field, pb_ingest__on_row, &r) != 0 &&
      r.status == PB_OK) {
    pb_error_set("%s:%lld: malformed CSV: quoted field not closed at end of file", ctx->path,
                 (long long)(r.row_line ? r.row_line : r.line));
    r.status = PB_FAIL;
  }
done:
  if (parser) csv_free(&p);
  for (int i = 0; i < r.cap_field; i++) free(r.field[i]);
  free(r.field);
  free(r.fast);
  free(r.field_cap);
  free(lines.buf);
  return pb_ingest__close(ctx, fp, spool, r.status == PB_FAIL ? PB_FAIL : PB_OK);
}

off_t pb_ingest__line_start(const struct pb_ingest__ctx *ctx, off_t at, off_t end)
{
  if (at <= 0) return 0;
  const char *path = ctx->file->spool ? ctx->file->spool : ctx->file->path;
  char buf[4096];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return -1;
  off_t pos = at - 1, found = end; /* a line starts at at when the byte before it ends one */
  while (pos < end) {
    const ssize_t n = pread(fd, buf, sizeof buf, pos);
    if (n <= 0) {
      found = n < 0 ? -1 : end;
      break;
    }
    const char *nl = memchr(buf, '\n', (size_t)n);
    if (nl) {
      found = pos + (nl - buf) + 1;
      break;
    }
    pos += n;
  }
  close(fd);
  return found < end ? found : end;
}

int64_t pb_ingest__count_lines(const struct pb_ingest__ctx *ctx, off_t off0, off_t off1)
{
  const char *path = ctx->file->spool ? ctx->file->spool : ctx->file->path;
  static const size_t size = 1 << 20;
  char *buf = pb_malloc(size);
  int64_t lines = 0;
  int fd = open(path, O_RDONLY);
  for (off_t pos = off0; fd >= 0 && pos < off1;) {
    const size_t want = off1 - pos < (off_t)size ? (size_t)(off1 - pos) : size;
    const ssize_t n = pread(fd, buf, want, pos);
    if (n <= 0) {
      lines = -1;
      break;
    }
    for (const char *p = buf, *end = buf + n; (p = memchr(p, '\n', (size_t)(end - p))); p++) lines++;
    pos += n;
  }
  if (fd < 0) lines = -1;
  else close(fd);
  free(buf);
  return lines;
}

/* Where an earlier row was, for a message about the current one. */
const char *pb_ingest__where(const struct pb_ingest__ctx *ctx, int32_t file, int64_t line, char *buf, size_t n)
{
  if (file < 0) snprintf(buf, n, "in %s", ctx->store_name);
  else if (file == ctx->cur) snprintf(buf, n, "at line %lld", (long long)line);
  else snprintf(buf, n, "at line %lld of %s", (long long)line, ctx->files[file].name);
  return buf;
}

int pb_ingest__decimal(const char *s, float *out)
{
  return pb_ingest__decimal_in(s, out);
}

int pb_ingest__number_slow(const struct pb_ingest__ctx *ctx, int64_t line, const char *col, const char *s, int prob,
                           float *out)
{
  float v;
  const int exact = pb_ingest__decimal_in(s, &v);
  /* strtof's result, ERANGE on underflow included (the float is stored) */
  if (!exact && pb_parse_csv_float(s, &v) != PB_OK) {
    pb_error_set("%s:%lld: column '%s': not a number: '%s'", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  if (strpbrk(s, "xX")) {
    pb_error_set("%s:%lld: column '%s': hexadecimal number '%s' not accepted (write it in decimal)", ctx->path,
                 (long long)line, col, s);
    return PB_FAIL;
  }
  if (v == 0.0f && strpbrk(s, "123456789") && strpbrk(s, "123456789") < s + strcspn(s, "eE")) {
    pb_error_set("%s:%lld: column '%s': %s is not zero but underflows to 0 as a float32 (smallest positive: "
                 "1.4e-45)", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  if (v == 0.0f) v = 0.0f; /* -0 is stored (and exported) as 0 */
  if (!isfinite(v)) {
    pb_error_set("%s:%lld: column '%s': not finite: '%s'", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  if (prob && (v < 0.0f || v > 1.0f)) {
    pb_error_set("%s:%lld: column '%s': %s outside [0, 1]", ctx->path, (long long)line, col, s);
    return PB_FAIL;
  }
  *out = v;
  return PB_OK;
}
