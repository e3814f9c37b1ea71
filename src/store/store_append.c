/* Adding models to a store (`pairbound ingest --append`), in place: every
 * byte of the store but its record chunks is saved in an undo journal
 * (store_undo.c), then the record datasets are grown along their unlimited
 * model dimension (HDF5 allocates the new chunks at once, as at creation),
 * models/id and models/group rewritten, the metadata checksums computed
 * again, and the new models' rows written directly into the new chunks;
 * committing removes the journal.  So a kill at any moment leaves the old
 * store (once the next open has undone the append) or the new one, no
 * existing record is read or written, and the cost follows the new records
 * and the metadata, not the store's size.  docs/store.md, "Appending". */
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

/* Whether @p meta is @p old with models added: the same sources, conditions,
 * images, labels, splits, label sets, roles and top-k length, @p old's models first, no
 * source with fewer classes. */
static int pb_store__extends(const struct pb_meta *old, const struct pb_meta *meta)
{
  if (meta->n_sources != old->n_sources || meta->topk != old->topk || meta->summaries != old->summaries ||
      meta->n_models < old->n_models)
    return 0;
  for (int32_t m = 0; m < old->n_models; m++)
    if (strcmp(meta->model_ids[m], old->model_ids[m]) || strcmp(meta->model_groups[m], old->model_groups[m])) return 0;
  for (int32_t s = 0; s < old->n_sources; s++) {
    const struct pb_source *a = &old->sources[s], *b = &meta->sources[s];
    if (strcmp(a->name, b->name) || a->n_images != b->n_images || a->n_conditions != b->n_conditions ||
        a->clean != b->clean || a->role != b->role || a->role_declared != b->role_declared ||
        a->role_fixed != b->role_fixed || b->n_classes < a->n_classes ||
        memcmp(a->labels, b->labels, (size_t)a->n_images * sizeof *a->labels) ||
        memcmp(a->split, b->split, (size_t)a->n_images) || !pb_store__lsets_same(a, b))
      return 0;
    for (int32_t i = 0; i < a->n_images; i++)
      if (strcmp(a->image_ids[i], b->image_ids[i])) return 0;
    for (int32_t c = 0; c < a->n_conditions; c++)
      if (strcmp(a->conditions[c], b->conditions[c])) return 0;
  }
  return 1;
}

/* The copy's metadata becomes @p meta's: record datasets grown to its models,
 * the models' names and groups, class counts, provenance, checksums. */
static int pb_store__grow(struct pb_store *st, const struct pb_meta *old)
{
  const struct pb_meta *meta = &st->meta;
  hid_t grp = H5Gopen2(st->file, "sources", H5P_DEFAULT), sg = -1, dset = -1;
  for (int32_t s = 0; grp >= 0 && s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    if ((sg = H5Gopen2(grp, src->name, H5P_DEFAULT)) < 0) goto fail;
    const hsize_t dims[4] = {(hsize_t)meta->n_models, (hsize_t)src->n_conditions, (hsize_t)src->n_images,
                             (hsize_t)meta->topk};
    for (int f = 0; f < PB_STORE_DSETS; f++) {
      if (!pb_store__dset_in(meta, f)) continue;
      if ((dset = H5Dopen2(sg, pb_store__dset_names[f], H5P_DEFAULT)) < 0) goto fail;
      pb_store__fill_skipped(1); /* the new models' chunks are placed, not filled: store_skeleton.c */
      const herr_t grown = H5Dset_extent(dset, dims);
      pb_store__fill_skipped(0);
      if (grown < 0) {
        pb_error_set("%s: its records cannot grow (a store written before models could be added): export it and "
                     "ingest the CSV with the new files instead", st->path);
        goto fail_set;
      }
      H5Dclose(dset);
      dset = -1;
    }
    if (src->n_classes != old->sources[s].n_classes &&
        (H5Adelete(sg, "n_classes") < 0 || pb_h5_attr_int(sg, "n_classes", src->n_classes) != PB_OK))
      goto fail;
    H5Gclose(sg);
    sg = -1;
  }
  if (grp < 0) goto fail;
  H5Gclose(grp);
  if ((grp = H5Gopen2(st->file, "models", H5P_DEFAULT)) < 0 || H5Ldelete(grp, "id", H5P_DEFAULT) < 0 ||
      H5Ldelete(grp, "group", H5P_DEFAULT) < 0 ||
      pb_h5_write_strings(grp, "id", meta->model_ids, meta->n_models, 0) != PB_OK ||
      pb_h5_write_strings(grp, "group", meta->model_groups, meta->n_models, 0) != PB_OK)
    goto fail;
  H5Gclose(grp);
  if ((grp = H5Gopen2(st->file, "provenance", H5P_DEFAULT)) < 0 || H5Adelete(grp, "text") < 0 ||
      pb_h5_attr_str(grp, "text", meta->provenance) != PB_OK)
    goto fail;
  H5Gclose(grp);
  return pb_store__digests_write(st->file, meta, PB_STORE_SCHEMA_VERSION);
fail:
  pb_error_set("%s: cannot add models to it", st->path);
fail_set:
  if (dset >= 0) H5Dclose(dset);
  if (sg >= 0) H5Gclose(sg);
  if (grp >= 0) H5Gclose(grp);
  return PB_FAIL;
}

int pb_store_append_begin(const char *path, const struct pb_meta *meta, struct pb_store **out)
{
  struct pb_store *st = pb_store__new(path, MPI_COMM_SELF), *old = NULL;
  struct pb_meta old_meta = {0};
  int status = PB_FAIL;
  char lock[4096];
  *out = NULL;
  st->writable = 1;
  pb_store__meta_copy(&st->meta, meta);
  snprintf(lock, sizeof lock, "%s.lock", path);
  if (pb_output_lock_take(&st->lock, lock, path) != PB_OK) goto done;
  st->sig_lock = pb_signal_cleanup_file(lock); /* a signal's immediate exit removes it */
  /* under the lock: the store as it is now (an append killed before undone), which is extended */
  if (pb_store__take_over(path) != PB_OK || pb_store_open(path, MPI_COMM_SELF, &old) != PB_OK) goto done;
  if (old->schema < PB_STORE_SCHEMA_VERSION) {
    pb_error_set("%s: schema %d; models are added to stores of schema %d (`pairbound roles STORE --set SRC=ROLE` "
                 "converts it)", path,
                 old->schema, PB_STORE_SCHEMA_VERSION);
    goto done;
  }
  if (!pb_store__extends(&old->meta, meta)) {
    pb_error_set("%s: changed while the new records were read (its sources, conditions, images or models differ)",
                 path);
    goto done;
  }
  /* a panel's seed values are the store's (a CSV carries records only, docs/csv.md): kept, as their attributes
   * are, so that the checksums written below cover them */
  if (!st->meta.seed_values && old->meta.seed_values) st->meta.seed_values = pb_strdup(old->meta.seed_values);
  for (int32_t s = 0; s < st->meta.n_sources; s++)
    if (!st->meta.sources[s].seed_values && old->meta.sources[s].seed_values)
      st->meta.sources[s].seed_values = pb_strdup(old->meta.sources[s].seed_values);
  /* the bytes that may change into the journal (from here on a failure undoes the append: pb_store_close),
   * then the store's exclusive lock, which no reader may hold, ours included */
  if ((st->xfd = open(path, O_RDWR | O_CLOEXEC)) < 0) {
    pb_error_set("%s: cannot open for writing", path);
    goto done;
  }
  if (pb_store__undo_save(old, st->xfd) != PB_OK) goto done;
  pb_store__meta_copy(&old_meta, &old->meta);
  pb_store_close(old);
  old = NULL;
  if (pb_store__write_lock(path, st->xfd) != PB_OK) goto done;
  pb_store__append_test_kill(1);
  /* grown through the skeleton's driver, then opened as every store being written is */
  if ((st->file = pb_store__skeleton_open(path)) < 0) goto done;
  status = pb_store__grow(st, &old_meta);
  if (pb_h5_close_file(st->file, path, status != PB_OK) != PB_OK) status = PB_FAIL;
  st->file = -1;
  if (status != PB_OK) goto done;
  pb_store__append_test_kill(2);
  status = PB_FAIL;
  if ((st->file = pb_h5_open_rw(path, MPI_COMM_SELF)) < 0) goto done;
  st->schema = PB_STORE_SCHEMA_VERSION;
  st->checksummed = 1;
  status = pb_store__wmap_all(st); /* where the new records go: store_write.c */
done:
  if (old) pb_store_close(old);
  pb_meta_free(&old_meta);
  if (status == PB_OK) *out = st;
  else pb_store_close(st); /* undoes what was done */
  return status;
}
