/* TSV outputs written by every rank in parallel (docs/architecture.md,
 * "Writing outputs").  Ranks hold contiguous ranges of the rows, so the file
 * is rank 0's header, then each rank's rows in rank order: rank r's rows go
 * at the header's length plus the bytes of ranks 0..r-1 (an exclusive scan),
 * which is the same file for any number of ranks.
 *
 * Rows may be handed over in blocks while they are computed, so no rank
 * holds more than a block of text: rank 0, whose offset is known from the
 * start, writes its blocks straight into the shared temporary; a rank r > 0
 * learns its offset only when every rank before it is done, so it keeps its
 * blocks in a spill file beside the output until the commit, which places
 * them with independent MPI-IO writes at their offsets and renames the
 * temporary into place.  A failed write on any rank (ENOSPC, EIO) is agreed
 * on every rank at the commit, and every temporary is removed. */
#define _GNU_SOURCE /* fallocate (FALLOC_FL_PUNCH_HOLE) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/results.h"

struct pb_tsv {
  MPI_Comm comm;
  int rank;
  char *path;
  char *tmp;      /* the shared temporary, renamed to path by the commit */
  char *spill;    /* ranks > 0: their rows until the commit (NULL on rank 0) */
  int fd;         /* rank 0: tmp, after the header; ranks > 0: spill */
  int64_t len;    /* bytes in fd: rank 0 the header and its rows; others their rows */
  int err;        /* errno of the first failed write, 0 while none failed */
};

/* Largest write of one MPI-IO call, and the buffer that carries a spill to
 * it: under INT_MAX (MPI counts are int), and small enough to stay in the
 * cache between the spill's read and the write.  One buffer of the spill's
 * size (32 MB before) made placing 26 MB of policy_pairs.tsv take 0.12 s
 * against 0.01 s in 2 MB rounds: the read faulted in every page of the fresh
 * buffer, and both copies went through memory. */
#define PB_TSV__CHUNK ((int64_t)1 << 21)
static int64_t pb_tsv__chunk = PB_TSV__CHUNK;

void pb_tsv_set_chunk(int64_t bytes) { pb_tsv__chunk = bytes > 0 && bytes < INT32_MAX ? bytes : PB_TSV__CHUNK; }

/* write(2) all of @p len bytes, or keep the first failure's errno in t->err. */
static void pb_tsv__put(struct pb_tsv *t, const char *text, size_t len)
{
  while (len > 0 && !t->err) {
    ssize_t n = write(t->fd, text, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      t->err = n < 0 ? errno : EIO;
      return;
    }
    text += n;
    len -= (size_t)n;
    t->len += n;
  }
}

/* Local: close and remove this rank's files (rank 0: the shared temporary) and free @p t. */
static void pb_tsv__free(struct pb_tsv *t, int remove_tmp)
{
  if (t->fd >= 0) close(t->fd);
  if (t->spill) unlink(t->spill);
  if (remove_tmp && t->rank == 0 && t->tmp) unlink(t->tmp);
  free(t->path);
  free(t->tmp);
  free(t->spill);
  free(t);
}

/* pb_tsv_open; ranks > 0 make a spill file only when @p spill (their rows
 * come as blocks rather than all at the commit). */
static int pb_tsv__open(MPI_Comm comm, const char *path, const char *header, int spill, struct pb_tsv **out)
{
  struct pb_tsv *t = pb_calloc(1, sizeof *t);
  t->comm = comm;
  t->fd = -1;
  MPI_Comm_rank(comm, &t->rank);
  t->path = pb_strdup(path);
  *out = NULL;
  int status = pb_output_temp_shared(path, comm, &t->tmp);
  if (status == PB_OK && t->rank == 0) {
    if ((t->fd = open(t->tmp, O_WRONLY | O_CLOEXEC)) < 0) {
      pb_error_set("%s: cannot open: %s", t->tmp, strerror(errno));
      status = PB_FAIL;
    } else {
      pb_tsv__put(t, header, strlen(header));
    }
  } else if (status == PB_OK && spill) {
    /* "PATH.rankN.tmp.XXXXXX": a killed run's spill is swept like any temporary */
    char name[32];
    snprintf(name, sizeof name, ".rank%d", t->rank);
    char *base = pb_malloc(strlen(path) + sizeof name);
    sprintf(base, "%s%s", path, name);
    t->fd = pb_output_temp(base, &t->spill);
    free(base);
    if (t->fd < 0) status = PB_FAIL;
  }
  if (pb_error_agree(comm, status) != PB_OK) {
    pb_tsv__free(t, 1);
    return PB_FAIL;
  }
  *out = t;
  return PB_OK;
}

int pb_tsv_open(MPI_Comm comm, const char *path, const char *header, struct pb_tsv **out)
{
  return pb_tsv__open(comm, path, header, 1, out);
}

void pb_tsv_write(struct pb_tsv *t, const char *text, size_t len)
{
  if (len) pb_tsv__put(t, text, len);
}

int pb_tsv_status(const struct pb_tsv *t)
{
  if (!t->err) return PB_OK;
  if (t->spill) pb_error_set("%s: cannot write file (this rank's rows, in %s): %s", t->path, t->spill, strerror(t->err));
  else pb_error_set("%s: cannot write file: %s", t->path, strerror(t->err));
  return PB_FAIL;
}

/* Local: write this rank's @p len bytes at @p at in rounds of at most
 * pb_tsv__chunk bytes (MPI counts are int), from @p mem or else from the
 * spill file, with independent MPI_File_write_at calls: each rank writes
 * bytes no other rank touches, so none waits for another (a collective write
 * made the ranks wait for each other at every round; docs/scaling.md, "Ranks
 * and threads").  PB_FAIL with a message on a failing rank. */
static int pb_tsv__place(struct pb_tsv *t, MPI_File fh, MPI_Offset at, const char *mem, int64_t len)
{
  const int64_t chunk = pb_tsv__chunk;
  char *buf = !mem && len > 0 ? pb_malloc((size_t)(len < chunk ? len : chunk)) : NULL;
  int status = PB_OK;
  for (int64_t done = 0; done < len && status == PB_OK;) {
    const int n = (int)(len - done < chunk ? len - done : chunk);
    const char *src = mem ? mem + done : buf;
    if (!mem && pread(t->fd, buf, (size_t)n, (off_t)done) != n) {
      pb_error_set("%s: cannot read back rows: %s", t->spill, strerror(errno ? errno : EIO));
      status = PB_FAIL;
      break;
    }
    /* the spill's bytes read are dropped at once: the page cache then holds
     * them once, not twice, and dirty pages stay below the kernel's writeback
     * threshold (policy --all at 2 x 1: placing 611 MB took 0.65 s kept, 0.3
     * s dropped); a file system without holes keeps them, which is only slower */
    if (!mem) (void)fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)done, (off_t)n);
    MPI_Status st;
    int got = 0, rc = MPI_File_write_at(fh, at + done, src, n, MPI_BYTE, &st);
    if (rc == MPI_SUCCESS) MPI_Get_count(&st, MPI_BYTE, &got);
    if (rc != MPI_SUCCESS || got != n) {
      char why[MPI_MAX_ERROR_STRING] = "short write";
      int wl;
      if (rc != MPI_SUCCESS) MPI_Error_string(rc, why, &wl);
      pb_error_set("%s: cannot write file: %s", t->path, why);
      status = PB_FAIL;
    }
    done += n;
  }
  free(buf);
  return status;
}

/* Collective: the ranks > 0 place their rows (@p mem, or their spill) after
 * everything before them in the temporary. */
static int pb_tsv__place_all(struct pb_tsv *t, const char *mem, int64_t len)
{
  int64_t before = 0, mine = t->rank == 0 ? t->len : len, others = t->rank == 0 ? 0 : len;
  MPI_Exscan(&mine, &before, 1, MPI_INT64_T, MPI_SUM, t->comm);
  pb_comm_allreduce(MPI_IN_PLACE, &others, 1, MPI_INT64_T, MPI_SUM, t->comm);
  if (others == 0) return PB_OK; /* one rank, or only rank 0 has rows: all written already */
  MPI_File fh;
  int rc = MPI_File_open(t->comm, t->tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
  int opened = rc == MPI_SUCCESS, all_opened = opened;
  pb_comm_allreduce(MPI_IN_PLACE, &all_opened, 1, MPI_INT, MPI_LAND, t->comm);
  int status = PB_OK;
  if (!all_opened) {
    char why[MPI_MAX_ERROR_STRING] = "another rank could not open it";
    int wl;
    if (!opened) MPI_Error_string(rc, why, &wl);
    pb_error_set("%s: cannot open for writing: %s", t->tmp, why);
    status = PB_FAIL;
  } else {
    status = pb_tsv__place(t, fh, (MPI_Offset)(t->rank == 0 ? 0 : before), mem, t->rank == 0 ? 0 : len);
  }
  if (opened && MPI_File_close(&fh) != MPI_SUCCESS && status == PB_OK) {
    pb_error_set("%s: cannot write file: closing failed", t->path);
    status = PB_FAIL;
  }
  return status;
}

/* Collective: agree on the writes so far, place the rows of ranks > 0, rename. */
static int pb_tsv__finish(struct pb_tsv *t, const char *mem, int64_t len)
{
  int status;
  if (t->rank == 0 && t->fd >= 0) {
    if (close(t->fd) != 0 && !t->err) t->err = errno;
    t->fd = -1;
  }
  status = pb_tsv_status(t);
  if (pb_error_agree(t->comm, status) == PB_OK) status = pb_error_agree(t->comm, pb_tsv__place_all(t, mem, len));
  else status = PB_FAIL;
  /* every temporary goes before the last agreement: when the commit returns
   * on any rank, the file is in place or gone, with nothing beside it */
  if (t->fd >= 0) close(t->fd);
  t->fd = -1;
  if (t->spill) unlink(t->spill);
  free(t->spill);
  t->spill = NULL;
  if (status == PB_OK && t->rank == 0 && rename(t->tmp, t->path) != 0) {
    pb_error_set("%s: cannot rename to %s: %s", t->tmp, t->path, strerror(errno));
    status = PB_FAIL;
  }
  if (status != PB_OK && t->rank == 0) unlink(t->tmp);
  status = pb_error_agree(t->comm, status);
  pb_tsv__free(t, 0);
  return status;
}

int pb_tsv_commit(struct pb_tsv *t) { return pb_tsv__finish(t, NULL, t->rank == 0 ? 0 : t->len); }

void pb_tsv_abort(struct pb_tsv *t)
{
  if (t) pb_tsv__free(t, 1);
}

int pb_results_tsv_file(MPI_Comm comm, const char *path, const char *header, const char *text, size_t len)
{
  struct pb_tsv *t;
  int rank;
  MPI_Comm_rank(comm, &rank);
  if (pb_tsv__open(comm, path, header, 0, &t) != PB_OK) return PB_FAIL;
  /* rows in memory already: rank 0 writes its own at once, the others need no spill */
  if (rank == 0) pb_tsv_write(t, text, len);
  return pb_tsv__finish(t, text, rank == 0 ? 0 : (int64_t)len);
}
