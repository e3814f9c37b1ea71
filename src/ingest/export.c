/* `pairbound export`: write a record store as CSV in canonical order, so that
 * ingest -> export reproduces a canonical CSV byte for byte (docs/csv.md).
 *
 * The records go out in blocks (a model's rows of a source, or part of them
 * for a very large model), dealt to the ranks in turn: in each round every
 * rank reads its block (one collective read), formats it with its threads,
 * learns from the others' lengths where its text starts, and writes it there
 * (past the page cache where it can) on a thread of its own while it formats
 * the next block.  No rank holds more than two blocks' text, nothing is
 * written twice, and the file is the same for any number of ranks and
 * threads. */
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
#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/error_mpi.h"
#include "pairbound/ingest.h"
#include "pairbound/job.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"
#include "pairbound/store.h"
#include "pairbound/text.h"

/* Records per block: a model's rows of a source when they are at most this
 * many (every model of the paper store), else as many whole rows as fit. */
#define PB_EXPORT_BLOCK_RECORDS (1 << 20)

/* Texts of recent floats by their bits, per thread: the probabilities of a
 * store repeat (half-precision ones take about 15,000 values in [0, 1]), and
 * the exact formatting costs about as much as the rest of a record.  A table
 * four times that size (1.5 MB) collides less: on the paper store, 16,384
 * entries left a quarter of export's CPU samples in the formatting, 65,536 a
 * fifth. */
#define PB_EXPORT_MEMO 65536
struct pb_export__memo {
  uint32_t bits;
  uint8_t len, used;
  char txt[16];
};

/* What one thread formats into: its text and its float memo. */
struct pb_export__out {
  char *buf;
  size_t len, cap;
  struct pb_export__memo *memo;
};

/* The fixed parts of every line of a source: "model,group,source,condition,"
 * for each condition of the current model, "image,label,split," per image. */
struct pb_export__parts {
  char **cond;       /* [n_conditions] */
  size_t *cond_len;
  char **image;      /* [n_images] */
  size_t *image_len;
};

/* A name as a field: names never hold ',', '"' or line ends
 * (pb_meta_validate), but the CSV reader trims blanks around unquoted
 * fields, so a name with a blank at either end is quoted. */
static size_t pb_export__name(char *o, const char *s)
{
  size_t n = strlen(s);
  int quote = n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t');
  char *p = o;
  if (quote) *p++ = '"';
  memcpy(p, s, n);
  p += n;
  if (quote) *p++ = '"';
  *p++ = ',';
  return (size_t)(p - o);
}

static char *pb_export__join(size_t *len, const char *const *names, int n)
{
  size_t cap = 1;
  for (int k = 0; k < n; k++) cap += strlen(names[k]) + 3;
  char *s = pb_malloc(cap), *o = s;
  for (int k = 0; k < n; k++) o += pb_export__name(o, names[k]);
  *o = '\0';
  *len = (size_t)(o - s);
  return s;
}

/* The column `labels` after "split,": image @p i's set, canonical ("3;17;250", "" without one). */
static void pb_export__lsets_field(struct pb_export__parts *p, const struct pb_source *src, int32_t i)
{
  int32_t n = 0;
  const int32_t *ids = src->lset_off ? pb_lsets_of(src, i, &n) : NULL;
  const size_t len = pb_lsets_text(ids, n, NULL, 0);
  p->image[i] = pb_realloc(p->image[i], p->image_len[i] + len + 2);
  pb_lsets_text(ids, n, p->image[i] + p->image_len[i], len + 1);
  p->image_len[i] += len;
  p->image[i][p->image_len[i]++] = ',';
  p->image[i][p->image_len[i]] = '\0';
}

static void pb_export__parts_source(struct pb_export__parts *p, const struct pb_source *src, int lsets)
{
  p->image = pb_malloc((size_t)src->n_images * sizeof *p->image);
  p->image_len = pb_malloc((size_t)src->n_images * sizeof *p->image_len);
  for (int32_t i = 0; i < src->n_images; i++) {
    char tail[32];
    size_t n = 0;
    char *name = pb_export__join(&n, (const char *const[]){src->image_ids[i]}, 1);
    int t = snprintf(tail, sizeof tail, "%d,%s,", src->labels[i], src->split[i] == PB_SPLIT_EVAL ? "eval" : "dev");
    p->image[i] = pb_realloc(name, n + (size_t)t + 1);
    memcpy(p->image[i] + n, tail, (size_t)t + 1);
    p->image_len[i] = n + (size_t)t;
    if (lsets) pb_export__lsets_field(p, src, i);
  }
  p->cond = pb_calloc((size_t)src->n_conditions, sizeof *p->cond);
  p->cond_len = pb_calloc((size_t)src->n_conditions, sizeof *p->cond_len);
}

static void pb_export__parts_model(struct pb_export__parts *p, const struct pb_meta *meta, int32_t s, int32_t m)
{
  const struct pb_source *src = &meta->sources[s];
  for (int32_t c = 0; c < src->n_conditions; c++) {
    free(p->cond[c]);
    const char *names[4] = {meta->model_ids[m], meta->model_groups[m], src->name, src->conditions[c]};
    p->cond[c] = pb_export__join(&p->cond_len[c], names, 4);
  }
}

static void pb_export__parts_free(struct pb_export__parts *p, const struct pb_source *src)
{
  for (int32_t i = 0; p->image && i < src->n_images; i++) free(p->image[i]);
  for (int32_t c = 0; p->cond && c < src->n_conditions; c++) free(p->cond[c]);
  free(p->image);
  free(p->image_len);
  free(p->cond);
  free(p->cond_len);
  memset(p, 0, sizeof *p);
}

/* "%d" of v at o; returns the characters written.  Classes are mostly
 * below 1,000: those without a loop. */
static size_t pb_export__int(char *o, int32_t v)
{
  if (v >= 0 && v < 1000) {
    const int n = v < 10 ? 1 : v < 100 ? 2 : 3;
    if (n == 3) o[n - 3] = (char)('0' + v / 100);
    if (n >= 2) o[n - 2] = (char)('0' + v / 10 % 10);
    o[n - 1] = (char)('0' + v % 10);
    return (size_t)n;
  }
  char d[12];
  int n = 0;
  uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
  do d[n++] = (char)('0' + u % 10); while (u /= 10);
  char *p = o;
  if (v < 0) *p++ = '-';
  while (n > 0) *p++ = d[--n];
  return (size_t)(p - o);
}

/* pb_text_format_float(x) at o, through the memo; returns its length.  The
 * text is copied as 16 bytes whatever its length (the caller leaves that
 * much room): a copy of variable length compiles to `rep movs`, whose start
 * cost was half of export's. */
static size_t pb_export__float(char *o, float x, struct pb_export__memo *memo)
{
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  struct pb_export__memo *e = &memo[(bits * 0x9e3779b1u) >> 16 & (PB_EXPORT_MEMO - 1)];
  if (!e->used || e->bits != bits) {
    char t[32] = {0};
    pb_text_format_float(x, t); /* at most 15 characters: "-1.17549435e-38" */
    memcpy(e->txt, t, sizeof e->txt);
    e->len = (uint8_t)strlen(t);
    e->bits = bits;
    e->used = 1;
  }
  memcpy(o, e->txt, sizeof e->txt);
  return e->len;
}

/* pb_text_format_float(x) at o without the memo, for the per-record
 * summaries (entropy, collision): computed from a whole probability vector,
 * they hardly repeat, and through the memo each evicted the texts of the
 * probabilities that do (half-precision outputs take about 15,000 values). */
static size_t pb_export__float_plain(char *o, float x)
{
  char t[32] = {0};
  pb_text_format_float(x, t);
  memcpy(o, t, 16);
  return strlen(t);
}

/* Records [k0, k1) of a block of rows starting at row @p row0, one line each. */
static void pb_export__lines(struct pb_export__out *out, const struct pb_export__parts *p, const struct pb_rows *r,
                             int32_t n_cond, int32_t row0, int64_t k0, int64_t k1)
{
  const int32_t I = r->n_images, K = r->topk;
  for (int64_t k = k0; k < k1; k++) {
    const int32_t c = (row0 + (int32_t)(k / I)) % n_cond, i = (int32_t)(k % I);
    /* fixed parts, then numbers: at most 11 characters per integer, 16 per
     * float (pb_export__float's copy), 1 per separator */
    size_t need = p->cond_len[c] + p->image_len[i] + 48 + (size_t)K * 32 + 2 * 32;
    if (out->len + need > out->cap) {
      out->cap = 2 * (out->len + need) + (1 << 16);
      out->buf = pb_realloc(out->buf, out->cap);
    }
    char *o = out->buf + out->len;
    memcpy(o, p->cond[c], p->cond_len[c]);
    o += p->cond_len[c];
    memcpy(o, p->image[i], p->image_len[i]);
    o += p->image_len[i];
    o += pb_export__int(o, r->pred[k]);
    *o++ = ',';
    o += pb_export__float(o, r->smax[k], out->memo);
    *o++ = ',';
    o += pb_export__float(o, r->ptrue[k], out->memo);
    for (int32_t j = 0; j < K; j++) {
      *o++ = ',';
      o += pb_export__int(o, r->topk_class[k * K + j]);
      *o++ = ',';
      o += pb_export__float(o, r->topk_prob[k * K + j], out->memo);
    }
    if (r->entropy) {
      *o++ = ',';
      o += pb_export__float_plain(o, r->entropy[k]);
    }
    if (r->collision) {
      *o++ = ',';
      o += pb_export__float_plain(o, r->collision[k]);
    }
    *o++ = '\n';
    out->len = (size_t)(o - out->buf);
  }
}

/* One block's text: its records split over the threads, each into its own
 * buffer (out[t]), in record order. */
static void pb_export__block(struct pb_export__out *out, int n_out, const struct pb_export__parts *p,
                             const struct pb_rows *r, int32_t n_cond, int32_t row0)
{
  const int64_t n = (int64_t)r->n_rows * r->n_images;
  for (int t = 0; t < n_out; t++) out[t].len = 0;
#pragma omp parallel num_threads(n_out) if (n >= 4096)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    pb_export__lines(&out[t], p, r, n_cond, row0, n * t / nt, n * (t + 1) / nt);
  }
}

/* The threads' texts at @p at, all of them (past the page cache where the
 * file system allows: pb_output_direct_writev). */
static int pb_export__pwrite(struct pb_output_direct *fd, const struct pb_export__out *out, int n_out, off_t at)
{
  struct iovec *iov = pb_malloc((size_t)n_out * sizeof *iov);
  for (int t = 0; t < n_out; t++) iov[t] = (struct iovec){.iov_base = out[t].buf, .iov_len = out[t].len};
  const int status = pb_output_direct_writev(fd, iov, n_out, at);
  free(iov);
  return status;
}

/* One round's write on a thread of its own while the next round is
 * formatted: a write costs a good part of what the formatting does (even
 * past the page cache, the wait for the device), and writing after it left
 * every formatting thread idle meanwhile.  The rounds alternate between two sets of buffers, so a set is
 * formatted again only after its write has ended. */
struct pb_export__writer {
  struct pb_job job;
  int n_out;
  struct pb_output_direct *fd;
  const struct pb_export__out *out;
  off_t at;
  int status, err;
};

static void pb_export__writer_main(void *arg)
{
  struct pb_export__writer *w = arg;
  w->status = pb_export__pwrite(w->fd, w->out, w->n_out, w->at);
  w->err = errno;
}

/* Write @p out at @p at: on the writer's thread, or here when none can start. */
static void pb_export__writer_start(struct pb_export__writer *w, struct pb_output_direct *fd,
                                    const struct pb_export__out *out, int n_out, off_t at)
{
  *w = (struct pb_export__writer){.fd = fd, .n_out = n_out, .out = out, .at = at, .status = PB_OK};
  pb_job_start(&w->job, pb_export__writer_main, w);
}

/* The end of the last write started, and its outcome (with errno). */
static int pb_export__writer_join(struct pb_export__writer *w)
{
  pb_job_join(&w->job);
  if (w->status != PB_OK) errno = w->err;
  return w->status;
}

/* What an export carries from round to round. */
struct pb_export__run {
  struct pb_store *st;
  MPI_Comm comm;
  int rank, size, n_out;
  struct pb_output_direct fd;
  struct pb_export__out *out[2]; /* the two sets of the threads' texts, in turn */
  int cur;                       /* the set the next round formats into */
  struct pb_export__writer writer;
  int64_t at;              /* bytes of the file placed so far (every rank alike) */
  const char *csv_path;
};

/* The last round's write ended; its failure said. */
static int pb_export__written(struct pb_export__run *x)
{
  if (pb_export__writer_join(&x->writer) == PB_OK) return PB_OK;
  pb_error_set("%s: cannot write file: %s", x->csv_path, strerror(errno));
  return PB_FAIL;
}

/* One round: rank r exports block @p b + r of source @p s (none past
 * @p n_blocks), every rank learns every length and starts writing its text
 * at its offset, and the ranks agree on the outcome of the previous round's
 * write (so a full disk stops the export one round later). */
static int pb_export__round(struct pb_export__run *x, struct pb_export__parts *p, int32_t s, int32_t rows_per,
                            int64_t b, int64_t n_blocks, int32_t *m_ready)
{
  const struct pb_meta *meta = pb_store_meta(x->st);
  const struct pb_source *src = &meta->sources[s];
  const int32_t n_rows = meta->n_models * src->n_conditions;
  int32_t row0 = 0, n = 0, *rows = NULL;
  struct pb_rows blk;
  memset(&blk, 0, sizeof blk);
  if (b + x->rank < n_blocks) {
    row0 = (int32_t)((b + x->rank) * rows_per);
    n = row0 + rows_per <= n_rows ? rows_per : n_rows - row0;
  }
  rows = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *rows);
  for (int32_t j = 0; j < n; j++) rows[j] = row0 + j;
  int status = pb_store_read_rows(x->st, s, n, rows, &blk); /* collective: the same status on every rank */
  free(rows);
  if (status != PB_OK) return PB_FAIL;
  int64_t len = 0;
  if (n > 0) {
    /* a block holds one model's rows (or part of them) */
    const int32_t m = row0 / src->n_conditions;
    if (*m_ready != m) pb_export__parts_model(p, meta, s, m);
    *m_ready = m;
    pb_export__block(x->out[x->cur], x->n_out, p, &blk, src->n_conditions, row0);
    for (int t = 0; t < x->n_out; t++) len += (int64_t)x->out[x->cur][t].len;
  }
  pb_store_rows_free(&blk);
  int64_t *all = pb_malloc((size_t)x->size * sizeof *all), mine = len;
  MPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, x->comm);
  int64_t before = 0, total = 0;
  for (int r = 0; r < x->size; r++) {
    if (r < x->rank) before += all[r];
    total += all[r];
  }
  free(all);
  status = pb_export__written(x);
  if (status == PB_OK && len > 0) {
    pb_export__writer_start(&x->writer, &x->fd, x->out[x->cur], x->n_out, (off_t)(x->at + before));
    x->cur ^= 1;
  }
  x->at += total;
  /* stop at the first failed write (a full disk), not after the store */
  return pb_error_agree(x->comm, status);
}

static int pb_export__source(struct pb_export__run *x, int32_t s)
{
  const struct pb_meta *meta = pb_store_meta(x->st);
  const struct pb_source *src = &meta->sources[s];
  const int32_t n_rows = meta->n_models * src->n_conditions;
  const int64_t per_model = (int64_t)src->n_conditions * src->n_images;
  /* a model's rows, else as many of them as fit the block (at least one) */
  int32_t rows_per = src->n_conditions;
  if (per_model > PB_EXPORT_BLOCK_RECORDS) {
    int64_t r = PB_EXPORT_BLOCK_RECORDS / (src->n_images > 0 ? src->n_images : 1);
    rows_per = (int32_t)(r < 1 ? 1 : r);
    /* blocks never straddle two models: whole models divide into whole blocks */
    while (src->n_conditions % rows_per) rows_per--;
  }
  if (rows_per < 1) rows_per = 1;
  const int64_t n_blocks = (n_rows + rows_per - 1) / rows_per;
  struct pb_export__parts p;
  memset(&p, 0, sizeof p);
  pb_export__parts_source(&p, src, pb_store_has_lsets(pb_store_meta(x->st)));
  int32_t m_ready = -1;
  int status = PB_OK;
  for (int64_t b = 0; b < n_blocks && status == PB_OK; b += x->size)
    status = pb_export__round(x, &p, s, rows_per, b, n_blocks, &m_ready);
  pb_export__parts_free(&p, src);
  return status;
}

/* Rank 0: the output is allowed and its lock held (CSV.lock). */
static int pb_export__claim(const char *store_path, const char *csv_path, struct pb_output_lock *lock)
{
  if (pb_output_file_ok(csv_path, PB_OUTPUT_CSV, &store_path, 1, pb_output_force())) return PB_FAIL;
  char *lockfile = pb_malloc(strlen(csv_path) + 8);
  sprintf(lockfile, "%s.lock", csv_path);
  int status = pb_output_lock_take(lock, lockfile, csv_path);
  free(lockfile);
  return status;
}

static int pb_export__header(const struct pb_meta *meta, struct pb_output_direct *fd, const char *csv_path, int64_t *at)
{
  struct pb_text t = {0};
  pb_text_printf(&t, "model,group,source,condition,image,label,split%s,pred,smax,ptrue",
                 pb_store_has_lsets(meta) ? "," PB_LSETS_COLUMN : "");
  for (int32_t k = 1; k <= meta->topk; k++) pb_text_printf(&t, ",top%d_class,top%d_prob", k, k);
  if (meta->summaries & PB_SUMMARY_ENTROPY) pb_text_printf(&t, ",entropy");
  if (meta->summaries & PB_SUMMARY_COLLISION) pb_text_printf(&t, ",collision");
  pb_text_printf(&t, "\n");
  struct pb_export__out one = {t.buf, t.len, t.cap, NULL};
  int status = pb_export__pwrite(fd, &one, 1, 0);
  if (status != PB_OK) pb_error_set("%s: cannot write file: %s", csv_path, strerror(errno));
  *at = (int64_t)t.len;
  pb_text_free(&t);
  return status;
}

int pb_export_csv(const char *store_path, const char *csv_path, MPI_Comm comm)
{
  struct pb_export__run x = {.comm = comm, .fd = {.fd = -1, .dfd = -1}, .csv_path = csv_path};
  struct pb_output_lock lock = {.fd = -1};
  char *tmp = NULL;
  MPI_Comm_rank(comm, &x.rank);
  MPI_Comm_size(comm, &x.size);
  int status = x.rank == 0 ? pb_export__claim(store_path, csv_path, &lock) : PB_OK;
  int sig_lock = status == PB_OK && x.rank == 0 ? pb_signal_cleanup_file(lock.path) : 0, sig_tmp = 0;
  if (pb_error_agree(comm, status) != PB_OK) goto done;
  status = pb_store_open(store_path, comm, &x.st);
  if ((status = pb_error_agree(comm, status)) != PB_OK) goto done;
  if ((status = pb_output_temp_shared(csv_path, comm, &tmp)) != PB_OK) goto done;
  if (x.rank == 0) sig_tmp = pb_signal_cleanup_file(tmp); /* a signal's immediate exit removes it */
  status = pb_output_direct_open(&x.fd, tmp);
  if (status != PB_OK) pb_error_set("%s: cannot open file: %s", tmp, strerror(errno));
  if (status == PB_OK && x.rank == 0) status = pb_export__header(pb_store_meta(x.st), &x.fd, csv_path, &x.at);
  MPI_Bcast(&x.at, 1, MPI_INT64_T, 0, comm);
  if ((status = pb_error_agree(comm, status)) != PB_OK) goto done;
  x.n_out = omp_get_max_threads();
  for (int k = 0; k < 2; k++) x.out[k] = pb_calloc((size_t)x.n_out, sizeof *x.out[k]);
  for (int t = 0; t < x.n_out; t++) /* a thread's memo serves both its buffers */
    x.out[0][t].memo = x.out[1][t].memo = pb_calloc(PB_EXPORT_MEMO, sizeof *x.out[0][t].memo);
  for (int32_t s = 0; s < pb_store_meta(x.st)->n_sources && status == PB_OK; s++) status = pb_export__source(&x, s);
  /* the last round's write, whatever happened since */
  if (pb_export__written(&x) != PB_OK) status = PB_FAIL;
  if (pb_output_direct_close(&x.fd) != PB_OK && status == PB_OK) {
    pb_error_set("%s: cannot write file: %s", csv_path, strerror(errno));
    status = PB_FAIL;
  }
  status = pb_error_agree(comm, status);
  if (status == PB_OK && x.rank == 0 && rename(tmp, csv_path) != 0) {
    pb_error_set("%s: cannot write file: %s", csv_path, strerror(errno));
    status = PB_FAIL;
  }
  status = pb_error_agree(comm, status);
done:
  pb_export__writer_join(&x.writer); /* no write left running into the descriptor */
  pb_output_direct_close(&x.fd);
  if (status != PB_OK && tmp && x.rank == 0) unlink(tmp);
  pb_signal_forget_file(sig_tmp); /* renamed or removed */
  for (int t = 0; x.out[0] && t < x.n_out; t++) {
    free(x.out[0][t].buf);
    free(x.out[1][t].buf);
    free(x.out[0][t].memo);
  }
  free(x.out[0]);
  free(x.out[1]);
  free(tmp);
  pb_store_close(x.st);
  /* no rank leaves before the temporary is gone or in place */
  MPI_Barrier(comm);
  pb_signal_forget_file(sig_lock);
  pb_output_lock_release(&lock);
  return status;
}
