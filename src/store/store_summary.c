/* The optional per-record summaries `entropy` and `collision` (docs/store.md,
 * "Per-record summaries"): which record datasets a store has, their
 * creation, and whether a store holds them (every source alike). */
#include "config.h"

#include <stdlib.h>

#include <hdf5.h>

#include "pairbound/error.h"
#include "pairbound/store.h"
#include "store_internal.h"

const char *const pb_store__dset_names[PB_STORE_DSETS] = {"pred",      "smax",    "ptrue",    "topk_class",
                                                          "topk_prob", "entropy", "collision"};

int pb_store__dset_in(const struct pb_meta *meta, int f)
{
  if (f < 3) return 1;
  if (f < 5) return meta->topk > 0;
  return (meta->summaries & (f == 5 ? PB_SUMMARY_ENTROPY : PB_SUMMARY_COLLISION)) != 0;
}

void pb_store_rows_summaries(struct pb_rows *rows, int32_t summaries)
{
  const size_t n = (size_t)rows->n_rows * (size_t)rows->n_images;
  if (summaries & PB_SUMMARY_ENTROPY) rows->entropy = pb_malloc((n ? n : 1) * sizeof *rows->entropy);
  if (summaries & PB_SUMMARY_COLLISION) rows->collision = pb_malloc((n ? n : 1) * sizeof *rows->collision);
}

/* A store holds a summary for every record or for none: source 0 says which,
 * and a source that disagrees makes the store invalid (a store another
 * program wrote).  Each present dataset's shape is pb_store__shapes_ok's. */
int pb_store__summaries_find(struct pb_store *st, hid_t sources)
{
  st->meta.summaries = 0;
  for (int32_t s = 0; s < st->meta.n_sources; s++) {
    hid_t grp = H5Gopen2(sources, st->meta.sources[s].name, H5P_DEFAULT);
    if (grp < 0) {
      pb_error_set("%s: source %s is damaged or incomplete", st->path, st->meta.sources[s].name);
      return PB_FAIL;
    }
    int32_t have = 0;
    for (int f = 5; f < PB_STORE_DSETS; f++)
      if (H5Lexists(grp, pb_store__dset_names[f], H5P_DEFAULT) > 0)
        have |= f == 5 ? PB_SUMMARY_ENTROPY : PB_SUMMARY_COLLISION;
    H5Gclose(grp);
    if (s == 0) st->meta.summaries = have;
    if (have != st->meta.summaries) {
      const int f = ((have ^ st->meta.summaries) & PB_SUMMARY_ENTROPY) ? 5 : 6;
      const int32_t bit = f == 5 ? PB_SUMMARY_ENTROPY : PB_SUMMARY_COLLISION;
      pb_error_set("%s: invalid store: source %s %s records '%s' but source %s %s (a summary is stored for "
                   "every record or for none)", st->path, st->meta.sources[s].name, have & bit ? "has" : "lacks",
                   pb_store__dset_names[f], st->meta.sources[0].name, have & bit ? "does not" : "does");
      return PB_FAIL;
    }
  }
  return PB_OK;
}
