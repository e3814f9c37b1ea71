/* Label sets in the store (docs/store.md, "Label sets"): a source's CSR pair
 * of datasets, written, read and compared here; their checksums are
 * store_digest.c's; what the stages make of them is pb_store_labels. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "core/h5io.h"
#include "store_internal.h"

void pb_store__lsets_copy(struct pb_source *dst, const struct pb_source *src)
{
  dst->lset_off = NULL;
  dst->lset_ids = NULL;
  if (!src->lset_off) return;
  const size_t n_off = (size_t)src->n_images + 1, n_ids = (size_t)src->lset_off[src->n_images];
  dst->lset_off = pb_malloc(n_off * sizeof *dst->lset_off);
  memcpy(dst->lset_off, src->lset_off, n_off * sizeof *dst->lset_off);
  dst->lset_ids = pb_malloc((n_ids ? n_ids : 1) * sizeof *dst->lset_ids);
  memcpy(dst->lset_ids, src->lset_ids, n_ids * sizeof *dst->lset_ids);
}

int pb_store__lsets_same(const struct pb_source *a, const struct pb_source *b)
{
  if (!a->lset_off || !b->lset_off) return !a->lset_off && !b->lset_off;
  const int64_t n = a->lset_off[a->n_images];
  return a->n_images == b->n_images && b->lset_off[b->n_images] == n &&
         memcmp(a->lset_off, b->lset_off, ((size_t)a->n_images + 1) * sizeof *a->lset_off) == 0 &&
         memcmp(a->lset_ids, b->lset_ids, (size_t)n * sizeof *a->lset_ids) == 0;
}

int pb_store__lsets_write(hid_t grp, const struct pb_source *src, int rank)
{
  if (!src->lset_off) return PB_OK;
  if (pb_h5_write_small(grp, PB_STORE_LSETS_OFF, H5T_STD_I64LE, H5T_NATIVE_INT64, (hsize_t)src->n_images + 1,
                        src->lset_off, rank) ||
      pb_h5_write_small(grp, PB_STORE_LSETS_IDS, H5T_STD_I32LE, H5T_NATIVE_INT32,
                        (hsize_t)src->lset_off[src->n_images], src->lset_ids, rank))
    return PB_FAIL;
  return PB_OK;
}

int pb_store__lsets_read(const struct pb_store *st, hid_t grp, struct pb_source *src)
{
  /* schema 3 and later; a store of an earlier schema has none */
  if (st->schema < 3 || H5Lexists(grp, PB_STORE_LSETS_OFF, H5P_DEFAULT) <= 0) return PB_OK;
  hsize_t n = 0, n_ids = 0;
  src->lset_off = pb_h5_read_small(grp, PB_STORE_LSETS_OFF, H5T_NATIVE_INT64, sizeof(int64_t), &n);
  if (!src->lset_off || n != (hsize_t)src->n_images + 1) return PB_FAIL;
  src->lset_ids = pb_h5_read_small(grp, PB_STORE_LSETS_IDS, H5T_NATIVE_INT32, sizeof(int32_t), &n_ids);
  /* the offsets' checksum comes after this read: an end offset that disagrees with the ids is refused here */
  if (!src->lset_ids || src->lset_off[0] != 0 || (hsize_t)src->lset_off[src->n_images] != n_ids) return PB_FAIL;
  return PB_OK;
}

int pb_store_has_lsets(const struct pb_meta *meta)
{
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (meta->sources[s].lset_off) return 1;
  return 0;
}

int pb_store_labels(struct pb_store *st, int mode)
{
  const int has = pb_store_has_lsets(&st->meta);
  if (mode == PB_LABELS_SET && !has) {
    pb_error_set("%s: --labels set, but the store has no label sets (docs/csv.md, column 'labels')", st->path);
    return PB_FAIL;
  }
  const int set = mode == PB_LABELS_SET || (mode == PB_LABELS_AUTO && has);
  if (set == st->lsets) return PB_OK;
  if (!set) { /* the matched cohort cannot be undone in memory: reopen the store instead */
    pb_error_set("%s: label sets already applied to this open store", st->path);
    return PB_FAIL;
  }
  st->lsets = 1;
  for (int32_t s = 0; s < st->meta.n_sources; s++) {
    struct pb_source *src = &st->meta.sources[s];
    for (int32_t i = 0; src->lset_off && i < src->n_images; i++)
      if (src->lset_off[i + 1] == src->lset_off[i]) src->split[i] = PB_SPLIT_NONE;
  }
  return PB_OK;
}

int pb_store_labels_mode(const struct pb_store *st) { return st->lsets ? PB_LABELS_SET : PB_LABELS_SINGLE; }

void pb_store__lsets_map(const struct pb_store *st, int32_t src, struct pb_rows *d)
{
  const struct pb_source *s = &st->meta.sources[src];
  if (!st->lsets || !s->lset_off || !d->pred) return;
  const int64_t n = (int64_t)d->n_rows * s->n_images;
  /* the stored predictions stay beside the mapped ones: a class identity (screen's probability lookups) */
  d->pred_orig = pb_realloc(d->pred_orig, (size_t)(n > 0 ? n : 1) * sizeof *d->pred_orig);
  memcpy(d->pred_orig, d->pred, (size_t)n * sizeof *d->pred);
#pragma omp parallel for schedule(static) if (n >= PB_STORE_CHECK_THREADS)
  for (int32_t r = 0; r < d->n_rows; r++) {
    int32_t *p = &d->pred[(size_t)r * s->n_images];
    for (int32_t i = 0; i < s->n_images; i++) {
      int32_t k;
      const int32_t *ids = pb_lsets_of(s, i, &k);
      /* an image without a set is outside the analysis (PB_SPLIT_NONE): its records stay as stored */
      if (k > 0) p[i] = pb_lsets_pred(ids, k, s->labels[i], p[i], s->n_classes);
    }
  }
}

int pb_store__lsets_key(const struct pb_store *st, int fields)
{
  return st->lsets && !(fields & PB_FIELD_ORIGINAL) ? fields | (PB_FIELD_ORIGINAL << 1) : fields;
}
