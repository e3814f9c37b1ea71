/* Error messages, logging and fatal-error handling. */
#include "config.h"

#include <stdarg.h>
#include <string.h>

#include <mpi.h>
#include <gsl/gsl_errno.h>

#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"

static _Thread_local char pb__errbuf[PB_ERROR_MAX];
static int pb__rank = 0;
static int pb__verbosity = 1;

/* Shorten @p s (length @p n) to at most @p max bytes by cutting the middle of
 * its longest words, longest first, down to 40 bytes each ("…" is 3 bytes). */
static size_t pb_error__shorten(char *s, size_t n, size_t max)
{
  static const char dots[] = "\xe2\x80\xa6";
  const size_t keep = 40;
  while (n > max) {
    size_t best = 0, best_len = 0;
    for (size_t i = 0; i < n;) {
      size_t len = strcspn(s + i, " \t\n'\"");
      if (len > best_len) best = i, best_len = len;
      i += len ? len : 1;
    }
    if (best_len <= keep) break;
    size_t over = n - max, want = best_len > over + keep ? best_len - over : keep; /* new length, "…" included */
    size_t head = (want - 3) / 2, tail = want - 3 - head, cut_at = best + head;
    memcpy(s + cut_at, dots, 3);
    memmove(s + cut_at + 3, s + best + best_len - tail, n - (best + best_len - tail) + 1);
    n -= best_len - want;
  }
  return n;
}

void pb_error_set(const char *fmt, ...)
{
  va_list ap, again;
  va_start(ap, fmt);
  va_copy(again, ap);
  int n = vsnprintf(pb__errbuf, sizeof pb__errbuf, fmt, ap);
  if (n >= (int)sizeof pb__errbuf) {
    char *full = malloc((size_t)n + 1);
    if (full) {
      vsnprintf(full, (size_t)n + 1, fmt, again);
      pb_error__shorten(full, (size_t)n, sizeof pb__errbuf - 1);
      snprintf(pb__errbuf, sizeof pb__errbuf, "%s", full);
      free(full);
    }
  }
  va_end(again);
  va_end(ap);
}

const char *pb_error_message(void) { return pb__errbuf[0] ? pb__errbuf : "unknown error"; }
void pb_error_clear(void) { pb__errbuf[0] = '\0'; }

void pb_error_first_init(struct pb_error_first *e)
{
  e->item = -1;
  e->message[0] = '\0';
}

void pb_error_first_record(struct pb_error_first *e, int64_t item)
{
#pragma omp critical(pb_error__first)
  if (e->item < 0 || item < e->item) {
    snprintf(e->message, sizeof e->message, "%s", pb_error_message());
#pragma omp atomic write
    e->item = item;
  }
}

int pb_error_first_any(const struct pb_error_first *e)
{
  int64_t item;
#pragma omp atomic read
  item = e->item;
  return item >= 0;
}

int pb_error_first_status(const struct pb_error_first *e)
{
  if (e->item < 0) return PB_OK;
  pb_error_set("%s", e->message);
  return PB_FAIL;
}

int pb_error_agree(MPI_Comm comm, int status)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int first = status == PB_OK ? size : rank;
  pb_comm_allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return PB_OK;
  char msg[sizeof pb__errbuf];
  snprintf(msg, sizeof msg, "%s", pb_error_message());
  pb_comm_bcast(msg, (int)sizeof msg, MPI_CHAR, first, comm);
  if (status == PB_OK) { /* a rank that failed keeps its own reason (the same check fails alike everywhere) */
    if (strncmp(msg, "rank ", 5) == 0) pb_error_set("%s", msg); /* agreed before: already names its rank */
    else pb_error_set("rank %d: %s", first, msg);
  }
  return PB_FAIL;
}

void pb_log_init(int rank, int verbosity)
{
  pb__rank = rank;
  pb__verbosity = verbosity;
}

int pb_log_rank(void) { return pb__rank; }
int pb_log_verbosity(void) { return pb__verbosity; }

/* Rank 0 speaks at verbosity 1; every rank speaks at verbosity >= 2. */
static int pb__should_log(void)
{
  return pb__verbosity >= 2 || (pb__verbosity >= 1 && pb__rank == 0);
}

/* One rank-prefixed line on stderr, "[RANK] " @p what and the message, where this rank speaks. */
static void pb_error__say(const char *what, const char *fmt, va_list ap)
{
  if (!pb__should_log()) return;
  /* one write per line (stderr is unbuffered): lines of ranks sharing a pipe do not interleave */
  char text[PB_ERROR_MAX];
  vsnprintf(text, sizeof text, fmt, ap);
  fprintf(stderr, "[%d] %s%s\n", pb__rank, what, text);
}

void pb_message(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  pb_error__say("", fmt, ap);
  va_end(ap);
}

void pb_warning(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  pb_error__say("warning: ", fmt, ap);
  va_end(ap);
}

void pb_abort(const char *file, const char *func, int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "[%d] %s:%s():%d: fatal: ", pb__rank, file, func, line);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  fflush(stderr);
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, 3);
  abort();
}

static void pb__gsl_handler(const char *reason, const char *file, int line, int gsl_errno)
{
  pb_abort(file, "gsl", line, "GSL error %d (%s): %s", gsl_errno, gsl_strerror(gsl_errno), reason);
}

void pb_error_install_gsl_handler(void) { gsl_set_error_handler(pb__gsl_handler); }

void *pb_malloc(size_t n)
{
  void *p = malloc(n ? n : 1);
  if (!p) PB_ERROR("out of memory allocating %zu bytes", n);
  return p;
}

void *pb_calloc(size_t count, size_t size)
{
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) PB_ERROR("out of memory allocating %zu x %zu bytes", count, size);
  return p;
}

void *pb_realloc(void *p, size_t n)
{
  void *q = realloc(p, n ? n : 1);
  if (!q) PB_ERROR("out of memory reallocating %zu bytes", n);
  return q;
}

char *pb_strdup(const char *s)
{
  size_t n = strlen(s) + 1;
  char *d = pb_malloc(n);
  memcpy(d, s, n);
  return d;
}
