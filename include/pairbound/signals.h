/* SIGTERM / SIGINT (a time limit, scancel, Ctrl-C) as a request to stop.
 *
 * The first signal only sets a flag: long stages poll it at their block
 * boundaries (pb_signal_agree, so every rank stops at the same boundary),
 * clean up what they staged, say how to resume and exit non-zero.  A second
 * signal (one more than a second after the first: a launcher that forwards
 * the signal its process group also received delivers one request twice),
 * or a first one while nothing polls (pb_signal_install(.., 0)), ends the
 * process at once with 128 + signal after writing the hint, since
 * mpirun and SLURM follow a SIGTERM with a SIGKILL within seconds anyway. */
#ifndef PAIRBOUND_SIGNALS_H
#define PAIRBOUND_SIGNALS_H

#include <sys/types.h>

#include <mpi.h>

/**
 * Install the handlers for SIGTERM and SIGINT.  @p hint (copied; may be
 * NULL) is what the user is told on stderr when a signal arrives, e.g. how
 * to resume; only rank 0 prints it.  @p deferred: 1 when the caller polls
 * pb_signal_pending()/pb_signal_agree(), 0 to exit at the first signal.
 */
void pb_signal_install(const char *hint, int deferred, MPI_Comm comm);

/**
 * The command has ended with @p status (its messages written, its outputs
 * committed or removed): from now on a signal ends the process at once with
 * that status and writes nothing.  Under mpirun, a rank that leaves with an
 * error makes the launcher send SIGTERM to the ranks still on their way
 * out; they must not then say that they were stopped.
 */
void pb_signal_finished(int status);

/**
 * Switch between deferred (polled) and immediate handling, e.g. around a
 * block loop or a commit that must not be cut in two; returns the previous
 * setting.  Switching to immediate acts on a signal that came meanwhile.
 */
int pb_signal_set_deferred(int deferred);

/**
 * A directory (a stage's staging directory, include/pairbound/output.h) the
 * immediate exit removes first, so a killed stage leaves its OUTDIR as it
 * was; NULL when none.  Only one at a time; set on the rank that made it.
 */
void pb_signal_cleanup(const char *dir);

/**
 * A child process that writes into that directory (the figures' gnuplot),
 * 0 when none: the immediate exit kills it (SIGKILL) and waits for it
 * before removing the directory, so a stopped stage leaves no process
 * writing.  Set it to 0 once the child has exited and before it is reaped
 * (waitid with WNOWAIT), so the pid can never name another process.
 */
void pb_signal_child(pid_t pid);

/**
 * A file the immediate exit unlinks, on the rank that made it: a store or CSV
 * being written under its temporary name, a lock file this process holds; so
 * a killed synth, ingest or export leaves neither.  Returns its slot for
 * pb_signal_forget_file (once the file is renamed or released), 0 when it is
 * not kept (every slot taken, or a path of 4,096 bytes or more): the file is
 * then left by an immediate exit, as before.
 */
int pb_signal_cleanup_file(const char *path);
/** Forget slot @p slot of pb_signal_cleanup_file (0: none). */
void pb_signal_forget_file(int slot);

/** Remove that directory (its child ended first) and those files now: a process about to end without returning
 * (MPI_Abort). */
void pb_signal_cleanup_now(void);

/** The signal number received (SIGTERM or SIGINT), 0 when none: local, async-signal-safe read. */
int pb_signal_pending(void);

/**
 * Collective on @p comm: the signal any rank received (the largest number),
 * 0 when none, so that all ranks leave a block loop at the same boundary.
 */
int pb_signal_agree(MPI_Comm comm);

/** Collective on @p comm: as pb_signal_agree, over the ranks' @p mine (a signal number or 0) instead. */
int pb_signal_agree_on(MPI_Comm comm, int mine);
/** The signal the last pb_signal_agree or pb_signal_agree_on agreed on (same on every rank), 0 when none. */
int pb_signal_stopped(void);

/** Exit status for a run stopped by @p sig (128 + sig, the shell's convention). */
int pb_signal_exit_status(int sig);

#endif /* PAIRBOUND_SIGNALS_H */
