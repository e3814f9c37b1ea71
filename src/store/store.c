/* HDF5 record store: metadata, creation, opening and closing (the row
 * transfers are in src/store/store_read.c).
 * The schema is documented in docs/store.md. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/statvfs.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/checksum.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

#define PB_STORE_FORMAT "pairbound-store"

/* ------------------------------------------------------------------ metadata */

int32_t pb_store_meta_find_source(const struct pb_meta *meta, const char *name)
{
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (strcmp(meta->sources[s].name, name) == 0) return s;
  return -1;
}

int32_t pb_store_meta_target(const struct pb_meta *meta, int32_t s)
{
  while (s < meta->n_sources && meta->sources[s].probe_role) s++;
  return s;
}

int32_t pb_store_meta_model_groups(const struct pb_meta *meta, int32_t *group)
{
  int32_t ng = 0;
  for (int32_t m = 0; m < meta->n_models; m++) {
    group[m] = -1;
    for (int32_t j = 0; j < m && group[m] < 0; j++)
      if (strcmp(meta->model_groups[j], meta->model_groups[m]) == 0) group[m] = group[j];
    if (group[m] < 0) group[m] = ng++;
  }
  return ng;
}

int64_t pb_store_meta_cells(const struct pb_meta *meta)
{
  int64_t cells = 0;
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1))
    cells += (int64_t)meta->n_models * (meta->sources[s].n_conditions - 1);
  return cells;
}

int64_t pb_store_meta_paired_records(const struct pb_meta *meta)
{
  int64_t recs = 0;
  for (int32_t s = pb_store_meta_target(meta, 0); s < meta->n_sources; s = pb_store_meta_target(meta, s + 1)) {
    const struct pb_source *src = &meta->sources[s];
    int64_t n_eval = 0;
    for (int32_t i = 0; i < src->n_images; i++) n_eval += src->split[i] == PB_SPLIT_EVAL;
    recs += (int64_t)meta->n_models * (src->n_conditions - 1) * n_eval;
  }
  return recs;
}

/* A name must be usable as an HDF5 link name and as a CSV field. */
static int pb_meta__check_name(const char *what, const char *name)
{
  if (name[0] == '\0') { pb_error_set("empty %s name", what); return PB_FAIL; }
  if (strcmp(name, ".") == 0 || strpbrk(name, "/,\"\n\r")) {
    pb_error_set("%s name '%s' contains a character that is not allowed ('/', ',', '\"' or a newline)", what, name);
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_store_meta_validate(const struct pb_meta *meta)
{
  if (meta->n_models <= 0) { pb_error_set("store has no models"); return PB_FAIL; }
  if (meta->n_sources <= 0) { pb_error_set("store has no sources"); return PB_FAIL; }
  if (meta->topk < 0) { pb_error_set("negative top-k length"); return PB_FAIL; }
  for (int32_t m = 0; m < meta->n_models; m++)
    if (pb_meta__check_name("model", meta->model_ids[m]) || pb_meta__check_name("group", meta->model_groups[m]))
      return PB_FAIL;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    if (pb_meta__check_name("source", src->name)) return PB_FAIL;
    if (src->n_images <= 0 || src->n_conditions <= 0 || src->n_classes <= 0) {
      pb_error_set("source %s: needs images, conditions and classes", src->name);
      return PB_FAIL;
    }
    if (src->n_classes > PB_MAX_CLASSES) {
      pb_error_set("source %s: %d classes, more than the limit of %d per source", src->name, src->n_classes,
                   PB_MAX_CLASSES);
      return PB_FAIL;
    }
    if (src->clean < 0 || src->clean >= src->n_conditions ||
        strcmp(src->conditions[src->clean], PB_CLEAN_CONDITION) != 0) {
      pb_error_set("source %s has no '%s' condition", src->name, PB_CLEAN_CONDITION);
      return PB_FAIL;
    }
    for (int32_t c = 0; c < src->n_conditions; c++)
      if (pb_meta__check_name("condition", src->conditions[c])) return PB_FAIL;
    if (src->probe_role && strcmp(src->probe_role, "natural") != 0 && strncmp(src->probe_role, "extra:", 6) != 0) {
      pb_error_set("source %s: probe role '%s' is neither 'natural' nor 'extra:SRC'", src->name, src->probe_role);
      return PB_FAIL;
    }
    if (src->probe_fixed < 0 || src->probe_fixed > src->n_conditions - 1) {
      pb_error_set("source %s: probe_fixed %d outside [0, %d]", src->name, src->probe_fixed, src->n_conditions - 1);
      return PB_FAIL;
    }
    for (int32_t i = 0; i < src->n_images; i++) {
      if (pb_meta__check_name("image", src->image_ids[i])) return PB_FAIL;
      if (src->labels[i] < 0 || src->labels[i] >= src->n_classes) {
        pb_error_set("source %s image %s: label %d outside [0, %d)", src->name, src->image_ids[i],
                     src->labels[i], src->n_classes);
        return PB_FAIL;
      }
      if (src->split[i] != PB_SPLIT_DEV && src->split[i] != PB_SPLIT_EVAL) {
        pb_error_set("source %s image %s: bad split code %d", src->name, src->image_ids[i], src->split[i]);
        return PB_FAIL;
      }
    }
  }
  return PB_OK;
}

static void pb__free_strings(char **v, int32_t n)
{
  if (!v) return;
  for (int32_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

void pb_store_meta_free(struct pb_meta *meta)
{
  if (!meta) return;
  pb__free_strings(meta->model_ids, meta->n_models);
  pb__free_strings(meta->model_groups, meta->n_models);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    struct pb_source *src = &meta->sources[s];
    free(src->name);
    pb__free_strings(src->image_ids, src->n_images);
    free(src->labels);
    free(src->split);
    pb__free_strings(src->conditions, src->n_conditions);
    free(src->probe_role);
  }
  free(meta->sources);
  free(meta->provenance);
  memset(meta, 0, sizeof *meta);
}

void pb_store_rows_alloc(struct pb_rows *rows, int32_t n_rows, int32_t n_images, int32_t topk)
{
  size_t n = (size_t)n_rows * (size_t)n_images;
  rows->n_rows = n_rows;
  rows->n_images = n_images;
  rows->topk = topk;
  rows->pred = pb_malloc(n * sizeof *rows->pred);
  rows->smax = pb_malloc(n * sizeof *rows->smax);
  rows->ptrue = pb_malloc(n * sizeof *rows->ptrue);
  rows->topk_class = topk > 0 ? pb_malloc(n * (size_t)topk * sizeof *rows->topk_class) : NULL;
  rows->topk_prob = topk > 0 ? pb_malloc(n * (size_t)topk * sizeof *rows->topk_prob) : NULL;
}

void pb_store_rows_free(struct pb_rows *rows)
{
  if (rows && !pb_store_memo_release(rows)) pb_store_rows_free_owned(rows);
}

/* Rank 0: refuse at once, before any collective HDF5 write, a store that
 * may not fit in the free space of its file system.  A write that fails on
 * some ranks only, inside a collective HDF5 call (Open MPI's ompio), leaves
 * the others waiting in it for ever, or worse is not reported at all; so the
 * whole store must fit before it is begun.  The bound: the record bytes plus
 * 384 bytes per chunk (index and checksum; about 180 are used), 16 KiB per
 * source and 256 KiB for the rest of the metadata.  docs/store.md. */
static int pb_store__space(const struct pb_meta *meta, const char *path, const char *tmp)
{
  double need = 256.0 * 1024;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    double cells = (double)meta->n_models * src->n_conditions;
    need += cells * src->n_images * (12.0 + 8.0 * meta->topk) + cells * 5 * 384.0 + 16.0 * 1024;
  }
  struct statvfs fs;
  if (statvfs(tmp, &fs) != 0) return PB_OK; /* unknown: the writes will tell */
  double avail = (double)fs.f_bavail * (double)fs.f_frsize;
  if (avail >= need) return PB_OK;
  pb_error_set("%s: not enough free space: the store needs up to %.2f MB, its file system has %.2f MB free", path,
               need / 1e6, avail / 1e6);
  return PB_FAIL;
}

/* Largest record chunk.  Chunks are whole model slabs (every condition of one
 * model of a source) up to this size, else as many of the model's conditions
 * as fit (at least one): few, large chunks make a read of 18.8 M records a few
 * thousand chunk look-ups and checksums instead of tens of thousands, while a
 * rank reading part of a model's conditions reads at most one extra chunk at
 * each end of its range.  Measured with tests/bench/bench_store.c
 * (docs/store.md, "Layout"). */
#define PB_STORE_CHUNK_BYTES (4u << 20)

/* Record datasets [model][condition][image](+[k]) chunked by model slab. */
static int pb_store__create_records(hid_t grp, const char *name, hid_t ftype, int ndims,
                                    const hsize_t *dims)
{
  const hsize_t per_row = dims[2] * (ndims > 3 ? dims[3] : 1) * H5Tget_size(ftype);
  hsize_t rows = per_row ? PB_STORE_CHUNK_BYTES / per_row : 1;
  rows = rows < 1 ? 1 : rows > dims[1] ? dims[1] : rows;
  /* a row above the limit by itself is split along images (HDF5 caps a chunk at 4 GB) */
  hsize_t images = rows == 1 && per_row > PB_STORE_CHUNK_BYTES ? dims[2] / (per_row / PB_STORE_CHUNK_BYTES) : dims[2];
  hsize_t chunk[4] = {1, rows, images < 1 ? 1 : images, ndims > 3 ? dims[3] : 0};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), dset = -1;
  /* Fletcher32 per chunk: a flipped bit in a record is a read error, not a wrong value */
  if (dcpl >= 0 && H5Pset_chunk(dcpl, ndims, chunk) >= 0 && H5Pset_fletcher32(dcpl) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0 &&
      (dset = pb_h5_create_dataset(grp, name, ftype, ndims, dims, dcpl)) < 0)
    pb_h5_write_failed(grp, name); /* its chunks are allocated by collective writes */
  if (dcpl >= 0) H5Pclose(dcpl);
  if (dset < 0) {
    pb_error_set("HDF5: cannot create dataset '%s'", name);
    return PB_FAIL;
  }
  H5Dclose(dset);
  return PB_OK;
}

static int pb_store__create_source(const struct pb_store *st, hid_t sources, int32_t s)
{
  const struct pb_meta *meta = &st->meta;
  int rank = st->rank;
  const struct pb_source *src = &meta->sources[s];
  int status = PB_FAIL;
  hid_t grp = H5Gcreate2(sources, src->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (grp < 0) { pb_error_set("HDF5: cannot create group for source %s", src->name); return PB_FAIL; }
  hsize_t dims[4] = {(hsize_t)meta->n_models, (hsize_t)src->n_conditions, (hsize_t)src->n_images,
                     (hsize_t)meta->topk};
  if (pb_h5_attr_int(grp, "n_classes", src->n_classes) || pb_h5_attr_int(grp, "clean_index", src->clean))
    goto done;
  if (src->probe_role &&
      (pb_h5_attr_str(grp, "probe_role", src->probe_role) || pb_h5_attr_int(grp, "probe_fixed", src->probe_fixed)))
    goto done;
  if (pb_h5_write_strings(grp, "image_id", src->image_ids, src->n_images, rank)) goto done;
  if (pb_h5_write_small(grp, "label", H5T_STD_I32LE, H5T_NATIVE_INT32, (hsize_t)src->n_images,
                            src->labels, rank))
    goto done;
  if (pb_h5_write_small(grp, "split", H5T_STD_U8LE, H5T_NATIVE_UINT8, (hsize_t)src->n_images,
                            src->split, rank))
    goto done;
  if (pb_h5_write_strings(grp, "condition", src->conditions, src->n_conditions, rank)) goto done;
  if (pb_store__create_records(grp, "pred", H5T_STD_I32LE, 3, dims) ||
      pb_store__create_records(grp, "smax", H5T_IEEE_F32LE, 3, dims) ||
      pb_store__create_records(grp, "ptrue", H5T_IEEE_F32LE, 3, dims))
    goto done;
  if (meta->topk > 0 && (pb_store__create_records(grp, "topk_class", H5T_STD_I32LE, 4, dims) ||
                         pb_store__create_records(grp, "topk_prob", H5T_IEEE_F32LE, 4, dims)))
    goto done;
  status = PB_OK;
done:
  H5Gclose(grp);
  return status;
}

static struct pb_store *pb_store__new(const char *path, MPI_Comm comm)
{
  struct pb_store *st = pb_calloc(1, sizeof *st);
  st->file = -1;
  st->fd = -1;
  st->lock.fd = -1;
  st->comm = comm;
  MPI_Comm_rank(comm, &st->rank);
  st->path = pb_strdup(path);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return st;
}

/* Deep copy so the store owns its metadata whatever the caller does next. */
static char **pb__copy_strings(char *const *v, int32_t n)
{
  char **d = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *d);
  for (int32_t i = 0; i < n; i++) d[i] = pb_strdup(v[i]);
  return d;
}

static void pb_meta__copy(struct pb_meta *dst, const struct pb_meta *src)
{
  *dst = *src;
  dst->model_ids = pb__copy_strings(src->model_ids, src->n_models);
  dst->model_groups = pb__copy_strings(src->model_groups, src->n_models);
  dst->provenance = pb_strdup(src->provenance ? src->provenance : "");
  dst->sources = pb_calloc((size_t)src->n_sources, sizeof *dst->sources);
  for (int32_t s = 0; s < src->n_sources; s++) {
    const struct pb_source *a = &src->sources[s];
    struct pb_source *b = &dst->sources[s];
    *b = *a;
    b->name = pb_strdup(a->name);
    b->image_ids = pb__copy_strings(a->image_ids, a->n_images);
    b->labels = pb_malloc((size_t)a->n_images * sizeof *b->labels);
    memcpy(b->labels, a->labels, (size_t)a->n_images * sizeof *b->labels);
    b->split = pb_malloc((size_t)a->n_images);
    memcpy(b->split, a->split, (size_t)a->n_images);
    b->conditions = pb__copy_strings(a->conditions, a->n_conditions);
    b->probe_role = a->probe_role ? pb_strdup(a->probe_role) : NULL;
  }
}

int pb_store_create(const char *path, MPI_Comm comm, const struct pb_meta *meta, struct pb_store **out)
{
  int status = PB_FAIL;
  hid_t grp = -1;
  struct pb_store *st = NULL;
  *out = NULL;
  if (pb_store_meta_validate(meta)) return PB_FAIL;
  st = pb_store__new(path, comm);
  st->writable = 1;
  pb_meta__copy(&st->meta, meta);
  int ok = PB_OK;
  if (st->rank == 0) {
    size_t n = strlen(path) + 8;
    char *lock = pb_malloc(n);
    snprintf(lock, n, "%s.lock", path);
    ok = pb_output_file_ok(path, PB_OUTPUT_STORE, NULL, 0, pb_output_force());
    if (ok == PB_OK) ok = pb_output_lock_take(&st->lock, lock, path, 1);
    if (ok == PB_OK) { /* ours now: temporaries of a killed writer of this store go */
      char *dir = pb_strdup(path), *slash = strrchr(dir, '/');
      const char *base = slash ? slash + 1 : path;
      if (slash) *slash = '\0';
      pb_output_sweep(slash ? (dir[0] ? dir : "/") : ".", base);
      free(dir);
    }
    free(lock);
  }
  if (pb_error_agree(comm, ok) != PB_OK || pb_output_temp_shared(path, comm, &st->tmp_path) != PB_OK) goto done;
  ok = st->rank == 0 ? pb_store__space(meta, path, st->tmp_path) : PB_OK;
  if (pb_error_agree(comm, ok) != PB_OK) goto done;
  if ((st->file = pb_h5_create(st->tmp_path, comm)) < 0) goto done;
  if (pb_h5_attr_str(st->file, "format", PB_STORE_FORMAT) ||
      pb_h5_attr_int(st->file, "schema_version", PB_STORE_SCHEMA_VERSION) ||
      pb_h5_attr_int(st->file, "topk", meta->topk) || pb_h5_provenance(st->file, NULL, st->meta.provenance))
    goto done;
  if ((grp = H5Gcreate2(st->file, "models", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto done;
  if (pb_h5_write_strings(grp, "id", meta->model_ids, meta->n_models, st->rank) ||
      pb_h5_write_strings(grp, "group", meta->model_groups, meta->n_models, st->rank))
    goto done;
  H5Gclose(grp);
  if ((grp = H5Gcreate2(st->file, "sources", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) goto done;
  char **names = pb_malloc((size_t)meta->n_sources * sizeof *names);
  for (int32_t s = 0; s < meta->n_sources; s++) names[s] = meta->sources[s].name;
  int bad = pb_h5_write_strings(st->file, "source_names", names, meta->n_sources, st->rank);
  free(names);
  if (bad) goto done;
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_store__create_source(st, grp, s)) goto done;
  status = PB_OK;
done:
  if (grp >= 0) H5Gclose(grp);
  if (status == PB_OK) *out = st;
  else pb_store_close(st);
  return status;
}

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

int pb_store_commit(struct pb_store *st)
{
  int status = pb_h5_close_file(st->file, st->tmp_path, 0);
  st->file = -1;
  if (status == PB_OK && st->rank == 0 && rename(st->tmp_path, st->path) != 0) {
    pb_error_set("cannot rename %s to %s", st->tmp_path, st->path);
    status = PB_FAIL;
  }
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK) st->writable = 0; /* nothing left to remove */
  pb_store_close(st);
  return status;
}

void pb_store_close(struct pb_store *st)
{
  if (!st) return;
  if (st->writable) pb_h5_close_file(st->file, st->tmp_path, 1);
  else if (st->file >= 0) H5Fclose(st->file);
  if (st->fd >= 0) close(st->fd);
  if (st->writable && st->rank == 0 && st->tmp_path) unlink(st->tmp_path);
  /* no rank leaves before the unfinished store is gone (pb_results_close) */
  if (st->writable && st->tmp_path) MPI_Barrier(st->comm);
  pb_output_lock_release(&st->lock);
  pb_store_meta_free(&st->meta);
  free(st->path);
  free(st->tmp_path);
  free(st);
}

const struct pb_meta *pb_store_meta(const struct pb_store *st) { return &st->meta; }

/* -------------------------------------------------------------------- reading */





static int pb_store__read_source(struct pb_store *st, hid_t sources, struct pb_source *src)
{
  int status = PB_FAIL;
  hsize_t n = 0;
  int32_t n_img = 0;
  hid_t grp = H5Gopen2(sources, src->name, H5P_DEFAULT);
  if (grp < 0) goto done;
  if (pb_h5_read_attr_int(grp, "n_classes", &src->n_classes) ||
      pb_h5_read_attr_int(grp, "clean_index", &src->clean))
    goto done;
  /* optional: stores written before probe roles existed have none */
  if (H5Aexists(grp, "probe_role") > 0 &&
      (!(src->probe_role = pb_h5_read_attr_str(grp, "probe_role")) ||
       pb_h5_read_attr_int(grp, "probe_fixed", &src->probe_fixed)))
    goto done;
  if (!(src->image_ids = pb_h5_read_strings(grp, "image_id", &n_img))) goto done;
  src->n_images = n_img;
  if (!(src->labels = pb_h5_read_small(grp, "label", H5T_NATIVE_INT32, sizeof(int32_t), &n)) ||
      n != (hsize_t)n_img)
    goto done;
  if (!(src->split = pb_h5_read_small(grp, "split", H5T_NATIVE_UINT8, 1, &n)) || n != (hsize_t)n_img)
    goto done;
  if (!(src->conditions = pb_h5_read_strings(grp, "condition", &src->n_conditions))) goto done;
  status = PB_OK;
done:
  if (status != PB_OK) pb_error_set("%s: source %s is damaged or incomplete", st->path, src->name);
  if (grp >= 0) H5Gclose(grp);
  return status;
}

/* Every record dataset has the shape the metadata promises (checked at open,
 * from metadata alone, so even a stage that never reads top-k lists refuses a
 * store whose `topk` attribute disagrees with them). */
static int pb_store__shapes_ok(const struct pb_store *st, hid_t sources)
{
  static const char *names[] = {"pred", "smax", "ptrue", "topk_class", "topk_prob"};
  for (int32_t s = 0; s < st->meta.n_sources; s++) {
    const struct pb_source *src = &st->meta.sources[s];
    hid_t grp = H5Gopen2(sources, src->name, H5P_DEFAULT);
    for (int k = 0; k < (st->meta.topk > 0 ? 5 : 3); k++) {
      hid_t dset = grp < 0 ? -1 : H5Dopen2(grp, names[k], H5P_DEFAULT), space = -1;
      hsize_t dims[4] = {0, 0, 0, 0};
      int nd = -1;
      if (dset >= 0 && (space = H5Dget_space(dset)) >= 0) nd = H5Sget_simple_extent_ndims(space);
      if (nd >= 3 && nd <= 4) H5Sget_simple_extent_dims(space, dims, NULL);
      if (space >= 0) H5Sclose(space);
      if (dset >= 0) H5Dclose(dset);
      int bad = 1;
      if (nd < 0) pb_error_set("%s: source %s has no records '%s'", st->path, src->name, names[k]);
      else if (nd < 3 || nd > 4)
        pb_error_set("%s: records '%s' of source %s have %d dimensions", st->path, names[k], src->name, nd);
      else bad = pb_store__shape_ok(st, src, names[k], nd, dims) != PB_OK;
      if (bad) {
        if (grp >= 0) H5Gclose(grp);
        return PB_FAIL;
      }
    }
    if (grp >= 0) H5Gclose(grp);
  }
  return PB_OK;
}

static int pb_store__read_meta(struct pb_store *st)
{
  struct pb_meta *meta = &st->meta;
  int32_t version = -1, n = 0, n2 = 0;
  char *format = pb_h5_read_attr_str(st->file, "format");
  int ok = format && strcmp(format, PB_STORE_FORMAT) == 0;
  free(format);
  if (!ok) { pb_error_set("%s: not a pairbound store", st->path); return PB_FAIL; }
  if (!H5Aexists(st->file, "schema_version")) {
    pb_error_set("%s: no schema_version attribute (a damaged or foreign store)", st->path);
    return PB_FAIL;
  }
  if (pb_h5_read_attr_int(st->file, "schema_version", &version)) {
    pb_error_set("%s: schema_version attribute is not an integer (a damaged or foreign store)", st->path);
    return PB_FAIL;
  }
  if (version != PB_STORE_SCHEMA_VERSION) {
    pb_error_set("%s: unsupported store schema version %d (this pairbound reads version %d)", st->path,
                 version, PB_STORE_SCHEMA_VERSION);
    return PB_FAIL;
  }
  if (pb_h5_read_attr_int(st->file, "topk", &meta->topk)) goto bad;
  hid_t grp = H5Gopen2(st->file, "provenance", H5P_DEFAULT);
  if (grp >= 0) {
    meta->provenance = pb_h5_read_attr_str(grp, "text");
    H5Gclose(grp);
  }
  if (!meta->provenance) meta->provenance = pb_strdup("");
  grp = H5Gopen2(st->file, "models", H5P_DEFAULT);
  if (grp < 0) goto bad;
  meta->model_ids = pb_h5_read_strings(grp, "id", &n);
  meta->model_groups = pb_h5_read_strings(grp, "group", &n2);
  H5Gclose(grp);
  meta->n_models = n;
  if (!meta->model_ids || !meta->model_groups || n != n2) goto bad;
  char **names = pb_h5_read_strings(st->file, "source_names", &n);
  if (!names) goto bad;
  meta->n_sources = n;
  meta->sources = pb_calloc((size_t)n, sizeof *meta->sources);
  for (int32_t s = 0; s < n; s++) meta->sources[s].name = names[s];
  free(names);
  if ((grp = H5Gopen2(st->file, "sources", H5P_DEFAULT)) < 0) goto bad;
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_store__read_source(st, grp, &meta->sources[s])) {
      H5Gclose(grp);
      return PB_FAIL;
    }
  if (pb_store__shapes_ok(st, grp) != PB_OK) {
    H5Gclose(grp);
    return PB_FAIL;
  }
  H5Gclose(grp);
  if (pb_store_meta_validate(meta)) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s: invalid store: %s", st->path, why);
    return PB_FAIL;
  }
  return PB_OK;
bad:
  pb_error_set("%s: store metadata is damaged or incomplete", st->path);
  return PB_FAIL;
}

int pb_store_open(const char *path, MPI_Comm comm, struct pb_store **out)
{
  int status = PB_FAIL;
  struct pb_store *st = pb_store__new(path, comm);
  *out = NULL;
  if (access(path, R_OK) != 0) { pb_error_set("%s: cannot read file: %s", path, strerror(errno)); goto done; }
  if (H5Fis_hdf5(path) <= 0) { pb_error_set("%s: not an HDF5 file", path); goto done; }
  if ((st->file = pb_h5_open(path, comm)) < 0 || pb_store__read_meta(st)) goto done;
  /* best effort: without it every read takes HDF5's path (pb_store__direct) */
  st->fd = open(path, O_RDONLY | O_CLOEXEC);
  status = PB_OK;
done:
  if (status == PB_OK) *out = st;
  else pb_store_close(st);
  return status;
}
