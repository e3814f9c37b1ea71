/* Phase timings of a stage, reduced over ranks and written to /timings. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
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

/* This rank's phase @p name, or -1. */
static int pb_timer__find(const struct pb_timer *t, const char *name)
{
  for (int i = 0; i < t->n; i++)
    if (strcmp(t->phase[i], name) == 0) return i;
  return -1;
}

void pb_timer_add(struct pb_timer *t, const char *phase, double sec)
{
  const int i = pb_timer__find(t, phase);
  if (i >= 0) {
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
  const int i = pb_timer__find(t, phase);
  return i < 0 ? 0.0 : t->sec[i];
}

void pb_timer_reduce(struct pb_timer *t, MPI_Comm comm)
{
  int size;
  MPI_Comm_size(comm, &size);
  /* every rank's names, NUL-ended, one after the other in rank order */
  char mine[PB_TIMER_MAX * PB_TIMER_NAME_MAX];
  int len = 0;
  for (int i = 0; i < t->n; i++) {
    const size_t k = strlen(t->phase[i]) + 1;
    if (k > PB_TIMER_NAME_MAX) PB_ERROR("timer %s: phase name %s is too long", t->stage, t->phase[i]);
    memcpy(mine + len, t->phase[i], k);
    len += (int)k;
  }
  int *lens = pb_malloc((size_t)size * sizeof *lens), *at = pb_malloc((size_t)size * sizeof *at), total = 0;
  MPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, comm);
  for (int r = 0; r < size; r++) at[r] = total, total += lens[r];
  char *all = pb_malloc((size_t)(total > 0 ? total : 1));
  MPI_Allgatherv(mine, len, MPI_CHAR, all, lens, at, MPI_CHAR, comm);
  /* the union in that order: this rank's own names where it met them, else a copy */
  const char *phase[PB_TIMER_MAX];
  double sec[PB_TIMER_MAX];
  int n = 0, copies = 0;
  for (int x = 0; x < total; x += (int)strlen(all + x) + 1) {
    int known = 0;
    for (int j = 0; j < n && !known; j++) known = strcmp(phase[j], all + x) == 0;
    if (known) continue;
    if (n == PB_TIMER_MAX) PB_ERROR("timer %s: the ranks timed more than %d phases", t->stage, PB_TIMER_MAX);
    const int i = pb_timer__find(t, all + x);
    if (i < 0) phase[n] = strcpy(t->met_elsewhere[copies++], all + x);
    else phase[n] = t->phase[i];
    sec[n++] = i < 0 ? 0.0 : t->sec[i];
  }
  memcpy(t->phase, phase, (size_t)n * sizeof *phase);
  memcpy(t->sec, sec, (size_t)n * sizeof *sec);
  t->n = n;
  free(all);
  free(lens);
  free(at);
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
