/* Report figures through gnuplot (pngcairo), one process for the figures a
 * process starts until it next waits for one. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/util.h"

static const char *pb_figure__program(void)
{
  const char *p = getenv("PAIRBOUND_GNUPLOT");
  return p && p[0] ? p : "gnuplot";
}

int pb_figure_available(void)
{
  /* checked once per program name, so PAIRBOUND_GNUPLOT may change in between */
  static int known = -1;
  static char checked[256];
  const char *prog = pb_figure__program();
  if (known >= 0 && strcmp(checked, prog) == 0) return known;
  snprintf(checked, sizeof checked, "%s", prog);
  known = 0;
  if (strcmp(prog, "none") == 0) return known;
  /* the terminal list goes to stdout; pngcairo must be among them */
  size_t n = strlen(prog) + 64;
  char *cmd = pb_malloc(n);
  snprintf(cmd, n, "'%s' -e 'set terminal' 2>&1", prog);
  FILE *p = popen(cmd, "r");
  free(cmd);
  if (!p) return known;
  char line[256];
  while (fgets(line, sizeof line, p))
    if (strstr(line, "pngcairo")) known = 1;
  if (pclose(p) != 0) known = 0;
  return known;
}

/* A gnuplot single-quoted string: '' stands for one quote. */
static void pb_figure__quoted(FILE *fp, const char *s)
{
  fputc('\'', fp);
  for (; *s; s++) {
    if (*s == '\'') fputc('\'', fp);
    fputc(*s, fp);
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
 * fails them all.  What each ended session said is kept, by number, for
 * the jobs still to be finished. */
struct pb_figure__ended {
  int n;         /* figures it was sent */
  char **msg;    /* [n]: gnuplot's error for the figure, NULL when it rendered */
};
static struct {
  FILE *gp;       /* the open session's input (NULL when gnuplot could not be started) */
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

/* End the open session: wait for gnuplot, read what it said of each figure. */
static void pb_figure__end(void)
{
  struct pb_figure__ended e = {pb_figure__s.next_seq, pb_calloc((size_t)pb_figure__s.next_seq + 1, sizeof(char *))};
  const int st = pb_figure__s.gp ? pclose(pb_figure__s.gp) : -1;
  const int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  char *text = pb_figure__s.log ? pb_text_load(pb_figure__s.log) : NULL;
  if (!text) pb_error_clear();
  int blamed = 0;
  if (!ok && text)
    for (const char *m = strstr(text, PB_FIGURE__MARK); m;) {
      const int seq = atoi(m + strlen(PB_FIGURE__MARK));
      const char *from = strchr(m, '\n') ? strchr(m, '\n') + 1 : m + strlen(m), *next = strstr(from, PB_FIGURE__MARK);
      if (seq >= 0 && seq < e.n && !e.msg[seq] && (e.msg[seq] = pb_figure__error(from, next ? next : from + strlen(from))))
        blamed = 1;
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
  pb_figure__s.ended = pb_realloc(pb_figure__s.ended, (size_t)(pb_figure__s.n_ended + 1) * sizeof e);
  pb_figure__s.ended[pb_figure__s.n_ended++] = e;
  pb_figure__s.gp = NULL;
  pb_figure__s.log = NULL;
  pb_figure__s.next_seq = 0;
}

/* Send the figure's script (common set-up first) to the open session,
 * starting one (its log beside the figure) when none is open. */
static void pb_figure__render(const struct pb_figure *fig, const char *data_path, struct pb_figure_job *job)
{
  if (!pb_figure__s.log) {
    size_t n = strlen(job->png) + 8;
    pb_figure__s.log = pb_malloc(n);
    snprintf(pb_figure__s.log, n, "%s.log", job->png);
    n = strlen(pb_figure__program()) + strlen(pb_figure__s.log) + 32;
    char *cmd = pb_malloc(n);
    snprintf(cmd, n, "'%s' 2>'%s'", pb_figure__program(), pb_figure__s.log);
    pb_figure__s.gp = popen(cmd, "w");
    free(cmd);
  }
  job->session = pb_figure__s.n_ended + 1;
  job->seq = pb_figure__s.next_seq++;
  FILE *gp = pb_figure__s.gp;
  if (!gp) return; /* reported when the session ends */
  /* a gnuplot that stopped at an earlier figure closes the pipe: writing then
   * must not end pairbound by SIGPIPE (the failure is reported at the end) */
  struct sigaction ign, old;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ign, &old);
  fprintf(gp, "print '%s%d'\nreset\n", PB_FIGURE__MARK, job->seq);
  fputs("set terminal pngcairo size 960,600 font 'DejaVu Sans,11' noenhanced\nset output ", gp);
  pb_figure__quoted(gp, job->tmp);
  fputs("\nset datafile separator '\\t'\nset datafile missing 'nan'\nset key autotitle columnheader\nDATA = ", gp);
  pb_figure__quoted(gp, data_path);
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

int pb_figure_start(const struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_figure_job *job)
{
  memset(job, 0, sizeof *job);
  job->fig = fig;
  job->name = pb_strdup(fig->name);
  char name[256];
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  int status = pb_results_write_report(res, name, data, len);
  if (status != PB_OK || !pb_figure_available()) {
    job->state = status == PB_OK ? PB_FIGURE__SKIPPED : PB_FIGURE__DONE;
    return status;
  }
  snprintf(name, sizeof name, "%s.png", fig->name);
  job->png = pb_results_report_path(res, name);
  size_t n = strlen(job->png) + 16;
  job->tmp = pb_malloc(n);
  snprintf(job->tmp, n, "%s.tmp", job->png);
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  char *data_path = pb_results_report_path(res, name);
  pb_figure__render(fig, data_path, job);
  free(data_path);
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
  pb_results_defer_figure(res, &job);
  return PB_OK;
}
