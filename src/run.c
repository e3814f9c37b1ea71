/* `pairbound run`: synthesise (if asked), then every configured stage, then
 * one REPORT.md of all stages. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "pairbound/config.h"
#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/identify.h"
#include "pairbound/run.h"
#include "pairbound/screen.h"
#include "pairbound/synth.h"
#include "pairbound/summary.h"
#include "pairbound/policy.h"
#include "pairbound/util.h"
#include "pairbound/verify.h"

typedef int (*pb_run__stage_fn)(const struct pb_run_config *cfg, const char *store, const char *outdir,
                                MPI_Comm comm, const char *provenance);

static int pb_run__bounds(const struct pb_run_config *cfg, const char *store, const char *outdir, MPI_Comm comm,
                          const char *provenance)
{
  struct pb_identify_options o = cfg->bounds;
  o.seed = cfg->seed;
  o.group_draws = cfg->group_draws;
  return pb_identify_run(store, outdir, comm, &cfg->protocol, &o, provenance);
}

static int pb_run__verify(const struct pb_run_config *cfg, const char *store, const char *outdir, MPI_Comm comm,
                          const char *provenance)
{
  struct pb_verify_options o;
  pb_verify_options_default(&o);
  o.have_tau = cfg->bounds.have_tau;
  o.tau = cfg->bounds.tau;
  return pb_verify_run(store, outdir, comm, &cfg->protocol, &o, provenance);
}

static int pb_run__policy(const struct pb_run_config *cfg, const char *store, const char *outdir, MPI_Comm comm,
                          const char *provenance)
{
  struct pb_policy_options o;
  pb_policy_options_default(&o);
  o.all = cfg->policy_all;
  o.have_tau = cfg->bounds.have_tau;
  o.tau = cfg->bounds.tau;
  return pb_policy_run(store, outdir, comm, &cfg->protocol, &o, provenance);
}

static int pb_run__screen(const struct pb_run_config *cfg, const char *store, const char *outdir, MPI_Comm comm,
                          const char *provenance)
{
  struct pb_screen_options o;
  pb_screen_options_default(&o);
  o.group_draws = cfg->group_draws;
  o.class_draws = cfg->class_draws;
  int status = pb_screen_run(store, outdir, comm, &cfg->protocol, &o, provenance);
  pb_screen_options_free(&o);
  return status;
}

static int pb_run__exact(const struct pb_run_config *cfg, const char *store, const char *outdir, MPI_Comm comm,
                         const char *provenance)
{
  (void)store;  /* the worlds are drawn, not read from the store */
  return pb_exact_worlds_run(&cfg->exact, outdir, comm, provenance);
}

/* Stages in pipeline order and the report file each writes under report/. */
static const struct {
  const char *name;
  pb_run__stage_fn fn;
  const char *report;
} pb_run__stages[] = {{"bounds", pb_run__bounds, "REPORT.md"},
                      {"verify", pb_run__verify, "REPORT.md"},
                      {"policy", pb_run__policy, "policy.md"},
                      {"screen", pb_run__screen, "screen.md"},
                      {"exact", pb_run__exact, "exact.md"}};

#define PB_RUN_N_KNOWN ((int)(sizeof pb_run__stages / sizeof pb_run__stages[0]))

const char *const *pb_run_stage_names(void)
{
  static const char *names[PB_RUN_N_KNOWN + 1];
  for (int i = 0; i < PB_RUN_N_KNOWN; i++) names[i] = pb_run__stages[i].name;
  return names;
}

static int pb_run__int(const char *v, int64_t lo, int64_t hi, int64_t *out)
{
  char *end;
  errno = 0;
  long long x = strtoll(v, &end, 10);
  if (errno || end == v || *end || x < lo || x > hi) return PB_FAIL;
  *out = x;
  return PB_OK;
}

static int pb_run__stages_list(struct pb_run_config *cfg, const char *v)
{
  char *copy = pb_strdup(v), *save = NULL;
  for (int32_t i = 0; i < cfg->n_stages; i++) free(cfg->stages[i]);
  cfg->n_stages = 0;
  for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    int known = 0;
    for (int i = 0; i < PB_RUN_N_KNOWN; i++) known |= strcmp(pb_run__stages[i].name, t) == 0;
    if (!known || cfg->n_stages == PB_RUN_MAX_STAGES) {
      pb_error_set("[run] stages: unknown stage '%s'", t);
      free(copy);
      return PB_INI_REASON;
    }
    cfg->stages[cfg->n_stages++] = pb_strdup(t);
  }
  free(copy);
  return PB_OK;
}

static int pb_run__has_stage(const struct pb_run_config *cfg, const char *name)
{
  for (int32_t i = 0; i < cfg->n_stages; i++)
    if (!strcmp(cfg->stages[i], name)) return 1;
  return 0;
}

/* One run-configuration entry (a pb_ini_fn). */
static int pb_run__entry(void *user, const char *section, const char *key, const char *v)
{
  struct pb_run_config *cfg = user;
  int64_t n;
  double x;
  char *end;
  if (strcmp(section, "run") == 0) {
    if (!strcmp(key, "synth")) {
      free(cfg->synth);
      cfg->synth = strcmp(v, "none") ? pb_strdup(v) : NULL;
    } else if (!strcmp(key, "store")) { free(cfg->store); cfg->store = pb_strdup(v); }
    else if (!strcmp(key, "output")) { free(cfg->output); cfg->output = pb_strdup(v); }
    else if (!strcmp(key, "stages")) return pb_run__stages_list(cfg, v);
    else if (!strcmp(key, "seed")) { if (pb_run__int(v, 0, INT64_MAX, &n)) return PB_FAIL; cfg->seed = (uint64_t)n; }
    else if (!strcmp(key, "group_draws")) { if (pb_run__int(v, 0, 10000000, &n)) return PB_FAIL; cfg->group_draws = n; }
    else if (!strcmp(key, "class_draws")) { if (pb_run__int(v, 0, 10000000, &n)) return PB_FAIL; cfg->class_draws = n; }
    else goto unknown;
  } else if (strcmp(section, "protocol") == 0) {
    if (!strcmp(key, "coverage")) {
      x = strtod(v, &end);
      if (*end || end == v || !(x > 0 && x <= 1)) return PB_FAIL;
      cfg->protocol.coverage = x;
    } else if (!strcmp(key, "panel_seed")) {
      if (pb_run__int(v, 0, INT64_MAX, &n)) return PB_FAIL;
      cfg->protocol.panel_seed = (uint64_t)n;
    } else goto unknown;
  } else if (strcmp(section, "bounds") == 0) {
    if (!strcmp(key, "i5")) {
      if (!strcmp(v, "panel")) cfg->bounds.i5_scope = PB_IDENTIFY_I5_PANEL;
      else if (!strcmp(v, "all")) cfg->bounds.i5_scope = PB_IDENTIFY_I5_ALL;
      else if (!strcmp(v, "none")) cfg->bounds.i5_scope = PB_IDENTIFY_I5_NONE;
      else return PB_FAIL;
    } else if (!strcmp(key, "matched")) {
      if (pb_run__int(v, 0, 1, &n)) return PB_FAIL;
      cfg->bounds.matched = (int)n;
    } else if (!strcmp(key, "perm_replicates")) {
      if (pb_run__int(v, 0, 1000000, &n)) return PB_FAIL;
      cfg->bounds.perm_replicates = (int32_t)n;
    } else if (!strcmp(key, "tau")) {
      x = strtod(v, &end);
      if (*end || end == v || !(x >= 0 && x <= 1)) return PB_FAIL;
      cfg->bounds.have_tau = 1;
      cfg->bounds.tau = (float)x;
    } else goto unknown;
  } else if (strcmp(section, "exact") == 0) {
    if (pb_exact_options_set(&cfg->exact, key, v)) return PB_INI_REASON;
    cfg->exact_worlds |= !strcmp(key, "worlds");
  } else if (strcmp(section, "policy") == 0) {
    if (!strcmp(key, "all")) {
      if (pb_run__int(v, 0, 1, &n)) return PB_FAIL;
      cfg->policy_all = (int)n;
    } else goto unknown;
  } else {
    pb_error_set("unknown section [%s]", section);
    return PB_INI_REASON;
  }
  return PB_OK;
unknown:
  pb_error_set("unknown key '%s' in [%s]", key, section);
  return PB_INI_REASON;
}

int pb_run_config_parse(const char *text, const char *name, struct pb_run_config *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  cfg->seed = 20260908;
  pb_protocol_options_default(&cfg->protocol);
  pb_identify_options_default(&cfg->bounds);
  pb_exact_options_default(&cfg->exact);
  cfg->text = pb_strdup(text);
  int status = pb_ini_parse(text, name, pb_run__entry, cfg);
  /* naming worlds joins the exact stage to the pipeline (last, after the store's stages) */
  if (status == PB_OK && cfg->exact_worlds && !pb_run__has_stage(cfg, "exact") && cfg->n_stages < PB_RUN_MAX_STAGES)
    cfg->stages[cfg->n_stages++] = pb_strdup("exact");
  if (status == PB_OK && (!cfg->store || !cfg->output || cfg->n_stages == 0)) {
    pb_error_set("%s: [run] needs store, output and stages", name);
    status = PB_FAIL;
  }
  if (status != PB_OK) pb_run_config_free(cfg);
  return status;
}

int pb_run_config_load(const char *path, struct pb_run_config *cfg)
{
  char *text = pb_text_load(path);
  if (!text) return PB_FAIL;
  int status = pb_run_config_parse(text, path, cfg);
  free(text);
  return status;
}

void pb_run_config_free(struct pb_run_config *cfg)
{
  free(cfg->synth);
  free(cfg->store);
  free(cfg->output);
  for (int32_t i = 0; i < cfg->n_stages; i++) free(cfg->stages[i]);
  free(cfg->text);
  pb_exact_options_free(&cfg->exact);
  memset(cfg, 0, sizeof *cfg);
}

/* The store, generated first when the configuration asks and it is absent. */
static int pb_run__store(const struct pb_run_config *cfg, MPI_Comm comm)
{
  int exists = access(cfg->store, R_OK) == 0;
  MPI_Bcast(&exists, 1, MPI_INT, 0, comm);
  if (exists || !cfg->synth) return PB_OK;
  struct pb_synth_config sc;
  int status;
  if (!strcmp(cfg->synth, "paper")) status = pb_config_parse(pb_embedded_paper_ini, "inputs/paper.ini", &sc);
  else if (!strcmp(cfg->synth, "small")) status = pb_config_parse(pb_embedded_small_ini, "inputs/small.ini", &sc);
  else status = pb_config_load(cfg->synth, &sc);
  if (status != PB_OK) return PB_FAIL;
  pb_message("run: generating %s (%s)", cfg->store, cfg->synth);
  status = pb_synth_store(&sc, cfg->store, comm);
  pb_config_free(&sc);
  return status;
}

/* OUTPUT/REPORT.md: the run's configuration, then each stage's report. */
static int pb_run__report(const struct pb_run_config *cfg)
{
  char *path = pb_path_join(cfg->output, "REPORT.md");
  struct pb_outfile f;
  int status = pb_outfile_open(&f, path);
  free(path);
  if (status != PB_OK) return status;
  fprintf(f.fp, "# pairbound run\n\nStore `%s`; stages:", cfg->store);
  for (int32_t i = 0; i < cfg->n_stages; i++) fprintf(f.fp, " %s", cfg->stages[i]);
  fprintf(f.fp, "; outputs under `%s/STAGE/`.\n", cfg->output);
  for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
    const char *file = "REPORT.md";
    for (int j = 0; j < PB_RUN_N_KNOWN; j++)
      if (strcmp(pb_run__stages[j].name, cfg->stages[i]) == 0) file = pb_run__stages[j].report;
    char *dir = pb_path_join(cfg->output, cfg->stages[i]), *sub = pb_path_join(dir, "report"),
         *rep = pb_path_join(sub, file);
    free(sub);
    char *text = pb_text_load(rep);
    if (text) {
      fprintf(f.fp, "\n%s", text);
      free(text);
    } else {
      status = PB_FAIL;
    }
    free(dir);
    free(rep);
  }
  if (status != PB_OK) {
    pb_outfile_abort(&f);
    return status;
  }
  return pb_outfile_commit(&f);
}

int pb_run(const struct pb_run_config *cfg, MPI_Comm comm, const char *provenance)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  size_t n = strlen(provenance) + strlen(cfg->text) + 32;
  char *prov = pb_malloc(n);
  snprintf(prov, n, "%s\nrun configuration:\n%s", provenance, cfg->text);
  int status = pb_run__store(cfg, comm);
  for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
    char *dir = pb_path_join(cfg->output, cfg->stages[i]);
    for (int j = 0; j < PB_RUN_N_KNOWN; j++)
      if (strcmp(pb_run__stages[j].name, cfg->stages[i]) == 0) {
        double t0 = MPI_Wtime();
        status = pb_run__stages[j].fn(cfg, cfg->store, dir, comm, prov);
        MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
        if (status == PB_OK) pb_message("run: %s done in %.2f s -> %s", cfg->stages[i], MPI_Wtime() - t0, dir);
      }
    free(dir);
  }
  if (status == PB_OK && rank == 0) {
    status = pb_run__report(cfg);
    if (status == PB_OK) {
      char *path = pb_path_join(cfg->output, "REPORT.md"), *text = pb_text_load(path);
      if (text) fputs(text, stdout);
      free(text);
      free(path);
    }
  }
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  free(prov);
  return status;
}
