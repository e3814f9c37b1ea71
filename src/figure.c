/* Report figures through gnuplot (pngcairo), one process per figure. */
#include "config.h"

#include <errno.h>
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

/* Start gnuplot on the set-up plus the figure's script, which ends by
 * closing the output, so the PNG is complete while gnuplot waits for the end
 * of its input; its stderr is kept in @p log so a failure can be reported
 * with gnuplot's own words.  NULL when gnuplot cannot be started. */
static FILE *pb_figure__render(const struct pb_figure *fig, const char *data_path, const char *png_tmp, const char *log)
{
  size_t n = strlen(pb_figure__program()) + strlen(log) + 32;
  char *cmd = pb_malloc(n);
  snprintf(cmd, n, "'%s' 2>'%s'", pb_figure__program(), log);
  FILE *gp = popen(cmd, "w");
  free(cmd);
  if (!gp) return NULL;
  fputs("set terminal pngcairo size 960,600 font 'DejaVu Sans,11' noenhanced\nset output ", gp);
  pb_figure__quoted(gp, png_tmp);
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
  return gp;
}

static void pb_figure__fail(const char *name, const char *log)
{
  char msg[512] = "";
  FILE *fp = fopen(log, "r");
  if (fp) {
    size_t got = fread(msg, 1, sizeof msg - 1, fp);
    msg[got] = '\0';
    fclose(fp);
  }
  for (char *c = msg; *c; c++)
    if (*c == '\n') *c = ' ';
  pb_error_set("figure %s: gnuplot failed: %s", name, msg[0] ? msg : "no message");
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
  job->log = pb_malloc(n);
  snprintf(job->tmp, n, "%s.tmp", job->png);
  snprintf(job->log, n, "%s.log", job->png);
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  char *data_path = pb_results_report_path(res, name);
  job->gp = pb_figure__render(fig, data_path, job->tmp, job->log);
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
    const int st = job->gp ? pclose(job->gp) : -1;
    status = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? PB_OK : PB_FAIL;
    if (status != PB_OK) {
      pb_figure__fail(job->name, job->log);
      unlink(job->tmp);
    } else if (rename(job->tmp, job->png) != 0) {
      pb_error_set("%s: cannot write file: %s", job->png, strerror(errno));
      unlink(job->tmp);
      status = PB_FAIL;
    }
    unlink(job->log);
    if (status == PB_OK && md) pb_figure__link(md, fig);
  }
  free(job->name), free(job->png), free(job->tmp), free(job->log);
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
