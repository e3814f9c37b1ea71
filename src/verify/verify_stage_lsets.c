/* `pairbound verify` under label sets (seed 000 Appendix J.1; docs/verify.md,
 * "Label sets"): on a store with sets, every covered cell of a source with
 * sets is enumerated once more under record-attached set correctness, from
 * the stored predictions and the raw sets whatever `labels` chose, so the
 * table is the same under both conventions (under single they are the
 * stage's own cells; under set, whose predictions are the set map, they are
 * read again).  Per class: Theorem 1 (L and dM_k equal at Ik and I5) and
 * whether H is strictly narrower at I5; per source the counts, summed
 * exactly onto rank 0. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/cells.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/lsets.h"
#include "pairbound/stage.h"
#include "verify_stage_internal.h"

/* One class of the matched records under set correctness: its records in (label, index) order at li[0 .. ny),
 * mapped predictions p0, p1 (pb_lsets_pred), enumerated into *q. */
static int pb_verify__lsets_class(const struct pb_cell_view *d, const struct pb_verify__li *li, int32_t ny,
                                  const int32_t *p0m, const int32_t *p1m, const int32_t *src, struct pb_verify_class *q)
{
  uint8_t c0[PB_VERIFY_MAX_N], z0[PB_VERIFY_MAX_N], c1[PB_VERIFY_MAX_N], z1[PB_VERIFY_MAX_N];
  int32_t p0[PB_VERIFY_MAX_N], p1[PB_VERIFY_MAX_N];
  float m0[PB_VERIFY_MAX_N], m1[PB_VERIFY_MAX_N];
  const int32_t y = li[0].label;
  for (int32_t a = 0; a < ny; a++) {
    const int32_t j = li[a].idx, i = src[j];
    p0[a] = p0m[j], p1[a] = p1m[j];
    c0[a] = p0[a] == y, c1[a] = p1[a] == y;
    z0[a] = d->s0[i] >= d->tau, z1[a] = d->s1[i] >= d->tau;
    m0[a] = d->m0[i], m1[a] = d->m1[i];
  }
  const struct pb_verify_records r = {ny, c0, z0, c1, z1, p0, p1, m0, m1, NULL};
  return pb_verify_class_enumerate(&r, q, NULL);
}

void pb_verify__lsets_cell(const struct pb_cell_view *d, const int64_t *off, const int32_t *ids, int32_t n_classes,
                           int32_t max_class, struct pb_verify__cellstate *cs, struct pb_verify_class *cls,
                           int64_t out[PB_VLS_N])
{
  memset(out, 0, PB_VLS_N * sizeof *out);
  const size_t cap = (size_t)(d->n > 0 ? d->n : 1);
  int32_t *lab = pb_malloc(cap * sizeof *lab), *p0 = pb_malloc(cap * sizeof *p0), *p1 = pb_malloc(cap * sizeof *p1);
  int32_t *src = pb_malloc(cap * sizeof *src);
  struct pb_verify__li *li = pb_malloc(cap * sizeof *li);
  /* the matched records (a nonempty set), their predictions under set correctness */
  int32_t m = 0;
  for (int32_t i = 0; i < d->n; i++) {
    const int32_t k = (int32_t)(off[i + 1] - off[i]), *S = ids + off[i];
    if (k == 0) continue;
    lab[m] = d->label[i], src[m] = i;
    p0[m] = pb_lsets_pred(S, k, d->label[i], d->pred0[i], n_classes);
    p1[m] = pb_lsets_pred(S, k, d->label[i], d->pred1[i], n_classes);
    m++;
  }
  pb_verify__group(lab, m, li);
  out[PB_VLS_CELLS] = m > 0;
  for (int32_t beg = 0, end; beg < m; beg = end) {
    for (end = beg + 1; end < m && li[end].label == li[beg].label; end++) continue;
    const int32_t ny = end - beg, y = li[beg].label;
    out[PB_VLS_CLASSES]++;
    if (ny > max_class) {
      out[PB_VLS_SKIPPED]++;
      continue;
    }
    struct pb_verify_class qq, *q = cls ? &cls[out[PB_VLS_ENUMERATED]] : &qq;
    if (pb_verify__lsets_class(d, li + beg, ny, p0, p1, src, q) != 0) {
      pb_verify__failf(cs, y, "label sets: class of %d records cannot be enumerated", (int)ny);
      continue;
    }
    out[PB_VLS_ENUMERATED]++;
    out[PB_VLS_NARROWER] += pb_verify__h_narrower(q);
    if (pb_verify__class_thm1(q)) out[PB_VLS_AGREE]++;
    else
      pb_verify__failf(cs, y, "Theorem 1 violated under label sets (set correctness): L at Ik [%d, %d], at I5 [%d, %d]; "
                       "dM_k numerator at Ik [%.17g, %.17g], at I5 [%.17g, %.17g]", (int)q->L[PB_VERIFY_IK][0],
                       (int)q->L[PB_VERIFY_IK][1], (int)q->L[PB_VERIFY_I5][0], (int)q->L[PB_VERIFY_I5][1],
                       q->D[PB_VERIFY_IK][0], q->D[PB_VERIFY_IK][1], q->D[PB_VERIFY_I5][0], q->D[PB_VERIFY_I5][1]);
  }
  free(lab), free(p0), free(p1), free(src), free(li);
}

int pb_verify__lsets(const struct pb_stage *st, const struct pb_verify_options *opt, const struct pb_cell_block *loaded,
                     const uint8_t *cov, const float *tau, double *recs, char *const *fail, char *const *where,
                     int64_t **out)
{
  const struct pb_meta *meta = st->meta;
  *out = NULL;
  if (!pb_store_has_lsets(meta)) return PB_OK;
  const int64_t n = st->last - st->first, N = (int64_t)meta->n_sources * PB_VLS_N;
  /* only the covered cells of sources with sets are read, with their stored predictions */
  uint8_t *want = pb_dist_lsets_cells(meta, st->first, st->last, cov);
  /* under labels = set the stage's predictions are the set map: the stored ones are read again */
  struct pb_cell_block own;
  const struct pb_cell_block *bp = loaded;
  int status = PB_OK;
  if (pb_store_labels_mode(st->store) == PB_LABELS_SET) {
    status = pb_cells_load_selected(st->store, st->first, st->last,
                                    PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE | PB_FIELD_ORIGINAL, want, &own);
    bp = &own;
  }
  int64_t *tot = pb_calloc((size_t)N, sizeof *tot), *rec = pb_calloc((size_t)(n > 0 ? n : 1) * PB_VLS_N, sizeof *rec);
  for (int32_t s = 0; s < meta->n_sources && status == PB_OK; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (!pb_lsets_source_has(src)) continue;
    int64_t *off;
    int32_t *ids;
    pb_lsets_eval(src, &off, &ids);
#pragma omp parallel for schedule(dynamic)
    for (int64_t c = 0; c < n; c++) {
      const struct pb_cell_data *d = &bp->cells[c];
      if (!want[c] || d->ref.source != s) continue;
      const struct pb_cell_view v = pb_cells_view(meta, d, tau[c]);
      struct pb_verify__cellstate cs = {recs + c * PB_VF_N, fail[c], where[c]};
      pb_verify__lsets_cell(&v, off, ids, src->n_classes, opt->max_class, &cs, NULL, rec + c * PB_VLS_N);
    }
    free(off);
    free(ids);
  }
  /* integer sums: exact in any order, the same for any ranks and threads */
  for (int64_t c = 0; c < n && status == PB_OK; c++)
    for (int k = 0; k < PB_VLS_N; k++) tot[(size_t)bp->cells[c].ref.source * PB_VLS_N + k] += rec[c * PB_VLS_N + k];
  free(rec);
  free(want);
  if (status == PB_OK && bp == &own) pb_cells_free(&own);
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK)
    status = pb_comm_reduce(st->rank == 0 ? MPI_IN_PLACE : tot, tot, (int)N, MPI_INT64_T, MPI_SUM, 0, st->comm);
  if (status == PB_OK) *out = tot;
  else free(tot);
  return status;
}
