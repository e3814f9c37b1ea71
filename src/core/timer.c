/* Phase timings of a stage, reduced over ranks and written to /timings. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/timer.h"

void pb_timer_start(struct pb_timer *t, const char *stage)
{
  memset(t, 0, sizeof *t);
  t->stage = stage;
  t->t0 = MPI_Wtime();
}

void pb_timer_add(struct pb_timer *t, const char *phase, double sec)
{
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->phase[i], phase) == 0) {
      t->sec[i] += sec;
      return;
    }
  if (t->n == PB_TIMER_MAX) PB_ERROR("timer %s: more than %d phases", t->stage, PB_TIMER_MAX);
  t->phase[t->n] = phase;
  t->sec[t->n++] = sec;
}

void pb_timer_lap(struct pb_timer *t, const char *phase)
{
  double now = MPI_Wtime();
  pb_timer_add(t, phase, now - t->t0);
  t->t0 = now;
}

void pb_timer_skip(struct pb_timer *t) { t->t0 = MPI_Wtime(); }

double pb_timer_get(const struct pb_timer *t, const char *phase)
{
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->phase[i], phase) == 0) return t->sec[i];
  return 0.0;
}

void pb_timer_reduce(struct pb_timer *t, MPI_Comm comm)
{
  /* phases are paired by position: a rank that met other phases is a stage's bug, said as such rather than
   * as a mismatched collective */
  int n[2] = {t->n, -t->n};
  pb_comm_allreduce(MPI_IN_PLACE, n, 2, MPI_INT, MPI_MAX, comm);
  if (n[0] != -n[1]) PB_ERROR("timer %s: the ranks timed %d to %d phases", t->stage, -n[1], n[0]);
  pb_comm_allreduce(MPI_IN_PLACE, t->sec, t->n, MPI_DOUBLE, MPI_MAX, comm);
}

void pb_timer_end(struct pb_timer *t, const char *phase, MPI_Comm comm)
{
  pb_timer_lap(t, phase);
  pb_timer_reduce(t, comm);
}

int pb_timer_write(const struct pb_timer *t, struct pb_results *res)
{
  int rank;
  char path[256];
  MPI_Comm_rank(pb_results_comm(res), &rank);
  snprintf(path, sizeof path, "/timings/%s", t->stage);
  int status = pb_results_group(res, path);
  for (int i = 0; i < t->n && status == PB_OK; i++) {
    snprintf(path, sizeof path, "/timings/%s/%s", t->stage, t->phase[i]);
    status = pb_results_write_f64(res, path, 1, 0, rank == 0 ? 1 : 0, &t->sec[i]);
  }
  if (status == PB_OK) status = pb_results_attr_str(res, "/timings", "units", "seconds (slowest rank)");
  return status;
}

void pb_timer_message(const struct pb_timer *t)
{
  char line[1024];
  int n = snprintf(line, sizeof line, "%s:", t->stage);
  for (int i = 0; i < t->n && n > 0 && (size_t)n < sizeof line; i++)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s %s %.3f s", i ? ";" : "", t->phase[i], t->sec[i]);
  pb_message("%s", line);
}
