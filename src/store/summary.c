/* Name-value summary of a store and its protocol. */
#include "config.h"

#include <math.h>
#include <string.h>

#include "pairbound/dist.h"
#include "pairbound/protocol.h"
#include "pairbound/summary.h"
#include "pairbound/text.h"

static int32_t pb_summary__groups(const struct pb_meta *meta)
{
  int32_t n = 0;
  for (int32_t m = 0; m < meta->n_models; m++) {
    int seen = 0;
    for (int32_t j = 0; j < m && !seen; j++) seen = strcmp(meta->model_groups[j], meta->model_groups[m]) == 0;
    n += !seen;
  }
  return n;
}

/* Mean over models of evaluation accuracy: clean, and over perturbed cells. */
static void pb_summary__accuracy(const struct pb_meta *meta, const struct pb_protocol *p, int32_t s,
                                 double *clean, double *pert)
{
  const struct pb_source *src = &meta->sources[s];
  const struct pb_protocol_source *ps = &p->src[s];
  double a = 0, b = 0;
  for (int32_t m = 0; m < meta->n_models; m++)
    for (int32_t c = 0; c < src->n_conditions; c++) {
      double acc = (double)ps->eval_correct[m * src->n_conditions + c] / ps->n_eval;
      if (c == src->clean) a += acc;
      else b += acc;
    }
  *clean = ps->n_eval ? a / meta->n_models : NAN;
  *pert = ps->n_eval && src->n_conditions > 1 ? b / ((double)meta->n_models * (src->n_conditions - 1)) : NAN;
}

static void pb_summary__source(FILE *fp, const struct pb_meta *meta, const struct pb_protocol *p, int32_t s)
{
  const struct pb_source *src = &meta->sources[s];
  const struct pb_protocol_source *ps = &p->src[s];
  int32_t tiers[PB_N_TIERS] = {0}, panel = 0;
  float lo = INFINITY, hi = -INFINITY;
  for (int32_t c = 0; c < src->n_conditions; c++)
    if (ps->tier[c] >= 0) tiers[ps->tier[c]]++;
  for (int32_t i = 0; i < meta->n_models * src->n_conditions; i++) panel += ps->panel[i];
  for (int32_t m = 0; m < meta->n_models; m++) {
    lo = fminf(lo, ps->tau[m]);
    hi = fmaxf(hi, ps->tau[m]);
  }
  double clean, pert;
  pb_summary__accuracy(meta, p, s, &clean, &pert);
  char a[40], b[40], t0[40], t1[40];
  pb_text_format_double(clean, a);
  pb_text_format_double(pert, b);
  /* a source without development images has no thresholds */
  pb_text_format_float(ps->n_dev > 0 ? lo : NAN, t0);
  pb_text_format_float(ps->n_dev > 0 ? hi : NAN, t1);
  const char *n = src->name;
  fprintf(fp, "source.%s.classes %d\n", n, src->n_classes);
  fprintf(fp, "source.%s.images %d\n", n, src->n_images);
  fprintf(fp, "source.%s.dev_images %d\n", n, ps->n_dev);
  fprintf(fp, "source.%s.eval_images %d\n", n, ps->n_eval);
  fprintf(fp, "source.%s.conditions %d\n", n, src->n_conditions - 1);
  /* its role (docs/store.md, "Roles"); a probe source only answers for other sources' images: no cells */
  char role[256];
  pb_meta_role_text(src, role, sizeof role);
  fprintf(fp, "source.%s.role %s (%s)\n", n, role, src->role_declared ? "declared" : "inferred: not declared");
  int64_t cells = pb_meta_is_probe(src) ? 0 : (int64_t)meta->n_models * (src->n_conditions - 1);
  fprintf(fp, "source.%s.cells %lld\n", n, (long long)cells);
  fprintf(fp, "source.%s.paired_records %lld\n", n, (long long)cells * ps->n_eval);
  fprintf(fp, "source.%s.tiers mild=%d severe=%d extreme=%d\n", n, tiers[0], tiers[1], tiers[2]);
  fprintf(fp, "source.%s.clean_eval_accuracy %s\n", n, a);
  fprintf(fp, "source.%s.perturbed_eval_accuracy %s\n", n, b);
  fprintf(fp, "source.%s.tau_range %s %s\n", n, t0, t1);
  fprintf(fp, "source.%s.panel_cells %d\n", n, panel);
}

static void pb_summary__full(FILE *fp, const struct pb_meta *meta, const struct pb_protocol *p, int32_t s)
{
  const struct pb_source *src = &meta->sources[s];
  const struct pb_protocol_source *ps = &p->src[s];
  char b[40];
  for (int32_t m = 0; m < meta->n_models; m++) {
    fprintf(fp, "tau %s %s", src->name, meta->model_ids[m]);
    pb_text_format_float(ps->tau[m], b);
    fprintf(fp, " %s", b);
    for (int32_t q = 0; q < PB_PROTOCOL_N_Q; q++) {
      pb_text_format_float(ps->policy_tau[m * PB_PROTOCOL_N_Q + q], b);
      fprintf(fp, " %s", b);
    }
    fputc('\n', fp);
  }
  for (int32_t c = 0; c < src->n_conditions; c++) {
    if (c == src->clean) continue;
    pb_text_format_double(ps->mean_dev_acc[c], b);
    fprintf(fp, "tier %s %s %s %s\n", src->name, src->conditions[c], pb_protocol_tier_name(ps->tier[c]), b);
  }
  for (int32_t m = 0; m < meta->n_models; m++)
    for (int32_t c = 0; c < src->n_conditions; c++)
      if (ps->panel[m * src->n_conditions + c])
        fprintf(fp, "panel %s %s %s\n", src->name, meta->model_ids[m], src->conditions[c]);
}

void pb_summary_print(FILE *fp, const struct pb_meta *meta, const struct pb_protocol *p, int full)
{
  int32_t tiers[PB_N_TIERS] = {0}, panel = 0;
  for (int32_t s = 0; s < meta->n_sources; s++)
    for (int32_t c = 0; c < meta->sources[s].n_conditions; c++) {
      if (p->src[s].tier[c] >= 0) tiers[p->src[s].tier[c]]++;
      for (int32_t m = 0; m < meta->n_models; m++) panel += p->src[s].panel[m * meta->sources[s].n_conditions + c];
    }
  fprintf(fp, "schema_version %d\n", meta->schema_version);
  fprintf(fp, "models %d\n", meta->n_models);
  fprintf(fp, "groups %d\n", pb_summary__groups(meta));
  fprintf(fp, "sources %d\n", meta->n_sources);
  fprintf(fp, "cells %lld\n", (long long)pb_meta_cells(meta));
  fprintf(fp, "paired_records %lld\n", (long long)pb_meta_paired_records(meta));
  fprintf(fp, "topk %d\n", meta->topk);
  fprintf(fp, "coverage %g\n", p->coverage);
  fprintf(fp, "tiers mild=%d severe=%d extreme=%d\n", tiers[0], tiers[1], tiers[2]);
  fprintf(fp, "panel_cells %d\n", panel);
  for (int32_t s = 0; s < meta->n_sources; s++) pb_summary__source(fp, meta, p, s);
  if (full)
    for (int32_t s = 0; s < meta->n_sources; s++) pb_summary__full(fp, meta, p, s);
}
