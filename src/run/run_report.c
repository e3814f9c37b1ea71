/* OUTPUT/REPORT.md of `pairbound run` and the summary it prints: provenance
 * first (build, store checksum, settings, ranks x threads, wall time per
 * stage), then the stages in the seed paper's order (identification, policy,
 * screening, then the verification appendix); the summary reads the headline
 * numbers back from the stages' own report TSVs, so it can never disagree
 * with them. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pairbound/protocol.h"
#include "pairbound/error.h"
#include "pairbound/results.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "run_internal.h"

/* Stages in the order of the seed paper (Sections 3-4.1, 4.2, 5, Appendix F). */
/* seed 000's order (Sections 3-6, then the appendices' verification), then the
 * two further seed papers' analyses */
static const char *const pb_rr__paper_order[] = {"bounds", "policy", "screen", "predict", "verify", "fragility",
                                                 "exact"};
#define PB_RR_N_ORDER ((int)(sizeof pb_rr__paper_order / sizeof pb_rr__paper_order[0]))

/* ------------------------------------------------------------ TSV reading */

struct pb_rr_tsv {
  char *text;
  int n_cols, n_rows;
  char **cell; /* row-major, row 0 = header */
};

static int pb_rr__tsv_load(const char *output, const char *stage, const char *name, struct pb_rr_tsv *t)
{
  memset(t, 0, sizeof *t);
  char *dir = pb_output_path_join(output, stage), *rep = pb_output_path_join(dir, "report"), *path = pb_output_path_join(rep, name);
  t->text = pb_output_text_load(path);
  free(dir);
  free(rep);
  free(path);
  if (!t->text) {
    pb_error_clear();
    return PB_FAIL;
  }
  int cap = 64, n = 0;
  t->cell = pb_malloc((size_t)cap * sizeof *t->cell);
  for (char *line = t->text, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = '\0';
    int cols = 0;
    for (char *c = line, *tab;; c = tab + 1, cols++) {
      if (n == cap) t->cell = pb_realloc(t->cell, (size_t)(cap *= 2) * sizeof *t->cell);
      t->cell[n++] = c;
      if (!(tab = strchr(c, '\t'))) break;
      *tab = '\0';
    }
    if (t->n_rows == 0) t->n_cols = cols + 1;
    if (cols + 1 != t->n_cols) n -= cols + 1; /* ragged line: not a table row */
    else t->n_rows++;
  }
  return PB_OK;
}

static void pb_rr__tsv_free(struct pb_rr_tsv *t)
{
  free(t->text);
  free(t->cell);
  memset(t, 0, sizeof *t);
}

static int pb_rr__col(const struct pb_rr_tsv *t, const char *name)
{
  for (int j = 0; j < t->n_cols; j++)
    if (strcmp(t->cell[j], name) == 0) return j;
  return -1;
}

static const char *pb_rr__at(const struct pb_rr_tsv *t, int row, const char *col)
{
  int j = pb_rr__col(t, col);
  return j >= 0 && row > 0 && row < t->n_rows ? t->cell[row * t->n_cols + j] : NULL;
}

static double pb_rr__num(const struct pb_rr_tsv *t, int row, const char *col)
{
  const char *s = pb_rr__at(t, row, col);
  double x;
  return s && pb_parse_real(s, &x) == PB_OK ? x : NAN;
}

/* ------------------------------------------------------------- summaries */

static void pb_rr__sum_bounds(const char *output, FILE *fp)
{
  struct pb_rr_tsv t;
  if (pb_rr__tsv_load(output, "bounds", "identification_panel.tsv", &t) != PB_OK) return;
  fprintf(fp, "bounds  panel mean H width, pp of N, marginal I0 -> overlap Ik -> five-state I5:\n");
  for (int r = 1; r < t.n_rows; r++)
    fprintf(fp, "          %-10s %6.2f -> %6.2f -> %6.2f   (%s cells)\n", pb_rr__at(&t, r, "source"),
            pb_rr__num(&t, r, "H_I0"), pb_rr__num(&t, r, "H_Ik"), pb_rr__num(&t, r, "H_I5"), pb_rr__at(&t, r, "cells"));
  pb_rr__tsv_free(&t);
}

static void pb_rr__sum_policy(const char *output, FILE *fp)
{
  struct pb_rr_tsv t;
  if (pb_rr__tsv_load(output, "policy", "policy_figure5.tsv", &t) != PB_OK) return;
  fprintf(fp, "policy  share of cells with an ordering certified only under a shared correspondence, lambda = 0.5:\n        ");
  for (int r = 1; r < t.n_rows; r++)
    if (pb_rr__num(&t, r, "lambda") == 0.5)
      fprintf(fp, "  %s %.3f", pb_rr__at(&t, r, "source"), pb_rr__num(&t, r, "shared"));
  fprintf(fp, "\n");
  pb_rr__tsv_free(&t);
}

static void pb_rr__sum_screen(const char *output, FILE *fp)
{
  struct pb_rr_tsv a, c, iv;
  if (pb_rr__tsv_load(output, "screen", "screen_auroc.tsv", &a) != PB_OK) return;
  int have_cov = pb_rr__tsv_load(output, "screen", "screen_coverage.tsv", &c) == PB_OK;
  int have_iv = pb_rr__tsv_load(output, "screen", "screen_intervals.tsv", &iv) == PB_OK;
  fprintf(fp, "screen  mild conditions: AUROC U vs S (U-S, 95%% model-group interval); coverage at q = 0.2:\n");
  for (int r = 1; r < a.n_rows; r++) {
    const char *src = pb_rr__at(&a, r, "source");
    if (strcmp(pb_rr__at(&a, r, "tier"), "mild")) continue;
    fprintf(fp, "          %-10s AUROC %.3f vs %.3f (%+.3f", src, pb_rr__num(&a, r, "U"), pb_rr__num(&a, r, "S"),
            pb_rr__num(&a, r, "U-S"));
    int k = -1;
    if (have_iv)
      for (int j = 1; j < iv.n_rows && k < 0; j++)
        if (!strcmp(pb_rr__at(&iv, j, "source"), src) && !strcmp(pb_rr__at(&iv, j, "tier"), "mild") &&
            !strcmp(pb_rr__at(&iv, j, "contrast"), "U-S"))
          k = j;
    if (k > 0 && !isnan(pb_rr__num(&iv, k, "auroc_group_lo")))
      fprintf(fp, " [%+.3f, %+.3f]", pb_rr__num(&iv, k, "auroc_group_lo"), pb_rr__num(&iv, k, "auroc_group_hi"));
    fprintf(fp, ")");
    int q = -1;
    if (have_cov)
      for (int j = 1; j < c.n_rows && q < 0; j++)
        if (!strcmp(pb_rr__at(&c, j, "source"), src) && !strcmp(pb_rr__at(&c, j, "tier"), "mild") &&
            !strcmp(pb_rr__at(&c, j, "q"), "0.2"))
          q = j;
    if (q > 0) fprintf(fp, "; coverage %.3f vs %.3f", pb_rr__num(&c, q, "U"), pb_rr__num(&c, q, "S"));
    fprintf(fp, "\n");
  }
  pb_rr__tsv_free(&a);
  if (have_cov) pb_rr__tsv_free(&c);
  if (have_iv) pb_rr__tsv_free(&iv);
}

static void pb_rr__sum_verify(const char *output, FILE *fp)
{
  char *dir = pb_output_path_join(output, "verify"), *rep = pb_output_path_join(dir, "report"), *path = pb_output_path_join(rep, "REPORT.md");
  char *text = pb_output_text_load(path);
  if (!text) pb_error_clear();
  const char *v = text ? strstr(text, "**Verdict: ") : NULL;
  struct pb_rr_tsv t;
  int cells = pb_rr__tsv_load(output, "verify", "verify.tsv", &t) == PB_OK ? t.n_rows - 1 : -1;
  if (v) fprintf(fp, "verify  %.*s on %d cells (independent enumeration of the bounds)\n",
                 (int)strcspn(v + 11, "*"), v + 11, cells);
  if (cells >= 0) pb_rr__tsv_free(&t);
  free(text);
  free(path);
  free(rep);
  free(dir);
}

/* ---------------------------------------------------------------- report */

/* Stage markdown with relative link targets "](x" rewritten to "](STAGE/report/x". */
static void pb_rr__append_stage(struct pb_text *md, const char *stage, const char *text)
{
  for (const char *s = text; *s;) {
    const char *l = strstr(s, "](");
    if (!l) {
      pb_text_printf(md, "%s", s);
      break;
    }
    pb_text_printf(md, "%.*s](", (int)(l - s), s);
    s = l + 2;
    if (strncmp(s, "http", 4) && *s != '/' && *s != '#') pb_text_printf(md, "%s/report/", stage);
  }
}

static int pb_rr__in_config(const struct pb_run_config *cfg, const char *stage)
{
  for (int32_t i = 0; i < cfg->n_stages; i++)
    if (!strcmp(cfg->stages[i], stage)) return i;
  return -1;
}

static void pb_rr__provenance(const struct pb_run_config *cfg, const struct pb_run_facts *f, struct pb_text *md)
{
  pb_text_printf(md, "# pairbound run report\n\n## Provenance\n\n"
                     "- program: %s\n- store: `%s`, XXH3-128 `%s`\n- parallelism: %d MPI rank%s x %d OpenMP thread%s\n"
                     "- wall time: %.2f s in all;",
                 f->build, cfg->store, f->store_digest, f->ranks, f->ranks == 1 ? "" : "s", f->threads,
                 f->threads == 1 ? "" : "s", f->total);
  for (int32_t i = 0; i < cfg->n_stages; i++)
    pb_text_printf(md, " %s %.2f s%s%s", cfg->stages[i], f->wall[i], f->resumed[i] ? " (complete output resumed)" : "",
                   i + 1 < cfg->n_stages ? "," : "\n");
  pb_text_printf(md, "- outputs: `%s/STAGE/` (results.h5, report/*.tsv, figures report/*.png)\n\n"
                     "Effective analysis settings (defaults included):\n\n```\n%s```\n\n"
                     "Configuration file as given:\n\n```\n%s%s```\n",
                 cfg->output, f->settings, cfg->text, cfg->text[0] && cfg->text[strlen(cfg->text) - 1] != '\n' ? "\n" : "");
}

/* The one-screen summary, written to stdout with one write(2): under mpirun
 * (and in a SLURM log) stdout and stderr travel through separate pipes, so
 * only a single write keeps every message from landing inside it. */
static void pb_rr__summary(const struct pb_run_config *cfg, const struct pb_run_facts *facts, const char *path)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *fp = open_memstream(&buf, &len);
  if (!fp) return;
  fprintf(fp, "\npairbound run: %d stage%s on %s (%d rank%s x %d thread%s), %.1f s\n", cfg->n_stages,
          cfg->n_stages == 1 ? "" : "s", cfg->store, facts->ranks, facts->ranks == 1 ? "" : "s", facts->threads,
          facts->threads == 1 ? "" : "s", facts->total);
  for (int k = 0; k < PB_RR_N_ORDER; k++) {
    if (pb_rr__in_config(cfg, pb_rr__paper_order[k]) < 0) continue;
    if (!strcmp(pb_rr__paper_order[k], "bounds")) pb_rr__sum_bounds(cfg->output, fp);
    else if (!strcmp(pb_rr__paper_order[k], "policy")) pb_rr__sum_policy(cfg->output, fp);
    else if (!strcmp(pb_rr__paper_order[k], "screen")) pb_rr__sum_screen(cfg->output, fp);
    else if (!strcmp(pb_rr__paper_order[k], "verify")) pb_rr__sum_verify(cfg->output, fp);
  }
  fprintf(fp, "time   ");
  for (int32_t i = 0; i < cfg->n_stages; i++)
    fprintf(fp, " %s %.1f s%s%s", cfg->stages[i], facts->wall[i], facts->resumed[i] ? " (resumed)" : "",
            i + 1 < cfg->n_stages ? "," : "\n");
  fprintf(fp, "report  %s (every table, figure links, provenance); figures %s/STAGE/report/*.png\n", path,
          cfg->output);
  fclose(fp);
  fflush(stderr);
  fflush(stdout);
  for (size_t off = 0; off < len;) {
    ssize_t w = write(STDOUT_FILENO, buf + off, len - off);
    if (w <= 0) break;
    off += (size_t)w;
  }
  free(buf);
}

int pb_run_report(const struct pb_run_config *cfg, const struct pb_run_facts *facts)
{
  struct pb_text md = {0};
  int status = PB_OK;
  pb_rr__provenance(cfg, facts, &md);
  /* each stage in the paper's order, its further instances (KIND.NAME) after it in the order of [run] stages */
  for (int k = 0; k < PB_RR_N_ORDER && status == PB_OK; k++)
    for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
      const char *name = cfg->stages[i];
      if (strcmp(pb_run_stage_kind(name), pb_rr__paper_order[k])) continue;
      char *dir = pb_output_path_join(cfg->output, name), *sub = pb_output_path_join(dir, "report"),
           *rep = pb_output_path_join(sub, pb_run_stage_report(name));
      char *text = pb_output_text_load(rep);
      if (text) {
        pb_text_printf(&md, "\n");
        if (strchr(name, '.'))
          pb_text_printf(&md, "# Stage instance %s\n\n`%s` run again with the options of section [%s] "
                              "(docs/run.md); its outputs are in `%s/`.\n\n", name, pb_rr__paper_order[k], name, name);
        pb_rr__append_stage(&md, name, text);
      } else {
        status = PB_FAIL;
      }
      free(text);
      free(rep);
      free(sub);
      free(dir);
    }
  char *path = pb_output_path_join(cfg->output, "REPORT.md");
  if (status == PB_OK) {
    struct pb_outfile f;
    status = pb_output_file_open(&f, path);
    if (status == PB_OK) {
      fwrite(md.buf, 1, md.len, f.fp);
      status = pb_output_file_commit(&f);
    }
  }
  pb_text_free(&md);
  if (status == PB_OK) pb_rr__summary(cfg, facts, path);
  free(path);
  return status;
}
