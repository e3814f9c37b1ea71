/* `pairbound run`: synthesise (if asked), then every configured stage, then
 * one REPORT.md of all stages.  The configuration's sections are read through
 * the option tables of the protocol and of each stage (options.h). */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/checkpoint.h"
#include "pairbound/checksum.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/ini.h"
#include "pairbound/options.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/registry.h"
#include "pairbound/resample.h"
#include "pairbound/results.h"
#include "pairbound/run.h"
#include "pairbound/signals.h"
#include "pairbound/stage.h"
#include "pairbound/store.h"
#include "pairbound/synth.h"
#include "pairbound/synth_config.h"
#include "pairbound/text.h"
#include "pairbound/verify.h"
#include "run_internal.h"

/* The pipeline stages of the registry, by index in pb_registry_stages (a command-only stage is not one). */
static const struct pb_stage_desc *pb_run__kind(const char *name)
{
  const struct pb_stage_desc *d = pb_registry_find(name);
  return d && d->pipeline.report ? d : NULL;
}

/* The instance named @p name (KIND.NAME), created with its kind's defaults
 * when @p create; NULL when absent or when there is no room left. */
static struct pb_run_instance *pb_run__instance(struct pb_run_config *cfg, const char *name, int create)
{
  for (int32_t i = 0; i < cfg->n_instances; i++)
    if (!strcmp(cfg->instances[i].name, name)) return &cfg->instances[i];
  if (!create || cfg->n_instances == PB_RUN_MAX_INSTANCES) return NULL;
  struct pb_run_instance *in = &cfg->instances[cfg->n_instances++];
  in->name = pb_strdup(name);
  in->seen_in_stages = 0;
  in->opts = pb_registry_options_new(pb_run__kind(name));
  return in;
}

/* Whether every comma-separated item of list @p v names something: "a,,b",
 * ",a" and "a," hold an empty one, a slip that must not silently drop a
 * stage.  A blank list has no item. */
static int pb_run__list_ok(const char *label, const char *v)
{
  if (!v[strspn(v, " \t")]) return PB_OK;
  for (const char *item = v;; item++) {
    const size_t n = strcspn(item, ",");
    if (strspn(item, " \t") >= n) {
      pb_error_set("%s: '%s' lists an empty stage name (two commas in a row, or one at an end)", label, v);
      return PB_FAIL;
    }
    item += n;
    if (!*item) return PB_OK;
  }
}

/* stages = a, b, ... (pipeline stage names or KIND.NAME instances, pipeline order as listed) */
static int pb_run__opt_stages(void *opts, const char *label, const char *v)
{
  struct pb_run_config *cfg = opts;
  if (pb_run__list_ok(label, v) != PB_OK) return PB_FAIL;
  char *copy = pb_strdup(v), *save = NULL;
  for (int32_t i = 0; i < cfg->n_stages; i++) free(cfg->stages[i]);
  cfg->n_stages = 0;
  for (char *t = strtok_r(copy, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    struct pb_run_instance *in = NULL;
    int known = pb_run__kind(t) != NULL;
    if (known && strchr(t, '.') && (in = pb_run__instance(cfg, t, 1)) == NULL) {
      pb_error_set("%s: more than %d stage instances", label, PB_RUN_MAX_INSTANCES);
      free(copy);
      return PB_FAIL;
    }
    int repeated = 0;
    for (int32_t i = 0; i < cfg->n_stages; i++) repeated |= strcmp(cfg->stages[i], t) == 0;
    if (!known || repeated || cfg->n_stages == PB_RUN_MAX_STAGES) {
      if (repeated) pb_error_set("%s: stage '%s' listed twice (a further instance is KIND.NAME)", label, t);
      else pb_error_set("%s: unknown stage '%s'", label, t);
      free(copy);
      return PB_FAIL;
    }
    if (in) in->seen_in_stages = 1;
    cfg->stages[cfg->n_stages++] = pb_strdup(t);
  }
  free(copy);
  return PB_OK;
}

/* synth = paper | small | FILE | none */
static int pb_run__opt_synth(void *opts, const char *label, const char *v)
{
  struct pb_run_config *cfg = opts;
  (void)label;
  free(cfg->synth);
  cfg->synth = strcmp(v, "none") ? pb_strdup(v) : NULL;
  return PB_OK;
}

/* The pipeline's stage names, "bounds, verify, ...", for --help. */
static const char *pb_run__pipeline_names(void)
{
  static char names[512];
  names[0] = '\0';
  for (int k = 0; pb_registry_stages[k]; k++)
    if (pb_registry_stages[k]->pipeline.report)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", names[0] ? ", " : "", pb_registry_stages[k]->name);
  return names;
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_run_config, member)
static const struct pb_option pb_run__options[] = {
  {.name = "synth", .type = PB_OPTION_CUSTOM, .parse = pb_run__opt_synth, .metavar = "paper|small|FILE|none",
   .help = "generate the store when it is absent: the embedded paper or small configuration, a synth INI file, or "
           "none (the store must exist)"},
  {.name = "store", .type = PB_OPTION_STRING, PB_O(store), .metavar = "STORE", .help = "store to analyse (required)"},
  {.name = "output", .type = PB_OPTION_STRING, PB_O(output), .metavar = "OUTDIR",
   .help = "output directory; each stage writes OUTDIR/STAGE/ (required)"},
  {.name = "stages", .type = PB_OPTION_CUSTOM, .parse = pb_run__opt_stages, .metavar = "LIST",
   .help = "stages to run, in pipeline order (the stages are listed below; required, unless a stage's section "
           "names what adds it: [exact] worlds adds exact last)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(seed), .metavar = "N", .def = "20260908",
   .help = "run seed: every stage's random streams are keyed by it plus the stage's offset (bounds seed +0, verify "
           "sample_seed +3, screen seed +4, predict seed +5, fragility seed +6, exact seed -20258876, "
           "so that the default run seed gives 2032), unless the stage's section sets its own"},
  {.name = "group_draws", .type = PB_OPTION_INT, PB_O(group_draws), .metavar = "N", .imax = PB_BOOT_MAX_DRAWS, .def = "0",
   .help_default = 1,
   .help = "model-group bootstrap draws of bounds and screen and group-reweighting draws of predict, unless their "
           "sections set group_draws (default 0 = none)"},
  {.name = "class_draws", .type = PB_OPTION_INT, PB_O(class_draws), .metavar = "N", .imax = PB_BOOT_MAX_DRAWS, .def = "0",
   .help_default = 1, .help = "class bootstrap draws of screen unless [screen] sets class_draws (default 0 = none)"},
  {.name = NULL}};
#undef PB_O

/* State of one configuration parse: the keys seen so far ("section\nkey") with their values. */
struct pb_run__parse {
  struct pb_run_config *cfg;
  int32_t n_seen;
  char **seen, **value;
};

/* The value given for @p key in [@p section], or NULL. */
static const char *pb_run__seen(const struct pb_run__parse *p, const char *section, const char *key)
{
  for (int32_t i = 0; i < p->n_seen; i++) {
    size_t n = strlen(section);
    if (strncmp(p->seen[i], section, n) == 0 && p->seen[i][n] == '\n' && strcmp(p->seen[i] + n + 1, key) == 0)
      return p->value[i];
  }
  return NULL;
}

/* Section @p section: its table and where its options live in @p cfg. */
static const struct pb_option *pb_run__section(struct pb_run_config *cfg, const char *section, void **opts)
{
  if (!strcmp(section, "run")) {
    *opts = cfg;
    return pb_run__options;
  }
  if (!strcmp(section, "protocol")) {
    *opts = &cfg->protocol;
    return pb_protocol_option_table;
  }
  const struct pb_stage_desc *d = pb_run__kind(section);
  if (!d || !d->options.table) return NULL;
  if (strchr(section, '.')) {
    struct pb_run_instance *in = pb_run__instance(cfg, section, 1);
    if (!in) return NULL;
    *opts = in->opts;
  } else {
    *opts = cfg->opts[pb_registry_index(d)];
  }
  return d->options.table;
}

/* One run-configuration entry (a pb_ini_fn). */
static int pb_run__entry(void *user, const char *section, const char *key, const char *v)
{
  struct pb_run__parse *p = user;
  void *opts;
  const struct pb_option *table = pb_run__section(p->cfg, section, &opts), *o;
  if (!table) {
    pb_error_set("unknown section [%s]", section);
    return PB_INI_REASON;
  }
  if (!(o = pb_options_find_ini(table, key))) {
    pb_error_set("unknown key '%s' in [%s]", key, section);
    return PB_INI_REASON;
  }
  if (!o->repeatable && pb_run__seen(p, section, key)) {
    pb_error_set("[%s] %s given twice", section, key);
    return PB_INI_REASON;
  }
  p->seen = pb_realloc(p->seen, (size_t)(p->n_seen + 1) * sizeof(char *));
  p->value = pb_realloc(p->value, (size_t)(p->n_seen + 1) * sizeof(char *));
  size_t n = strlen(section) + strlen(key) + 2;
  p->seen[p->n_seen] = pb_malloc(n);
  snprintf(p->seen[p->n_seen], n, "%s\n%s", section, key);
  p->value[p->n_seen++] = pb_strdup(v);
  char label[128];
  snprintf(label, sizeof label, "[%s] %s", section, key);
  return pb_options_set(o, opts, label, v) == PB_OK ? PB_OK : PB_INI_REASON;
}

static int pb_run__has_stage(const struct pb_run_config *cfg, const char *name)
{
  for (int32_t i = 0; i < cfg->n_stages; i++)
    if (!strcmp(cfg->stages[i], name)) return 1;
  return 0;
}

/* What other sections give stage @p d (options @p opts, section @p sec)
 * unless @p sec sets it (its .pipeline.inherits, docs/run.md): a key of [run] always
 * (as given or its default, integers plus the stage's offset modulo 2^64),
 * a key of a stage's section when given there. */
static int pb_run__inherit(const struct pb_run__parse *p, const struct pb_stage_desc *d, void *opts, const char *sec)
{
  for (const struct pb_stage_inherit *h = d->pipeline.inherits; h && h->key; h++) {
    if (pb_run__seen(p, sec, h->key)) continue;
    const char *dot = strchr(h->from, '.');
    char from[64], text[32];
    snprintf(from, sizeof from, "%.*s", (int)(dot - h->from), h->from);
    const char *v = pb_run__seen(p, from, dot + 1);
    if (!v && !strcmp(from, "run")) v = pb_options_find_ini(pb_run__options, dot + 1)->def;
    if (!v) continue;
    uint64_t u;
    if (h->add && pb_parse_uint(v, UINT64_MAX, &u) == PB_OK) {
      snprintf(text, sizeof text, "%llu", (unsigned long long)(u + (uint64_t)h->add));
      v = text;
    }
    char label[128];
    snprintf(label, sizeof label, "[%s] %s (for [%s] %s)", from, dot + 1, sec, h->key);
    if (pb_options_set(pb_options_find_ini(d->options.table, h->key), opts, label, v) != PB_OK) return PB_FAIL;
  }
  return PB_OK;
}

/* What other sections give the run's own stages, then every instance
 * (whose own section stands in for its kind's); an instance needs its stage
 * listed. */
static int pb_run__propagate(const struct pb_run__parse *p, const char *name)
{
  struct pb_run_config *cfg = p->cfg;
  for (int k = 0; pb_registry_stages[k]; k++)
    if (pb_registry_stages[k]->pipeline.report && pb_run__inherit(p, pb_registry_stages[k], cfg->opts[k], pb_registry_stages[k]->name) != PB_OK)
      return PB_FAIL;
  for (int32_t i = 0; i < cfg->n_instances; i++) {
    const struct pb_run_instance *in = &cfg->instances[i];
    if (!in->seen_in_stages) {
      pb_error_set("%s: section [%s] is a stage instance that [run] stages does not list", name, in->name);
      return PB_FAIL;
    }
    if (pb_run__inherit(p, pb_run__kind(in->name), in->opts, in->name) != PB_OK) return PB_FAIL;
  }
  return PB_OK;
}

/* A stage whose section names its .pipeline.joins key joins the pipeline, last. */
static void pb_run__joins(const struct pb_run__parse *p)
{
  struct pb_run_config *cfg = p->cfg;
  for (int k = 0; pb_registry_stages[k]; k++) {
    const struct pb_stage_desc *d = pb_registry_stages[k];
    if (d->pipeline.report && d->pipeline.joins && pb_run__seen(p, d->name, d->pipeline.joins) &&
        !pb_run__has_stage(cfg, d->name) && cfg->n_stages < PB_RUN_MAX_STAGES)
      cfg->stages[cfg->n_stages++] = pb_strdup(d->name);
  }
}

int pb_run_config_parse(const char *text, const char *name, struct pb_run_config *cfg)
{
  memset(cfg, 0, sizeof *cfg);
  pb_options_defaults(pb_run__options, cfg);
  pb_protocol_options_default(&cfg->protocol);
  for (int k = 0; pb_registry_stages[k]; k++)
    if (pb_registry_stages[k]->pipeline.report) cfg->opts[k] = pb_registry_options_new(pb_registry_stages[k]);
  cfg->text = pb_strdup(text);
  struct pb_run__parse p = {.cfg = cfg};
  int status = pb_ini_parse(text, name, pb_run__entry, &p);
  if (status == PB_OK) pb_run__joins(&p);
  /* store and output may come from the command line (pb_run_pipeline checks them) */
  if (status == PB_OK && cfg->n_stages == 0) {
    pb_error_set("%s: [run] needs stages", name);
    status = PB_FAIL;
  }
  if (status == PB_OK) status = pb_run__propagate(&p, name);
  for (int32_t i = 0; i < p.n_seen; i++) {
    free(p.seen[i]);
    free(p.value[i]);
  }
  free(p.seen);
  free(p.value);
  if (status != PB_OK) pb_run_config_free(cfg);
  return status;
}

int pb_run_config_load(const char *path, struct pb_run_config *cfg)
{
  char *text = pb_output_text_load(path);
  if (!text) return PB_FAIL;
  int status = pb_run_config_parse(text, path, cfg);
  free(text);
  return status;
}

void pb_run_config_free(struct pb_run_config *cfg)
{
  free(cfg->synth);
  pb_options_free(pb_run__options, cfg);
  for (int32_t i = 0; i < cfg->n_stages; i++) free(cfg->stages[i]);
  pb_protocol_options_free(&cfg->protocol);
  for (int k = 0; pb_registry_stages[k]; k++) pb_registry_options_free(pb_registry_stages[k], cfg->opts[k]);
  for (int32_t i = 0; i < cfg->n_instances; i++) {
    pb_registry_options_free(pb_run__kind(cfg->instances[i].name), cfg->instances[i].opts);
    free(cfg->instances[i].name);
  }
  free(cfg->text);
  memset(cfg, 0, sizeof *cfg);
}

void pb_run_config_help(FILE *fp)
{
  fprintf(fp, "\nConfiguration sections and keys (`key = value`; docs/run.md):\n\n[run]  (pipeline stages: %s)\n",
          pb_run__pipeline_names());
  pb_options_help_ini(fp, pb_run__options);
  fprintf(fp, "\n[protocol]\n");
  pb_options_help_ini(fp, pb_protocol_option_table);
  for (int k = 0; pb_registry_stages[k]; k++) {
    if (!pb_registry_stages[k]->pipeline.report || !pb_registry_stages[k]->options.table) continue;
    fprintf(fp, "\n[%s]  (as `pairbound %s --help`)\n", pb_registry_stages[k]->name, pb_registry_stages[k]->name);
    pb_options_help_ini(fp, pb_registry_stages[k]->options.table);
  }
  fprintf(fp, "\n[KIND.NAME]  a further instance of stage KIND, listed as KIND.NAME in [run] stages (e.g.\n"
              "  `stages = ..., screen, screen.dev` with `[screen.dev] split = dev`): the keys of [KIND], starting\n"
              "  from KIND's defaults and what [run] gives every KIND; output, checkpoint and resume in\n"
              "  OUTPUT/KIND.NAME.\n");
}

/* The store, generated first when the configuration asks and it is absent. */
static int pb_run__store(const struct pb_run_config *cfg, MPI_Comm comm)
{
  int err = access(cfg->store, R_OK) == 0 ? 0 : errno;
  pb_comm_bcast(&err, 1, MPI_INT, 0, comm);
  if (!err) return PB_OK;
  if (!cfg->synth) {
    pb_error_set("%s: cannot read the store: %s", cfg->store, strerror(err));
    return PB_FAIL;
  }
  struct pb_synth_config sc;
  int status;
  if (!strcmp(cfg->synth, "paper")) status = pb_synth_config_parse(pb_embedded_paper_ini, "inputs/paper.ini", &sc);
  else if (!strcmp(cfg->synth, "small")) status = pb_synth_config_parse(pb_embedded_small_ini, "inputs/small.ini", &sc);
  else status = pb_synth_config_load(cfg->synth, &sc);
  if (status != PB_OK) return PB_FAIL;
  pb_message("run: generating %s (%s)", cfg->store, cfg->synth);
  /* the store's directory, so that a fresh configuration runs as written */
  int rank;
  MPI_Comm_rank(comm, &rank);
  char *dir = pb_strdup(cfg->store), *slash = strrchr(dir, '/');
  if (rank == 0 && slash && slash != dir) {
    *slash = '\0';
    status = pb_output_mkdir_p(dir);
  }
  free(dir);
  pb_comm_bcast(&status, 1, MPI_INT, 0, comm);
  if (status == PB_OK) status = pb_synth_store(&sc, cfg->store, comm);
  pb_synth_config_free(&sc);
  return status;
}

/* Run stage or instance @p name into @p dir with its options (an instance's own). */
static int pb_run__call(const struct pb_run_config *cfg, const char *name, const char *dir, MPI_Comm comm,
                        const char *prov)
{
  const struct pb_stage_desc *d = pb_run__kind(name);
  const struct pb_run_instance *in = strchr(name, '.') ? pb_run__instance((struct pb_run_config *)cfg, name, 0) : NULL;
  const struct pb_stage_call call = {d->store.reads ? cfg->store : NULL, dir, comm, &cfg->protocol, prov, name, d};
  return d->run(&call, in ? in->opts : cfg->opts[pb_registry_index(d)]);
}

/* What a stage's output depends on besides the store and the build: the run
 * seed, draws and protocol as used, then every setting line of the
 * configuration except where the run reads and writes ([run] synth, store,
 * output, stages).  Recorded in each checkpoint and in REPORT.md. */
static char *pb_run__settings(const struct pb_run_config *cfg)
{
  struct pb_text t = {0};
  char coverage[40];
  pb_text_format_double(cfg->protocol.coverage, coverage);
  pb_text_printf(&t, "seed = %llu\ngroup_draws = %lld\nclass_draws = %lld\ncoverage = %s\npanel_seed = %llu\n",
                 (unsigned long long)cfg->seed, (long long)cfg->group_draws, (long long)cfg->class_draws, coverage,
                 (unsigned long long)cfg->protocol.panel_seed);
  char section[64] = "";
  for (const char *l = cfg->text; l && *l;) {
    const char *nl = strchr(l, '\n');
    size_t n = nl ? (size_t)(nl - l) : strlen(l);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
    char *c = strpbrk(line, ";#");
    if (c) *c = '\0';
    char *b = line + strspn(line, " \t"), *e = b + strlen(b);
    while (e > b && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) *--e = '\0';
    if (*b == '[') snprintf(section, sizeof section, "%s", b);
    else if (*b && !(strcmp(section, "[run]") == 0 && strcspn(b, " =") > 0 &&
                     (!strncmp(b, "synth", 5) || !strncmp(b, "store", 5) || !strncmp(b, "output", 6) ||
                      !strncmp(b, "stages", 6))))
      pb_text_printf(&t, "%s %s\n", section, b);
    l += n + (nl != NULL);
  }
  return t.buf;
}

/* The store's checksum (pb_checksum_xxh128_file), the checkpoints' key: rank 0 hashes
 * the whole file (0.2 s for the paper store) on a thread of its own beside the first stage,
 * and the key is first needed when that stage's checkpoint is written (with
 * --resume, or for a stage whose loops save blocks: before it starts). */
struct pb_run__digest {
  pthread_t thread;
  int started, joined, status;
  const char *path;
  char *hex;                 /* 65 bytes, the caller's */
  char why[1024];            /* the thread's error message */
  double seconds;
};

static void *pb_run__digest_main(void *arg)
{
  struct pb_run__digest *d = arg;
  struct timespec a, b; /* no MPI call off the main thread */
  clock_gettime(CLOCK_MONOTONIC, &a);
  d->status = pb_checksum_xxh128_file(d->path, d->hex);
  if (d->status != PB_OK) snprintf(d->why, sizeof d->why, "%s", pb_error_message());
  clock_gettime(CLOCK_MONOTONIC, &b);
  d->seconds = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
  return NULL;
}

/* Collective: the same calls on every rank; the first joins rank 0's thread. */
static int pb_run__digest_wait(struct pb_run__digest *d, MPI_Comm comm)
{
  if (d->joined) return PB_OK;
  d->joined = 1;
  int status = PB_OK;
  if (d->started) {
    pthread_join(d->thread, NULL);
    status = d->status;
    if (status != PB_OK) pb_error_set("%s", d->why);
    pb_message("run: store checksum (XXH3-128, checkpoint key) in %.2f s, beside the first stage", d->seconds);
  }
  return pb_error_agree(comm, status);
}

/* Which stages cannot run on the store (collective: every rank opens its
 * metadata): what a stage needs of the store (.needs) and what its roles,
 * groups and options allow (.applies); such a stage is skipped with its
 * one-line reason, in the summary and REPORT.md. */
static int pb_run__skips(const struct pb_run_config *cfg, MPI_Comm comm, struct pb_run_facts *facts)
{
  struct pb_store *st;
  if (pb_store_open(cfg->store, comm, &st) != PB_OK) return PB_FAIL;
  const struct pb_meta *meta = pb_store_meta(st);
  pb_run_seed_take(&facts->seed, meta);
  for (int32_t i = 0; i < cfg->n_stages; i++) {
    const struct pb_stage_desc *d = pb_run__kind(cfg->stages[i]);
    const struct pb_run_instance *in = strchr(cfg->stages[i], '.') ? pb_run__instance((struct pb_run_config *)cfg,
                                                                                      cfg->stages[i], 0) : NULL;
    char *why = facts->skipped[i];
    const size_t n = sizeof facts->skipped[i];
    if (!d->store.reads) continue;
    if (!pb_stage_lacks(meta, cfg->store, d->name, d->store.needs, why, n) && d->pipeline.applies &&
        !d->pipeline.applies(meta, in ? in->opts : cfg->opts[pb_registry_index(d)], why, n) && !why[0])
      snprintf(why, n, "it cannot run on this store");
  }
  pb_store_close(st);
  return PB_OK;
}

/* One stage into OUTPUT/STAGE, then its checkpoint; with --resume a stage
 * whose checkpoint matches is kept. */
static int pb_run__stage(const struct pb_run_config *cfg, int32_t i, const struct pb_checkpoint_key *key,
                         const char *prov, MPI_Comm comm, struct pb_run_facts *facts, struct pb_run__digest *dg)
{
  int rank, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  char *dir = pb_output_path_join(cfg->output, cfg->stages[i]);
  double t0 = MPI_Wtime();
  if (facts->skipped[i][0]) {
    pb_message("run: %s skipped: %s", cfg->stages[i], facts->skipped[i]);
    free(dir);
    return PB_OK;
  }
  /* the key is needed now to check a checkpoint, or by the stage's blocks */
  if (cfg->resume || pb_run__kind(cfg->stages[i])->pipeline.blocks) status = pb_run__digest_wait(dg, comm);
  const int done = status == PB_OK && cfg->resume ? pb_checkpoint_resumable(dir, key, comm) : 0;
  if (status != PB_OK || done == PB_FAIL) status = PB_FAIL;
  else if (done) {
    facts->resumed[i] = 1;
    if (rank == 0) pb_blocks_remove(dir); /* left by a kill between the commit and their removal */
    pb_message("run: %s complete in %s (checkpoint matches): not recomputed", cfg->stages[i], dir);
  } else {
    /* long loops keep completed blocks until the stage is committed (pairbound/blocks.h) */
    char *hint = pb_blocks_resume_hint(prov);
    pb_blocks_context(key, cfg->resume, hint);
    free(hint);
    status = pb_run__call(cfg, cfg->stages[i], dir, comm, prov);
    pb_comm_allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
    pb_blocks_context(NULL, 0, NULL);
    const int dgs = pb_run__digest_wait(dg, comm);
    if (status == PB_OK) status = dgs;
    const double t_ck = MPI_Wtime();
    if (status == PB_OK) status = pb_checkpoint_commit_all(dir, key, comm);
    pb_message("run: %s checkpoint (XXH3-128 of its outputs) in %.2f s", cfg->stages[i], MPI_Wtime() - t_ck);
    if (status == PB_OK && rank == 0) pb_blocks_remove(dir);
    if (status == PB_OK) pb_message("run: %s done in %.2f s -> %s", cfg->stages[i], MPI_Wtime() - t0, dir);
  }
  facts->wall[i] = MPI_Wtime() - t0;
  free(dir);
  return status;
}

/* A pipeline of stages that read no store (exact draws its worlds) needs none. */
static int pb_run__reads_store(const struct pb_run_config *cfg)
{
  int reads_store = 0;
  for (int32_t i = 0; i < cfg->n_stages; i++) reads_store |= pb_run__kind(cfg->stages[i])->store.reads;
  return reads_store;
}

int pb_run_config_check(const struct pb_run_config *cfg)
{
  if (cfg->output && pb_output_name_ok(cfg->output) != PB_OK) return PB_FAIL;
  if (cfg->output && (cfg->store || !pb_run__reads_store(cfg))) return PB_OK;
  pb_error_set("run: no %s (give %s in [run])", cfg->output ? "store" : "output directory",
               cfg->output ? "--store STORE or store = STORE" : "-o OUTDIR or output = OUTDIR");
  return PB_FAIL;
}

/* Rank 0: create OUTPUT and lock it for the whole run (as a stage locks its
 * OUTDIR), so that a second run into it is refused while this one runs;
 * each stage also locks OUTPUT/STAGE. */
static int pb_run__claim(const struct pb_run_config *cfg, MPI_Comm comm, struct pb_output_lock *lock)
{
  int rank, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    char *path = pb_output_path_join(cfg->output, ".pairbound.lock");
    status = pb_output_mkdir_p(cfg->output);
    if (status == PB_OK) status = pb_output_lock_take(lock, path, cfg->output);
    free(path);
  }
  return pb_error_agree(comm, status);
}

int pb_run_pipeline(const struct pb_run_config *cfg, MPI_Comm comm, const char *provenance)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  struct pb_output_lock lock = {.fd = -1};
  if (pb_run_config_check(cfg)) return PB_FAIL;
  const int reads_store = pb_run__reads_store(cfg);
  double t0 = MPI_Wtime();
  size_t n = strlen(provenance) + strlen(cfg->text) + 32;
  char *prov = pb_malloc(n), *settings = pb_run__settings(cfg), digest[65] = "";
  snprintf(prov, n, "%s\nrun configuration:\n%s", provenance, cfg->text);
  struct pb_run_facts facts = {.build = pb_results_build_info(), .store_digest = digest, .settings = settings,
                               .ranks = 1, .threads = omp_get_max_threads()};
  MPI_Comm_size(comm, &facts.ranks);
  char hint[PATH_MAX + 256];
  snprintf(hint, sizeof hint,
           "pairbound run: stopped by a signal; the stages completed so far are kept in %s/STAGE/ with their "
           "checkpoints; to continue, repeat the same command with --resume",
           cfg->output);
  pb_signal_install(hint, 0, comm);
  int status = reads_store ? pb_run__store(cfg, comm) : PB_OK;
  struct pb_run__digest dg = {.path = cfg->store, .hex = digest};
  status = pb_error_agree(comm, status);
  if (status == PB_OK) status = pb_run__claim(cfg, comm, &lock);
  if (status == PB_OK && rank == 0 && reads_store) {
    dg.started = pthread_create(&dg.thread, NULL, pb_run__digest_main, &dg) == 0;
    if (!dg.started) status = pb_checksum_xxh128_file(cfg->store, digest); /* no thread: hash now */
  }
  if (!reads_store) snprintf(digest, sizeof digest, "none");
  status = pb_error_agree(comm, status);
  if (status == PB_OK && reads_store) status = pb_run__skips(cfg, comm, &facts);
  pb_stage_protocol_memo(1); /* every stage opens the one store: its protocol is computed once */
  for (int32_t i = 0; i < cfg->n_stages && status == PB_OK; i++) {
    struct pb_checkpoint_key key = {cfg->stages[i], facts.build, digest, settings};
    /* consecutive instances of one kind share the rows they read (src/store/store_memo.c); a new kind starts afresh */
    if (i == 0 || pb_run__kind(cfg->stages[i]) != pb_run__kind(cfg->stages[i - 1])) pb_store_rows_memo(1);
    status = pb_run__stage(cfg, i, &key, prov, comm, &facts, &dg);
  }
  pb_store_rows_memo(0);
  pb_stage_protocol_memo(0);
  const int dgs = pb_run__digest_wait(&dg, comm); /* joined on every path; REPORT.md names the store by it */
  if (status == PB_OK) status = dgs;
  facts.total = MPI_Wtime() - t0;
  const double t_rep = MPI_Wtime();
  if (status == PB_OK && rank == 0) status = pb_run_report(cfg, &facts);
  pb_message("run: REPORT.md and summary in %.2f s", MPI_Wtime() - t_rep);
  pb_comm_bcast(&status, 1, MPI_INT, 0, comm);
  pb_output_lock_release(&lock);
  pb_run_seed_free(&facts.seed);
  free(settings);
  free(prov);
  return status;
}
