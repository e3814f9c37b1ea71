/* `pairbound run`'s comparison of a synthetic panel with seed 000: the
 * seed's published numbers come from the store (each source's and the
 * root's seed_values, docs/store.md), never from a source's name; each key
 * names, in one table below, the statistic of a stage's report TSV it is
 * compared with, so what is compared is what a reader finds in the files.
 * Output: OUTPUT/seed_panel.tsv, a REPORT.md section and one verdict line
 * (docs/run.md, "Synthetic panel against seed 000"). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/meta.h"
#include "pairbound/output.h"
#include "pairbound/report_tsv.h"
#include "pairbound/text.h"
#include "run_internal.h"

/* One number of the seed: its key in seed_values, where our value is (a stage's report TSV, the row whose source
 * column names the source that declares the key -- none for a panel-level key -- and whose further columns have the
 * values of @c where, "col=value;..."), and whether it is a proportion (tolerance at least 0.02 absolute). */
struct pb_run_seed__stat {
  const char *key;
  int panel;            /* 1: the root's seed_values ([panel]); 0: a source's */
  const char *stage, *file, *source_col, *where, *column;
  const char *per;      /* NULL, or the column our value is divided by (a count per cell) */
  int proportion;
  const char *ref;      /* where the seed reports it */
};

/* The vocabulary: keys of seed_values and the statistics they are compared with (docs/run.md lists them). */
static const struct pb_run_seed__stat pb_run_seed__stats[] = {
    {"grid_H_I0", 0, "bounds", "identification_grid.tsv", "source", "", "H_I0", NULL, 0, "Table 6"},
    {"grid_H_Ik", 0, "bounds", "identification_grid.tsv", "source", "", "H_Ik", NULL, 0, "Table 6"},
    {"grid_L_I0", 0, "bounds", "identification_grid.tsv", "source", "", "L_I0", NULL, 0, "Table 6"},
    {"grid_L_Ik", 0, "bounds", "identification_grid.tsv", "source", "", "L_Ik", NULL, 0, "Table 6"},
    {"grid_dMk_Ik", 0, "bounds", "identification_grid.tsv", "source", "", "dMk_Ik", NULL, 0, "Table 6"},
    {"panel_H_I0", 0, "bounds", "identification_panel.tsv", "source", "", "H_I0", NULL, 0, "Table 7"},
    {"panel_H_Ik", 0, "bounds", "identification_panel.tsv", "source", "", "H_Ik", NULL, 0, "Table 7"},
    {"panel_H_I5", 0, "bounds", "identification_panel.tsv", "source", "", "H_I5", NULL, 0, "Table 7"},
    {"orderings_shared", 1, "policy", "policy_orderings.tsv", NULL, "source=Total", "shared", "cells", 1, "Table 4"},
    {"orderings_plus_k", 1, "policy", "policy_orderings.tsv", NULL, "source=Total", "plus_k", "cells", 1, "Table 4"},
    {"orderings_plus_5", 1, "policy", "policy_orderings.tsv", NULL, "source=Total", "plus_5", "cells", 1, "Table 4"},
    {"auroc_S_mild", 0, "screen", "screen_auroc.tsv", "source", "tier=mild", "S", NULL, 1, "Table 16"},
    {"auroc_U_mild", 0, "screen", "screen_auroc.tsv", "source", "tier=mild", "U", NULL, 1, "Table 16"},
    {"auroc_S_severe", 0, "screen", "screen_auroc.tsv", "source", "tier=severe", "S", NULL, 1, "Table 16"},
    {"auroc_U_severe", 0, "screen", "screen_auroc.tsv", "source", "tier=severe", "U", NULL, 1, "Table 16"},
    {"coverage_S_mild", 0, "screen", "screen_coverage.tsv", "source", "tier=mild;q=0.2", "S", NULL, 1,
     "Table 18, abstract"},
    {"coverage_U_mild", 0, "screen", "screen_coverage.tsv", "source", "tier=mild;q=0.2", "U", NULL, 1,
     "Table 18, abstract"},
    {"coverage_S_severe", 0, "screen", "screen_coverage.tsv", "source", "tier=severe;q=0.2", "S", NULL, 1, "Table 18"},
    {"coverage_U_severe", 0, "screen", "screen_coverage.tsv", "source", "tier=severe;q=0.2", "U", NULL, 1, "Table 18"},
    {"natural_coverage_TTA18", 0, "screen", "screen_natural.tsv", "source", "tier=mild", "TTA", NULL, 1,
     "Section 5.3, abstract"},
    {"mae_c1_gain_a1", 0, "predict", "predict_table43.tsv", "target_source", "target=a1", "c1_gain", NULL, 0,
     "Section 6, Table 43"},
    {"mae_c1_gain_R80", 0, "predict", "predict_table43.tsv", "target_source", "target=R80", "c1_gain", NULL, 0,
     "Section 6, Table 43"},
    {"mae_unpaired_gain_a1", 0, "predict", "predict_table46.tsv", "source", "target=a1", "gain", NULL, 0, "Table 46"},
    {"mae_unpaired_gain_R80", 0, "predict", "predict_table46.tsv", "source", "target=R80", "gain", NULL, 0,
     "Table 46"},
};
#define PB_RUN_SEED__N_STATS ((int)(sizeof pb_run_seed__stats / sizeof pb_run_seed__stats[0]))

void pb_run_seed_take(struct pb_run_seed *seed, const struct pb_meta *meta)
{
  pb_run_seed_free(seed);
  seed->n_sources = meta->n_sources;
  seed->names = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *seed->names);
  seed->values = pb_calloc((size_t)(meta->n_sources > 0 ? meta->n_sources : 1), sizeof *seed->values);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    seed->names[s] = pb_strdup(meta->sources[s].name);
    seed->values[s] = meta->sources[s].seed_values ? pb_strdup(meta->sources[s].seed_values) : NULL;
  }
  seed->panel = meta->seed_values ? pb_strdup(meta->seed_values) : NULL;
}

void pb_run_seed_free(struct pb_run_seed *seed)
{
  for (int32_t s = 0; s < seed->n_sources; s++) free(seed->names[s]), free(seed->values[s]);
  free(seed->names);
  free(seed->values);
  free(seed->panel);
  memset(seed, 0, sizeof *seed);
}

/* Whether data row @p r of @p t has the values of @p where ("col=value;...") and, unless @p col is NULL, @p source
 * in column @p col. */
static int pb_run_seed__row_matches(const struct pb_report_tsv *t, int r, const char *where, const char *col,
                                    const char *source)
{
  if (col && (!pb_report_tsv_at(t, r, col) || strcmp(pb_report_tsv_at(t, r, col), source))) return 0;
  for (const char *p = where; *p;) {
    const size_t n = strcspn(p, ";"), eq = strcspn(p, "=");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)eq, p);
    const char *v = pb_report_tsv_at(t, r, name);
    if (!v || strlen(v) != n - eq - 1 || strncmp(v, p + eq + 1, n - eq - 1)) return 0;
    p += n + (p[n] == ';');
  }
  return 1;
}

/* Our value of statistic @p st for source @p source (NULL: panel) from the run's OUTPUT; NaN when the stage did
 * not run, wrote no such row or the value is not a number. */
static double pb_run_seed__ours(const char *output, const struct pb_run_seed__stat *st, const char *source)
{
  struct pb_report_tsv t;
  char *dir = pb_output_path_join(output, st->stage);
  double x = NAN;
  if (pb_report_tsv_load(dir, st->file, &t) == 0) {
    for (int r = 1; r < t.n_rows && isnan(x); r++)
      if (pb_run_seed__row_matches(&t, r, st->where, st->panel ? NULL : st->source_col, source)) {
        x = pb_report_tsv_num(&t, r, st->column);
        if (st->per) x /= pb_report_tsv_num(&t, r, st->per);
        if (!isfinite(x)) x = NAN;
      }
    pb_report_tsv_free(&t);
  }
  free(dir);
  return x;
}

static int pb_run_seed__cmp(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* One compared number: its TSV row and its markdown row; returns whether it is within tolerance. */
static int pb_run_seed__row(struct pb_text *tsv, struct pb_text *md, const struct pb_run_seed__stat *st,
                            const char *source, double seed, double ours, double *rel)
{
  const double tol = st->proportion ? fmax(0.25 * fabs(seed), 0.02) : 0.25 * fabs(seed);
  const int within = !isnan(ours) && fabs(ours - seed) <= tol;
  *rel = isnan(ours) ? INFINITY : seed != 0 ? fabs(ours - seed) / fabs(seed) : ours == 0 ? 0 : INFINITY;
  pb_text_printf(tsv, "%s\t%s\t%.15g\t%.10g\t%.10g\t%.10g\t%.10g\t%s\t%s\t%s/report/%s:%s%s%s\n", st->key,
                 source ? source : "panel", seed, ours, ours - seed, isinf(*rel) ? NAN : *rel, tol,
                 within ? "yes" : "no", st->ref, st->stage, st->file, st->column, st->per ? "/" : "",
                 st->per ? st->per : "");
  pb_text_printf(md, "| %s | %s | %.3f | ", st->key, source ? source : "panel", seed);
  if (isnan(ours)) pb_text_printf(md, "n/a | n/a | ");
  else pb_text_printf(md, "%.3f | %+.3f (%+.0f%%) | ", ours, ours - seed, seed != 0 ? 100 * (ours - seed) / fabs(seed) : 0.0);
  pb_text_printf(md, "%s (±%.3f) | %s |\n", within ? "yes" : "**no**", tol, st->ref);
  return within;
}

int pb_run_seed_compare(const struct pb_run_config *cfg, const struct pb_run_seed *seed, struct pb_text *md,
                        char *verdict, size_t n)
{
  struct pb_text tsv = {0}, rows = {0};
  int within = 0, total = 0, status = PB_OK;
  double *rel = pb_malloc((size_t)(PB_RUN_SEED__N_STATS * (seed->n_sources + 1)) * sizeof *rel);
  verdict[0] = '\0';
  pb_text_printf(&tsv, "number\tsource\tseed\tours\tdeviation\trelative\ttolerance\twithin\treference\tstatistic\n");
  for (int k = 0; k < PB_RUN_SEED__N_STATS; k++) {
    const struct pb_run_seed__stat *st = &pb_run_seed__stats[k];
    for (int32_t s = st->panel ? -1 : 0; s < (st->panel ? 0 : seed->n_sources); s++) {
      const double v = pb_meta_seed_find(s < 0 ? seed->panel : seed->values[s], st->key);
      if (isnan(v)) continue;
      const char *source = s < 0 ? NULL : seed->names[s];
      within += pb_run_seed__row(&tsv, &rows, st, source, v, pb_run_seed__ours(cfg->output, st, source), &rel[total]);
      total++;
    }
  }
  if (total > 0) {
    qsort(rel, (size_t)total, sizeof *rel, pb_run_seed__cmp);
    const double med = total % 2 ? rel[total / 2] : 0.5 * (rel[total / 2 - 1] + rel[total / 2]);
    snprintf(verdict, n, "synthetic panel: %d of %d headline numbers within tolerance of seed 000 (median relative "
                         "deviation %.1f%%)", within, total, 100 * med);
    pb_text_printf(md, "\n<a id=\"seed-000\"></a>\n\n## Synthetic panel against seed 000\n\n"
                       "The seed paper's numbers that this store declares (its sources' and its panel's "
                       "`seed_values`, docs/synth.md) beside this run's, each read from the stage table named in "
                       "[seed_panel.tsv](seed_panel.tsv); within tolerance: at most 25%% from the seed's value, or "
                       "0.02 for a proportion when that is looser.  %s.\n\n"
                       "| number | source | seed | ours | deviation | within tolerance | reference |\n"
                       "|---|---|---|---|---|---|---|\n%s",
                   verdict, rows.buf);
    char *path = pb_output_path_join(cfg->output, "seed_panel.tsv");
    struct pb_outfile f;
    status = pb_output_file_open(&f, path);
    if (status == PB_OK) {
      fwrite(tsv.buf, 1, tsv.len, f.fp);
      status = pb_output_file_commit(&f);
    }
    free(path);
  }
  pb_text_free(&tsv);
  pb_text_free(&rows);
  free(rel);
  return status;
}
