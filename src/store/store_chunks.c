/* Where a record dataset's chunks lie in the file, for the direct reads
 * (store_read.c) and writes (store_write.c), and the shape its records must
 * have: one place, which both the readers and the writers use. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "pairbound/error.h"
#include "pairbound/store.h"
#include "store_internal.h"

/* A record dataset must have the shape the metadata promises, [models][conditions]
 * [images] (+[topk] for top-k lists): a file whose `topk` attribute or whose
 * dimensions disagree would otherwise be read past the end of its buffers. */
int pb_store__shape_ok(const struct pb_store *st, const struct pb_source *s, const char *name, int ndims,
                       const hsize_t *dims)
{
  int want_topk = strncmp(name, "topk_", 5) == 0;
  if (ndims == 3 + want_topk && dims[0] == (hsize_t)st->meta.n_models && dims[1] == (hsize_t)s->n_conditions &&
      dims[2] == (hsize_t)s->n_images && (!want_topk || dims[3] == (hsize_t)st->meta.topk))
    return PB_OK;
  pb_error_set("%s: records '%s' of source %s have %d dimensions [%llu x %llu x %llu%s] but the metadata says "
               "[%d models x %d conditions x %d images%s]", st->path, name, s->name, ndims,
               (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2],
               ndims > 3 ? " x ..." : "", st->meta.n_models, s->n_conditions, s->n_images,
               want_topk ? " x topk" : "");
  return PB_FAIL;
}

hid_t pb_store__dset_mtype(int f) { return f == 0 || f == 3 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT; }

/* Whether the direct path can read dataset @p dset at all: chunks of whole
 * rows [1][C'][I](+[K]) with Fletcher32 as their only filter, stored in the
 * memory type itself.  From the file alone, so the same on every rank. */
int pb_store__direct_fits(hid_t dset, hid_t mtype, int ndims, const hsize_t *dims, hsize_t *chunk)
{
  int fits = 0;
  hid_t dcpl = H5Dget_create_plist(dset), ftype = H5Dget_type(dset);
  unsigned flags = 0, cd[8];
  size_t n_cd = 8;
  if (dcpl >= 0 && ftype >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, ndims, chunk) == ndims &&
      chunk[0] == 1 && chunk[1] >= 1 && chunk[2] == dims[2] && (ndims < 4 || chunk[3] == dims[3]) &&
      H5Pget_nfilters(dcpl) == 1 && H5Pget_filter2(dcpl, 0, &flags, &n_cd, cd, 0, NULL, NULL) == H5Z_FILTER_FLETCHER32 &&
      H5Tequal(ftype, mtype) > 0 && H5Tget_order(ftype) == H5T_ORDER_LE)
    fits = 1;
  if (ftype >= 0) H5Tclose(ftype);
  if (dcpl >= 0) H5Pclose(dcpl);
  return fits;
}

/* Fill @p ck for dataset @p dset (source @p s, chunk shape @p chunk): the
 * file offset of each chunk with want[x] (@p want NULL: every chunk), -1
 * where HDF5 cannot place it or it is unfiltered or of another size (HDF5
 * then reads it, and says why).  Every rank that calls it for the same
 * chunks makes the same metadata reads, collective with
 * H5Pset_all_coll_metadata_ops. */
void pb_store__chunkmap_fill(const struct pb_store *st, const struct pb_source *s, hid_t dset, hid_t mtype,
                             int ndims, const hsize_t *dims, const hsize_t *chunk, const unsigned char *want,
                             struct pb_store__chunkmap *ck)
{
#if PB_STORE_DIRECT
  const int32_t cr = (int32_t)chunk[1];
  ck->rows = cr;
  ck->per_model = (s->n_conditions + cr - 1) / cr;
  ck->row_bytes = (size_t)dims[2] * (ndims > 3 ? dims[3] : 1) * H5Tget_size(mtype);
  off_t base = 0; /* the file offset of HDF5's address 0 (the user block) */
  hid_t fcpl = H5Fget_create_plist(st->file);
  hsize_t ub = 0;
  if (fcpl >= 0) {
    if (H5Pget_userblock(fcpl, &ub) >= 0) base = (off_t)ub;
    H5Pclose(fcpl);
  }
  const size_t n_chunks = (size_t)st->meta.n_models * (size_t)ck->per_model;
  ck->addr = pb_malloc((n_chunks ? n_chunks : 1) * sizeof *ck->addr);
  const hsize_t stored = (hsize_t)cr * ck->row_bytes + 4;
  for (size_t x = 0; x < n_chunks; x++) {
    ck->addr[x] = -1;
    if (want && !want[x]) continue;
    hsize_t off[4] = {x / (size_t)ck->per_model, (hsize_t)(x % (size_t)ck->per_model) * (hsize_t)cr, 0, 0};
    unsigned mask = ~0u;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    if (H5Dget_chunk_info_by_coord(dset, off, &mask, &addr, &size) >= 0 && mask == 0 && addr != HADDR_UNDEF &&
        size == stored && addr <= (haddr_t)(INT64_MAX / 2))
      ck->addr[x] = base + (off_t)addr;
  }
#else
  (void)st; (void)s; (void)dset; (void)mtype; (void)ndims; (void)dims; (void)chunk; (void)want; (void)ck;
#endif
}

/* Map every chunk of record dataset f of source s into @p ck; 0 when the
 * direct path cannot reach all of them (then nothing is kept). */
int pb_store__chunkmap_dset(struct pb_store *st, int32_t s, int f, struct pb_store__chunkmap *ck)
{
  const struct pb_source *src = &st->meta.sources[s];
  const hid_t mtype = pb_store__dset_mtype(f);
  hid_t grp = H5Gopen2(st->file, "sources", H5P_DEFAULT), sg = grp < 0 ? -1 : H5Gopen2(grp, src->name, H5P_DEFAULT);
  hid_t dset = sg < 0 ? -1 : H5Dopen2(sg, pb_store__dset_names[f], H5P_DEFAULT), space = -1;
  hsize_t dims[4] = {0, 0, 0, 0}, chunk[4] = {0, 0, 0, 0};
  int ndims = dset < 0 || (space = H5Dget_space(dset)) < 0 ? 0 : H5Sget_simple_extent_ndims(space), ok = 0;
  if (ndims >= 3 && ndims <= 4 && H5Sget_simple_extent_dims(space, dims, NULL) == ndims &&
      pb_store__shape_ok(st, src, pb_store__dset_names[f], ndims, dims) == PB_OK &&
      pb_store__direct_fits(dset, mtype, ndims, dims, chunk)) {
    pb_store__chunkmap_fill(st, src, dset, mtype, ndims, dims, chunk, NULL, ck);
    const size_t n_chunks = (size_t)st->meta.n_models * (size_t)ck->per_model;
    ok = ck->addr != NULL;
    for (size_t x = 0; ok && x < n_chunks; x++) ok = ck->addr[x] >= 0;
  }
  if (!ok) {
    free(ck->addr);
    memset(ck, 0, sizeof *ck);
  }
  if (space >= 0) H5Sclose(space);
  if (dset >= 0) H5Dclose(dset);
  if (sg >= 0) H5Gclose(sg);
  if (grp >= 0) H5Gclose(grp);
  return ok;
}

void pb_store__chunkmap_free(const struct pb_store *st, struct pb_store__chunkmap **map)
{
  for (int32_t k = 0; *map && k < st->meta.n_sources * PB_STORE_DSETS; k++) free((*map)[k].addr);
  free(*map);
  *map = NULL;
}

