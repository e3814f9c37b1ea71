/* HDF5 record store: collective row transfers (reads the direct way where
 * they can, through HDF5 otherwise, and every write), the range checks of
 * the records read, and the read entry points with the run's rows memo.
 * The schema is documented in docs/store.md. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/checksum.h"
#include "pairbound/comm.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/probsum.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

/* Runs of consecutive rows of one model: each is one regular hyperslab block
 * [1][len][I](+[K]), one transfer, chunk-aligned when it covers the model's
 * rows.  Returns the number of runs; starts[j], lens[j] describe them.  Whole
 * models are not merged into larger transfers: on Fletcher32 chunks one
 * transfer per dataset measured slower than one per model
 * (tests/bench/bench_store.c, docs/store.md "Layout"). */
static int32_t pb_store__runs(int32_t n_cond, int32_t n_rows, const int32_t *rows, int32_t *starts, int32_t *lens)
{
  int32_t n = 0;
  for (int32_t i = 0; i < n_rows;) {
    int32_t j = i + 1;
    while (j < n_rows && rows[j] == rows[j - 1] + 1 && rows[j] / n_cond == rows[i] / n_cond) j++;
    starts[n] = rows[i];
    lens[n++] = j - i;
    i = j;
  }
  return n;
}

/* Test hook: PAIRBOUND_TEST_READ_FAIL_RANK=R makes rank R's first read
 * selection of every transfer fail, as a local HDF5 error would (tests/mpi/store_errors.sh). */
static int pb_store__inject_failure(const struct pb_store *st, int write)
{
  int64_t rank;
  return !write && pb_env_int(PB_ENV_TEST_READ_FAIL_RANK, 0, INT_MAX, &rank) == PB_OK && rank == st->rank;
}


/* ------------------------------------------------------------ direct reads
 * HDF5's read path (filter pipeline, chunk cache, collective machinery) moved
 * 0.85 GB/s in bounds' reads of the paper store, this one 1.5 GB/s (checks
 * included; docs/store.md).  The records' chunks are plain bytes with a
 * Fletcher32 checksum after them, so reads of chunks are done here: HDF5
 * only says where each chunk is (H5Dget_chunk_info_by_coord), the bytes come
 * with pread(2) straight into the caller's buffer, and the checksum is
 * verified as HDF5's filter would (pb_checksum_fletcher32_ok).  Anything else
 * goes through HDF5 as before: docs/store.md, "Reading".  Where the chunks
 * lie: store_chunks.c. */

/* Test and benchmark switch: PAIRBOUND_STORE_READ=hdf5 reads every record
 * through HDF5; so does the failure hook, whose failures are HDF5 calls'. */
static int pb_store__direct_allowed(const struct pb_store *st)
{
  const char *r = pb_env_get(PB_ENV_STORE_READ);
  return PB_STORE_DIRECT && !st->writable && !pb_env_given(PB_ENV_TEST_READ_FAIL_RANK) && !(r && strcmp(r, "hdf5") == 0);
}

/* Collective: find the chunks any rank's runs touch.  Every rank asks HDF5
 * about the same chunks in the same order (the union of the ranks' chunks,
 * MPI_BOR), so the metadata reads behind the look-ups stay matched.  Returns
 * 1 when the direct path may be used (the same on every rank), with @p ck
 * filled. */
static int pb_store__direct_plan(struct pb_store *st, const struct pb_source *s, hid_t dset, hid_t mtype, int ndims,
                                 const hsize_t *dims, int32_t nb, const int32_t *starts, const int32_t *lens,
                                 struct pb_store__chunkmap *ck)
{
  memset(ck, 0, sizeof *ck);
  hsize_t chunk[4] = {0, 0, 0, 0};
  int fits = pb_store__direct_allowed(st) && pb_store__direct_fits(dset, mtype, ndims, dims, chunk);
  pb_comm_allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, st->comm);
  if (!fits) return 0;
  const int32_t n_cond = s->n_conditions, cr = (int32_t)chunk[1], per_model = (n_cond + cr - 1) / cr;
  const size_t n_chunks = (size_t)st->meta.n_models * (size_t)per_model;
  unsigned char *want = pb_calloc(n_chunks ? n_chunks : 1, 1);
  for (int32_t j = 0; j < nb; j++) {
    const int32_t m = starts[j] / n_cond, c0 = starts[j] % n_cond, c1 = c0 + lens[j] - 1;
    for (int32_t k = c0 / cr; k <= c1 / cr; k++) want[(size_t)m * per_model + k] = 1;
  }
  /* chunk counts fit an int: n_models x conditions rows, each at least one */
  pb_comm_allreduce(MPI_IN_PLACE, want, (int)n_chunks, MPI_UNSIGNED_CHAR, MPI_BOR, st->comm);
  pb_store__chunkmap_fill(st, s, dset, mtype, ndims, dims, chunk, want, ck);
  free(want);
  return 1;
}

/* Local: read the runs through the chunks of @p ck into @p buf (run j at row
 * offset offs[j]).  A chunk a run covers whole is read into the buffer itself,
 * the checksum into 4 bytes beside it; one that it covers in part is read
 * whole into a scratch buffer (kept for the next run, which may need the same
 * chunk) and the run's rows copied out.  A run any of whose chunks cannot be
 * read or fails its checksum gets fallback[j] = 1: HDF5 reads it next, and
 * reports the damage in its words.  One thread: the copy from the page cache
 * and the checksum run at several GB/s each, and threads here measured up to
 * ten times slower on a machine whose other core is busy (each call waits
 * at the region's end for a thread the kernel has not yet scheduled). */
static void pb_store__direct_read(const struct pb_store *st, const struct pb_source *s,
                                  const struct pb_store__chunkmap *ck, int32_t nb, const int32_t *starts,
                                  const int32_t *lens, const int64_t *offs, char *buf, unsigned char *fallback)
{
  const int32_t n_cond = s->n_conditions, cr = ck->rows;
  const size_t chunk_bytes = (size_t)cr * ck->row_bytes;
  char *scratch = NULL;
  int64_t cached = -1; /* chunk held in scratch */
  for (int32_t j = 0; j < nb; j++) {
    const int32_t m = starts[j] / n_cond, c0 = starts[j] % n_cond, c1 = c0 + lens[j];
    int ok = st->fd >= 0;
    for (int32_t k = c0 / cr; ok && k <= (c1 - 1) / cr; k++) {
      const int64_t x = (int64_t)m * ck->per_model + k;
      const off_t at = ck->addr[x];
      const int32_t r0 = c0 > k * cr ? c0 : k * cr, r1 = c1 < (k + 1) * cr ? c1 : (k + 1) * cr;
      char *dst = buf + ((size_t)offs[j] + (size_t)(r0 - c0)) * ck->row_bytes;
      unsigned char sum[4];
      if (at < 0) { ok = 0; break; }
      if (r0 == k * cr && r1 == (k + 1) * cr) { /* the whole chunk: no copy */
        struct iovec iov[2] = {{dst, chunk_bytes}, {sum, 4}};
        ok = pb_output_iov_all(st->fd, iov, 2, at, 0) == PB_OK && pb_checksum_fletcher32_ok(dst, chunk_bytes, sum);
        continue;
      }
      if (cached != x) {
        if (!scratch) scratch = pb_malloc(chunk_bytes + 4);
        struct iovec iov[1] = {{scratch, chunk_bytes + 4}};
        cached = -1;
        if (pb_output_iov_all(st->fd, iov, 1, at, 0) != PB_OK ||
            !pb_checksum_fletcher32_ok(scratch, chunk_bytes, scratch + chunk_bytes)) {
          ok = 0;
          break;
        }
        cached = x;
      }
      memcpy(dst, scratch + (size_t)(r0 - k * cr) * ck->row_bytes, (size_t)(r1 - r0) * ck->row_bytes);
    }
    fallback[j] = !ok;
  }
  free(scratch);
}

/* What a failed read of a record chunk says, whichever way it was read. */
#define PB_STORE__DAMAGED " (damaged file: a chunk fails its checksum or cannot be decoded)"

/* ------------------------------------------------------------ independent reads
 * A stage whose ranks would otherwise wait for each other at every read (each
 * transfer above is collective: its plan, its HDF5 rounds, its agreement)
 * maps every chunk it will read once, collectively, and then reads with
 * pread alone: no rank waits for another until pb_store_reads_collective.
 * docs/scaling.md, "Sources in lock step". */

/* The field that reads record dataset f of pb_store__dset_names. */
static int pb_store__dset_field(int f)
{
  static const int field[PB_STORE_DSETS] = {PB_FIELD_PRED, PB_FIELD_SMAX, PB_FIELD_PTRUE, PB_FIELD_TOPK,
                                            PB_FIELD_TOPK, PB_FIELD_ENTROPY, PB_FIELD_COLLISION};
  return field[f];
}

int pb_store_reads_independent(struct pb_store *st, int fields)
{
  if (st->rmap) return 0; /* already (alike on every rank): the caller that began it ends it */
  int ok = pb_store__direct_allowed(st) && st->fd >= 0;
  pb_comm_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, st->comm);
  if (!ok) return 0;
  struct pb_store__chunkmap *map = pb_calloc((size_t)st->meta.n_sources * PB_STORE_DSETS, sizeof *map);
  /* the same datasets in the same order on every rank: matched metadata reads */
  for (int32_t s = 0; s < st->meta.n_sources && ok; s++)
    for (int f = 0; f < PB_STORE_DSETS && ok; f++)
      if (pb_store__dset_in(&st->meta, f) && (fields & pb_store__dset_field(f)))
        ok = pb_store__chunkmap_dset(st, s, f, &map[s * PB_STORE_DSETS + f]);
  pb_comm_allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, st->comm);
  if (ok) st->rmap = map;
  else pb_store__chunkmap_free(st, &map); /* the collective reads say what the direct path could not read */
  return ok;
}

int pb_store_reads_collective(struct pb_store *st, int status)
{
  pb_store__chunkmap_free(st, &st->rmap);
  return pb_error_agree(st->comm, status);
}

int pb_store_agree(const struct pb_store *st, int status) { return st->rmap ? status : pb_error_agree(st->comm, status); }

int pb_store_reads_alone(const struct pb_store *st) { return st->rmap != NULL; }

/* An independent read of the runs (pb_store_reads_independent): this rank's
 * own reads of the chunks mapped then; a damaged chunk is a local error, in
 * the words HDF5's fall-back read gives (below). */
static int pb_store__rows_local(const struct pb_store *st, int32_t src, int f, int32_t nb, const int32_t *starts,
                                const int32_t *lens, const int64_t *offs, void *buf, unsigned char *fallback)
{
  const struct pb_source *s = &st->meta.sources[src];
  const struct pb_store__chunkmap *ck = &st->rmap[src * PB_STORE_DSETS + f];
  if (!ck->addr) {
    pb_error_set("%s: records '%s' of source %s were not mapped for independent reads", st->path,
                 pb_store__dset_names[f], s->name);
    return PB_FAIL;
  }
  pb_store__direct_read(st, s, ck, nb, starts, lens, offs, buf, fallback);
  for (int32_t j = 0; j < nb; j++)
    if (fallback[j]) {
      pb_error_set("%s: cannot read records '%s' of source %s" PB_STORE__DAMAGED, st->path, pb_store__dset_names[f],
                   s->name);
      return PB_FAIL;
    }
  return PB_OK;
}

/* Transfer of the given rows.  Reads go the direct way (above) where they
 * can; the rest, and every write, are collective HDF5 transfers, one block
 * per call.  A memory space of the block's own shape keeps HDF5 on its fast
 * same-shape path (a union of blocks, or a flat memory space, is several
 * times slower on cell-sized chunks); ranks with fewer blocks make empty
 * calls so every rank makes the same number of collective calls.  Ranks
 * agree on the status after opening and before every collective round
 * (pb_error_agree), so a local error on one rank ends the transfer on all of
 * them instead of leaving them in a collective call. */
static int pb_store__rows_io(struct pb_store *st, int32_t src, int f, int32_t n_rows, const int32_t *rows, void *buf,
                             int write)
{
  const char *name = pb_store__dset_names[f];
  const hid_t mtype = pb_store__dset_mtype(f);
  const struct pb_source *s = &st->meta.sources[src];
  int status = PB_FAIL;
  hid_t grp = -1, dset = -1, fspace = -1, mspace = -1, dxpl = -1;
  int32_t *starts = pb_malloc((size_t)(n_rows + 1) * sizeof *starts), *lens = pb_malloc((size_t)(n_rows + 1) * sizeof *lens);
  int32_t nb = pb_store__runs(s->n_conditions, n_rows, rows, starts, lens), rounds = 0;
  int64_t *offs = pb_malloc((size_t)(nb + 1) * sizeof *offs); /* row offset of each run in buf */
  unsigned char *fallback = pb_malloc((size_t)(nb + 1)); /* runs HDF5 transfers */
  struct pb_store__chunkmap ck = {0, 0, 0, NULL};
  for (int32_t j = 0, o = 0; j < nb; o += lens[j], j++) {
    offs[j] = o;
    fallback[j] = 1;
  }
  if (!write && st->rmap) { /* no collective call: this rank's own reads */
    status = pb_store__rows_local(st, src, f, nb, starts, lens, offs, buf, fallback);
    goto done;
  }
  int ndims = 0;
  hsize_t dims[4] = {0, 0, 0, 0};
  if ((grp = H5Gopen2(st->file, "sources", H5P_DEFAULT)) >= 0) {
    hid_t sg = H5Gopen2(grp, s->name, H5P_DEFAULT);
    H5Gclose(grp);
    grp = sg;
  }
  if (grp >= 0 && (dset = H5Dopen2(grp, name, H5P_DEFAULT)) >= 0 && (fspace = H5Dget_space(dset)) >= 0 &&
      (dxpl = pb_h5_dxpl()) >= 0 && (ndims = H5Sget_simple_extent_ndims(fspace)) >= 3 && ndims <= 4 &&
      H5Sget_simple_extent_dims(fspace, dims, NULL) == ndims)
    status = pb_store__shape_ok(st, s, name, ndims, dims);
  else
    pb_error_set("%s: cannot open records '%s' of source %s", st->path, name, s->name);
  status = pb_error_agree(st->comm, status);
  const size_t esize = H5Tget_size(mtype), per_row = (size_t)dims[2] * (ndims > 3 ? dims[3] : 1) * esize;
  if (status == PB_OK && !write && pb_store__direct_plan(st, s, dset, mtype, ndims, dims, nb, starts, lens, &ck))
    pb_store__direct_read(st, s, &ck, nb, starts, lens, offs, buf, fallback);
  free(ck.addr);
  /* what is left for HDF5, in order: the runs j with fallback[j] */
  int32_t nf = 0;
  for (int32_t j = 0; j < nb; j++)
    if (fallback[j]) {
      starts[nf] = starts[j];
      lens[nf] = lens[j];
      offs[nf++] = offs[j];
    }
  rounds = nf;
  pb_comm_allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT32_T, MPI_MAX, st->comm);
  int moved = PB_OK; /* this rank's transfers so far */
  for (int32_t j = 0; j < rounds && status == PB_OK; j++) {
    hsize_t start[4] = {0, 0, 0, 0}, count[4] = {1, 1, dims[2], ndims > 3 ? dims[3] : 1};
    if (j < nf) {
      start[0] = (hsize_t)(starts[j] / s->n_conditions);
      start[1] = (hsize_t)(starts[j] % s->n_conditions);
      count[1] = (hsize_t)lens[j];
    }
    herr_t e = (mspace = H5Screate_simple(ndims, count, NULL)) < 0 ? -1 : 0;
    if (e >= 0)
      e = j < nf ? H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL)
                 : (H5Sselect_none(fspace) < 0 || H5Sselect_none(mspace) < 0 ? -1 : 0);
    if (e >= 0 && j == 0 && pb_store__inject_failure(st, write)) e = -1;
    if (e < 0) pb_error_set("%s: cannot select rows of records '%s' of source %s", st->path, name, s->name);
    /* the selection and the previous transfer are local: agree on both before the
     * next collective transfer, so every rank makes the same number of rounds */
    if ((status = pb_error_agree(st->comm, e < 0 || moved != PB_OK ? PB_FAIL : PB_OK)) == PB_OK) {
      char *p = (char *)buf + (j < nf ? (size_t)offs[j] * per_row : 0);
      e = write ? H5Dwrite(dset, mtype, mspace, fspace, dxpl, p) : H5Dread(dset, mtype, mspace, fspace, dxpl, p);
      if (e < 0) {
        pb_error_set("%s: cannot %s records '%s' of source %s%s", st->path, write ? "write" : "read", name, s->name,
                     write ? "" : PB_STORE__DAMAGED);
        moved = PB_FAIL;
      }
    }
    if (mspace >= 0) H5Sclose(mspace);
    mspace = -1;
  }
  if (status == PB_OK) status = pb_error_agree(st->comm, moved); /* the last round's transfer, on any rank */
done:
  if (dxpl >= 0) H5Pclose(dxpl);
  if (fspace >= 0) H5Sclose(fspace);
  if (dset >= 0) H5Dclose(dset);
  if (grp >= 0) H5Gclose(grp);
  free(starts);
  free(lens);
  free(offs);
  free(fallback);
  return status;
}

/* The arrays of @p data that record dataset f of pb_store__dset_names fills. */
static void *pb_store__dset_data(const struct pb_rows *data, int f)
{
  void *const at[PB_STORE_DSETS] = {data->pred, data->smax, data->ptrue, data->topk_class, data->topk_prob,
                                    data->entropy, data->collision};
  return at[f];
}

static int pb_store__rows_all(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows,
                              const struct pb_rows *data, int fields, int write)
{
  for (int f = 0; f < PB_STORE_DSETS; f++)
    if (pb_store__dset_in(&st->meta, f) && (fields & pb_store__dset_field(f)) &&
        pb_store__rows_io(st, src, f, n_rows, rows, pb_store__dset_data(data, f), write))
      return PB_FAIL;
  return PB_OK;
}

static int pb_store__check_rows(const struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows)
{
  if (src < 0 || src >= st->meta.n_sources) { pb_error_set("no source %d", src); return PB_FAIL; }
  int32_t max = st->meta.n_models * st->meta.sources[src].n_conditions;
  for (int32_t i = 0; i < n_rows; i++)
    if (rows[i] < 0 || rows[i] >= max || (i > 0 && rows[i] <= rows[i - 1])) {
      pb_error_set("row list for source %s is not sorted, distinct and in range", st->meta.sources[src].name);
      return PB_FAIL;
    }
  return PB_OK;
}

int pb_store_write_rows(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows,
                        const struct pb_rows *data)
{
  if (!st->writable) { pb_error_set("%s: store is not open for writing", st->path); return PB_FAIL; }
  if (pb_error_agree(st->comm, pb_store__check_rows(st, src, n_rows, rows))) return PB_FAIL;
  return pb_store__rows_all(st, src, n_rows, rows, data, PB_FIELD_EVERY, 1);
}

/* The direct chunk writes (store_write.c), or where the layout does not
 * allow them, HDF5's collective writes of pb_store_write_rows. */
int pb_store_write_span(struct pb_store *st, int32_t src, int32_t row0, int32_t n_rows, const struct pb_rows *data)
{
  if (!st->writable) { pb_error_set("%s: store is not open for writing", st->path); return PB_FAIL; }
  if (st->wdirect) return pb_store__write_span_direct(st, src, row0, n_rows, data);
  int32_t *rows = pb_malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof *rows);
  for (int32_t j = 0; j < n_rows; j++) rows[j] = row0 + j;
  int status = pb_store_write_rows(st, src, n_rows, rows, data);
  free(rows);
  return status;
}

/* Tolerance of the M <= S and M = S-when-correct rules, as at ingest (docs/csv.md). */
#define PB_STORE_PROB_TOL 1e-6

/* The summaries' rules at every read (docs/store.md, "Integrity"): 0 <= entropy <= log(classes),
 * max(S^2, M^2) <= collision <= 1 (S and M when read), within ingest's tolerances; in double, as
 * pb_store__row_clean compares them.  The top-k bounds are ingest's alone (docs/csv.md). */
static const char *pb_store__summary_problem(const struct pb_source *s, const struct pb_rows *d, int64_t k,
                                             char *why, size_t n)
{
  const double hmax = log((double)s->n_classes) + PB_PROBSUM_TOL_ENTROPY;
  if (d->entropy && !((double)d->entropy[k] >= -PB_PROBSUM_TOL_ENTROPY && (double)d->entropy[k] <= hmax))
    snprintf(why, n, "entropy %g outside [0, log(%d)]", (double)d->entropy[k], s->n_classes);
  else if (d->collision && !((double)d->collision[k] >= -PB_PROBSUM_TOL_COLLISION &&
                             (double)d->collision[k] <= 1.0 + PB_PROBSUM_TOL_COLLISION))
    snprintf(why, n, "collision %g outside [0, 1]", (double)d->collision[k]);
  else if (d->collision && d->smax && d->ptrue &&
           (double)d->collision[k] < fmax((double)d->smax[k] * d->smax[k], (double)d->ptrue[k] * d->ptrue[k]) -
                                         PB_PROBSUM_TOL_COLLISION)
    snprintf(why, n, "collision %g below max(S^2, M^2)", (double)d->collision[k]);
  else
    return NULL;
  return why;
}

const char *pb_store_record_problem(const struct pb_source *s, const struct pb_rows *d, int64_t k, int32_t i,
                                    char *why, size_t n)
{
  int32_t label = s->labels[i];
  if (d->pred && (d->pred[k] < 0 || d->pred[k] >= s->n_classes))
    snprintf(why, n, "predicted class %d outside [0, %d)", d->pred[k], s->n_classes);
  else if (d->smax && !(d->smax[k] >= 0.0f && d->smax[k] <= 1.0f))
    snprintf(why, n, "max probability %g outside [0, 1]", (double)d->smax[k]);
  else if (d->ptrue && !(d->ptrue[k] >= 0.0f && d->ptrue[k] <= 1.0f))
    snprintf(why, n, "true-class probability %g outside [0, 1]", (double)d->ptrue[k]);
  else if (d->smax && d->ptrue && d->ptrue[k] > d->smax[k] + PB_STORE_PROB_TOL)
    snprintf(why, n, "true-class probability %g exceeds max probability %g", (double)d->ptrue[k],
             (double)d->smax[k]);
  else if (d->smax && d->ptrue && d->pred && d->pred[k] == label &&
           fabsf(d->ptrue[k] - d->smax[k]) > PB_STORE_PROB_TOL)
    snprintf(why, n, "correct prediction but true-class probability %g differs from max probability %g",
             (double)d->ptrue[k], (double)d->smax[k]);
  else {
    for (int32_t j = 0; j < d->topk && d->topk_class; j++) {
      int32_t c = d->topk_class[k * d->topk + j];
      float p = d->topk_prob[k * d->topk + j];
      if (c < 0 || c >= s->n_classes) snprintf(why, n, "top-%d class %d outside [0, %d)", j + 1, c, s->n_classes);
      else if (!(p >= 0.0f && p <= 1.0f)) snprintf(why, n, "top-%d probability %g outside [0, 1]", j + 1, (double)p);
      else if (j > 0 && p > d->topk_prob[k * d->topk + j - 1] + PB_STORE_PROB_TOL)
        snprintf(why, n, "top-%d probability %g exceeds top-%d probability", j + 1, (double)p, j);
      else continue;
      return why;
    }
    return pb_store__summary_problem(s, d, k, why, n);
  }
  return why;
}

/* ok &= COND for every record i of [0, n), as PB_STORE_LANES independent
 * lanes and a tail: a loop gcc vectorises at -O2 (the plain `ok &= COND` loop
 * over a row is not: a reduction of unknown trip count, 4-5 ns per record). */
#define PB_STORE_LANES 16
#define PB_STORE__EVERY(ok, n, COND)                                          \
  do {                                                                        \
    int32_t lane_[PB_STORE_LANES], i_ = 0;                                    \
    for (int l_ = 0; l_ < PB_STORE_LANES; l_++) lane_[l_] = 1;                \
    for (; i_ + PB_STORE_LANES <= (n); i_ += PB_STORE_LANES)                  \
      for (int l_ = 0; l_ < PB_STORE_LANES; l_++) {                           \
        const int32_t i = i_ + l_;                                            \
        lane_[l_] &= (COND);                                                  \
      }                                                                       \
    for (; i_ < (n); i_++) {                                                  \
      const int32_t i = i_;                                                   \
      lane_[0] &= (COND);                                                     \
    }                                                                         \
    for (int l_ = 0; l_ < PB_STORE_LANES; l_++) (ok) &= lane_[l_];            \
  } while (0)

/* pb_store_record_problem without a branch per record, one field rule at a
 * time over a row: nonzero when no record of the row starting at record k0
 * breaks a rule of the fields read.  Rows with top-k lists, and any row this
 * flags, go through pb_store_record_problem, which names the first damaged
 * record.  The same comparisons in the same precision, so both agree on every
 * record. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target_clones("avx2", "default")))
#endif
static int pb_store__row_clean(const struct pb_source *s, const struct pb_rows *d, int64_t k0)
{
  if (d->topk > 0 && d->topk_class) return 0;
  const int32_t n = s->n_images, K = s->n_classes, *label = s->labels;
  const int32_t *pred = d->pred ? d->pred + k0 : NULL;
  const float *S = d->smax ? d->smax + k0 : NULL, *M = d->ptrue ? d->ptrue + k0 : NULL;
  int32_t ok = 1;
  if (pred) PB_STORE__EVERY(ok, n, (pred[i] >= 0) & (pred[i] < K));
  if (S) PB_STORE__EVERY(ok, n, (S[i] >= 0.0f) & (S[i] <= 1.0f));
  if (M) PB_STORE__EVERY(ok, n, (M[i] >= 0.0f) & (M[i] <= 1.0f));
  if (S && M) PB_STORE__EVERY(ok, n, !(M[i] > S[i] + PB_STORE_PROB_TOL));
  if (S && M && pred)
    PB_STORE__EVERY(ok, n, (pred[i] != label[i]) | !(fabsf(M[i] - S[i]) > PB_STORE_PROB_TOL));
  const float *H = d->entropy ? d->entropy + k0 : NULL, *Q = d->collision ? d->collision + k0 : NULL;
  const double hmax = log((double)K) + PB_PROBSUM_TOL_ENTROPY, tc = PB_PROBSUM_TOL_COLLISION;
  if (H) PB_STORE__EVERY(ok, n, ((double)H[i] >= -PB_PROBSUM_TOL_ENTROPY) & ((double)H[i] <= hmax));
  if (Q) PB_STORE__EVERY(ok, n, ((double)Q[i] >= -tc) & ((double)Q[i] <= 1.0 + tc));
  if (Q && S && M)
    PB_STORE__EVERY(ok, n, !((double)Q[i] < fmax((double)S[i] * S[i], (double)M[i] * M[i]) - tc));
  return ok;
}


/* Range checks of every record read, so a damaged or hand-edited store is
 * refused with the cell and image named instead of driving a kernel out of
 * its arrays.  One pass over data already in cache. */
static int pb_store__validate(const struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows,
                              const struct pb_rows *d)
{
  const struct pb_source *s = &st->meta.sources[src];
  const int64_t n = (int64_t)n_rows * s->n_images;
  char why[160];
  /* rows over threads when there are many (the vectorised checks take about a
   * nanosecond a record: below PB_STORE_CHECK_THREADS records the threads'
   * start and end cost more than they save, and on a machine whose other core
   * is busy a 4 MB read checked by 2 threads measured 2-3 times slower than by
   * one); the first damaged record (lowest row, then image) is reported */
  int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad) if (n >= PB_STORE_CHECK_THREADS)
  for (int32_t r = 0; r < n_rows; r++) {
    const int64_t k0 = (int64_t)r * s->n_images;
    if (k0 >= bad || pb_store__row_clean(s, d, k0)) continue;
    char w[160];
    for (int64_t k = k0; k < k0 + s->n_images && k < bad; k++)
      if (pb_store_record_problem(s, d, k, (int32_t)(k - k0), w, sizeof w)) bad = k;
  }
  if (bad == n) return PB_OK;
  const int32_t r = (int32_t)(bad / s->n_images), i = (int32_t)(bad % s->n_images);
  pb_store_record_problem(s, d, bad, i, why, sizeof why);
  int32_t m = rows[r] / s->n_conditions, c = rows[r] % s->n_conditions;
  pb_error_set("%s: invalid record: source %s, model %s, condition %s, image %s: %s (run `pairbound check "
               "%s` to list every damaged record)", st->path, s->name, st->meta.model_ids[m], s->conditions[c],
               s->image_ids[i], why, st->path);
  return PB_FAIL;
}

/* Transfer and check the rows into @p d's arrays; every rank returns the same status. */
static int pb_store__read_into(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows, int fields,
                               struct pb_rows *d)
{
  const double t0 = MPI_Wtime();
  int status = pb_store__rows_all(st, src, n_rows, rows, d, fields, 0);
  if (status == PB_OK && !(fields & PB_FIELD_UNCHECKED)) status = pb_store__validate(st, src, n_rows, rows, d);
  if (status == PB_OK && !(fields & PB_FIELD_ORIGINAL)) pb_store__lsets_map(st, src, d);
  /* the record checks are local: agree, so every rank fails with the first failing rank's reason (reading
   * independently: at pb_store_reads_collective) */
  status = pb_store_agree(st, status);
  const int nf = !!(fields & PB_FIELD_PRED) + !!(fields & PB_FIELD_SMAX) + !!(fields & PB_FIELD_PTRUE) + !!d->entropy +
                 !!d->collision;
  const double per_rec = 4.0 * nf + (st->meta.topk > 0 && (fields & PB_FIELD_TOPK) ? 8.0 * st->meta.topk : 0.0);
  st->read_bytes += per_rec * n_rows * st->meta.sources[src].n_images;
  st->read_seconds += MPI_Wtime() - t0;
  return status;
}

void pb_store_read_stats(const struct pb_store *st, double *bytes, double *seconds)
{
  *bytes = st->read_bytes;
  *seconds = st->read_seconds;
}

int pb_store_read_fields(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows, int fields,
                         struct pb_rows *out)
{
  memset(out, 0, sizeof *out);
  if (pb_store_agree(st, pb_store__check_rows(st, src, n_rows, rows))) return PB_FAIL;
  /* under `pairbound run`, rows an earlier instance of the stage read (src/store/store_memo.c); every rank
   * reads when one misses, as the reads may be collective */
  const int memo = pb_store_memo_on() && !st->writable && !(fields & PB_FIELD_UNCHECKED);
  const int key = pb_store__lsets_key(st, fields);
  int hit = memo && n_rows > 0 ? pb_store_memo_find(st->path, st->comm, src, key, n_rows, rows) : -1;
  int all = memo && (n_rows == 0 || hit >= 0); /* a rank with nothing to read has nothing to miss */
  if (memo && !st->rmap) /* memo: on alike on every rank, unless each rank reads alone */
    pb_comm_allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, st->comm);
  if (all && hit >= 0) {
    pb_store_memo_take(hit, out);
    if (pb_log_verbosity() >= 2)
      pb_message("store: %d rows of source %s from the run's rows memo, not read again", (int)n_rows,
                 st->meta.sources[src].name);
    return PB_OK;
  }
  if (memo && !all) pb_store_memo_miss();
  pb_store_rows_alloc(out, n_rows, st->meta.sources[src].n_images, (fields & PB_FIELD_TOPK) ? st->meta.topk : 0);
  if (!(fields & PB_FIELD_PRED)) { free(out->pred); out->pred = NULL; }
  if (!(fields & PB_FIELD_SMAX)) { free(out->smax); out->smax = NULL; }
  if (!(fields & PB_FIELD_PTRUE)) { free(out->ptrue); out->ptrue = NULL; }
  pb_store_rows_summaries(out, st->meta.summaries & (((fields & PB_FIELD_ENTROPY) ? PB_SUMMARY_ENTROPY : 0) |
                                                     ((fields & PB_FIELD_COLLISION) ? PB_SUMMARY_COLLISION : 0)));
  if (all) return PB_OK; /* no rows here, and the others read none */
  if (pb_store__read_into(st, src, n_rows, rows, fields, out) != PB_OK) {
    pb_store_rows_free(out);
    return PB_FAIL;
  }
  if (memo && n_rows > 0) pb_store_memo_put(st->path, st->comm, src, key, n_rows, rows, out);
  return PB_OK;
}

int pb_store_read_fields_into(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows, int fields,
                              struct pb_rows *buf)
{
  if (pb_store_agree(st, pb_store__check_rows(st, src, n_rows, rows))) return PB_FAIL;
  buf->n_rows = n_rows;
  buf->n_images = st->meta.sources[src].n_images;
  return pb_store__read_into(st, src, n_rows, rows, fields, buf);
}

int pb_store_read_rows(struct pb_store *st, int32_t src, int32_t n_rows, const int32_t *rows,
                       struct pb_rows *out)
{
  return pb_store_read_fields(st, src, n_rows, rows, PB_FIELD_EVERY, out);
}
