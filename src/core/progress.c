/* Progress lines (include/pairbound/progress.h). */
#include "config.h"

#include <float.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/progress.h"

#define PB_PROGRESS_TTY_EVERY 0.25
#define PB_PROGRESS_LOG_EVERY 5.0
#define PB_PROGRESS_FIRST 1.0 /* a live line only for loops lasting longer */

static double pb_progress__now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void pb_progress_begin(struct pb_progress *p, const char *what, const char *unit, int64_t total)
{
  memset(p, 0, sizeof *p);
  snprintf(p->what, sizeof p->what, "%s", what);
  p->unit = unit;
  p->total = total;
  p->active = pb_log_rank() == 0 && pb_log_verbosity() >= 1 && total > 0;
  if (!p->active) return;
  p->tty = isatty(STDERR_FILENO);
  const int given = pb_env_double(PB_ENV_PROGRESS_INTERVAL, 0, DBL_MAX, &p->interval) == PB_OK;
  if (!given) p->interval = p->tty ? PB_PROGRESS_TTY_EVERY : PB_PROGRESS_LOG_EVERY;
  p->t0 = pb_progress__now();
  p->next = p->t0 + (given ? p->interval : p->tty ? PB_PROGRESS_FIRST : p->interval);
}

static void pb_progress__show(struct pb_progress *p, int64_t done, double now, int final)
{
  double dt = now - p->t0, rate = dt > 0 ? (double)done / dt : 0;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char eta[32] = "";
  if (!final && rate > 0) {
    long s = (long)((double)(p->total - done) / rate + 0.5);
    snprintf(eta, sizeof eta, ", ETA %ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  }
  fprintf(stderr, "%s[0] %s: %lld/%lld %s%s (%.0f%%), %.3g %s/s%s%s%s", p->tty ? "\r" : "", p->what, (long long)done,
          (long long)p->total, p->unit, size > 1 ? " on rank 0" : "", 100.0 * (double)done / (double)p->total, rate,
          p->unit, eta, final ? ", done" : "", p->tty ? "\033[K" : "\n");
  fflush(stderr);
  p->shown = 1;
}

void pb_progress_step(struct pb_progress *p, int64_t n)
{
  if (!p->active) return;
  int64_t done = __atomic_add_fetch(&p->done, n, __ATOMIC_RELAXED);
  /* one writer at a time, whichever thread gets there (a busy machine may
   * leave any one thread without iterations): no waiting, no torn lines */
  if (__atomic_exchange_n(&p->busy, 1, __ATOMIC_ACQUIRE)) return;
  double now = pb_progress__now();
  if (now >= p->next) {
    p->next = now + p->interval;
    pb_progress__show(p, done, now, 0);
  }
  __atomic_store_n(&p->busy, 0, __ATOMIC_RELEASE);
}

void pb_progress_end(struct pb_progress *p)
{
  if (!p->active) return;
  if (p->tty && p->shown) {
    pb_progress__show(p, __atomic_load_n(&p->done, __ATOMIC_RELAXED), pb_progress__now(), 1);
    fputc('\n', stderr);
  }
  p->active = 0;
}
