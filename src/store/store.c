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
#include "pairbound/comm.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/signals.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

#define PB_STORE_FORMAT "pairbound-store"

/* ------------------------------------------------------------------ metadata */














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
  rows->entropy = rows->collision = NULL;
  rows->pred_orig = NULL;
}

size_t pb_store_rows_bytes(int32_t n_rows, int32_t n_images, int32_t topk, int32_t summaries)
{
  const size_t K = topk > 0 ? (size_t)topk : 0;
  const size_t sums = !!(summaries & PB_SUMMARY_ENTROPY) + !!(summaries & PB_SUMMARY_COLLISION);
  return (size_t)n_rows * (size_t)n_images * 4 * (3 + 2 * K + sums);
}

void pb_store_rows_carve(struct pb_rows *rows, int32_t n_rows, int32_t n_images, int32_t topk, int32_t summaries,
                         char *block)
{
  const size_t K = topk > 0 ? (size_t)topk : 0, b = (size_t)n_rows * (size_t)n_images * 4;
  *rows = (struct pb_rows){.n_rows = n_rows, .n_images = n_images, .topk = topk};
  char *at = block;
  rows->pred = (int32_t *)at;
  rows->smax = (float *)(at += b);
  rows->ptrue = (float *)(at += b);
  at += b;
  if (K > 0) {
    rows->topk_class = (int32_t *)at;
    rows->topk_prob = (float *)(at += b * K);
    at += b * K;
  }
  if (summaries & PB_SUMMARY_ENTROPY) rows->entropy = (float *)at, at += b;
  if (summaries & PB_SUMMARY_COLLISION) rows->collision = (float *)at;
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
    const int n_sum = !!(meta->summaries & PB_SUMMARY_ENTROPY) + !!(meta->summaries & PB_SUMMARY_COLLISION);
    need += cells * src->n_images * (12.0 + 8.0 * meta->topk + 4.0 * n_sum) + cells * (5 + n_sum) * 384.0 +
            16.0 * 1024;
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
  /* models can be added (ingest --append): the first dimension may grow */
  const hsize_t maxdims[4] = {H5S_UNLIMITED, dims[1], dims[2], ndims > 3 ? dims[3] : 0};
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), dset = -1;
  /* Fletcher32 per chunk: a flipped bit in a record is a read error, not a wrong value */
  /* the chunks are allocated (placed) now, their fill left out: store_skeleton.c */
  if (dcpl >= 0 && H5Pset_chunk(dcpl, ndims, chunk) >= 0 && H5Pset_fletcher32(dcpl) >= 0 &&
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER) >= 0 && H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY) >= 0) {
    pb_store__fill_skipped(1);
    dset = pb_h5_create_dataset(grp, name, ftype, ndims, dims, maxdims, dcpl);
    pb_store__fill_skipped(0);
  }
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
  if (src->seed_values && pb_h5_attr_str(grp, "seed_values", src->seed_values)) goto done;
  if (pb_h5_write_strings(grp, "image_id", src->image_ids, src->n_images, rank)) goto done;
  if (pb_h5_write_small(grp, "label", H5T_STD_I32LE, H5T_NATIVE_INT32, (hsize_t)src->n_images,
                            src->labels, rank))
    goto done;
  if (pb_h5_write_small(grp, "split", H5T_STD_U8LE, H5T_NATIVE_UINT8, (hsize_t)src->n_images,
                            src->split, rank))
    goto done;
  if (pb_h5_write_strings(grp, "condition", src->conditions, src->n_conditions, rank)) goto done;
  if (pb_store__lsets_write(grp, src, rank)) goto done;
  if (pb_store__create_records(grp, "pred", H5T_STD_I32LE, 3, dims) ||
      pb_store__create_records(grp, "smax", H5T_IEEE_F32LE, 3, dims) ||
      pb_store__create_records(grp, "ptrue", H5T_IEEE_F32LE, 3, dims))
    goto done;
  if (meta->topk > 0 && (pb_store__create_records(grp, "topk_class", H5T_STD_I32LE, 4, dims) ||
                         pb_store__create_records(grp, "topk_prob", H5T_IEEE_F32LE, 4, dims)))
    goto done;
  for (int f = 5; f < PB_STORE_DSETS; f++)
    if (pb_store__dset_in(meta, f) && pb_store__create_records(grp, pb_store__dset_names[f], H5T_IEEE_F32LE, 3, dims))
      goto done;
  status = PB_OK;
done:
  H5Gclose(grp);
  return status;
}

struct pb_store *pb_store__new(const char *path, MPI_Comm comm)
{
  struct pb_store *st = pb_calloc(1, sizeof *st);
  st->file = -1;
  st->fd = -1;
  st->xfd = -1;
  st->wfd = (struct pb_output_direct){.fd = -1, .dfd = -1};
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

void pb_store__meta_copy(struct pb_meta *dst, const struct pb_meta *src)
{
  *dst = *src;
  dst->model_ids = pb__copy_strings(src->model_ids, src->n_models);
  dst->model_groups = pb__copy_strings(src->model_groups, src->n_models);
  dst->provenance = pb_strdup(src->provenance ? src->provenance : "");
  dst->seed_values = src->seed_values ? pb_strdup(src->seed_values) : NULL;
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
    b->role_of = a->role_of ? pb_strdup(a->role_of) : NULL;
    b->seed_values = a->seed_values ? pb_strdup(a->seed_values) : NULL;
    pb_store__lsets_copy(b, a);
  }
}

static int pb_store__skeleton(struct pb_store *st);

int pb_store_create(const char *path, MPI_Comm comm, const struct pb_meta *meta, struct pb_store **out)
{
  int status = PB_FAIL;
  struct pb_store *st = NULL;
  *out = NULL;
  if (pb_meta_validate(meta)) return PB_FAIL;
  st = pb_store__new(path, comm);
  st->writable = 1;
  pb_store__meta_copy(&st->meta, meta);
  int ok = PB_OK;
  if (st->rank == 0) {
    size_t n = strlen(path) + 8;
    char *lock = pb_malloc(n);
    snprintf(lock, n, "%s.lock", path);
    ok = pb_output_file_ok(path, PB_OUTPUT_STORE, NULL, 0, pb_output_force());
    if (ok == PB_OK) ok = pb_output_lock_take(&st->lock, lock, path);
    if (ok == PB_OK) st->sig_lock = pb_signal_cleanup_file(lock); /* a signal's immediate exit removes it */
    /* an interrupted append to the store this one replaces is undone first: should this one fail, the old store
     * stays as it was before that append */
    if (ok == PB_OK) ok = pb_store__take_over(path); /* ours now, and so is what a killed writer of it left */
    free(lock);
  }
  if (pb_error_agree(comm, ok) != PB_OK || pb_output_temp_shared(path, comm, &st->tmp_path) != PB_OK) goto done;
  if (st->rank == 0) st->sig_tmp = pb_signal_cleanup_file(st->tmp_path);
  ok = st->rank == 0 ? pb_store__space(meta, path, st->tmp_path) : PB_OK;
  if (pb_error_agree(comm, ok) != PB_OK) goto done;
  ok = st->rank == 0 ? pb_store__skeleton(st) : PB_OK;
  if (pb_error_agree(comm, ok) != PB_OK) goto done;
  /* every rank, for the records */
  if ((st->file = pb_h5_open_rw(st->tmp_path, comm)) < 0) goto done;
  status = pb_store__wmap_all(st); /* where the records go: store_write.c */
done:
  if (status == PB_OK) *out = st;
  else pb_store_close(st);
  return status;
}

/* Rank 0 alone: the file with everything but the records, whose chunks are
 * placed but not written (store_skeleton.c). */
static int pb_store__skeleton(struct pb_store *st)
{
  const struct pb_meta *meta = &st->meta;
  int status = PB_FAIL;
  hid_t grp = -1;
  if ((st->file = pb_store__skeleton_create(st->tmp_path)) < 0) return PB_FAIL;
  if (pb_h5_attr_str(st->file, "format", PB_STORE_FORMAT) ||
      pb_h5_attr_int(st->file, "schema_version", PB_STORE_SCHEMA_VERSION) ||
      pb_h5_attr_int(st->file, "topk", meta->topk) || pb_h5_provenance(st->file, NULL, st->meta.provenance))
    goto done;
  if (meta->seed_values && pb_h5_attr_str(st->file, "seed_values", meta->seed_values)) goto done;
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
  if (bad || pb_store__write_roles(st->file, meta)) goto done;
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_store__create_source(st, grp, s)) goto done;
  if (pb_store__digests_write(st->file, &st->meta, PB_STORE_SCHEMA_VERSION)) goto done;
  status = PB_OK;
done:
  if (grp >= 0) H5Gclose(grp);
  if (pb_h5_close_file(st->file, st->tmp_path, status != PB_OK) != PB_OK) status = PB_FAIL;
  st->file = -1;
  return status;
}

int pb_store_commit(struct pb_store *st)
{
  pb_store__wmap_free(st);
  int status = pb_h5_close_file(st->file, st->tmp_path ? st->tmp_path : st->path, 0);
  st->file = -1;
  if (!st->tmp_path) { /* an append: complete once its undo journal is gone (else pb_store_close undoes it) */
    if (status == PB_OK) pb_store__append_test_kill(3);
    if (status == PB_OK) status = pb_store__undo_drop(st->path);
  } else if (status == PB_OK && st->rank == 0 && rename(st->tmp_path, st->path) != 0) {
    pb_error_set("cannot rename %s to %s", st->tmp_path, st->path);
    status = PB_FAIL;
  }
  if (status == PB_OK) pb_signal_forget_file(st->sig_tmp); /* renamed: nothing left to remove */
  status = pb_error_agree(st->comm, status);
  if (status == PB_OK) st->writable = 0; /* nothing left to remove */
  pb_store_close(st);
  return status;
}

/* An append that did not complete: the store as it was before (its undo journal), keeping the message of why. */
static void pb_store__undo_now(struct pb_store *st)
{
  char *why = pb_strdup(pb_error_message());
  if (pb_store__undo_settle(st->path, 1) != PB_OK) {
    char *also = pb_strdup(pb_error_message());
    pb_error_set("%s; and: %s", why, also);
    free(also);
  } else {
    pb_error_set("%s", why);
  }
  free(why);
}

void pb_store_close(struct pb_store *st)
{
  if (!st) return;
  pb_store__wmap_free(st);
  pb_store__chunkmap_free(st, &st->rmap);
  if (st->writable) {
    pb_h5_close_file(st->file, st->tmp_path, 1); /* an append's (no tmp_path) is not emptied: undone below */
    if (!st->tmp_path && st->xfd >= 0) pb_store__undo_now(st);
  } else if (st->file >= 0) {
    pb_comm_barrier(st->comm); /* as pb_results_commit: the collective close's waits poll without pause */
    H5Fclose(st->file);
  }
  if (st->fd >= 0) close(st->fd);
  if (st->xfd >= 0) close(st->xfd);
  if (st->writable && st->rank == 0 && st->tmp_path) unlink(st->tmp_path);
  pb_signal_forget_file(st->sig_tmp);
  /* no rank leaves before the unfinished store is gone (pb_results_close) */
  if (st->writable && st->tmp_path) MPI_Barrier(st->comm);
  pb_signal_forget_file(st->sig_lock);
  pb_output_lock_release(&st->lock);
  pb_meta_free(&st->meta);
  free(st->path);
  free(st->tmp_path);
  free(st);
}

const struct pb_meta *pb_store_meta(const struct pb_store *st) { return &st->meta; }

/* -------------------------------------------------------------------- reading */





/* The root attribute `roles` (schema 2): every source's role text, "" where the
 * store declares none (inferred: real).  Fixed-length strings wide enough
 * for any role of these sources, so that `pairbound roles --set` rewrites it
 * in place (pb_store_roles_set). */
size_t pb_store__roles_width(const struct pb_meta *meta)
{
  size_t longest = 0;
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (strlen(meta->sources[s].name) > longest) longest = strlen(meta->sources[s].name);
  return PB_ROLE_TEXT(longest);
}

int pb_store__write_roles(hid_t file, const struct pb_meta *meta)
{
  const size_t width = pb_store__roles_width(meta);
  char **text = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *text);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    text[s] = pb_calloc(width, 1);
    if (meta->sources[s].role_declared) pb_meta_role_text(&meta->sources[s], text[s], width);
  }
  int status = pb_h5_attr_strings(file, "roles", text, meta->n_sources, width);
  for (int32_t s = 0; s < meta->n_sources; s++) free(text[s]);
  free(text);
  return status;
}

/* Schema 2: the roles of the root attribute `roles`, in source order. */
static int pb_store__read_roles(struct pb_store *st)
{
  struct pb_meta *meta = &st->meta;
  int32_t n = 0;
  size_t width = 0;
  char **text = pb_h5_read_attr_strings(st->file, "roles", &n, &width);
  int status = text && n == meta->n_sources ? PB_OK : PB_FAIL;
  if (status != PB_OK)
    pb_error_set("%s: attribute 'roles' is missing or does not hold one role per source", st->path);
  for (int32_t s = 0; s < meta->n_sources && status == PB_OK; s++) {
    /* no checksum covers the roles (roles --set rewrites them alone, in place): what a flipped bit could make
     * of one is an unknown role, a role that does not fit the store (pb_meta_validate) or a text cut short, which
     * leaves bytes after its NUL where the writer pads with NULs */
    const size_t len = strlen(text[s]);
    for (size_t i = len; i < width && status == PB_OK; i++)
      if (text[s][i]) {
        pb_error_set("%s: damaged metadata: the role of source %s in attribute 'roles' has bytes after its end "
                     "(\"%s\", then byte %d at %zu)", st->path, meta->sources[s].name, text[s],
                     (unsigned char)text[s][i], i);
        status = PB_FAIL;
      }
    if (status == PB_OK && text[s][0] && pb_meta_role_parse(&meta->sources[s], text[s]) != PB_OK) {
      char why[1024];
      snprintf(why, sizeof why, "%s", pb_error_message());
      pb_error_set("%s: %s", st->path, why);
      status = PB_FAIL;
    }
  }
  for (int32_t s = 0; text && s < n; s++) free(text[s]);
  free(text);
  return status;
}

/* Schema 1: a probe source said so with probe_role ("natural" or "extra:SRC") and probe_fixed. */
static int pb_store__read_probe_role(hid_t grp, struct pb_source *src)
{
  int32_t fixed = 0;
  char *role = pb_h5_read_attr_str(grp, "probe_role");
  int status = role && pb_h5_read_attr_int(grp, "probe_fixed", &fixed) == PB_OK ? PB_OK : PB_FAIL;
  if (status == PB_OK && !strcmp(role, "natural")) {
    char text[32];
    snprintf(text, sizeof text, "natural:%d", fixed);
    status = pb_meta_role_parse(src, text);
  } else if (status == PB_OK) {
    status = strncmp(role, "extra:", 6) == 0 ? pb_meta_role_parse(src, role) : PB_FAIL;
  }
  free(role);
  return status;
}

/* Metadata objects [k0, k1) against their checksums (schema 2; store_digest.c), each right after it is read, so
 * that a damaged one is named before anything read from it misleads: the first damaged one ends the open, or
 * for `pairbound check` (st->damage) each is listed and the open goes on as far as it can. */
static int pb_store__verify(struct pb_store *st, int32_t k0, int32_t k1)
{
  char why[1400];
  for (int32_t k = k0; k < k1 && st->checksummed; k++) {
    if (pb_store__digest_check(st->file, &st->meta, st->schema, k, why, sizeof why) == PB_OK) continue;
    if (!st->damage) {
      pb_error_set("%s: damaged metadata: %s", st->path, why);
      return PB_FAIL;
    }
    fprintf(st->damage, "metadata: %s\n", why);
    st->n_damage++;
  }
  return PB_OK;
}

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
  /* schema 1: a probe source's role was its attributes probe_role and probe_fixed (schema 2: root `roles`) */
  if (st->schema < 2 && H5Aexists(grp, "probe_role") > 0 && pb_store__read_probe_role(grp, src) != PB_OK) goto done;
  if (H5Aexists(grp, "seed_values") > 0 && !(src->seed_values = pb_h5_read_attr_str(grp, "seed_values"))) goto done;
  if (!(src->image_ids = pb_h5_read_strings(grp, "image_id", &n_img))) goto done;
  src->n_images = n_img;
  if (!(src->labels = pb_h5_read_small(grp, "label", H5T_NATIVE_INT32, sizeof(int32_t), &n)) ||
      n != (hsize_t)n_img)
    goto done;
  if (!(src->split = pb_h5_read_small(grp, "split", H5T_NATIVE_UINT8, 1, &n)) || n != (hsize_t)n_img)
    goto done;
  if (!(src->conditions = pb_h5_read_strings(grp, "condition", &src->n_conditions))) goto done;
  if (pb_store__lsets_read(st, grp, src)) goto done;
  status = PB_OK;
done:
  if (status != PB_OK) pb_error_set("%s: source %s is damaged or incomplete", st->path, src->name);
  if (grp >= 0) H5Gclose(grp);
  return status;
}

/* Every record dataset has the shape the metadata promises (checked at open,
 * from metadata alone, so even a stage that never reads top-k lists refuses a
 * store whose `topk` attribute disagrees with them), and a store whose `topk`
 * is 0 has no top-k lists (which export would drop without a word). */
static int pb_store__shapes_ok(const struct pb_store *st, hid_t sources)
{
  const char *const *names = pb_store__dset_names;
  for (int32_t s = 0; s < st->meta.n_sources; s++) {
    const struct pb_source *src = &st->meta.sources[s];
    hid_t grp = H5Gopen2(sources, src->name, H5P_DEFAULT);
    for (int k = 0; k < PB_STORE_DSETS; k++) {
      if (!pb_store__dset_in(&st->meta, k)) continue;
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
    for (int k = 3; k < 5 && st->meta.topk == 0 && grp >= 0; k++)
      if (H5Lexists(grp, names[k], H5P_DEFAULT) > 0) {
        pb_error_set("%s: source %s has top-k lists '%s', but the root attribute topk is 0", st->path, src->name,
                     names[k]);
        H5Gclose(grp);
        return PB_FAIL;
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
  if (version < PB_STORE_SCHEMA_OLDEST || version > PB_STORE_SCHEMA_VERSION) {
    pb_error_set("%s: unsupported store schema version %d (this pairbound reads versions %d to %d)", st->path,
                 version, PB_STORE_SCHEMA_OLDEST, PB_STORE_SCHEMA_VERSION);
    return PB_FAIL;
  }
  st->schema = version;
  meta->schema_version = version;
  /* a root checksum says the store was written with them whatever schema_version says (it covers that too) */
  st->checksummed = version >= 2 || H5Aexists(st->file, PB_STORE_DIGEST_ATTR) > 0;
  if (pb_h5_read_attr_int(st->file, "topk", &meta->topk)) goto bad;
  if (H5Aexists(st->file, "seed_values") > 0 && !(meta->seed_values = pb_h5_read_attr_str(st->file, "seed_values")))
    goto bad;
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
  /* which summaries the store holds is in the root's checksum (schema 3): known before it is checked */
  if (pb_store__summaries_find(st, grp) != PB_OK || pb_store__verify(st, 0, pb_store__digests(meta, 0))) {
    H5Gclose(grp);
    return PB_FAIL;
  }
  for (int32_t s = 0; s < meta->n_sources; s++)
    if (pb_store__read_source(st, grp, &meta->sources[s]) ||
        pb_store__verify(st, pb_store__digests(meta, s), pb_store__digests(meta, s + 1))) {
      H5Gclose(grp);
      return PB_FAIL;
    }
  if (st->n_damage > 0) { /* pairbound check has listed them */
    H5Gclose(grp);
    pb_error_set("%s: damaged metadata", st->path);
    return PB_FAIL;
  }
  if (pb_store__shapes_ok(st, grp) != PB_OK) {
    H5Gclose(grp);
    return PB_FAIL;
  }
  H5Gclose(grp);
  if (st->schema >= 2 && pb_store__read_roles(st) != PB_OK) return PB_FAIL;
  pb_meta_infer_roles(meta);
  if (pb_meta_validate(meta)) {
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
  return pb_store__open(path, comm, NULL, NULL, out);
}

int pb_store__open(const char *path, MPI_Comm comm, FILE *damage, int64_t *n_damage, struct pb_store **out)
{
  int status = PB_FAIL;
  struct pb_store *st = pb_store__new(path, comm);
  st->damage = damage;
  *out = NULL;
  if (access(path, R_OK) != 0) { pb_error_set("%s: cannot read file: %s", path, strerror(errno)); goto done; }
  /* best effort: without it every read takes HDF5's path (pb_store__direct); rank 0's holds the readers' lock,
   * taken once an interrupted append is undone */
  st->fd = open(path, O_RDONLY | O_CLOEXEC);
  if (pb_error_agree(comm, st->rank == 0 ? pb_store__read_begin(path, st->fd) : PB_OK) != PB_OK) goto done;
  if (H5Fis_hdf5(path) <= 0) { pb_error_set("%s: not an HDF5 file", path); goto done; }
  if ((st->file = pb_h5_open(path, comm)) < 0 || pb_store__read_meta(st)) goto done;
  status = PB_OK;
done:
  if (n_damage) *n_damage = st->n_damage;
  st->damage = NULL;
  if (status == PB_OK) *out = st;
  else pb_store_close(st);
  return status;
}
