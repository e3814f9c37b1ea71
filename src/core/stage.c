/* The frame shared by every analysis stage. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/lsets.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/platform.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"

/* The protocol memo of `pairbound run` (pb_stage_protocol_memo): the
 * protocol is a pass over every prediction of the store, and a pipeline's
 * stages open the same store with the same protocol options. */
static struct {
  int on, valid;
  char *path;
  struct stat id;             /* device, inode, size and modification time of the store file */
  MPI_Comm comm;
  struct pb_protocol_options opt;
  struct pb_protocol p;
} pb_stage__memo;

static void pb_stage__memo_drop(void)
{
  if (pb_stage__memo.valid) {
    pb_protocol_free(&pb_stage__memo.p);
    pb_protocol_options_free(&pb_stage__memo.opt);
    free(pb_stage__memo.path);
  }
  pb_stage__memo.valid = 0;
  pb_stage__memo.path = NULL;
}

void pb_stage_protocol_memo(int on)
{
  pb_stage__memo_drop();
  pb_stage__memo.on = on;
}

static int pb_stage__same_opt(const struct pb_protocol_options *a, const struct pb_protocol_options *b)
{
  if (a->coverage != b->coverage || a->panel_seed != b->panel_seed || a->n_quota != b->n_quota ||
      a->labels != b->labels)
    return 0;
  for (int32_t i = 0; i < a->n_quota; i++)
    if (a->quota[i] != b->quota[i] || strcmp(a->quota_source[i], b->quota_source[i]) != 0) return 0;
  return 1;
}

/* 1 (on every rank) with the memo's copy in @p out when every rank's store
 * file is the one the memo was made from, with the same options and
 * communicator; else 0. */
static int pb_stage__memo_get(const char *path, MPI_Comm comm, const struct pb_protocol_options *opt,
                              const struct pb_meta *meta, struct pb_protocol *out)
{
  if (!pb_stage__memo.on) return 0;
  int hit = pb_stage__memo.valid &&
            pb_store_file_unchanged(path, comm, pb_stage__memo.path, pb_stage__memo.comm, &pb_stage__memo.id) &&
            pb_stage__same_opt(opt, &pb_stage__memo.opt);
  pb_comm_allreduce(MPI_IN_PLACE, &hit, 1, MPI_INT, MPI_MIN, comm);
  if (hit) pb_protocol_copy(&pb_stage__memo.p, meta, out);
  return hit;
}

static void pb_stage__memo_put(const char *path, MPI_Comm comm, const struct pb_protocol_options *opt,
                               const struct pb_meta *meta, const struct pb_protocol *p)
{
  if (!pb_stage__memo.on) return;
  pb_stage__memo_drop();
  if (stat(path, &pb_stage__memo.id) != 0) return;
  pb_stage__memo.path = pb_strdup(path);
  pb_stage__memo.comm = comm;
  pb_stage__memo.opt = *opt;
  pb_stage__memo.opt.quota_source = pb_calloc((size_t)(opt->n_quota > 0 ? opt->n_quota : 1), sizeof(char *));
  pb_stage__memo.opt.quota = pb_calloc((size_t)(opt->n_quota > 0 ? opt->n_quota : 1), sizeof(int32_t));
  for (int32_t i = 0; i < opt->n_quota; i++) {
    pb_stage__memo.opt.quota_source[i] = pb_strdup(opt->quota_source[i]);
    pb_stage__memo.opt.quota[i] = opt->quota[i];
  }
  pb_protocol_copy(p, meta, &pb_stage__memo.p);
  pb_stage__memo.valid = 1;
}

int pb_stage_open_timed(const char *store_path, const char *outdir, MPI_Comm comm,
                          const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage,
                          struct pb_timer *tm)
{
  memset(stage, 0, sizeof *stage);
  stage->comm = comm;
  MPI_Comm_rank(comm, &stage->rank);
  MPI_Comm_size(comm, &stage->size);
  /* the outputs (OUTDIR/results.h5, OUTDIR/report/) must never replace the store */
  int ok = stage->rank == 0 ? pb_output_dir_ok(outdir, &store_path, 1, pb_output_force()) : PB_OK;
  if (pb_error_agree(comm, ok) != PB_OK) return PB_FAIL;
  if (pb_store_open(store_path, comm, &stage->store)) return PB_FAIL;
  stage->meta = pb_store_meta(stage->store);
  if (pb_store_labels(stage->store, popt->labels)) goto fail; /* before the protocol: it counts correct records */
  if (tm) pb_timer_lap(tm, "open");
  if (!pb_stage__memo_get(store_path, comm, popt, stage->meta, &stage->protocol)) {
    if (pb_protocol_compute(stage->store, comm, popt, &stage->protocol)) goto fail;
    pb_stage__memo_put(store_path, comm, popt, stage->meta, &stage->protocol);
  }
  if (tm) pb_timer_lap(tm, "compute");
  if (pb_results_create(outdir, comm, provenance, &stage->results)) goto fail;
  if (pb_store_has_lsets(stage->meta))
    pb_results_note(stage->results, pb_store_labels_mode(stage->store) == PB_LABELS_SET
                                        ? "Correctness: label sets (`labels = set`: a record is correct iff its "
                                          "prediction is in its image's set; images with an empty set left out)."
                                        : "Correctness: single labels (`labels = single`: pred = label; the store's "
                                          "label sets are used only by Tables 47 and 48).");
  if (pb_protocol_write(&stage->protocol, stage->meta, stage->results)) goto fail;
  if (tm) pb_timer_lap(tm, "write");
  stage->n_cells = pb_meta_cells(stage->meta);
  pb_dist_my_cells(stage->meta, comm, &stage->first, &stage->last);
  return PB_OK;
fail:
  pb_stage_close(stage, PB_FAIL);
  return PB_FAIL;
}

int pb_stage_open(const char *store_path, const char *outdir, MPI_Comm comm,
                  const struct pb_protocol_options *popt, const char *provenance, struct pb_stage *stage)
{
  return pb_stage_open_timed(store_path, outdir, comm, popt, provenance, stage, NULL);
}

int pb_stage_end(struct pb_stage *stage, int status)
{
  if (status == PB_OK) status = pb_timer_write(&stage->timer, stage->results);
  return pb_stage_close(stage, status);
}

int pb_stage_close(struct pb_stage *stage, int status)
{
  status = pb_error_agree(stage->comm, status); /* the first failing rank's reason on every rank */
  if (stage->results) {
    if (status == PB_OK) status = pb_results_commit(stage->results);
    else pb_results_close(stage->results);
  }
  pb_protocol_free(&stage->protocol);
  pb_store_close(stage->store);
  memset(stage, 0, sizeof *stage);
  return status;
}

double *pb_stage_gather(const struct pb_stage *stage, int64_t n_local, int64_t n_total, int32_t rec_len,
                        const double *recs, int to_all)
{
  int size = stage->size, mine = (int)(n_local * rec_len);
  int *counts = pb_malloc((size_t)size * sizeof *counts), *displs = pb_malloc((size_t)size * sizeof *displs);
  MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, stage->comm);
  displs[0] = 0;
  for (int r = 1; r < size; r++) displs[r] = displs[r - 1] + counts[r - 1];
  double *all = NULL;
  if (to_all || stage->rank == 0) all = pb_malloc((size_t)(n_total > 0 ? n_total : 1) * rec_len * sizeof *all);
  if (to_all) MPI_Allgatherv(recs, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, stage->comm);
  else MPI_Gatherv(recs, mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, stage->comm);
  free(counts);
  free(displs);
  return all;
}

int pb_stage_lacks(const struct pb_meta *meta, const char *store_path, const char *name, unsigned needs, char *why,
                   size_t n)
{
  int64_t n_eval = 0;
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int32_t i = 0; i < meta->sources[s].n_images; i++) n_eval += meta->sources[s].split[i] == PB_SPLIT_EVAL;
  if ((needs & PB_STAGE_NEEDS_CELLS) && pb_meta_cells(meta) == 0) {
    snprintf(why, n,
             "%s: nothing for %s to analyse: no source has a condition besides '%s' (every analysis compares a "
             "perturbed condition with '%s'; docs/csv.md)",
             store_path, name, PB_CLEAN_CONDITION, PB_CLEAN_CONDITION);
    return 1;
  }
  if ((needs & PB_STAGE_NEEDS_EVAL) && n_eval == 0) {
    snprintf(why, n,
             "%s: %s needs evaluation images, but every image of the store is in the development split (split "
             "'dev'); give the images to evaluate on split 'eval' (docs/csv.md)",
             store_path, name);
    return 1;
  }
  return 0;
}

int pb_stage_require(const struct pb_stage *stage, const char *store_path, const char *name, unsigned needs)
{
  char why[PB_ERROR_MAX];
  if (!pb_stage_lacks(stage->meta, store_path, name, needs, why, sizeof why)) return PB_OK;
  pb_error_set("%s", why);
  return PB_FAIL;
}

int pb_stage_begin(const struct pb_stage_call *call, struct pb_stage *stage)
{
  const struct pb_stage_desc *d = call->stage;
  struct pb_timer tm;
  pb_platform_keep_freed(); /* fresh memory costs: docs/run.md, "MPI start-up" */
  pb_timer_start(&tm, d->name);
  if (pb_stage_open(call->store, call->outdir, call->comm, call->protocol, call->provenance, stage)) return PB_FAIL;
  stage->timer = tm;
  if (pb_stage_require(stage, call->store, d->name, d->store.needs)) return pb_stage_close(stage, PB_FAIL);
  if (d->store.figures) pb_figure_prepare(stage->results); /* its gnuplot starts while the stage works */
  return PB_OK;
}
