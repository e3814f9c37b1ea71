/* HDF5 record store: direct chunk writes, the counterpart of the direct reads
 * of store_read.c.  A record dataset's chunks are allocated when it is
 * created or extended (H5D_ALLOC_TIME_EARLY; their fill left out:
 * store_skeleton.c) and each holds whole rows
 * [1][C'][I](+[K]) followed by HDF5's Fletcher32 checksum of them; so writing
 * a chunk is computing that checksum (pb_checksum_fletcher32, bit-exact with
 * HDF5's filter) and writing bytes and checksum at the chunk's address (past
 * the page cache where the file system allows: pb_output_direct_writev),
 * which HDF5 reports once (H5Dget_chunk_info_by_coord, asked by every rank
 * alike).  No collective HDF5 transfer is involved: each rank writes its own
 * rows whenever it has them, and a failed write is local to that rank (the
 * callers agree on the status).  A store whose datasets do not have that
 * layout (rows of more than 4 MiB, split along images) is written through
 * HDF5's collective writes as before.  docs/store.md, "Writing". */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/checksum.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/job.h"
#include "pairbound/store.h"
#include "store_internal.h"


/* Collective: the address of every chunk of source @p s's record datasets, on
 * every rank (pb_store__chunkmap_dset, the map the independent reads use).  A
 * dataset the direct path cannot reach whole leaves the whole store to
 * HDF5's writes (st->wdirect = 0, agreed). */
static void pb_store__wmap_source(struct pb_store *st, int32_t s)
{
  int ok = 1;
  if (!st->wdirect) return;
  for (int f = 0; f < PB_STORE_DSETS; f++) {
    struct pb_store__chunkmap *w = &st->wmap[s * PB_STORE_DSETS + f];
    free(w->addr);
    memset(w, 0, sizeof *w);
    if (pb_store__dset_in(&st->meta, f) && !pb_store__chunkmap_dset(st, s, f, w)) ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, st->comm);
  if (!ok) st->wdirect = 0;
}

/* Collective, once the record datasets exist: the chunk map of every source
 * and a descriptor for the writes (or HDF5's writes, when the layout or the
 * file system does not allow them). */
int pb_store__wmap_all(struct pb_store *st)
{
  st->wmap = pb_calloc((size_t)st->meta.n_sources * PB_STORE_DSETS + 1, sizeof *st->wmap);
  int ok = pb_output_direct_open(&st->wfd, st->tmp_path ? st->tmp_path : st->path) == PB_OK; /* in place: an append */
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, st->comm);
  st->wdirect = ok;
  for (int32_t s = 0; s < st->meta.n_sources && st->wdirect; s++) pb_store__wmap_source(st, s);
  return PB_OK;
}

void pb_store__wmap_free(struct pb_store *st)
{
  pb_store__chunkmap_free(st, &st->wmap);
  pb_output_direct_close(&st->wfd);
}

int32_t pb_store_span_rows(const struct pb_store *st, int32_t src)
{
  const int32_t C = st->meta.sources[src].n_conditions;
  if (!st->wdirect) return C;
  /* the least common multiple of the datasets' conditions per chunk, at most C */
  int64_t span = 1;
  for (int f = 0; f < PB_STORE_DSETS; f++) {
    const int64_t r = st->wmap[src * PB_STORE_DSETS + f].rows;
    if (r <= 0) continue;
    int64_t a = span, b = r;
    while (b) {
      const int64_t t = a % b;
      a = b;
      b = t;
    }
    span = span / a * r;
    if (span >= C) return C;
  }
  return (int32_t)span;
}

/* Local: rows [row0, row0 + n_rows) of one dataset from @p buf, chunk by
 * chunk (the span starts and ends on chunk boundaries, or at a model's end).
 * A chunk the rows fill is written from @p buf itself; the last chunk of a
 * model whose conditions do not fill it is copied into @p scratch and
 * padded with zeros, as HDF5 pads an edge chunk. */
static int pb_store__write_dset(struct pb_store *st, const struct pb_store__chunkmap *w, int32_t n_cond, int32_t row0,
                                int32_t n_rows, const char *buf, char **scratch)
{
  const size_t chunk_bytes = (size_t)w->rows * w->row_bytes;
  for (int32_t r = row0; r < row0 + n_rows;) {
    const int32_t m = r / n_cond, c = r % n_cond, k = c / w->rows;
    const int32_t c1 = (k + 1) * w->rows < n_cond ? (k + 1) * w->rows : n_cond;
    const size_t bytes = (size_t)(c1 - c) * w->row_bytes;
    const char *from = buf + (size_t)(r - row0) * w->row_bytes;
    if (c != k * w->rows || r + (c1 - c) > row0 + n_rows) {
      pb_error_set("%s: rows %d..%d of a write do not cover whole chunks", st->path, (int)row0, (int)(row0 + n_rows));
      return PB_FAIL;
    }
    if (bytes < chunk_bytes) {
      if (!*scratch) *scratch = pb_malloc(chunk_bytes);
      memcpy(*scratch, from, bytes);
      memset(*scratch + bytes, 0, chunk_bytes - bytes);
      from = *scratch;
    }
    const uint32_t f = pb_checksum_fletcher32(from, chunk_bytes);
    unsigned char sum[4] = {(unsigned char)f, (unsigned char)(f >> 8), (unsigned char)(f >> 16),
                            (unsigned char)(f >> 24)};
    struct iovec iov[2] = {{(void *)from, chunk_bytes}, {sum, 4}};
    if (pb_output_direct_writev(&st->wfd, iov, 2, w->addr[(size_t)m * (size_t)w->per_model + (size_t)k]) != PB_OK) {
      pb_error_set("%s: cannot write records: %s", st->path, strerror(errno));
      return PB_FAIL;
    }
    r += c1 - c;
  }
  return PB_OK;
}

/* Local: rows [row0, row0 + n_rows) of source @p src, every dataset's chunks. */
static int pb_store__write_span_local(struct pb_store *st, int32_t src, int32_t row0, int32_t n_rows,
                                      const struct pb_rows *data)
{
  const int32_t n_cond = st->meta.sources[src].n_conditions;
  const void *field[PB_STORE_DSETS] = {data->pred,      data->smax,    data->ptrue,    data->topk_class,
                                       data->topk_prob, data->entropy, data->collision};
  char *scratch = NULL;
  int status = PB_OK;
  for (int f = 0; f < PB_STORE_DSETS && status == PB_OK && n_rows > 0; f++) {
    const struct pb_store__chunkmap *w = &st->wmap[src * PB_STORE_DSETS + f];
    if (w->rows == 0) continue; /* no top-k lists, or no such summary */
    status = pb_store__write_dset(st, w, n_cond, row0, n_rows, field[f], &scratch);
    free(scratch);
    scratch = NULL;
  }
  return status;
}

int pb_store__write_span_direct(struct pb_store *st, int32_t src, int32_t row0, int32_t n_rows,
                                const struct pb_rows *data)
{
  /* a write that failed (a full disk) on one rank fails every rank's */
  return pb_error_agree(st->comm, pb_store__write_span_local(st, src, row0, n_rows, data));
}

int pb_store_write_async(const struct pb_store *st) { return st->writable && st->wdirect; }

/* The writer's thread: its spans in order, up to a failure (its message kept: pb_error_set's is per thread). */
static void pb_store__writer_main(void *arg)
{
  struct pb_store_writer *w = arg;
  for (int k = 0; k < w->n_span && w->status == PB_OK; k++) {
    const struct pb_store_span *x = &w->span[k];
    w->status = pb_store__write_span_local(w->st, x->src, x->row0, x->n_rows, &x->rows);
  }
  if (w->status != PB_OK) w->why = pb_strdup(pb_error_message());
}

void pb_store_writer_start(struct pb_store_writer *w, struct pb_store *st, const struct pb_store_span *span,
                           int n_span)
{
  if (w->cap_span < n_span) {
    w->cap_span = n_span;
    w->span = pb_realloc(w->span, (size_t)n_span * sizeof *w->span);
  }
  if (n_span > 0) memcpy(w->span, span, (size_t)n_span * sizeof *span);
  w->n_span = n_span;
  w->st = st;
  w->status = PB_OK;
  pb_job_start(&w->job, pb_store__writer_main, w);
}

int pb_store_writer_wait(struct pb_store_writer *w, MPI_Comm comm)
{
  pb_job_join(&w->job);
  int status = w->status;
  if (status != PB_OK) pb_error_set("%s", w->why);
  free(w->why);
  w->why = NULL;
  w->status = PB_OK;
  w->n_span = 0;
  return pb_error_agree(comm, status);
}

void pb_store_writer_free(struct pb_store_writer *w)
{
  pb_job_join(&w->job);
  free(w->span);
  free(w->why);
  memset(w, 0, sizeof *w);
}
