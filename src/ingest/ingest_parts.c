/* `pairbound ingest`, pass 1 of one file with threads where pass 1 in parts
 * with dictionaries of their own (ingest_dict.c) failed: the reader whose
 * messages count.
 *
 * The dictionaries grow in order of first appearance, which only a reader
 * in file order can follow; the checks of a row that need no dictionary (its
 * field count, names, classes against --classes, probabilities and their
 * consistency: most of the work) can be made anywhere.  So after the header
 * one task reads the file in order for the dictionaries, checking the
 * classes alone (pb_ingest__pass1_row with ints_only), while the other
 * threads check every row in parts of the file cut at line starts
 * (pb_ingest__check_row; both handlers are given by ingest.c).  A part is valid when every line before its
 * first refused row is plain (one line, one row: pass 2's rule); when one is
 * not, the rows are checked again in one piece on this thread.
 *
 * The error reported is the serial pass's: the first refused row of the
 * parts, when the dictionary reader got to that row (its own error, if any,
 * is at that row or later, and a row's own checks come before its
 * dictionary checks), with its line counted from the line ends before it
 * and its message made again by checking that row alone; otherwise the
 * dictionary reader's error.  stdin (read once), a file that is not a
 * regular file and one thread take the serial pass. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <omp.h>

#include "pairbound/error.h"
#include "ingest_internal.h"

/* Parts of a file per thread: the dictionary reader's thread takes the
 * parts left when it is done. */
#define PB_INGEST__PARTS_PER_THREAD 2

struct pb_ingest__piece {
  off_t off0, off1;
  int status;
  struct pb_ingest__ctx c;  /* the part's own copy of the context */
};

/* A copy of @p ctx for checking rows apart: its own scratch. */
static void pb_ingest__copy(const struct pb_ingest__ctx *ctx, struct pb_ingest__ctx *c)
{
  const size_t K = (size_t)ctx->meta->topk + 1;
  *c = *ctx;
  c->ints_only = 0;
  c->part_source = NULL;
  c->csv_lines = 0;
  c->fail_off = -1;
  c->tk_class = pb_malloc(K * sizeof *c->tk_class);
  c->tk_prob = pb_malloc(K * sizeof *c->tk_prob);
}

static void pb_ingest__uncopy(struct pb_ingest__ctx *c)
{
  free(c->tk_class);
  free(c->tk_prob);
  free(c->part_source);
}

/* Check the rows from @p data (line @p line0) to the end in one piece; on
 * a refused row, its line (else -1) and the message in *msg. */
static int64_t pb_ingest__check_all(const struct pb_ingest__ctx *ctx, pb_ingest__row_fn check, off_t data, int64_t line0,
                                    char **msg)
{
  struct pb_ingest__ctx c;
  int64_t line = -1;
  pb_ingest__copy(ctx, &c);
  if (pb_ingest__read(&c, check, data, 0, line0) != PB_OK) {
    *msg = pb_strdup(pb_error_message());
    if (c.fail_off >= 0) line = c.fail_line;
  }
  pb_ingest__uncopy(&c);
  return line;
}

/* The row at @p off (line @p line) checked alone: its message. */
static void pb_ingest__check_one(const struct pb_ingest__ctx *ctx, pb_ingest__row_fn check, off_t off, int64_t line)
{
  struct pb_ingest__ctx c;
  pb_ingest__copy(ctx, &c);
  if (pb_ingest__read(&c, check, off, off + 1, line) == PB_OK)
    pb_error_set("%s:%lld: file changed while it was being read", ctx->path, (long long)line);
  pb_ingest__uncopy(&c);
}

/* The parts' verdict: the line of their first refused row and where it
 * begins (*off), or -1: none, or (*redo set) they must be checked again in
 * one piece. */
static int64_t pb_ingest__parts_line(const struct pb_ingest__ctx *ctx, const struct pb_ingest__piece *pc, int n,
                                     off_t data, int64_t line0, off_t *off, int *redo)
{
  for (int p = 0; p < n; p++) {
    if (pc[p].c.csv_lines > 0 || (pc[p].status != PB_OK && pc[p].c.fail_off < 0)) break;
    if (pc[p].status == PB_OK) continue;
    const int64_t before = pb_ingest__count_lines(ctx, data, pc[p].c.fail_off);
    if (before < 0) break;
    *off = pc[p].c.fail_off;
    return line0 + before;
  }
  for (int p = 0; p < n; p++)
    if (pc[p].c.csv_lines > 0 || pc[p].status != PB_OK) *redo = 1;
  return -1;
}

/* The dictionary reader (@p row) and the parts (@p check) at once: rows
 * from @p data, line @p line0. */
static int pb_ingest__pass1_parts(struct pb_ingest__ctx *ctx, pb_ingest__row_fn row, pb_ingest__row_fn check,
                                  off_t data, off_t size, int64_t line0)
{
  const int n = PB_INGEST__PARTS_PER_THREAD * omp_get_max_threads();
  struct pb_ingest__piece *pc = pb_calloc((size_t)n, sizeof *pc);
  int redo = 0, b_status = PB_OK;
  char *b_msg = NULL, *a_msg = NULL;
  off_t a = data, a_off = -1;
  for (int p = 0; p < n; p++) {
    off_t b = p + 1 == n ? size : pb_ingest__line_start(ctx, data + (size - data) / n * (p + 1), size);
    if (b < 0) redo = 1;
    pc[p].off0 = a;
    pc[p].off1 = a = b > a ? b : a;
    pb_ingest__copy(ctx, &pc[p].c); /* before the dictionary reader changes ctx */
  }
  ctx->ints_only = 1;
#pragma omp parallel
#pragma omp single
  {
#pragma omp task shared(b_status, b_msg)
    {
      b_status = pb_ingest__read(ctx, row, data, 0, line0);
      if (b_status != PB_OK) b_msg = pb_strdup(pb_error_message());
    }
    for (int p = 0; p < n && !redo; p++)
#pragma omp task firstprivate(p)
      if (pc[p].off1 > pc[p].off0)
        pc[p].status = pb_ingest__read(&pc[p].c, check, pc[p].off0, pc[p].off1, line0);
  }
  ctx->ints_only = 0;
  int64_t a_line = redo ? -1 : pb_ingest__parts_line(ctx, pc, n, data, line0, &a_off, &redo);
  if (redo) a_line = pb_ingest__check_all(ctx, check, data, line0, &a_msg);
  int status = PB_FAIL;
  if (a_line >= 0 && (b_status == PB_OK || a_line <= ctx->last_line)) {
    if (a_msg) pb_error_set("%s", a_msg);
    else pb_ingest__check_one(ctx, check, a_off, a_line);
  } else if (b_status != PB_OK) {
    pb_error_set("%s", b_msg);
  } else if (a_msg) { /* only a file changed meanwhile gets here */
    pb_error_set("%s", a_msg);
  } else {
    status = PB_OK;
  }
  for (int p = 0; p < n; p++) pb_ingest__uncopy(&pc[p].c);
  free(pc);
  free(a_msg);
  free(b_msg);
  return status;
}

int pb_ingest__pass1_rows(struct pb_ingest__ctx *ctx, pb_ingest__row_fn row, pb_ingest__row_fn check)
{
  struct stat st;
  ctx->last_line = 0;
  if (omp_get_max_threads() < 2 || strcmp(ctx->file->path, "-") == 0 || stat(ctx->file->path, &st) != 0 ||
      !S_ISREG(st.st_mode))
    return pb_ingest__read(ctx, row, 0, 0, 1);
  /* the header: the row that begins at offset 0 (after blank lines, the
   * serial pass, which has handled no row yet) */
  if (pb_ingest__read(ctx, row, 0, 1, 1) != PB_OK) return PB_FAIL;
  if (!ctx->have_header) {
    ctx->csv_lines = 0;
    return pb_ingest__read(ctx, row, 0, 0, 1);
  }
  const off_t data = ctx->row_end;
  const int64_t head_lines = pb_ingest__count_lines(ctx, 0, data);
  if (head_lines < 0) {
    pb_error_set("%s: read error", ctx->path);
    return PB_FAIL;
  }
  return pb_ingest__pass1_parts(ctx, row, check, data, st.st_size, 1 + head_lines);
}
