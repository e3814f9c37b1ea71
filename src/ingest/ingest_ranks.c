/* `pairbound ingest` under mpirun: both passes shared by the ranks
 * (include/pairbound/ingest.h, pb_ingest_files_comm; docs/csv.md, "Ranks").
 *
 * Pass 1's dictionaries grow in file order, and the checks of the set need
 * all of them: every rank reads and merges its run of the parts of each
 * file (ingest_dict.c), and rank 0 merges the ranks' runs in file order.  Pass 2 splits by
 * the store's windows: after pass 1 every rank holds the same dictionaries
 * (sent whole, pairbound/pack.h) and the files' row ranges, so every rank
 * plans the same windows, reads only its own windows' spans of the files,
 * and writes those windows' chunks of the store itself.  No rank holds
 * another's records, and the files are read where the ranks run (a file
 * system every rank sees, as for every other input). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/ingest.h"
#include "pairbound/output.h"
#include "pairbound/pack.h"
#include "pairbound/store.h"
#include "ingest_internal.h"

/* What pass 2 needs of each file: its header's columns and its row ranges. */
static void pb_ingest__pack_files(struct pb_pack *p, const struct pb_ingest__ctx *ctx)
{
  const int32_t K = ctx->meta->topk;
  for (int k = 0; k < ctx->n_files; k++) {
    const struct pb_ingest__file *f = &ctx->files[k];
    pb_pack_i32(p, f->n_fields);
    pb_pack_i32(p, f->plain);
    pb_pack_put(p, f->col, sizeof f->col);
    pb_pack_put(p, f->topk_class_col, (size_t)K * sizeof *f->topk_class_col);
    pb_pack_put(p, f->topk_prob_col, (size_t)K * sizeof *f->topk_prob_col);
    pb_pack_put(p, f->sum_col, sizeof f->sum_col);
    pb_pack_i32(p, f->labels_col);
    pb_pack_i64(p, f->n_range);
    pb_pack_put(p, f->range, (size_t)f->n_range * sizeof *f->range);
  }
}

static void pb_ingest__get_files(struct pb_pack *p, struct pb_ingest__ctx *ctx)
{
  const int32_t K = ctx->meta->topk;
  for (int k = 0; k < ctx->n_files; k++) {
    struct pb_ingest__file *f = &ctx->files[k];
    f->n_fields = pb_pack_get_i32(p);
    f->plain = pb_pack_get_i32(p);
    pb_pack_get(p, f->col, sizeof f->col);
    f->topk_class_col = pb_malloc((size_t)(K + 1) * sizeof *f->topk_class_col);
    f->topk_prob_col = pb_malloc((size_t)(K + 1) * sizeof *f->topk_prob_col);
    pb_pack_get(p, f->topk_class_col, (size_t)K * sizeof *f->topk_class_col);
    pb_pack_get(p, f->topk_prob_col, (size_t)K * sizeof *f->topk_prob_col);
    pb_pack_get(p, f->sum_col, sizeof f->sum_col);
    f->labels_col = pb_pack_get_i32(p);
    f->n_range = f->cap_range = pb_pack_get_count(p, sizeof *f->range);
    f->range = pb_pack_get_block(p, (size_t)f->n_range * sizeof *f->range);
  }
}

/* A context whose metadata came whole from rank 0: the lookups pass 2 makes
 * (sources, models, each source's conditions and images) and its scratch. */
static void pb_ingest__adopt(struct pb_ingest__ctx *ctx)
{
  const struct pb_meta *meta = ctx->meta;
  ctx->src = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *ctx->src);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *so = &meta->sources[s];
    struct pb_ingest__src *x = &ctx->src[s];
    pb_strmap_put(&ctx->sources, so->name, s);
    pb_strmap_init(&x->conditions);
    pb_strmap_init(&x->images);
    for (int32_t c = 0; c < so->n_conditions; c++) pb_strmap_put(&x->conditions, so->conditions[c], c);
    for (int32_t i = 0; i < so->n_images; i++) pb_strmap_put(&x->images, so->image_ids[i], i);
  }
  for (int32_t m = 0; m < meta->n_models; m++) pb_strmap_put(&ctx->models, meta->model_ids[m], m);
  pb_ingest__topk_alloc(ctx, meta->topk);
}

/* Rank 0: pass 1 and the checks of the set into @p ctx, in parts read by
 * every rank of @p comm (@p parts: ingest_dict.c), or the serial way. */
static int pb_ingest__ranks_once(struct pb_ingest__ctx *ctx, int n, const char *const *paths,
                                 const struct pb_ingest_options *opt, struct pb_meta *meta, const char *store_path,
                                 int parts, MPI_Comm comm)
{
  int size;
  MPI_Comm_size(comm, &size);
  pb_ingest__ctx_init(ctx, n, paths, store_path, opt, meta);
  ctx->helpers = size - 1;
  ctx->comm = comm;
  const int status = pb_ingest__pass1(ctx, parts ? pb_ingest__dict_file : NULL);
  ctx->helpers = 0;
  return status == PB_OK ? pb_ingest__metadata(ctx) : PB_FAIL;
}

/* Rank 0: the output path checked, then pass 1 in parts read by every rank,
 * and where that fails, the serial way with the threads of the node (the
 * other ranks asleep), whose message counts, as pb_ingest__run's pass 1.
 * Every rank's pb_ingest__help_pass1 ends with it.  @p ctx and @p meta to free
 * either way. */
static int pb_ingest__ranks_pass1(struct pb_ingest__ctx *ctx, int n, const char *const *paths,
                                  const struct pb_ingest_options *opt, struct pb_meta *meta, const char *store_path,
                                  MPI_Comm comm, int threads)
{
  const int path_ok = pb_output_file_ok(store_path, PB_OUTPUT_STORE, paths, n, pb_output_force()) == PB_OK;
  int status = PB_FAIL;
  if (path_ok) status = pb_ingest__ranks_once(ctx, n, paths, opt, meta, store_path, 1, comm);
  else pb_ingest__ctx_init(ctx, n, paths, store_path, opt, meta);
  int64_t done[4] = {-1, 0, 0, 0}; /* the helpers' last order */
  pb_comm_bcast(done, 4, MPI_INT64_T, 0, comm);
  if (!path_ok) return PB_FAIL;
  pb_ingest__say_pass1(status != PB_OK);
  if (status != PB_OK) {
    const int own = omp_get_max_threads();
    pb_ingest__ctx_free(ctx);
    pb_meta_free(meta);
    omp_set_num_threads(threads);
    status = pb_ingest__ranks_once(ctx, n, paths, opt, meta, store_path, 0, comm);
    omp_set_num_threads(own);
  }
  return status;
}

/* Any rank but 0 during pass 1: the parts of each file rank 0 orders read (pb_ingest__dict_help), until its
 * last order. */
static void pb_ingest__help_pass1(int n, const char *const *paths, const struct pb_ingest_options *opt,
                                  const char *store_path, MPI_Comm comm)
{
  struct pb_ingest__ctx ctx;
  struct pb_meta meta;
  pb_ingest__ctx_init(&ctx, n, paths, store_path, opt, &meta);
  for (;;) {
    int64_t order[4];
    pb_comm_bcast(order, 4, MPI_INT64_T, 0, comm);
    if (order[0] < 0) break;
    pb_ingest__dict_help(&ctx, order, comm);
  }
  pb_ingest__ctx_free(&ctx);
  pb_meta_free(&meta);
}

/* Rank 0 alone runs pb_ingest_files with the threads of the ranks waiting on
 * its node, the others asleep; the status reaches every rank. */
static int pb_ingest__alone(int n, const char *const *paths, const struct pb_ingest_options *opt,
                            const char *store_path, MPI_Comm comm, int threads)
{
  int rank, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    const int own = omp_get_max_threads();
    omp_set_num_threads(threads);
    status = pb_ingest_files(n, paths, opt, store_path);
    omp_set_num_threads(own);
  }
  pb_comm_bcast(&status, 1, MPI_INT, 0, comm);
  return status;
}

/* Pass 2 over the ranks, given pass 1's dictionaries in @p ctx on every rank:
 * PB_OK with the store committed, PB_FAIL (its message), or
 * PB_INGEST__AGAIN (nothing left behind). */
static int pb_ingest__ranks_pass2(struct pb_ingest__ctx *ctx, const char *store_path, MPI_Comm comm)
{
  struct pb_store *st = NULL;
  if (pb_store_create(store_path, comm, ctx->meta, &st) != PB_OK) return PB_FAIL;
  const int status = pb_ingest__pass2_ranks(ctx, pb_ingest__window_budget(ctx->opt), st, comm);
  if (status == PB_OK) return pb_store_commit(st); /* closes the store either way */
  pb_store_close(st);                                 /* removes the unfinished STORE.tmp */
  return status;
}

int pb_ingest_files_comm(int n, const char *const *paths, const struct pb_ingest_options *opt,
                         const char *store_path, MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int threads = pb_comm_node_threads(comm);
  int spread = size > 1 && !(opt && opt->append); /* an append changes the store in place, on one process */
  for (int k = 0; k < n; k++)
    if (strcmp(paths[k], "-") == 0) spread = 0; /* stdin reaches rank 0 only */
  if (!spread) {
    if (rank == 0 && threads != omp_get_max_threads() && pb_log_verbosity() >= 2)
      pb_message("ingest: rank 0 reads with %d threads, its own %d and those of the ranks waiting on its node",
                 threads, omp_get_max_threads());
    return pb_ingest__alone(n, paths, opt, store_path, comm, threads);
  }

  struct pb_ingest__ctx ctx;
  struct pb_meta meta;
  struct pb_pack pack = {0};
  int go = 1;
  const double t0 = MPI_Wtime();
  if (rank != 0) pb_ingest__help_pass1(n, paths, opt, store_path, comm);
  if (rank == 0) {
    go = pb_ingest__ranks_pass1(&ctx, n, paths, opt, &meta, store_path, comm, threads) == PB_OK;
    if (go && pb_log_verbosity() >= 2) pb_message("ingest: pass 1 in %.2f s", MPI_Wtime() - t0);
    if (go) {
      pb_pack_meta(&pack, &meta);
      pb_ingest__pack_files(&pack, &ctx);
    }
  }
  pb_comm_bcast(&go, 1, MPI_INT, 0, comm);
  if (!go) { /* pass 1's message, on rank 0 */
    if (rank == 0) {
      pb_ingest__ctx_free(&ctx);
      pb_meta_free(&meta);
    }
    return PB_FAIL;
  }
  pb_pack_bcast(&pack, 0, comm);
  if (rank != 0) {
    pb_ingest__ctx_init(&ctx, n, paths, store_path, opt, &meta);
    if (pb_pack_get_meta(&pack, &meta) == PB_OK) {
      pb_ingest__get_files(&pack, &ctx);
      pb_ingest__adopt(&ctx);
    }
  }
  const int short_read = pack.short_read;
  pb_pack_free(&pack);
  int status = pb_error_agree(comm, short_read ? PB_FAIL : PB_OK);
  if (status == PB_OK) status = pb_ingest__ranks_pass2(&ctx, store_path, comm);
  if (pb_log_verbosity() >= 2 && rank == 0 && status != PB_FAIL)
    pb_message("ingest: pass 2 %s", status == PB_INGEST__AGAIN ? "read again on rank 0 alone (a rank left it a row, "
                                                                "duplicate or missing record to report)"
                                                              : "shared by the ranks");
  pb_ingest__ctx_free(&ctx);
  pb_meta_free(&meta);
  if (status == PB_INGEST__AGAIN) return pb_ingest__alone(n, paths, opt, store_path, comm, threads);
  return status;
}
