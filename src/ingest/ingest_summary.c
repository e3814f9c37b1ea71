/* The optional per-record summary columns `entropy` and `collision` of a CSV
 * (docs/csv.md, "Per-record summaries"): their header columns, each row's
 * values and their rules.  Apart from ingest.c so that other optional
 * columns stay apart from these. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/probsum.h"
#include "ingest_internal.h"
#include "ingest_number.h"

static const char *const pb_ingest__sum_name[2] = {"entropy", "collision"};
static const int32_t pb_ingest__sum_bit[2] = {PB_SUMMARY_ENTROPY, PB_SUMMARY_COLLISION};

int *pb_ingest__summary_slot(struct pb_ingest__file *file, const char *name)
{
  for (int x = 0; x < 2; x++)
    if (strcmp(name, pb_ingest__sum_name[x]) == 0) return &file->sum_col[x];
  return NULL;
}

int pb_ingest__summary_header(struct pb_ingest__ctx *ctx, int64_t line, int earlier)
{
  int32_t have = 0;
  for (int x = 0; x < 2; x++)
    if (ctx->file->sum_col[x] >= 0) have |= pb_ingest__sum_bit[x];
  if (!earlier) {
    ctx->meta->summaries = have;
    return PB_OK;
  }
  for (int x = 0; x < 2; x++) {
    const int32_t b = pb_ingest__sum_bit[x];
    if ((have & b) == (ctx->meta->summaries & b)) continue;
    pb_error_set("%s:%lld: %s column '%s', but %s %s: every file needs the same summary columns", ctx->path,
                 (long long)line, have & b ? "a" : "no", pb_ingest__sum_name[x],
                 ctx->store_name ? ctx->store_name : ctx->files[0].name, ctx->meta->summaries & b ? "has one" :
                 "has none");
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_ingest__summary_values(struct pb_ingest__ctx *ctx, char **f, int64_t line, int32_t n_classes,
                              struct pb_ingest__rec *rec)
{
  const float *have[2] = {NULL, NULL};
  for (int x = 0; x < 2; x++) {
    const int col = ctx->file->sum_col[x];
    if (col < 0) continue;
    if (pb_ingest__number(ctx, line, pb_ingest__sum_name[x], f[col], 0, &rec->sum[x])) return PB_FAIL;
    have[x] = &rec->sum[x];
  }
  /* pass 1 without --classes does not know the class count yet: pass 2 checks every row with the final one */
  if ((!have[0] && !have[1]) || n_classes <= 0) return PB_OK;
  char why[160];
  const int32_t bad = pb_probsum_problem(have[0], have[1], rec->smax, rec->ptrue, ctx->tk_prob, ctx->meta->topk,
                                         n_classes, why, sizeof why);
  if (!bad) return PB_OK;
  const int x = bad == PB_SUMMARY_ENTROPY ? 0 : 1;
  pb_error_set("%s:%lld: column '%s': %s %s (docs/csv.md, \"Per-record summaries\")", ctx->path, (long long)line,
               pb_ingest__sum_name[x], f[ctx->file->sum_col[x]], why);
  return PB_FAIL;
}
