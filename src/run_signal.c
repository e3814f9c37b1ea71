/* SIGTERM / SIGINT during `pairbound run` (a time limit, scancel, Ctrl-C):
 * every stage's output is committed by rename and its checkpoint written
 * after it, so at any instant the run consists of complete stages plus, at
 * most, temporaries of the one in progress.  The handler therefore stops at
 * once (mpirun and SLURM follow a SIGTERM with a SIGKILL within seconds, so
 * waiting for the running stage to finish would not be honoured anyway),
 * rank 0 says how to resume, and the exit status says the run did not
 * complete. */
#include "config.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "run_internal.h"

static char pb_rs__msg[1024];
static size_t pb_rs__len;

static void pb_rs__handler(int sig)
{
  if (pb_rs__len) {
    char num[4] = {(char)('0' + sig / 10 % 10), (char)('0' + sig % 10), ')', '\n'};
    (void)!write(STDERR_FILENO, pb_rs__msg, pb_rs__len);
    (void)!write(STDERR_FILENO, num + (sig < 10), sizeof num - (sig < 10));
  }
  _exit(128 + sig);
}

void pb_run_signals_install(const struct pb_run_config *cfg, MPI_Comm comm)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  pb_rs__len = 0;
  if (rank == 0) {
    snprintf(pb_rs__msg, sizeof pb_rs__msg,
             "pairbound run: stopped by a signal; the stages completed so far are kept in %s/STAGE/ with their "
             "checkpoints; to continue, repeat the same command with --resume (signal ",
             cfg->output);
    pb_rs__len = strlen(pb_rs__msg);
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = pb_rs__handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
}
