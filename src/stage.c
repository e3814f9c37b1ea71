/* The frame shared by every analysis stage. */
#include "config.h"

#include <string.h>

#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"

/* pb_stage_open, timing its phases in @p tm when not NULL (the protocol verb, whose whole work this is). */
static int pb_stage__open(const char *store_path, const char *outdir, MPI_Comm comm,
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
  if (tm) pb_timer_lap(tm, "open");
  if (pb_protocol_compute(stage->store, comm, popt, &stage->protocol)) goto fail;
  if (tm) pb_timer_lap(tm, "compute");
  if (pb_results_create(outdir, comm, provenance, &stage->results)) goto fail;
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
  return pb_stage__open(store_path, outdir, comm, popt, provenance, stage, NULL);
}

int pb_stage_protocol_run(const char *store_path, const char *outdir, MPI_Comm comm,
                          const struct pb_protocol_options *popt, const char *provenance)
{
  struct pb_stage st;
  struct pb_timer tm;
  pb_timer_start(&tm, "protocol");
  if (pb_stage__open(store_path, outdir, comm, popt, provenance, &st, &tm) != PB_OK) return PB_FAIL;
  pb_timer_reduce(&tm, comm);
  pb_timer_message(&tm);
  return pb_stage_close(&st, pb_timer_write(&tm, st.results));
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

int pb_stage_require(const struct pb_stage *stage, const char *store_path, const char *name, unsigned needs)
{
  const struct pb_meta *meta = stage->meta;
  int64_t n_eval = 0;
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int32_t i = 0; i < meta->sources[s].n_images; i++) n_eval += meta->sources[s].split[i] == PB_SPLIT_EVAL;
  if ((needs & PB_STAGE_NEEDS_CELLS) && stage->n_cells == 0) {
    pb_error_set("%s: nothing for %s to analyse: no source has a condition besides '%s' (every analysis compares a "
                 "perturbed condition with '%s'; docs/csv.md)",
                 store_path, name, PB_CLEAN_CONDITION, PB_CLEAN_CONDITION);
    return PB_FAIL;
  }
  if ((needs & PB_STAGE_NEEDS_EVAL) && n_eval == 0) {
    pb_error_set("%s: %s needs evaluation images, but every image of the store is in the development split "
                 "(split 'dev'); give the images to evaluate on split 'eval' (docs/csv.md)",
                 store_path, name);
    return PB_FAIL;
  }
  return PB_OK;
}
