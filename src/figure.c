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

/* Run gnuplot on the set-up plus the figure's script; its stderr is kept in
 * @p log so a failure can be reported with gnuplot's own words. */
static int pb_figure__render(const struct pb_figure *fig, const char *data_path, const char *png_tmp,
                             const char *log)
{
  size_t n = strlen(pb_figure__program()) + strlen(log) + 32;
  char *cmd = pb_malloc(n);
  snprintf(cmd, n, "'%s' 2>'%s'", pb_figure__program(), log);
  FILE *gp = popen(cmd, "w");
  free(cmd);
  if (!gp) return PB_FAIL;
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
  fprintf(gp, "\nset grid\n%s\n", fig->script);
  int st = pclose(gp);
  return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? PB_OK : PB_FAIL;
}

static void pb_figure__fail(const struct pb_figure *fig, const char *log)
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
  pb_error_set("figure %s: gnuplot failed: %s", fig->name, msg[0] ? msg : "no message");
}

int pb_figure_write(const struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_text *md)
{
  char name[256];
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  int status = pb_results_write_report(res, name, data, len);
  if (status != PB_OK) return status;
  if (!pb_figure_available()) {
    pb_text_printf(md, "\n*Figure %s (%s) skipped: gnuplot with the pngcairo terminal is not installed; "
                       "its data is in [%s](%s).*\n",
                   fig->name, fig->title, name, name);
    return PB_OK;
  }
  snprintf(name, sizeof name, "%s.png", fig->name);
  char *png = pb_results_report_path(res, name);
  size_t n = strlen(png) + 16;
  char *tmp = pb_malloc(n), *log = pb_malloc(n);
  snprintf(tmp, n, "%s.tmp", png);
  snprintf(log, n, "%s.log", png);
  snprintf(name, sizeof name, "%s.tsv", fig->name);
  char *data_path = pb_results_report_path(res, name);
  status = pb_figure__render(fig, data_path, tmp, log);
  if (status != PB_OK) {
    pb_figure__fail(fig, log);
    unlink(tmp);
  } else if (rename(tmp, png) != 0) {
    pb_error_set("%s: cannot write file: %s", png, strerror(errno));
    unlink(tmp);
    status = PB_FAIL;
  }
  unlink(log);
  if (status == PB_OK)
    pb_text_printf(md, "\n![%s](%s.png)\n\n*%s — data: [%s.tsv](%s.tsv).*\n", fig->title, fig->name, fig->title,
                   fig->name, fig->name);
  free(data_path);
  free(log);
  free(tmp);
  free(png);
  return status;
}
