/* `pairbound run`: synthesise (if asked), then every configured stage, then
 * one REPORT.md of all stages. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/checkpoint.h"
#include "pairbound/config.h"
#include "pairbound/error.h"
#include "pairbound/identify.h"
#include "pairbound/results.h"
#include "pairbound/run.h"
#include "pairbound/screen.h"
#include "pairbound/synth.h"
#include "pairbound/summary.h"
#include "pairbound/policy.h"
#include "pairbound/util.h"
#include "pairbound/verify.h"
#include "run_internal.h"

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
  o.seed = cfg->seed; /* [run] seed names every resampling stream, screening's too */
  o.group_draws = cfg->group_draws;
  o.class_draws = cfg->class_draws;
  int status = pb_screen_run(store, outdir, comm, &cfg->protocol, &o, provenance);
  pb_screen_options_free(&o);
  return status;
}

/* Stages in pipeline order and the report file each writes under report/. */
static const struct {
  const char *name;
  pb_run__stage_fn fn;
  const char *report;
} pb_run__stages[] = {{"bounds", pb_run__bounds, "REPORT.md"},
                      {"verify", pb_run__verify, "REPORT.md"},
                      {"policy", pb_run__policy, "policy.md"},
                      {"screen", pb_run__screen, "screen.md"}};

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
  cfg->text = pb_strdup(text);
  int status = pb_ini_parse(text, name, pb_run__entry, cfg);
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
  /* the store's directory, so that a fresh configuration runs as written */
  int rank;
  MPI_Comm_rank(comm, &rank);
  char *dir = pb_strdup(cfg->store), *slash = strrchr(dir, '/');
  if (rank == 0 && slash && slash != dir) {
    *slash = '\0';
    status = pb_mkdir_p(dir);
  }
  free(dir);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  if (status == PB_OK) status = pb_synth_store(&sc, cfg->store, comm);
  pb_config_free(&sc);
  return status;
}

const char *pb_run_stage_report(const char *stage)
{
  for (int j = 0; j < PB_RUN_N_KNOWN; j++)
    if (strcmp(pb_run__stages[j].name, stage) == 0) return pb_run__stages[j].report;
  return "REPORT.md";
}

/* The effective analysis settings (defaults included) a stage's output depends
 * on besides the store: recorded in its checkpoint and in REPORT.md. */
static char *pb_run__settings(const struct pb_run_config *cfg)
{
  static const char *const i5[] = {"none", "panel", "all"};
  const struct pb_identify_options *b = &cfg->bounds;
  char tau[40] = "per model (development quantile)", coverage[40];
  if (b->have_tau) pb_format_float(b->tau, tau);
  pb_format_double(cfg->protocol.coverage, coverage);
  struct pb_text t = {0};
  pb_text_printf(&t, "seed = %llu\ngroup_draws = %lld\nclass_draws = %lld\ncoverage = %s\npanel_seed = %llu\n"
                     "i5 = %s\nmatched = %d\nperm_replicates = %d\ntau = %s\npolicy_all = %d\n",
                 (unsigned long long)cfg->seed, (long long)cfg->group_draws, (long long)cfg->class_draws,
                 coverage, (unsigned long long)cfg->protocol.panel_seed,
                 b->i5_scope >= 0 && b->i5_scope < 3 ? i5[b->i5_scope] : "?", b->matched, (int)b->perm_replicates, tau,
                 cfg->policy_all);
  return t.buf;
}

/* One stage into OUTPUT/STAGE, then its checkpoint (rank 0). */
static int pb_run__stage(const struct pb_run_config *cfg, int32_t i, const struct pb_checkpoint_key *key,
                         const char *prov, MPI_Comm comm, struct pb_run_facts *facts)
{
  int rank, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  char *dir = pb_path_join(cfg->output, cfg->stages[i]);
  double t0 = MPI_Wtime();
  int done = cfg->resume ? pb_checkpoint_resumable(dir, key, comm) : 0;
  if (done == PB_FAIL) status = PB_FAIL;
  else if (done) {
    facts->resumed[i] = 1;
    pb_message("run: %s complete in %s (checkpoint matches): not recomputed", cfg->stages[i], dir);
  } else {
    if (rank == 0) pb_checkpoint_remove(dir);
    for (int j = 0; j < PB_RUN_N_KNOWN; j++)
      if (strcmp(pb_run__stages[j].name, cfg->stages[i]) == 0) status = pb_run__stages[j].fn(cfg, cfg->store, dir, comm, prov);
    MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
    if (status == PB_OK) status = pb_checkpoint_commit_all(dir, key, comm);
    if (status == PB_OK) pb_message("run: %s done in %.2f s -> %s", cfg->stages[i], MPI_Wtime() - t0, dir);
  }
  facts->wall[i] = MPI_Wtime() - t0;
  free(dir);
  return status;
}

int pb_run(const struct pb_run_config *cfg, MPI_Comm comm, const char *provenance)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  double t0 = MPI_Wtime();
  size_t n = strlen(provenance) + strlen(cfg->text) + 32;
  char *prov = pb_malloc(n), *settings = pb_run__settings(cfg), sha[65] = "";
  snprintf(prov, n, "%s\nrun configuration:\n%s", provenance, cfg->text);
  struct pb_run_facts facts = {pb_build_info(), sha, settings, 1, omp_get_max_threads(), {0}, {0}, 0};
  MPI_Comm_size(comm, &facts.ranks);
  pb_run_signals_install(cfg, comm);
  int status = pb_run__store(cfg, comm);
  if (status == PB_OK && rank == 0) status = pb_file_sha256(cfg->store, sha);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
    struct pb_checkpoint_key key = {cfg->stages[i], facts.build, sha, settings};
    status = pb_run__stage(cfg, i, &key, prov, comm, &facts);
  }
  facts.total = MPI_Wtime() - t0;
  if (status == PB_OK && rank == 0) status = pb_run_report(cfg, &facts);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  free(settings);
  free(prov);
  return status;
}
