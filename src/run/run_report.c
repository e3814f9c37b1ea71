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

#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/protocol.h"
#include "pairbound/registry.h"
#include "pairbound/results.h"
#include "run_internal.h"

/* The pipeline stages in REPORT.md's order (their .pipeline.order: seed 000's
 * Sections 3-6, then the appendices' verification, then the two further
 * seed papers' analyses); returns how many. */
static int pb_rr__order(const struct pb_stage_desc **out)
{
  int n = 0;
  for (int k = 0; pb_registry_stages[k]; k++)
    if (pb_registry_stages[k]->pipeline.report) out[n++] = pb_registry_stages[k];
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && out[j]->pipeline.order < out[j - 1]->pipeline.order; j--) {
      const struct pb_stage_desc *t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
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
  const struct pb_stage_desc *order[PB_RUN_MAX_KINDS];
  const int n = pb_rr__order(order);
  for (int k = 0; k < n; k++) {
    if (!order[k]->pipeline.summary || pb_rr__in_config(cfg, order[k]->name) < 0) continue;
    char *dir = pb_output_path_join(cfg->output, order[k]->name);
    order[k]->pipeline.summary(fp, dir);
    free(dir);
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
  const struct pb_stage_desc *order[PB_RUN_MAX_KINDS];
  const int n = pb_rr__order(order);
  for (int k = 0; k < n && status == PB_OK; k++)
    for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
      const char *name = cfg->stages[i];
      if (pb_registry_find(name) != order[k]) continue;
      char *dir = pb_output_path_join(cfg->output, name), *sub = pb_output_path_join(dir, "report"),
           *rep = pb_output_path_join(sub, order[k]->pipeline.report);
      char *text = pb_output_text_load(rep);
      if (text) {
        pb_text_printf(&md, "\n");
        if (strchr(name, '.'))
          pb_text_printf(&md, "# Stage instance %s\n\n`%s` run again with the options of section [%s] "
                              "(docs/run.md); its outputs are in `%s/`.\n\n", name, order[k]->name, name, name);
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
