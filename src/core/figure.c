/* Report figures through gnuplot (pngcairo), one process for the figures a
 * process starts until it next waits for one. */
#define _GNU_SOURCE /* posix_spawn_file_actions_addchdir_np, pipe2 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <mpi.h>

#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/signals.h"

static const char *pb_figure__program(void)
{
  return pb_env_given(PB_ENV_GNUPLOT) ? pb_env_get(PB_ENV_GNUPLOT) : "gnuplot";
}

/* Whether the program has pngcairo: asked once per program name (so
 * PAIRBOUND_GNUPLOT may change in between) by `PROG -e 'set terminal'`, whose
 * terminal list goes to stdout.  pb_figure_prepare starts the question and
 * pb_figure_available reads the answer, so its start-up overlaps a stage's
 * work. */
static struct {
  int known;          /* the answer for `checked`, or -1 */
  char checked[256];  /* the program asked about */
  FILE *asking;       /* the question still running, or NULL */
} pb_figure__probe = {-1, "", NULL};

/* Single-quoted for sh: ' becomes '\'' (paths are the user's). */
static void pb_figure__sh_quoted(struct pb_text *t, const char *s)
{
  pb_text_append(t, "'", 1);
  for (; *s; s++)
    if (*s == '\'') pb_text_append(t, "'\\''", 4);
    else pb_text_append(t, s, 1);
  pb_text_append(t, "'", 1);
}

/* Ask about @p prog unless the answer, or the question, is about it already. */
static void pb_figure__ask(const char *prog)
{
  if (strcmp(pb_figure__probe.checked, prog) == 0 && (pb_figure__probe.known >= 0 || pb_figure__probe.asking)) return;
  if (pb_figure__probe.asking) pclose(pb_figure__probe.asking); /* about another program */
  snprintf(pb_figure__probe.checked, sizeof pb_figure__probe.checked, "%s", prog);
  pb_figure__probe.known = -1;
  struct pb_text cmd = {0};
  pb_figure__sh_quoted(&cmd, prog);
  pb_text_printf(&cmd, " -e 'set terminal' 2>&1");
  pb_figure__probe.asking = popen(cmd.buf, "r");
  pb_text_free(&cmd);
}

int pb_figure_available(void)
{
  const char *prog = pb_figure__program();
  if (strcmp(prog, "none") == 0) return 0;
  pb_figure__ask(prog);
  if (pb_figure__probe.known >= 0) return pb_figure__probe.known;
  FILE *p = pb_figure__probe.asking;
  pb_figure__probe.asking = NULL;
  pb_figure__probe.known = 0;
  if (!p) return 0;
  char line[256];
  int has = 0;
  while (fgets(line, sizeof line, p))
    if (strstr(line, "pngcairo")) has = 1;
  pb_figure__probe.known = pclose(p) == 0 && has;
  return pb_figure__probe.known;
}

/* A gnuplot single-quoted string: '' stands for one quote, and nothing else
 * is special inside it but the end of the line, which would end the
 * command: a control character (a title may quote a store's source name)
 * becomes a space. */
static void pb_figure__quoted(FILE *fp, const char *s)
{
  fputc('\'', fp);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', fp);
    fputc((unsigned char)*s < 0x20 || *s == 0x7f ? ' ' : *s, fp);
  }
  fputc('\'', fp);
}

/* The figures a process starts go to one gnuplot, its session, until a
 * pb_figure_finish waits for it: gnuplot's start-up (cairo and its fonts,
 * about 55 ms of CPU) is paid once per stage instead of once per figure
 * (screen's figures took 0.45 s of CPU more than none).  Each figure begins
 * with a marker printed to the session's stderr log, then `reset`, so no
 * setting of one reaches the next.  gnuplot reading a pipe goes on after an
 * error and exits non-zero at the end; what it says after a figure's marker
 * is that figure's: an error ("line N: ...", not a warning) fails it alone.
 * A non-zero exit with no figure to blame (gnuplot died, or is not gnuplot)
 * fails them all.  What each ended session that had figures said is kept,
 * by number, for the jobs still to be finished.
 *
 * gnuplot runs in the report directory of the results that opened the
 * session and reads and writes only there, under the figures' own names
 * (NAME.tsv, NAME.png.tmp): no path the user chose ever appears in its
 * script, so none can be read as a command.  Its stdin is the script, its
 * stdout /dev/null (nothing it prints can reach pairbound's stdout), its
 * stderr report/.figures.log, removed when the session ends (before the
 * commit moves report/ into place).  A stage stopped by a signal kills it
 * before the staging directory goes (pb_signal_child). */
struct pb_figure__ended {
  int n;         /* figures it was sent */
  char **msg;    /* [n]: gnuplot's error for the figure, NULL when it rendered */
};
static struct {
  FILE *gp;       /* the open session's input (NULL when gnuplot could not be started) */
  pid_t pid;      /* its gnuplot */
  char *dir;      /* the report directory it runs in */
  char *log;      /* its stderr; NULL when no session is open */
  int next_seq;   /* the open session's next figure */
  int n_ended;    /* sessions that ended; the open one is number n_ended + 1 */
  struct pb_figure__ended *ended;
} pb_figure__s;

#define PB_FIGURE__MARK "pairbound-figure "

/* [from, to) on one line, at most 511 bytes (caller frees). */
static char *pb_figure__one_line(const char *from, const char *to)
{
  char msg[512];
  size_t n = (size_t)(to - from) < sizeof msg - 1 ? (size_t)(to - from) : sizeof msg - 1;
  memcpy(msg, from, n);
  msg[n] = '\0';
  for (char *c = msg; *c; c++)
    if (*c == '\n') *c = ' ';
  return pb_strdup(msg);
}

/* gnuplot's message in [from, to) on one line; NULL when it holds no error. */
static char *pb_figure__error(const char *from, const char *to)
{
  int err = 0;
  for (const char *l = from; l < to && !err;) {
    const char *e = memchr(l, '\n', (size_t)(to - l));
    e = e ? e : to;
    const char *k = l;
    while ((k = strstr(k, "line ")) && k < e) { /* "line N: message" */
      const char *d = k + 5;
      while (d < e && *d >= '0' && *d <= '9') d++;
      if (d > k + 5 && d + 1 < e && d[0] == ':' && strncmp(d + 1, " warning", 8) != 0) err = 1;
      k = d;
    }
    l = e + 1;
  }
  return err ? pb_figure__one_line(from, to) : NULL;
}

/* Close the session's input and wait for its gnuplot: its wait status, -1 when it never started. */
static int pb_figure__wait(void)
{
  if (!pb_figure__s.gp) return -1;
  fclose(pb_figure__s.gp);
  siginfo_t info;
  /* ended, not yet reaped: the signal handler may still kill its pid harmlessly, then no more */
  while (waitid(P_PID, (id_t)pb_figure__s.pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) continue;
  pb_signal_child(0);
  int st = -1;
  while (waitpid(pb_figure__s.pid, &st, 0) < 0 && errno == EINTR) continue;
  return st;
}

/* End the open session: wait for gnuplot, read what it said of each figure. */
static void pb_figure__end(void)
{
  struct pb_figure__ended e = {pb_figure__s.next_seq, pb_calloc((size_t)pb_figure__s.next_seq + 1, sizeof(char *))};
  const int st = pb_figure__wait();
  const int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  char *text = pb_figure__s.log ? pb_output_text_load(pb_figure__s.log) : NULL;
  if (!text) pb_error_clear();
  int blamed = 0;
  if (!ok && text)
    for (const char *m = strstr(text, PB_FIGURE__MARK); m;) {
      int64_t seq;
      const int ours = pb_parse_int_prefix(m + strlen(PB_FIGURE__MARK), 0, e.n - 1, &seq, NULL) == PB_OK;
      const char *from = strchr(m, '\n') ? strchr(m, '\n') + 1 : m + strlen(m), *next = strstr(from, PB_FIGURE__MARK);
      if (ours && !e.msg[seq] && (e.msg[seq] = pb_figure__error(from, next ? next : from + strlen(from)))) blamed = 1;
      m = next;
    }
  if (!ok && !blamed) { /* no figure to blame: every one failed, with all gnuplot said */
    char start[300];
    snprintf(start, sizeof start, "cannot start %s", pb_figure__program());
    const char *why = !pb_figure__s.gp ? start : text && text[0] ? text : "no message";
    for (int i = 0; i < e.n; i++) e.msg[i] = pb_figure__one_line(why, why + strlen(why));
  }
  free(text);
  if (pb_figure__s.log) unlink(pb_figure__s.log);
  free(pb_figure__s.log);
  free(pb_figure__s.dir);
  if (e.n > 0) { /* kept for its jobs; a session prepared for a stage without figures has none */
    pb_figure__s.ended = pb_realloc(pb_figure__s.ended, (size_t)(pb_figure__s.n_ended + 1) * sizeof e);
    pb_figure__s.ended[pb_figure__s.n_ended++] = e;
  } else {
    free(e.msg);
  }
  pb_figure__s.gp = NULL;
  pb_figure__s.pid = 0;
  pb_figure__s.dir = NULL;
  pb_figure__s.log = NULL;
  pb_figure__s.next_seq = 0;
}

/* Writing to a gnuplot that stopped (at an earlier figure, or never
 * started) meets a closed pipe: that must not end pairbound by SIGPIPE, the
 * failure is reported when the session ends.  Returns the old action. */
static struct sigaction pb_figure__sigpipe_off(void)
{
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  return old;
}

#define PB_FIGURE__TERMINAL "set terminal pngcairo size 960,600 font 'DejaVu Sans,11' noenhanced\n"

/* Start gnuplot in directory @p dir, its stdin the session's input, its
 * stdout /dev/null, its stderr @p log; no shell between. */
static void pb_figure__spawn(const char *dir, const char *log)
{
  int in[2] = {-1, -1};
  const int out = open("/dev/null", O_WRONLY | O_CLOEXEC),
            err = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  char *argv[] = {(char *)pb_figure__program(), NULL};
  if (out >= 0 && err >= 0 && pipe2(in, O_CLOEXEC) == 0 && posix_spawn_file_actions_adddup2(&fa, in[0], 0) == 0 &&
      posix_spawn_file_actions_adddup2(&fa, out, 1) == 0 && posix_spawn_file_actions_adddup2(&fa, err, 2) == 0 &&
      posix_spawn_file_actions_addchdir_np(&fa, dir) == 0 &&
      posix_spawnp(&pb_figure__s.pid, argv[0], &fa, NULL, argv, pb_env_inherited()) == 0) {
    pb_figure__s.gp = fdopen(in[1], "w");
    in[1] = -1;
    pb_signal_child(pb_figure__s.pid);
  }
  posix_spawn_file_actions_destroy(&fa);
  const int mine[4] = {in[0], in[1], out, err}; /* the child has its copies */
  for (int i = 0; i < 4; i++)
    if (mine[i] >= 0) close(mine[i]);
}

/* Open a session in report directory @p dir (taken) whose stderr goes to
 * @p log (taken), and have it load what its first figure would (cairo,
 * pango, the font) while nothing waits for it: a small plot with text, to
 * /dev/null.  The figures' `reset` and terminal line undo it, so their PNGs
 * are byte for byte those of a cold gnuplot. */
static void pb_figure__open(char *dir, char *log)
{
  pb_figure__s.dir = dir;
  pb_figure__s.log = log;
  pb_figure__spawn(dir, log);
  if (!pb_figure__s.gp) return; /* reported when the session ends */
  struct sigaction old = pb_figure__sigpipe_off();
  fputs(PB_FIGURE__TERMINAL "set output '/dev/null'\nunset border\nunset tics\nset label 1 'warm-up' at graph 0.5, 0.5\n"
        "plot [0:1] [0:1] NaN notitle\nunset output\n", pb_figure__s.gp);
  fflush(pb_figure__s.gp);
  sigaction(SIGPIPE, &old, NULL);
}

/* The session's end, as work deferred to the commit of the results that
 * opened it (pb_results_defer): a gnuplot prepared for a stage that got no
 * figure ends there too, and its log leaves report/ before report/ moves. */
static int pb_figure__settle_deferred(void *ctx)
{
  (void)ctx;
  pb_figure_settle();
  return PB_OK;
}

/* The open session, started in @p res's report directory (its log there,
 * removed when it ends, at the latest when @p res is committed or closed)
 * when none is; one open in another results' directory ends first. */
static void pb_figure__session(struct pb_results *res)
{
  char *dir = pb_results_report_path(res, ".");
  if (pb_figure__s.log && strcmp(pb_figure__s.dir, dir) != 0) pb_figure__end();
  if (pb_figure__s.log) {
    free(dir);
    return;
  }
  pb_figure__open(dir, pb_results_report_path(res, ".figures.log"));
  pb_results_defer(res, pb_figure__settle_deferred, NULL);
}

void pb_figure_prepare(struct pb_results *res)
{
  int rank;
  MPI_Comm_rank(pb_results_comm(res), &rank);
  const char *prog = pb_figure__program();
  if (rank != 0 || strcmp(prog, "none") == 0) return;
  pb_figure__ask(prog);
  if (pb_figure__probe.known != 0) pb_figure__session(res); /* before the answer: gnuplot is the usual case */
}

void pb_figure_settle(void)
{
  if (pb_figure__s.log) pb_figure__end();
}

/* Send the figure's script (common set-up first) to the open session: it
 * reads NAME.tsv and writes NAME.png.tmp in the directory it runs in. */
static void pb_figure__render(const struct pb_figure *fig, struct pb_figure_job *job)
{
  job->session = pb_figure__s.n_ended + 1;
  job->seq = pb_figure__s.next_seq++;
  FILE *gp = pb_figure__s.gp;
  if (!gp) return; /* reported when the session ends */
  struct sigaction old = pb_figure__sigpipe_off();
  char name[300];
  fprintf(gp, "print '%s%d'\nreset\n" PB_FIGURE__TERMINAL "set output ", PB_FIGURE__MARK, job->seq);
  snprintf(name, sizeof name, "%s.png.tmp", fig->name);
  pb_figure__quoted(gp, name);
  fputs("\nset datafile separator '\\t'\nset datafile missing 'nan'\nset key autotitle columnheader\nDATA = ", gp);
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  pb_figure__quoted(gp, name);
  fputs("\nset title ", gp);
  pb_figure__quoted(gp, fig->title);
  fputs("\nset xlabel ", gp);
  pb_figure__quoted(gp, fig->xlabel);
  fputs("\nset ylabel ", gp);
  pb_figure__quoted(gp, fig->ylabel);
  fprintf(gp, "\nset grid\n%s\nunset output\n", fig->script);
  fflush(gp);
  sigaction(SIGPIPE, &old, NULL);
}

/* Whether the data has a point to plot: a finite number outside the first
 * column of a row after the header.  A store can leave every value of a
 * figure undefined (nothing of that kind to measure on it), and gnuplot
 * fails a plot with no valid point, which is no error of the stage. */
static int pb_figure__has_values(const char *data, size_t len)
{
  const char *end = data + len, *p = memchr(data, '\n', len);
  while (p && p < end) {
    const char *field = ++p;
    int col = 0;
    for (; p < end && *p != '\n'; p++)
      if (*p == '\t') {
        col++;
        field = p + 1;
      } else if (col > 0 && p == field) {
        char buf[64];
        size_t n = strcspn(field, "\t\n");
        if (n < sizeof buf) {
          memcpy(buf, field, n);
          buf[n] = '\0';
          double x;
          if (pb_parse_real(buf, &x) == PB_OK && isfinite(x)) return 1;
        }
      }
  }
  return 0;
}

int pb_figure_start(struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_figure_job *job)
{
  memset(job, 0, sizeof *job);
  job->fig = fig;
  job->name = pb_strdup(fig->name);
  char name[256];
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  int status = pb_results_write_report(res, name, data, len);
  if (status == PB_OK && !pb_figure__has_values(data, len)) {
    job->state = PB_FIGURE__EMPTY;
    return status;
  }
  if (status != PB_OK || !pb_figure_available()) {
    job->state = status == PB_OK ? PB_FIGURE__SKIPPED : PB_FIGURE__DONE;
    return status;
  }
  snprintf(name, sizeof name, "%s.png", fig->name);
  job->png = pb_results_report_path(res, name);
  size_t n = strlen(job->png) + 16;
  job->tmp = pb_malloc(n);
  snprintf(job->tmp, n, "%s.tmp", job->png);
  pb_figure__session(res);
  pb_figure__render(fig, job);
  job->state = PB_FIGURE__RENDERING;
  return PB_OK;
}

/* The markdown of a rendered figure. */
static void pb_figure__link(struct pb_text *md, const struct pb_figure *fig)
{
  pb_text_printf(md, "\n![%s](%s.png)\n\n*%s — data: [%s.tsv](%s.tsv).*\n", fig->title, fig->name, fig->title,
                 fig->name, fig->name);
}

int pb_figure_finish(struct pb_figure_job *job, struct pb_text *md)
{
  const struct pb_figure *fig = job->fig;
  int status = PB_OK;
  if (job->state == PB_FIGURE__SKIPPED && md)
    pb_text_printf(md, "\n*Figure %s (%s) skipped: gnuplot with the pngcairo terminal is not installed; "
                       "its data is in [%s.tsv](%s.tsv).*\n",
                   fig->name, fig->title, fig->name, fig->name);
  if (job->state == PB_FIGURE__EMPTY && md)
    pb_text_printf(md, "\n*Figure %s (%s) not drawn: every value is undefined on this store; see [%s.tsv](%s.tsv).*\n",
                   fig->name, fig->title, fig->name, fig->name);
  if (job->state == PB_FIGURE__RENDERING) {
    if (job->session == pb_figure__s.n_ended + 1) pb_figure__end(); /* its session is still open */
    const struct pb_figure__ended *e = &pb_figure__s.ended[job->session - 1];
    if (e->msg[job->seq]) {
      pb_error_set("figure %s: gnuplot failed: %s", job->name, e->msg[job->seq]);
      unlink(job->tmp);
      status = PB_FAIL;
    } else if (rename(job->tmp, job->png) != 0) {
      pb_error_set("%s: cannot write file: %s", job->png, strerror(errno));
      unlink(job->tmp);
      status = PB_FAIL;
    }
    if (status == PB_OK && md) pb_figure__link(md, fig);
  }
  free(job->name), free(job->png), free(job->tmp);
  memset(job, 0, sizeof *job);
  return status;
}

/* A figure job finished at the commit of its results (pb_results_defer). */
static int pb_figure__finish_deferred(void *ctx)
{
  struct pb_figure_job *job = ctx;
  const int status = pb_figure_finish(job, NULL);
  free(job);
  return status;
}

int pb_figure_write(struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_text *md)
{
  struct pb_figure_job job;
  const int status = pb_figure_start(res, fig, data, len, &job);
  if (status != PB_OK || job.state != PB_FIGURE__RENDERING) {
    const int done = pb_figure_finish(&job, md);
    return status != PB_OK ? status : done;
  }
  /* rendered beside the caller; the commit waits (a failure there discards the outputs, link and all) */
  if (md) pb_figure__link(md, fig);
  job.fig = NULL;
  struct pb_figure_job *later = pb_malloc(sizeof *later);
  *later = job;
  pb_results_defer(res, pb_figure__finish_deferred, later);
  return PB_OK;
}
