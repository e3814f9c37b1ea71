/* `pairbound world render|decode|prompts`: memos of a CASES file (the
 * renderer r, one JSON line per case), the decoder h over a MEMOS file, and
 * the prompt set a language model is asked (seed 002 Section 3.4, Appendix
 * A.2, B).  Every rank reads its input, formats a contiguous range of the
 * records in parallel blocks and writes them at its offset
 * (pb_tsv_open/write/commit), so every output is identical for any number of
 * ranks and threads.  docs/exact.md, "Memos" and "Prompts". */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "pairbound/world.h"
#include "pairbound/world_stage.h"
#include "world_stage_internal.h"

#define PB_WORLD_MEMO_BLOCK 256   /* records formatted per parallel block */

/* ------------------------------------------------------------ JSON */

/* @p s as a JSON string (quotes, backslashes and control characters escaped). */
static void pb_world__json(struct pb_text *t, const char *s)
{
  pb_text_append(t, "\"", 1);
  for (const char *p = s; *p; p++) {
    const unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') pb_text_printf(t, "\\%c", c);
    else if (c == '\n') pb_text_append(t, "\\n", 2);
    else if (c < 0x20) pb_text_printf(t, "\\u%04x", c);
    else pb_text_append(t, p, 1);
  }
  pb_text_append(t, "\"", 1);
}

static const char *pb_world__ws(const char *s) { return s + strspn(s, " \t\r\n"); }

/* A JSON string at @p s into @p out (escapes decoded; \u of code points below 128 only); past it, or NULL. */
static const char *pb_world__json_string(const char *s, struct pb_text *out)
{
  if (*s++ != '"') return NULL;
  for (; *s && *s != '"'; s++) {
    if (*s != '\\') {
      pb_text_append(out, s, 1);
      continue;
    }
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e = strchr(from, *++s);
    if (*s && e) {
      pb_text_append(out, to + (e - from), 1);
      continue;
    }
    char hex[5] = {0};
    unsigned v;
    if (*s != 'u' || strlen(s) < 5 || strspn(s + 1, "0123456789abcdefABCDEF") < 4) return NULL;
    memcpy(hex, s + 1, 4);
    if (sscanf(hex, "%x", &v) != 1 || v == 0 || v > 0x7f) return NULL;
    char c = (char)v;
    pb_text_append(out, &c, 1);
    s += 4;
  }
  return *s == '"' ? s + 1 : NULL;
}

/* One MEMOS record: {"case": N, "world": "...", "level": "...", "residual_scale": S, "memo": "..."} with keys in
 * any order, each once (others ignored; residual_scale optional, 1). PB_FAIL with the reason. */
struct pb_world__record {
  uint64_t index;
  char world[16], level[16];
  double scale;
  struct pb_text memo;
};

static int pb_world__record_parse(const char *line, struct pb_world__record *r)
{
  static const char *const keys[5] = {"case", "world", "level", "memo", "residual_scale"};
  struct pb_text key = {0}, val = {0};
  int seen = 0, named = 0, status = PB_FAIL;
  const char *s = pb_world__ws(line), *twice = NULL;
  r->scale = 1.0;
  r->memo.len = 0;
  if (*s++ != '{') goto bad;
  for (s = pb_world__ws(s); *s != '}';) {
    key.len = val.len = 0;
    if (!(s = pb_world__json_string(s, &key)) || *(s = pb_world__ws(s)) != ':') goto bad;
    s = pb_world__ws(s + 1);
    if (*s == '"') {
      if (!(s = pb_world__json_string(s, &val))) goto bad;
    } else {
      size_t n = strcspn(s, ",} \t\r\n");
      pb_text_append(&val, s, n);
      s += n;
    }
    const char *k = key.buf ? key.buf : "", *v = val.buf ? val.buf : "";
    int b = 0;   /* a key of ours given twice makes the record ambiguous */
    while (b < 5 && strcmp(k, keys[b])) b++;
    if (b < 5 && (named >> b & 1)) {
      twice = keys[b];
      goto bad;
    }
    named |= b < 5 ? 1 << b : 0;
    if (!strcmp(k, "case")) seen |= 1 * (pb_parse_uint(v, UINT64_MAX, &r->index) == PB_OK);
    else if (!strcmp(k, "world")) seen |= 2, snprintf(r->world, sizeof r->world, "%s", v);
    else if (!strcmp(k, "level")) seen |= 4, snprintf(r->level, sizeof r->level, "%s", v);
    else if (!strcmp(k, "memo")) seen |= 8, pb_text_printf(&r->memo, "%s", v);
    else if (!strcmp(k, "residual_scale") && pb_parse_double(v, 0, HUGE_VAL, 0, &r->scale) != PB_OK) goto bad;
    s = pb_world__ws(s);
    if (*s == ',') s = pb_world__ws(s + 1);
    else if (*s != '}') goto bad;
  }
  if (*pb_world__ws(s + 1) != '\0') goto bad;
  status = seen == 15 ? PB_OK : PB_FAIL;
bad:
  if (twice) pb_error_set("key \"%s\" given twice", twice);
  else if (status != PB_OK)
    pb_error_set("expected one JSON object with \"case\" (an integer), \"world\", \"level\" and \"memo\"");
  pb_text_free(&key);
  pb_text_free(&val);
  return status;
}

/* ------------------------------------------------------------ blocks of records */

/* Records [lo, hi) formatted by @p fmt in parallel blocks, written in order (a batch of blocks at a time) into
 * @p out, or dropped when it is NULL. */
typedef void (*pb_world__fmt_fn)(const void *ctx, int64_t i, struct pb_text *t);
static void pb_world__emit(struct pb_tsv *out, int64_t lo, int64_t hi, pb_world__fmt_fn fmt, const void *ctx)
{
  enum { BATCH = 32 };
  struct pb_text part[BATCH];
  for (int64_t b = lo; b < hi; b += (int64_t)BATCH * PB_WORLD_MEMO_BLOCK) {
    int nb = (int)((hi - b + PB_WORLD_MEMO_BLOCK - 1) / PB_WORLD_MEMO_BLOCK);
    if (nb > BATCH) nb = BATCH;
    memset(part, 0, sizeof part);
#pragma omp parallel for schedule(dynamic, 1)
    for (int k = 0; k < nb; k++) {
      int64_t first = b + (int64_t)k * PB_WORLD_MEMO_BLOCK, last = first + PB_WORLD_MEMO_BLOCK;
      for (int64_t i = first; i < last && i < hi; i++) fmt(ctx, i, &part[k]);
    }
    for (int k = 0; k < nb; k++) {
      if (out) pb_tsv_write(out, part[k].buf, part[k].len);
      pb_text_free(&part[k]);
    }
  }
}

/* This rank's contiguous share [*lo, *hi) of @p n records. */
static void pb_world__share(MPI_Comm comm, int64_t n, int64_t *lo, int64_t *hi)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  *lo = n * rank / size;
  *hi = n * (rank + 1) / size;
}

/* ------------------------------------------------------------ render */

static void pb_world__memo_record(const void *ctx, int64_t i, struct pb_text *t)
{
  const struct pb_world_cases *c = ctx;
  struct pb_text memo = {0};
  char scale[40];
  pb_world_render(c->world, c->x + i * c->na, &memo);
  pb_text_format_double(pb_world_residual_scale(c->world), scale);
  pb_text_printf(t, "{\"case\":%llu,\"world\":\"%s\",\"level\":\"%s\",\"residual_scale\":%s,\"memo\":",
                 (unsigned long long)c->index[i], pb_world_name(c->world), pb_world_level_name(c->world), scale);
  pb_world__json(t, memo.buf);
  pb_text_printf(t, "}\n");
  pb_text_free(&memo);
}

int pb_world__render(const char *cases, const char *output, MPI_Comm comm)
{
  struct pb_world_cases c;
  struct pb_tsv *out = NULL;
  int64_t lo, hi;
  int status = pb_error_agree(comm, pb_world_cases_read(cases, &c));
  if (status == PB_OK) status = pb_tsv_open(comm, output, "", &out);
  if (status == PB_OK) {
    pb_world__share(comm, c.n, &lo, &hi);
    pb_world__emit(out, lo, hi, pb_world__memo_record, &c);
    status = pb_tsv_commit(out);
  }
  pb_world_cases_free(&c);
  return status;
}

/* ------------------------------------------------------------ decode */

/* Every line of a MEMOS file (every rank reads it). */
struct pb_world__lines {
  int64_t n, cap;
  char **line;
};

static int pb_world__line_keep(void *ctx, const char *path, int64_t line, char *text)
{
  (void)path, (void)line;
  struct pb_world__lines *l = ctx;
  if (l->n == l->cap) l->line = pb_realloc(l->line, sizeof *l->line * (size_t)(l->cap = l->cap ? 2 * l->cap : 1024));
  l->line[l->n++] = pb_strdup(text);
  return PB_OK;
}

struct pb_world__decoding {
  const char *path;
  struct pb_world *world;
  struct pb_world__lines lines;
  struct pb_error_first *failed;   /* this rank's lowest failing record and its reason */
};

/* Record i: parse, check it names the file's world, decode its memo; a row of the decoded TSV. */
static void pb_world__decode_record(const void *ctx, int64_t i, struct pb_text *t)
{
  const struct pb_world__decoding *d = ctx;
  struct pb_world__record r = {0};
  double x[PB_WORLD_MEMO_MAX_ATTRS], p;
  int na = pb_world_n_attrs(d->world), ok = pb_world__record_parse(d->lines.line[i], &r) == PB_OK;
  if (ok && (strcmp(r.world, pb_world_name(d->world)) || strcmp(r.level, pb_world_level_name(d->world)) ||
             r.scale != pb_world_residual_scale(d->world))) {
    pb_error_set("world %s at %s (residual scale %g) is not the file's first record's", r.world, r.level, r.scale);
    ok = 0;
  }
  if (ok && pb_world_decode(d->world, r.memo.buf, x) == PB_OK && pb_world_pstar(d->world, x, &p) == PB_OK) {
    pb_world__put_uint(t, r.index, 0);
    for (int j = 0; j < na; j++) pb_world__cell(t, x[j]);
    pb_world__cell(t, p);
    pb_text_append(t, "\n", 1);
  } else {
    char why[PB_ERROR_MAX];
    snprintf(why, sizeof why, "%s", pb_error_message());
    if (ok) pb_error_set("%s:%lld: case %llu: %s", d->path, (long long)i + 1, (unsigned long long)r.index, why);
    else pb_error_set("%s:%lld: %s", d->path, (long long)i + 1, why);
    pb_error_first_record(d->failed, i);
  }
  pb_text_free(&r.memo);
}

/* The file's world from its first record. */
static int pb_world__decode_open(struct pb_world__decoding *d)
{
  struct pb_world__record r = {0};
  int status = d->lines.n > 0 ? pb_world__record_parse(d->lines.line[0], &r) : PB_FAIL;
  if (d->lines.n == 0) pb_error_set("no memos");
  if (status == PB_OK) status = pb_world_open(r.world, r.level, r.scale, &d->world);
  if (status != PB_OK) {
    char why[PB_ERROR_MAX];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s:1: %s", d->path, why);
  }
  pb_text_free(&r.memo);
  return status;
}

/* Decoded rows of this rank's records into @p out (NULL: only checked); the first failing record's reason. */
static int pb_world__decode_rows(struct pb_world__decoding *d, int64_t lo, int64_t hi, struct pb_tsv *out)
{
  struct pb_error_first failed;
  pb_error_first_init(&failed);
  d->failed = &failed;
  pb_world__emit(out, lo, hi, pb_world__decode_record, d);
  return pb_error_first_status(&failed);
}

int pb_world__decode(const char *memos, const char *output, MPI_Comm comm)
{
  struct pb_world__decoding d = {.path = memos};
  struct pb_tsv *out = NULL;
  int64_t lo, hi;
  int rank;
  MPI_Comm_rank(comm, &rank);
  int status = pb_output_lines_each(memos, "MEMOS file", pb_world__line_keep, &d.lines);
  if (status == PB_OK) status = pb_world__decode_open(&d);
  status = pb_error_agree(comm, status);
  if (status == PB_OK && output) {
    struct pb_text head = {0};
    pb_world__columns_header(d.world, "decoded", d.lines.n, &head);
    pb_text_printf(&head, "\tp_star\n");
    status = pb_tsv_open(comm, output, rank == 0 ? head.buf : "", &out);
    pb_text_free(&head);
  }
  if (status == PB_OK) {
    pb_world__share(comm, d.lines.n, &lo, &hi);
    /* a failed record leaves no row: the file is not committed then */
    status = pb_error_agree(comm, pb_world__decode_rows(&d, lo, hi, out));
    if (out && status == PB_OK) status = pb_tsv_commit(out);
    else if (out) pb_tsv_abort(out);
  }
  if (status == PB_OK && rank == 0 && !output)
    printf("decoded %lld memos of %s at %s: every visible attribute read back\n", (long long)d.lines.n,
           pb_world_name(d.world), pb_world_level_name(d.world));
  for (int64_t i = 0; i < d.lines.n; i++) free(d.lines.line[i]);
  free(d.lines.line);
  if (d.world) pb_world_free(d.world);
  return status;
}

/* ------------------------------------------------------------ prompts */

/* The system message of seed 002 Appendix A.2, the class names of the world put in. */
static void pb_world__system(const struct pb_world_question *q, struct pb_text *t)
{
  pb_text_printf(t,
                 "Estimate P(outcome=%s) for the test case. The positive class is %s (the question's true criterion); "
                 "the negative class is %s (the false criterion). A probability of 1 means certainly %s; 0 means "
                 "certainly %s. Even when %s is more likely, return the probability of %s, not confidence in your "
                 "chosen class. Return exactly one line: probability_positive: <number from 0 to 1>. Do not use "
                 "percentages.",
                 q->positive, q->positive, q->negative, q->positive, q->negative, q->negative, q->positive);
}

struct pb_world__prompting {
  const struct pb_world_cases *c;
  int shots;
  char **demo;           /* [shots] rendered memos of rows 0..shots-1 */
  int *demo_y;
  struct pb_text system, criteria, examples;   /* the same in every record: formatted once */
};

static void pb_world__prompt_record(const void *ctx, int64_t i, struct pb_text *t)
{
  const struct pb_world__prompting *p = ctx;
  const struct pb_world_question *q = pb_world_question(p->c->world);
  struct pb_text memo = {0}, user = {0};
  pb_world_render(p->c->world, p->c->x + i * p->c->na, &memo);
  pb_text_printf(t, "{\"case\":%llu,\"world\":\"%s\",\"level\":\"%s\",\"shots\":%d,\"system\":",
                 (unsigned long long)p->c->index[i], pb_world_name(p->c->world), pb_world_level_name(p->c->world),
                 p->shots);
  pb_text_append(t, p->system.buf, p->system.len);
  pb_text_printf(t, ",\"question\":");
  pb_world__json(t, q->question);
  pb_text_append(t, p->criteria.buf, p->criteria.len);
  pb_text_append(t, p->examples.buf, p->examples.len);
  pb_text_printf(t, ",\"memo\":");
  pb_world__json(t, memo.buf);
  /* the user message: question, criteria, the labeled examples, the test memo */
  pb_text_printf(&user, "Question: %s\nClasses: %s (positive): %s; %s (negative): %s.\n\n", q->question, q->positive,
                 q->positive_criterion, q->negative, q->negative_criterion);
  if (p->shots == 0) pb_text_printf(&user, "Labeled examples: none.\n\n");
  else pb_text_printf(&user, "Labeled examples: %d memos with their realized outcomes.\n\n", p->shots);
  for (int k = 0; k < p->shots; k++)
    pb_text_printf(&user, "Example %d (outcome: %s)\n%s\n", k + 1, p->demo_y[k] ? q->positive : q->negative,
                   p->demo[k]);
  pb_text_printf(&user, "Test case\n%s", memo.buf);
  pb_text_printf(t, ",\"user\":");
  pb_world__json(t, user.buf);
  pb_text_printf(t, "}\n");
  pb_text_free(&memo);
  pb_text_free(&user);
}

/* The demonstrations: rows 0..shots-1 of the cases' stream (A.2, A.5: nested prefixes of one training pool). */
static int pb_world__prompting_init(const struct pb_world_cases *c, int shots, struct pb_world__prompting *p)
{
  const struct pb_world_question *q = pb_world_question(c->world);
  memset(p, 0, sizeof *p);
  p->c = c;
  p->shots = shots;
  for (int64_t i = 0; i < c->n; i++)
    if (c->index[i] < (uint64_t)shots) {
      pb_error_set("demonstrations are rows 0..%d of the cases' stream, which case %llu is among: draw the cases "
                   "after them (world sample --first)", shots - 1, (unsigned long long)c->index[i]);
      return PB_FAIL;
    }
  struct pb_text sys = {0};
  pb_world__system(q, &sys);
  pb_world__json(&p->system, sys.buf);
  pb_text_free(&sys);
  pb_text_printf(&p->criteria, ",\"classes\":{\"positive\":\"%s\",\"negative\":\"%s\"},\"criteria\":{\"%s\":",
                 q->positive, q->negative, q->positive);
  pb_world__json(&p->criteria, q->positive_criterion);
  pb_text_printf(&p->criteria, ",\"%s\":", q->negative);
  pb_world__json(&p->criteria, q->negative_criterion);
  pb_text_printf(&p->criteria, "}");
  p->demo = pb_calloc((size_t)shots + 1, sizeof *p->demo);
  p->demo_y = pb_calloc((size_t)shots + 1, sizeof *p->demo_y);
  double x[PB_WORLD_MEMO_MAX_ATTRS], ps;
  pb_text_printf(&p->examples, ",\"demonstrations\":[");
  for (int k = 0; k < shots; k++) {
    struct pb_text m = {0};
    pb_world_draw(c->world, c->seed, (uint32_t)c->stream, (uint64_t)k, x, &p->demo_y[k], &ps);
    pb_world_render(c->world, x, &m);
    p->demo[k] = m.buf;
    pb_text_printf(&p->examples, "%s{\"case\":%d,\"outcome\":\"%s\",\"memo\":", k ? "," : "", k,
                   p->demo_y[k] ? q->positive : q->negative);
    pb_world__json(&p->examples, m.buf);
    pb_text_printf(&p->examples, "}");
  }
  pb_text_printf(&p->examples, "]");
  return PB_OK;
}

static void pb_world__prompting_free(struct pb_world__prompting *p)
{
  for (int k = 0; p->demo && k < p->shots; k++) free(p->demo[k]);
  free(p->demo);
  free(p->demo_y);
  pb_text_free(&p->system);
  pb_text_free(&p->criteria);
  pb_text_free(&p->examples);
}

int pb_world__prompts(const char *cases, const char *output, int shots, MPI_Comm comm)
{
  struct pb_world_cases c;
  struct pb_world__prompting p = {0};
  struct pb_tsv *out = NULL;
  int64_t lo, hi;
  int status = pb_world_cases_read(cases, &c);
  if (status == PB_OK) status = pb_world__prompting_init(&c, shots, &p);
  status = pb_error_agree(comm, status);
  if (status == PB_OK) status = pb_tsv_open(comm, output, "", &out);
  if (status == PB_OK) {
    pb_world__share(comm, c.n, &lo, &hi);
    pb_world__emit(out, lo, hi, pb_world__prompt_record, &p);
    status = pb_tsv_commit(out);
  }
  pb_world__prompting_free(&p);
  pb_world_cases_free(&c);
  return status;
}
