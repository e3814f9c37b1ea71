/* OUTPUT/REPORT.md of `pairbound run` and the summary it prints: provenance
 * first (build, store checksum, settings, ranks x threads, wall time per
 * stage), then the stages in the seed paper's order (identification, policy,
 * screening, then the verification appendix); the summary reads the headline
 * numbers back from the stages' own report TSVs, so it can never disagree
 * with them. */
#include "config.h"

#include <dirent.h>
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
  pb_text_printf(md, "\n<a id=\"provenance\"></a>\n\n## Provenance\n\n"
                     "- program: %s\n- store: `%s`, XXH3-128 `%s`\n- parallelism: %d MPI rank%s x %d OpenMP thread%s\n"
                     "- wall time: %.2f s in all;",
                 f->build, cfg->store, f->store_digest, f->ranks, f->ranks == 1 ? "" : "s", f->threads,
                 f->threads == 1 ? "" : "s", f->total);
  for (int32_t i = 0; i < cfg->n_stages; i++) {
    if (f->skipped[i][0]) pb_text_printf(md, " %s skipped", cfg->stages[i]);
    else pb_text_printf(md, " %s %.2f s%s", cfg->stages[i], f->wall[i], f->resumed[i] ? " (complete output resumed)" : "");
    pb_text_printf(md, "%s", i + 1 < cfg->n_stages ? "," : "\n");
  }
  pb_text_printf(md, "- outputs: `%s/STAGE/` (results.h5, report/*.tsv, figures report/*.png)\n\n"
                     "Effective analysis settings (defaults included):\n\n```\n%s```\n\n"
                     "Configuration file as given:\n\n```\n%s%s```\n",
                 cfg->output, f->settings, cfg->text, cfg->text[0] && cfg->text[strlen(cfg->text) - 1] != '\n' ? "\n" : "");
}

/* The first page: each stage's findings (its summary's numbers, a sentence on what they mean for this store,
 * its headline figure), in the seed paper's order, then the stages skipped and why. */
static void pb_rr__findings(const struct pb_run_config *cfg, const struct pb_run_facts *f, struct pb_text *md)
{
  pb_text_printf(md, "# pairbound run report\n\n## Findings\n\nStore `%s`; every number below is read back from "
                     "the stage's own tables, which the sections after the contents list in full.\n", cfg->store);
  const struct pb_stage_desc *order[PB_RUN_MAX_KINDS];
  const int n = pb_rr__order(order);
  for (int k = 0; k < n; k++) {
    const int i = pb_rr__in_config(cfg, order[k]->name);
    if (i < 0 || f->skipped[i][0] || !order[k]->pipeline.summary) continue;
    char *dir = pb_output_path_join(cfg->output, order[k]->name), *rel = pb_output_path_join(order[k]->name, "report/");
    order[k]->pipeline.summary(NULL, md, dir, rel);
    free(rel);
    free(dir);
  }
  for (int32_t i = 0; i < cfg->n_stages; i++)
    if (f->skipped[i][0]) pb_text_printf(md, "\n- **%s** was skipped: %s.\n", cfg->stages[i], f->skipped[i]);
}

/* The first heading of a stage's markdown ("## Screening (pairbound screen)"), without its hashes. */
static void pb_rr__title(const char *text, char *buf, size_t n)
{
  const char *h = text[0] == '#' ? text : strstr(text, "\n#");
  h = h ? h + (h[0] == '\n') : NULL;
  if (!h) {
    snprintf(buf, n, "report");
    return;
  }
  h += strspn(h, "# ");
  snprintf(buf, n, "%.*s", (int)strcspn(h, "\n"), h);
}

/* A further instance (KIND.NAME) shows its stage's first table, then links to every table it wrote: its whole
 * report repeats the stage's tables for other options, which its own files hold. */
static void pb_rr__instance(struct pb_text *md, const struct pb_run_config *cfg, const char *name, const char *kind,
                            const char *text)
{
  pb_text_printf(md, "# Stage instance %s\n\n`%s` run again with the options of section [%s] (docs/run.md); its "
                     "outputs are in `%s/`.  Its first table follows; the others are in its files: ",
                 name, kind, name, name);
  char *dir = pb_output_path_join(cfg->output, name), *rep = pb_output_path_join(dir, "report");
  struct dirent **ent = NULL;
  const int n = scandir(rep, &ent, NULL, alphasort);
  for (int j = 0, first = 1; j < n; j++) {
    const char *e = ent[j]->d_name;
    const size_t len = strlen(e);
    if (len > 4 && !strcmp(e + len - 4, ".tsv") && strncmp(e, "figure", 6))
      pb_text_printf(md, "%s[%s](%s/report/%s)", first ? "" : ", ", e, name, e), first = 0;
    free(ent[j]);
  }
  free(ent);
  free(rep);
  free(dir);
  pb_text_printf(md, " ([the whole report](%s/report/%s)).\n\n", name, pb_registry_find(name)->pipeline.report);
  const char *second = strstr(text, "\n### ");
  second = second ? strstr(second + 1, "\n### ") : NULL;
  char *head = pb_strdup(text);
  if (second) head[second - text + 1] = '\0';
  pb_rr__append_stage(md, name, head);
  free(head);
}

/* The one-screen summary, written to stdout with one write(2): under mpirun
 * (and in a SLURM log) stdout and stderr travel through separate pipes, so
 * only a single write keeps every message from landing inside it. */
static void pb_rr__summary(const struct pb_run_config *cfg, const struct pb_run_facts *facts, const char *path,
                           const char *verdict)
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
    const int i = pb_rr__in_config(cfg, order[k]->name);
    if (!order[k]->pipeline.summary || i < 0 || facts->skipped[i][0]) continue;
    char *dir = pb_output_path_join(cfg->output, order[k]->name);
    order[k]->pipeline.summary(fp, NULL, dir, NULL);
    free(dir);
  }
  for (int32_t i = 0; i < cfg->n_stages; i++)
    if (facts->skipped[i][0]) fprintf(fp, "skipped %s: %s\n", cfg->stages[i], facts->skipped[i]);
  if (verdict[0]) fprintf(fp, "seed    %s; %s/seed_panel.tsv\n", verdict, cfg->output);
  fprintf(fp, "time   ");
  for (int32_t i = 0; i < cfg->n_stages; i++) {
    if (facts->skipped[i][0]) fprintf(fp, " %s skipped", cfg->stages[i]);
    else fprintf(fp, " %s %.1f s%s", cfg->stages[i], facts->wall[i], facts->resumed[i] ? " (resumed)" : "");
    fprintf(fp, "%s", i + 1 < cfg->n_stages ? "," : "\n");
  }
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

/* One stage's section (@p i of the run): an anchor for the contents, then its report, or why it was skipped.
 * @p toc gets its line of the contents. */
static int pb_rr__section(const struct pb_run_config *cfg, const struct pb_run_facts *f, int32_t i,
                          const struct pb_stage_desc *d, struct pb_text *md, struct pb_text *toc)
{
  const char *name = cfg->stages[i];
  pb_text_printf(md, "\n<a id=\"stage-%s\"></a>\n", name);
  if (f->skipped[i][0]) {
    pb_text_printf(md, "\n# %s: skipped\n\n%s.\n", name, f->skipped[i]);
    pb_text_printf(toc, "- [%s](#stage-%s): skipped\n", name, name);
    return PB_OK;
  }
  char *dir = pb_output_path_join(cfg->output, name), *sub = pb_output_path_join(dir, "report"),
       *rep = pb_output_path_join(sub, d->pipeline.report);
  char *text = pb_output_text_load(rep), title[256];
  if (text) {
    pb_rr__title(text, title, sizeof title);
    pb_text_printf(toc, "- [%s](#stage-%s): %s\n", name, name, title);
    pb_text_printf(md, "\n");
    if (strchr(name, '.')) pb_rr__instance(md, cfg, name, d->name, text);
    else pb_rr__append_stage(md, name, text);
  }
  free(text);
  free(rep);
  free(sub);
  free(dir);
  return text ? PB_OK : PB_FAIL;
}

int pb_run_report(const struct pb_run_config *cfg, const struct pb_run_facts *facts)
{
  struct pb_text md = {0}, toc = {0}, body = {0};
  int status = PB_OK;
  char verdict[256] = "";
  pb_rr__findings(cfg, facts, &md);
  /* a run whose every stage was skipped has made no stage directory */
  status = pb_output_mkdir_p(cfg->output);
  if (status == PB_OK) status = pb_run_seed_compare(cfg, &facts->seed, &md, verdict, sizeof verdict);
  /* each stage in the paper's order, its further instances (KIND.NAME) after it in the order of [run] stages */
  const struct pb_stage_desc *order[PB_RUN_MAX_KINDS];
  const int n = pb_rr__order(order);
  for (int k = 0; k < n && status == PB_OK; k++)
    for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++)
      if (pb_registry_find(cfg->stages[i]) == order[k]) status = pb_rr__section(cfg, facts, i, order[k], &body, &toc);
  pb_text_printf(&md, "\n## Contents\n\n%s- [Provenance](#provenance)\n%s",
                 verdict[0] ? "- [Synthetic panel against seed 000](#seed-000)\n" : "", toc.buf ? toc.buf : "");
  pb_rr__provenance(cfg, facts, &md);
  if (body.len) pb_text_append(&md, body.buf, body.len);
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
  pb_text_free(&toc);
  pb_text_free(&body);
  if (status == PB_OK) pb_rr__summary(cfg, facts, path, verdict);
  free(path);
  return status;
}
