/* Stage outputs: results.h5 columns written collectively, TSV gathered to rank 0,
 * all of it built in a staging directory inside OUTDIR and moved into place
 * at once by the commit (include/pairbound/output.h). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/checkpoint.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/results.h"
#include "pairbound/signals.h"
#include "pairbound/util.h"
#include "h5io.h"

struct pb_results {
  MPI_Comm comm;
  int rank;
  hid_t file;
  char *outdir, *tmp;
  char *staging; /* OUTDIR/.pairbound-stage.XXXXXX: results.h5 and report/ until the commit */
  struct pb_output_lock lock; /* rank 0: OUTDIR/.pairbound.lock while the stage writes */
};

const char *pb_build_info(void)
{
  return "pairbound " PACKAGE_VERSION " (git " PB_GIT_REVISION "); configure: " PB_CONFIGURE_ARGS
         "; CFLAGS: " PB_CFLAGS;
}

/* Rank 0: check OUTDIR, create it, take its lock and sweep what a killed
 * run left (temporaries, staging directories). */
static int pb_results__claim(struct pb_results *res, const char *outdir)
{
  char *report = pb_path_join(outdir, "report"), *lock = pb_path_join(outdir, ".pairbound.lock");
  int status = pb_output_dir_ok(outdir, NULL, 0, pb_output_force());
  if (status == PB_OK) status = pb_mkdir_p(outdir);
  if (status == PB_OK) status = pb_output_lock_take(&res->lock, lock, outdir, 0);
  if (status == PB_OK) { /* ours now: what a killed run left half-written goes */
    pb_output_sweep(outdir, NULL);
    pb_output_sweep(report, NULL);
  }
  free(report);
  free(lock);
  return status;
}

int pb_results_create(const char *outdir, MPI_Comm comm, const char *provenance, struct pb_results **out)
{
  struct pb_results *res = pb_calloc(1, sizeof *res);
  int status = PB_OK;
  hid_t fapl = -1, grp = -1;
  res->comm = comm;
  res->file = -1;
  MPI_Comm_rank(comm, &res->rank);
  res->outdir = pb_strdup(outdir);
  res->lock.fd = -1;
  *out = NULL;
  if (res->rank == 0) status = pb_results__claim(res, outdir);
  /* everything is built in the staging directory; OUTDIR changes only at the commit */
  if (pb_error_agree(comm, status) != PB_OK || pb_output_staging_make(outdir, comm, &res->staging) != PB_OK) {
    status = PB_FAIL;
    goto done;
  }
  if (res->rank == 0) pb_signal_cleanup(res->staging);
  res->tmp = pb_path_join(res->staging, "results.h5");
  status = PB_FAIL;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if ((fapl = pb_h5_fapl(comm)) < 0) goto done;
  if ((res->file = H5Fcreate(res->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0) {
    pb_error_set("%s: cannot create file", res->tmp);
    goto done;
  }
  if ((grp = H5Gcreate2(res->file, "provenance", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
      pb_h5_attr_str(grp, "build", pb_build_info()) || pb_h5_attr_str(grp, "text", provenance))
    goto done;
  status = PB_OK;
done:
  if (grp >= 0) H5Gclose(grp);
  if (fapl >= 0) H5Pclose(fapl);
  if (status == PB_OK) *out = res;
  else pb_results_close(res);
  return status;
}

MPI_Comm pb_results_comm(const struct pb_results *res) { return res->comm; }

/* Does every link of PATH ("/a/b/c") exist?  (H5Lexists needs the parents to exist.) */
static int pb_results__exists(hid_t file, const char *path)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1;; p++) {
    if (*p != '/' && *p != '\0') continue;
    const char c = *p;
    *p = '\0';
    if (H5Lexists(file, buf, H5P_DEFAULT) <= 0) return 0;
    if (c == '\0') return 1;
    *p = c;
  }
}

int pb_results_group(struct pb_results *res, const char *path)
{
  if (pb_results__exists(res->file, path)) return PB_OK;
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t g = H5Gcreate2(res->file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(lcpl);
  if (g < 0) {
    pb_error_set("%s: cannot create group %s", res->tmp, path);
    return PB_FAIL;
  }
  H5Gclose(g);
  return PB_OK;
}

int pb_results_write_f64(struct pb_results *res, const char *path, int64_t n_total, int64_t offset,
                         int64_t n_local, const double *v)
{
  return pb_h5_write_slice(res->file, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n_total, offset, n_local, v);
}

int pb_results_write_i64(struct pb_results *res, const char *path, int64_t n_total, int64_t offset,
                         int64_t n_local, const int64_t *v)
{
  return pb_h5_write_slice(res->file, path, H5T_STD_I64LE, H5T_NATIVE_INT64, n_total, offset, n_local, v);
}

int pb_results_write_strings(struct pb_results *res, const char *path, int64_t n, char *const *v)
{
  return pb_h5_write_strings(res->file, path, v, (int32_t)n, res->rank);
}

int pb_results_attr_str(struct pb_results *res, const char *path, const char *name, const char *value)
{
  hid_t obj = H5Oopen(res->file, path, H5P_DEFAULT);
  if (obj < 0) {
    pb_error_set("%s: no object %s", res->tmp, path);
    return PB_FAIL;
  }
  int status = pb_h5_attr_str(obj, name, value);
  H5Oclose(obj);
  return status;
}

char *pb_results_report_path(const struct pb_results *res, const char *name)
{
  char *report = pb_path_join(res->staging, "report");
  char *p = pb_path_join(report, name);
  free(report);
  return p;
}

int pb_results_commit(struct pb_results *res)
{
  int status = pb_h5_close_file(res->file, res->tmp, 0);
  res->file = -1;
  /* a signal now would cut the commit in two: it waits until the end */
  int was = pb_signal_set_deferred(1);
  if (status == PB_OK && res->rank == 0) status = pb_output_staging_commit(res->staging, res->outdir);
  /* an earlier checkpoint describes the outputs just replaced */
  if (status == PB_OK && res->rank == 0) pb_checkpoint_remove(res->outdir);
  status = pb_error_agree(res->comm, status);
  pb_results_close(res); /* removes the staging directory, now holding the previous report/ */
  pb_signal_set_deferred(was);
  return status;
}

void pb_results_close(struct pb_results *res)
{
  if (!res) return;
  if (res->file >= 0 && res->staging) {
    /* the report files go first: on a full disk, the close's metadata flush needs their space */
    char *rep = pb_path_join(res->staging, "report");
    if (res->rank == 0) pb_output_remove_tree(rep);
    free(rep);
    MPI_Barrier(res->comm);
  }
  pb_h5_close_file(res->file, res->tmp, 1);
  if (res->staging && res->rank == 0) {
    pb_signal_cleanup(NULL);
    pb_output_remove_tree(res->staging);
  }
  pb_output_lock_release(&res->lock);
  free(res->outdir);
  free(res->tmp);
  free(res->staging);
  free(res);
}

int pb_results_tsv(struct pb_results *res, const char *name, const char *header, const char *text, size_t len)
{
  char *path = pb_results_report_path(res, name);
  int status = pb_results_tsv_file(res->comm, path, header, text, len);
  free(path);
  return status;
}

int pb_results_tsv_file(MPI_Comm comm, const char *path, const char *header, const char *text, size_t len)
{
  int rank, size, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  /* lengths as int64 so a rank may hold more than 2 GB of text */
  int64_t mine = (int64_t)len, *lens = rank == 0 ? pb_malloc((size_t)size * sizeof *lens) : NULL;
  MPI_Gather(&mine, 1, MPI_INT64_T, lens, 1, MPI_INT64_T, 0, comm);
  if (rank == 0) {
    struct pb_outfile f;
    status = pb_outfile_open(&f, path);
    if (status == PB_OK) {
      fputs(header, f.fp);
      if (len) fwrite(text, 1, len, f.fp);
      for (int r = 1; r < size; r++) {
        char *buf = pb_malloc((size_t)lens[r]);
        for (int64_t got = 0; got < lens[r];) {
          int chunk = (int)(lens[r] - got > (1 << 30) ? (1 << 30) : lens[r] - got);
          MPI_Recv(buf + got, chunk, MPI_CHAR, r, 7, comm, MPI_STATUS_IGNORE);
          got += chunk;
        }
        fwrite(buf, 1, (size_t)lens[r], f.fp);
        free(buf);
      }
      status = pb_outfile_commit(&f);
    } else {
      for (int r = 1; r < size; r++) /* drain so no rank blocks */
        for (int64_t got = 0; got < lens[r];) {
          int chunk = (int)(lens[r] - got > (1 << 30) ? (1 << 30) : lens[r] - got);
          char *buf = pb_malloc((size_t)chunk);
          MPI_Recv(buf, chunk, MPI_CHAR, r, 7, comm, MPI_STATUS_IGNORE);
          free(buf);
          got += chunk;
        }
    }
    free(lens);
  } else {
    for (int64_t sent = 0; sent < mine;) {
      int chunk = (int)(mine - sent > (1 << 30) ? (1 << 30) : mine - sent);
      MPI_Send(text + sent, chunk, MPI_CHAR, 0, 7, comm);
      sent += chunk;
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  if (status != PB_OK && rank != 0) pb_error_set("%s: cannot write file", path);
  return status;
}

void pb_text_printf(struct pb_text *t, const char *fmt, ...)
{
  va_list ap;
  for (;;) {
    va_start(ap, fmt);
    int n = vsnprintf(t->buf ? t->buf + t->len : NULL, t->buf ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (t->buf && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
}

void pb_text_double(struct pb_text *t, double x)
{
  char b[40];
  pb_format_double(x, b);
  pb_text_printf(t, "\t%s", b);
}

#define PB_TEXT__MEMO 4096
static _Thread_local struct pb_text__memo {
  uint64_t bits;
  uint8_t used, len;
  char txt[40];
} pb_text__memo[PB_TEXT__MEMO];

void pb_text_num(struct pb_text *t, double x)
{
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  struct pb_text__memo *m = &pb_text__memo[((bits ^ (bits >> 29)) * 0x9e3779b97f4a7c15ull) >> 52 & (PB_TEXT__MEMO - 1)];
  if (!m->used || m->bits != bits) {
    pb_format_double(x, m->txt);
    m->bits = bits;
    m->used = 1;
    m->len = (uint8_t)strlen(m->txt);
  }
  if (t->len + m->len + 2 > t->cap) {
    t->cap = 2 * (t->len + m->len + 2) + 4096;
    t->buf = pb_realloc(t->buf, t->cap);
  }
  t->buf[t->len++] = '\t';
  memcpy(t->buf + t->len, m->txt, (size_t)m->len + 1);
  t->len += m->len;
}

void pb_text_free(struct pb_text *t)
{
  free(t->buf);
  memset(t, 0, sizeof *t);
}

void pb_table_begin(struct pb_table *t, const char *title, const char *note, const char *cols, const char *md_cols)
{
  pb_text_printf(&t->md, "\n### %s\n\n%s\n\n|", title, note);
  char *c = pb_strdup(md_cols ? md_cols : cols), *save = NULL;
  int n = 0;
  for (char *w = strtok_r(c, "\t", &save); w; w = strtok_r(NULL, "\t", &save), n++) pb_text_printf(&t->md, " %s |", w);
  pb_text_printf(&t->md, "\n|");
  while (n--) pb_text_printf(&t->md, "---|");
  pb_text_printf(&t->md, "\n");
  pb_text_printf(&t->tsv, "%s\n", cols);
  free(c);
}

void pb_table_str(struct pb_table *t, const char *s, int first)
{
  pb_text_printf(&t->tsv, "%s%s", first ? "" : "\t", s);
  pb_text_printf(&t->md, "%s %s", first ? "|" : " |", s);
}

void pb_table_int(struct pb_table *t, int64_t v)
{
  pb_text_printf(&t->tsv, "\t%lld", (long long)v);
  pb_text_printf(&t->md, " | %lld", (long long)v);
}

void pb_table_num(struct pb_table *t, double x, int digits)
{
  pb_text_double(&t->tsv, x);
  if (isnan(x)) pb_text_printf(&t->md, " | n/a");
  else if (digits < 0) pb_text_printf(&t->md, " | %+.*f", -digits, x);
  else pb_text_printf(&t->md, " | %.*f", digits, x);
}

void pb_table_end_row(struct pb_table *t)
{
  pb_text_printf(&t->tsv, "\n");
  pb_text_printf(&t->md, " |\n");
}

int pb_results_write_report(const struct pb_results *res, const char *name, const char *text, size_t len)
{
  char *path = pb_results_report_path(res, name);
  struct pb_outfile f;
  int status = pb_outfile_open(&f, path);
  if (status == PB_OK) {
    if (len) fwrite(text, 1, len, f.fp);
    status = pb_outfile_commit(&f);
  }
  free(path);
  return status;
}

int pb_table_flush(struct pb_table *t, struct pb_results *res, const char *name, struct pb_text *md)
{
  int status = pb_results_write_report(res, name, t->tsv.buf, t->tsv.len);
  pb_text_printf(md, "%s", t->md.buf ? t->md.buf : "");
  pb_text_free(&t->tsv);
  pb_text_free(&t->md);
  return status;
}
