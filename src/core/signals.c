/* SIGTERM / SIGINT as a request to stop at the next block boundary; see
 * include/pairbound/signals.h.  The handler does only async-signal-safe
 * work: it sets a flag, and writes the prepared hint and exits when the
 * stop cannot wait. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "pairbound/comm.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"

static volatile sig_atomic_t pb_sig__got;      /* first signal received, 0: none */
static volatile sig_atomic_t pb_sig__deferred; /* 1: a block loop polls the flag */
static volatile double pb_sig__t0;            /* when the first signal came */
#define PB_SIG_REPEAT_S 1.0
static int pb_sig__agreed;                     /* what the ranks last agreed to stop for */
static char pb_sig__hint[4096];
static size_t pb_sig__len;
static char pb_sig__cleanup[4096]; /* a staging directory to remove before exiting, "" when none */
static volatile sig_atomic_t pb_sig__child;  /* a child writing into it (pb_signal_child), 0: none */
static volatile sig_atomic_t pb_sig__finished = -1; /* the command's exit status once it has ended, -1 before */
/* files to unlink (pb_signal_cleanup_file): a store or CSV under its temporary name, lock files held */
#define PB_SIG_FILES 8
static char pb_sig__files[PB_SIG_FILES][4096];

/* Monotonic seconds (clock_gettime is async-signal-safe). */
static double pb_sig__now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Kill the child that writes into the staging directory and wait until it
 * is gone, so that nothing is written there, or anywhere else, once the
 * directory is removed (kill and waitpid are async-signal-safe).  Its pid
 * cannot name another process meanwhile: pb_signal_child(0) comes only
 * after the child has ended, before it is reaped. */
static void pb_sig__end_child(void)
{
  const pid_t pid = pb_sig__child;
  if (pid <= 0) return;
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) continue;
  pb_sig__child = 0;
}

static void pb_sig__handler(int sig)
{
  /* the command has ended, its messages written and its files in place: a launcher stopping the job because
   * another rank left first ends this one with its own status, and no hint (nothing is cut short) */
  if (pb_sig__finished >= 0) _exit(pb_sig__finished);
  int again = pb_sig__got != 0;
  double now = pb_sig__now();
  if (!again) pb_sig__got = sig, pb_sig__t0 = now;
  /* one stop request often arrives twice at once (a launcher forwards the
   * signal its process group also got): only a later one is a second request */
  if (pb_sig__deferred && (!again || now - pb_sig__t0 < PB_SIG_REPEAT_S)) return;
  pb_sig__end_child();
  pb_output_remove_tree(pb_sig__cleanup);
  for (int k = 0; k < PB_SIG_FILES; k++)
    if (pb_sig__files[k][0]) unlink(pb_sig__files[k]);
  if (pb_sig__len) {
    char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), ')', '\n'};
    (void)!write(STDERR_FILENO, pb_sig__hint, pb_sig__len);
    (void)!write(STDERR_FILENO, num + (sig < 10), sizeof num - (sig < 10));
  }
  _exit(128 + sig);
}

void pb_signal_install(const char *hint, int deferred, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  pb_sig__len = 0;
  if (rank == 0 && hint) {
    snprintf(pb_sig__hint, sizeof pb_sig__hint, "%s (signal ", hint);
    pb_sig__len = strlen(pb_sig__hint);
  }
  pb_sig__deferred = deferred;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pb_sig__handler;
  sigemptyset(&sa.sa_mask); /* one handler at a time: the second sees the first's time */
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}

void pb_signal_finished(int status) { pb_sig__finished = status >= 0 ? status : 1; }

int pb_signal_set_deferred(int deferred)
{
  int was = pb_sig__deferred;
  pb_sig__deferred = deferred;
  /* a signal that arrived while deferred and was not acted on still stops us */
  if (!deferred && pb_sig__got) pb_sig__handler(pb_sig__got);
  return was;
}

void pb_signal_child(pid_t pid)
{
  pb_sig__child = pid;
}

void pb_signal_cleanup_now(void)
{
  pb_sig__end_child();
  pb_output_remove_tree(pb_sig__cleanup);
  pb_sig__cleanup[0] = '\0';
  for (int k = 0; k < PB_SIG_FILES; k++)
    if (pb_sig__files[k][0]) unlink(pb_sig__files[k]), pb_sig__files[k][0] = '\0';
}

/* Put @p path ("" or NULL: nothing) into @p buf, which the handler reads: empty it first, then fill in all but
 * the first byte, then the first, so that a signal in between sees "" or the whole path.  A path that does not
 * fit leaves it "". */
static void pb_sig__set(char buf[4096], const char *path)
{
  *(volatile char *)buf = '\0';
  atomic_signal_fence(memory_order_seq_cst);
  size_t n = path ? strlen(path) : 0;
  if (n == 0 || n >= 4096) return;
  memcpy(buf + 1, path + 1, n);
  atomic_signal_fence(memory_order_seq_cst); /* the rest is in place before the first byte says so */
  *(volatile char *)buf = path[0];
}

void pb_signal_cleanup(const char *dir)
{
  pb_sig__set(pb_sig__cleanup, dir);
}

int pb_signal_cleanup_file(const char *path)
{
  for (int k = 0; k < PB_SIG_FILES; k++)
    if (!pb_sig__files[k][0]) {
      pb_sig__set(pb_sig__files[k], path);
      return pb_sig__files[k][0] ? k + 1 : 0;
    }
  return 0;
}

void pb_signal_forget_file(int slot)
{
  if (slot >= 1 && slot <= PB_SIG_FILES) pb_sig__set(pb_sig__files[slot - 1], NULL);
}

int pb_signal_pending(void)
{
  return pb_sig__got;
}

int pb_signal_agree_on(MPI_Comm comm, int mine)
{
  int any = 0;
  pb_comm_allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, comm);
  pb_sig__agreed = any;
  return any;
}

int pb_signal_agree(MPI_Comm comm)
{
  return pb_signal_agree_on(comm, pb_sig__got);
}

int pb_signal_stopped(void)
{
  return pb_sig__agreed;
}

int pb_signal_exit_status(int sig)
{
  return 128 + sig;
}
