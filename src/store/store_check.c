/* `pairbound check`: read every record of a store and name what is damaged.
 * Each rank opens the store on its own (MPI_COMM_SELF) and reads its share of
 * the rows one at a time, so a chunk that fails its checksum is a local,
 * named failure rather than a collective read that every rank must repeat. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/error.h"
#include "pairbound/store.h"
#include "store_internal.h"

struct pb_check__out {
  FILE *fp;          /* memory stream of this rank's lines */
  char *buf;
  size_t len;
  int64_t lines, bad, records, rows;
  int64_t max_lines;
};

static void pb_check__line(struct pb_check__out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void pb_check__line(struct pb_check__out *o, const char *fmt, ...)
{
  o->bad++;
  if (o->lines++ >= o->max_lines) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(o->fp, fmt, ap);
  va_end(ap);
  fputc('\n', o->fp);
}

static void pb_check__row(struct pb_store *st, int32_t src, int32_t row, struct pb_check__out *o)
{
  const struct pb_meta *meta = pb_store_meta(st);
  const struct pb_source *s = &meta->sources[src];
  const char *model = meta->model_ids[row / s->n_conditions], *cond = s->conditions[row % s->n_conditions];
  struct pb_rows d;
  o->rows++;
  if (pb_store_read_fields(st, src, 1, &row, PB_FIELD_EVERY | PB_FIELD_UNCHECKED, &d) != PB_OK) {
    pb_check__line(o, "source %s, model %s, condition %s: records cannot be read (a chunk fails its checksum or "
                      "cannot be decoded)", s->name, model, cond);
    pb_error_clear();
    return;
  }
  char why[160];
  for (int32_t i = 0; i < s->n_images; i++, o->records++)
    if (pb_store_record_problem(s, &d, i, i, why, sizeof why))
      pb_check__line(o, "source %s, model %s, condition %s, image %s: %s", s->name, model, cond, s->image_ids[i],
                     why);
  pb_store_rows_free(&d);
}

/* Rank 0 prints every rank's lines in rank order (ranks hold consecutive
 * rows), the first max_lines overall: a rank sends only those of its lines
 * that come before that many, so rank 0 receives at most max_lines. */
static void pb_check__print(struct pb_check__out *o, MPI_Comm comm, FILE *out)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t kept = 0, before = 0;
  for (size_t i = 0; i < o->len; i++) kept += o->buf[i] == '\n';
  MPI_Exscan(&kept, &before, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) before = 0;
  size_t send = 0;
  for (int64_t n = 0; send < o->len && before + n < o->max_lines; send++) n += o->buf[send] == '\n';
  int len = (int)send, *lens = rank == 0 ? malloc((size_t)size * sizeof *lens) : NULL;
  int *displ = rank == 0 ? malloc((size_t)size * sizeof *displ) : NULL;
  MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
  char *all = NULL;
  if (rank == 0) {
    int total = 0;
    for (int r = 0; r < size; r++) {
      displ[r] = total;
      total += lens[r];
    }
    all = pb_malloc((size_t)total + 1);
    all[total] = '\0';
  }
  MPI_Gatherv(o->buf, len, MPI_CHAR, all, lens, displ, MPI_CHAR, 0, comm);
  int64_t v[4] = {o->bad, o->records, o->rows, o->lines};
  MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0) {
    int64_t shown = 0;
    for (char *p = all; *p && shown < o->max_lines; shown++) {
      char *nl = strchr(p, '\n');
      fwrite(p, 1, (size_t)(nl - p + 1), out);
      p = nl + 1;
    }
    if (v[3] > shown) fprintf(out, "... %lld more\n", (long long)(v[3] - shown));
    fprintf(out, "checked %lld records in %lld rows: %s%lld damaged\n", (long long)v[1], (long long)v[2],
            v[0] ? "" : "ok, ", (long long)v[0]);
  }
  o->bad = v[0];
  free(all);
  free(lens);
  free(displ);
}

/* Open the store on every rank (each on its own), its metadata checked against their checksums (schema 2): on
 * rank 0, one line per damaged metadata object (at most max_lines) and why the open ended, *st NULL; else one
 * line saying what was checked, *st the open store.  PB_FAIL (the reason set) when the store cannot be opened for
 * another reason. */
static int pb_check__meta(const char *path, MPI_Comm comm, int64_t max_lines, FILE *out, struct pb_store **st,
                          int64_t *n_meta)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  int status = pb_store__open(path, MPI_COMM_SELF, fp, n_meta, st);
  fclose(fp);
  MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm); /* the same file: the same answer */
  if (status != PB_OK && *st) pb_store_close(*st);
  if (status != PB_OK) *st = NULL;
  if (rank == 0 && status != PB_OK && *n_meta > 0) {
    int64_t shown = 0;
    for (char *p = buf; *p && shown < max_lines; shown++) {
      char *nl = strchr(p, '\n');
      fwrite(p, 1, (size_t)(nl - p + 1), out);
      p = nl + 1;
    }
    if (*n_meta > shown) fprintf(out, "... %lld more\n", (long long)(*n_meta - shown));
    fprintf(out, "%s; records not checked\n", pb_error_message());
  } else if (rank == 0 && status == PB_OK) {
    const struct pb_meta *meta = pb_store_meta(*st);
    if ((*st)->checksummed)
      fprintf(out, "metadata: %d objects match their checksums (XXH3-128)\n", (int)pb_store__digests(meta, -1));
    else
      fprintf(out, "metadata: not checksummed (a schema-%d store)\n", (int)meta->schema_version);
  }
  free(buf);
  return status == PB_OK || *n_meta > 0 ? PB_OK : PB_FAIL;
}

int pb_store_check(const char *path, MPI_Comm comm, int64_t max_lines, FILE *out, int64_t *n_bad)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  struct pb_store *st = NULL;
  int64_t n_meta = 0;
  if (pb_check__meta(path, comm, max_lines, out, &st, &n_meta) != PB_OK) return PB_FAIL;
  if (!st) { /* damaged metadata: what the records are is unknown */
    *n_bad = n_meta;
    return PB_OK;
  }
  struct pb_check__out o = {.max_lines = max_lines};
  o.fp = open_memstream(&o.buf, &o.len);
  const struct pb_meta *meta = pb_store_meta(st);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    int64_t n = (int64_t)meta->n_models * meta->sources[s].n_conditions;
    for (int64_t r = n * rank / size; r < n * (rank + 1) / size; r++) pb_check__row(st, s, (int32_t)r, &o);
  }
  fclose(o.fp);
  pb_check__print(&o, comm, out);
  *n_bad = o.bad;
  free(o.buf);
  pb_store_close(st);
  return PB_OK;
}
