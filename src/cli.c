/* Subcommand parsing and dispatch.  Every rank parses the same arguments;
 * rank 0 alone prints usage, errors and reports. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/config.h"
#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/identify.h"
#include "pairbound/policy.h"
#include "pairbound/ingest.h"
#include "pairbound/protocol.h"
#include "pairbound/results.h"
#include "pairbound/run.h"
#include "pairbound/screen.h"
#include "pairbound/stage.h"
#include "pairbound/states.h"
#include "pairbound/summary.h"
#include "pairbound/synth.h"
#include "pairbound/util.h"
#include "pairbound/verify.h"
#include "pairbound/world.h"
#include "cli.h"

#define PB_EXIT_OK 0
#define PB_EXIT_FAIL 1
#define PB_EXIT_USAGE 2

struct pb_cli {
  const char *cmd;         /* subcommand name */
  int rank;
  char *provenance;        /* build info + command line */
};

struct pb_cli_command {
  const char *name;
  const char *synopsis;
  const char *help;
  int (*run)(struct pb_cli *cli, int argc, char **argv);
};

static const struct pb_cli_command *pb_cli__commands(void);

static int pb_cli__usage_error(struct pb_cli *cli, const char *synopsis, const char *fmt, const char *arg)
{
  if (cli->rank == 0) {
    fprintf(stderr, "pairbound %s: ", cli->cmd);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s\n", synopsis);
  }
  return PB_EXIT_USAGE;
}

static int pb_cli__fail(struct pb_cli *cli)
{
  if (cli->rank == 0) fprintf(stderr, "pairbound %s: error: %s\n", cli->cmd, pb_error_message());
  return PB_EXIT_FAIL;
}

/* Shared between all ranks: a failure on any rank fails the command. */
static int pb_cli__status(struct pb_cli *cli, int status)
{
  int all = status;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all == PB_OK) return PB_EXIT_OK;
  /* the first failing rank's message is the one worth reading */
  int me = status != PB_OK ? cli->rank : 1 << 30, who;
  MPI_Allreduce(&me, &who, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  char msg[2048];
  snprintf(msg, sizeof msg, "%s", pb_error_message());
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, who, MPI_COMM_WORLD);
  pb_error_set("%s", msg);
  return pb_cli__fail(cli);
}

static int pb_cli__parse_u64(const char *s, unsigned long long *out)
{
  char *end;
  if (!s[0] || s[0] == '-') return PB_FAIL;
  *out = strtoull(s, &end, 10);
  return *end == '\0' ? PB_OK : PB_FAIL;
}

static int pb_cli__parse_double(const char *s, double lo, double hi, double *out)
{
  char *end;
  *out = strtod(s, &end);
  return *end == '\0' && end != s && *out >= lo && *out <= hi ? PB_OK : PB_FAIL;
}

static double pb_cli__now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Options common to the protocol and every analysis stage. */
#define PB_CLI_PROTOCOL_HELP \
  "  --coverage X         clean-development coverage of the acceptance threshold (default 0.8)\n" \
  "  --panel-seed N       seed of the frozen panel's name ordering (default 20260910)\n" \
  "  --panel-cells SRC=N  panel size of source SRC (default Syn 90, Syn-B 90, others 135); repeatable\n"

enum { OPT_COVERAGE = 1000, OPT_PANEL_SEED, OPT_PANEL_CELLS, OPT_FULL, OPT_SCALE, OPT_SEED, OPT_CONFIG,
       OPT_CLASSES, OPT_NO_SUMMARY, OPT_TAU, OPT_I5, OPT_NO_MATCHED, OPT_GROUP_DRAWS, OPT_PERM_REPS, OPT_BOOT_SEED,
       OPT_STORE, OPT_CELLS, OPT_SAMPLE, OPT_SAMPLE_SEED, OPT_SOURCES, OPT_MAX_CLASS, OPT_CARTESIAN_MAX, OPT_AGAINST,
       OPT_ALL, OPT_POLICY_TAUS, OPT_LAMBDAS,
       OPT_TARGETS, OPT_PROBE, OPT_NO_SEVERITY, OPT_DERANGE, OPT_SPLIT, OPT_TIERS, OPT_SUBSET_SIZES,
       OPT_SUBSETS, OPT_SUBSET_TIERS, OPT_CLASS_DRAWS, OPT_POLICIES };

static int pb_cli__protocol_opt(struct pb_cli *cli, const char *synopsis, int opt, const char *arg,
                                struct pb_protocol_options *p)
{
  unsigned long long u;
  double x;
  switch (opt) {
  case OPT_COVERAGE:
    if (pb_cli__parse_double(arg, 1e-9, 1.0, &x)) return pb_cli__usage_error(cli, synopsis, "--coverage must be in (0, 1], got '%s'", arg);
    p->coverage = x;
    return 0;
  case OPT_PANEL_SEED:
    if (pb_cli__parse_u64(arg, &u)) return pb_cli__usage_error(cli, synopsis, "--panel-seed must be a non-negative integer, got '%s'", arg);
    p->panel_seed = u;
    return 0;
  case OPT_PANEL_CELLS: {
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg || pb_cli__parse_u64(eq + 1, &u) || u > 1u << 30)
      return pb_cli__usage_error(cli, synopsis, "--panel-cells takes SRC=N, got '%s'", arg);
    p->quota_source = pb_realloc(p->quota_source, (size_t)(p->n_quota + 1) * sizeof(char *));
    p->quota = pb_realloc(p->quota, (size_t)(p->n_quota + 1) * sizeof(int32_t));
    p->quota_source[p->n_quota] = pb_strdup(arg);
    p->quota_source[p->n_quota][eq - arg] = '\0';
    p->quota[p->n_quota++] = (int32_t)u;
    return 0;
  }
  }
  return -1;
}

static void pb_cli__protocol_free(struct pb_protocol_options *p)
{
  for (int32_t i = 0; i < p->n_quota; i++) free(p->quota_source[i]);
  free(p->quota_source);
  free(p->quota);
}

#define PB_CLI_PROTOCOL_LONGOPTS \
  {"coverage", required_argument, NULL, OPT_COVERAGE}, {"panel-seed", required_argument, NULL, OPT_PANEL_SEED}, \
  {"panel-cells", required_argument, NULL, OPT_PANEL_CELLS}

/* getopt_long loop shared by all subcommands; returns -1 when done, the
 * option otherwise, or PB_EXIT_USAGE + 1000000 after a usage error. */
static int pb_cli__next(struct pb_cli *cli, int argc, char **argv, const char *shortopts,
                        const struct option *longopts, const char *synopsis)
{
  opterr = 0;
  int opt = getopt_long(argc, argv, shortopts, longopts, NULL);
  if (opt == '?') {
    /* a short option is named by optopt, a long one by the word getopt stopped at */
    static char s[3] = "-";
    const char *bad = argv[optind - 1];
    int is_short = optopt > 0 && optopt < 256 && strncmp(bad, "--", 2) != 0;
    if (is_short) {
      s[1] = (char)optopt;
      bad = s;
    }
    char *eq = strchr(bad, '=');
    if (eq && strncmp(bad, "--", 2) == 0) *eq = '\0';
    int missing = is_short && strchr(shortopts, optopt) != NULL;
    for (const struct option *o = longopts; !missing && o->name; o++)
      missing = o->has_arg == required_argument && strncmp(bad, "--", 2) == 0 && strcmp(bad + 2, o->name) == 0;
    pb_cli__usage_error(cli, synopsis, missing ? "option '%s' needs a value" : "unknown option '%s'", bad);
    return 1000000 + PB_EXIT_USAGE;
  }
  return opt;
}

static int pb_cli__help(struct pb_cli *cli, const char *name)
{
  for (const struct pb_cli_command *c = pb_cli__commands(); c->name; c++)
    if (strcmp(c->name, name) == 0) {
      if (cli->rank == 0) printf("usage: %s\n\n%s", c->synopsis, c->help);
      return PB_EXIT_OK;
    }
  return PB_EXIT_USAGE;
}

/* ------------------------------------------------------------------ synth */

static int pb_cli__synth(struct pb_cli *cli, int argc, char **argv)
{
  static const char *syn = "pairbound synth [--scale paper|small] [--seed N] [--config FILE] [--no-summary] -o STORE";
  static const struct option lo[] = {{"scale", required_argument, NULL, OPT_SCALE}, {"seed", required_argument, NULL, OPT_SEED},
                                     {"config", required_argument, NULL, OPT_CONFIG}, {"output", required_argument, NULL, 'o'},
                                     {"no-summary", no_argument, NULL, OPT_NO_SUMMARY}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  const char *scale = "paper", *config = NULL, *out = NULL;
  unsigned long long seed = 0;
  int have_seed = 0, summary = 1, opt;
  while ((opt = pb_cli__next(cli, argc, argv, "o:h", lo, syn)) != -1) {
    switch (opt) {
    case 'h': return pb_cli__help(cli, "synth");
    case 'o': out = optarg; break;
    case OPT_SCALE:
      if (strcmp(optarg, "paper") && strcmp(optarg, "small"))
        return pb_cli__usage_error(cli, syn, "--scale must be 'paper' or 'small', got '%s'", optarg);
      scale = optarg;
      break;
    case OPT_SEED:
      if (pb_cli__parse_u64(optarg, &seed)) return pb_cli__usage_error(cli, syn, "--seed must be a non-negative integer, got '%s'", optarg);
      have_seed = 1;
      break;
    case OPT_CONFIG: config = optarg; break;
    case OPT_NO_SUMMARY: summary = 0; break;
    default: return opt - 1000000;
    }
  }
  if (optind < argc) return pb_cli__usage_error(cli, syn, "unexpected argument '%s'", argv[optind]);
  if (!out) return pb_cli__usage_error(cli, syn, "%s", "missing -o STORE");
  struct pb_synth_config cfg;
  int status = config ? pb_config_load(config, &cfg)
                      : pb_config_parse(strcmp(scale, "small") == 0 ? pb_embedded_small_ini : pb_embedded_paper_ini,
                                        strcmp(scale, "small") == 0 ? "inputs/small.ini" : "inputs/paper.ini", &cfg);
  if (status != PB_OK) return pb_cli__fail(cli);
  if (have_seed) cfg.seed = seed;
  double t0 = pb_cli__now();
  status = pb_synth_store(&cfg, out, MPI_COMM_WORLD);
  pb_config_free(&cfg);
  int rc = pb_cli__status(cli, status);
  if (rc != PB_EXIT_OK) return rc;
  pb_message("synth: wrote %s in %.2f s", out, pb_cli__now() - t0);
  if (!summary) return PB_EXIT_OK;
  struct pb_store *st;
  struct pb_protocol proto;
  struct pb_protocol_options popt;
  pb_protocol_options_default(&popt);
  status = pb_store_open(out, MPI_COMM_WORLD, &st);
  if (status == PB_OK) {
    status = pb_protocol_compute(st, MPI_COMM_WORLD, &popt, &proto);
    if (status == PB_OK && cli->rank == 0) pb_summary_print(stdout, pb_store_meta(st), &proto, 0);
    if (status == PB_OK) pb_protocol_free(&proto);
    pb_store_close(st);
  }
  return pb_cli__status(cli, status);
}

/* ------------------------------------------------------------ ingest/export */

static int pb_cli__ingest(struct pb_cli *cli, int argc, char **argv)
{
  static const char *syn = "pairbound ingest CSV [--classes N|SRC=N]... -o STORE";
  static const struct option lo[] = {{"classes", required_argument, NULL, OPT_CLASSES}, {"output", required_argument, NULL, 'o'},
                                     {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  struct pb_ingest_options iopt;
  memset(&iopt, 0, sizeof iopt);
  const char *out = NULL;
  int opt, rc = PB_EXIT_OK;
  while ((opt = pb_cli__next(cli, argc, argv, "o:h", lo, syn)) != -1 && rc == PB_EXIT_OK) {
    unsigned long long n;
    switch (opt) {
    case 'h': return pb_cli__help(cli, "ingest");
    case 'o': out = optarg; break;
    case OPT_CLASSES: {
      const char *eq = strchr(optarg, '=');
      if (pb_cli__parse_u64(eq ? eq + 1 : optarg, &n) || n < 1 || n > (1u << 30) || eq == optarg) {
        rc = pb_cli__usage_error(cli, syn, "--classes takes N or SRC=N with N >= 1, got '%s'", optarg);
        break;
      }
      if (!eq) {
        iopt.default_classes = (int32_t)n;
        break;
      }
      iopt.class_source = pb_realloc(iopt.class_source, (size_t)(iopt.n_source_classes + 1) * sizeof(char *));
      iopt.class_count = pb_realloc(iopt.class_count, (size_t)(iopt.n_source_classes + 1) * sizeof(int32_t));
      iopt.class_source[iopt.n_source_classes] = pb_strdup(optarg);
      iopt.class_source[iopt.n_source_classes][eq - optarg] = '\0';
      iopt.class_count[iopt.n_source_classes++] = (int32_t)n;
      break;
    }
    default: rc = opt - 1000000;
    }
  }
  if (rc == PB_EXIT_OK && optind != argc - 1)
    rc = pb_cli__usage_error(cli, syn, "%s", optind < argc ? "takes exactly one CSV file" : "missing CSV file");
  if (rc == PB_EXIT_OK && !out) rc = pb_cli__usage_error(cli, syn, "%s", "missing -o STORE");
  if (rc == PB_EXIT_OK) {
    iopt.provenance = cli->provenance;
    /* the CSV is read once, on rank 0; the others wait for its verdict */
    int status = cli->rank == 0 ? pb_ingest_csv(argv[optind], &iopt, out) : PB_OK;
    rc = pb_cli__status(cli, status);
  }
  for (int i = 0; i < iopt.n_source_classes; i++) free(iopt.class_source[i]);
  free(iopt.class_source);
  free(iopt.class_count);
  return rc;
}

static int pb_cli__export(struct pb_cli *cli, int argc, char **argv)
{
  static const char *syn = "pairbound export STORE -o CSV";
  static const struct option lo[] = {{"output", required_argument, NULL, 'o'}, {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  const char *out = NULL;
  int opt;
  while ((opt = pb_cli__next(cli, argc, argv, "o:h", lo, syn)) != -1) {
    if (opt == 'h') return pb_cli__help(cli, "export");
    if (opt == 'o') out = optarg;
    else return opt - 1000000;
  }
  if (optind != argc - 1) return pb_cli__usage_error(cli, syn, "%s", optind < argc ? "takes exactly one STORE" : "missing STORE");
  if (!out) return pb_cli__usage_error(cli, syn, "%s", "missing -o CSV");
  int status = cli->rank == 0 ? pb_export_csv(argv[optind], out) : PB_OK;
  return pb_cli__status(cli, status);
}

/* -------------------------------------------------------- info and stages */

static int pb_cli__info(struct pb_cli *cli, int argc, char **argv)
{
  static const char *syn = "pairbound info STORE [--full] [protocol options]";
  static const struct option lo[] = {PB_CLI_PROTOCOL_LONGOPTS, {"full", no_argument, NULL, OPT_FULL},
                                     {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  struct pb_protocol_options popt;
  pb_protocol_options_default(&popt);
  int opt, full = 0, rc = PB_EXIT_OK;
  while (rc == PB_EXIT_OK && (opt = pb_cli__next(cli, argc, argv, "h", lo, syn)) != -1) {
    if (opt == 'h') { pb_cli__protocol_free(&popt); return pb_cli__help(cli, "info"); }
    if (opt == OPT_FULL) full = 1;
    else if (opt >= 1000000) rc = opt - 1000000;
    else rc = pb_cli__protocol_opt(cli, syn, opt, optarg, &popt);
  }
  if (rc == PB_EXIT_OK && optind != argc - 1)
    rc = pb_cli__usage_error(cli, syn, "%s", optind < argc ? "takes exactly one STORE" : "missing STORE");
  if (rc == PB_EXIT_OK) {
    struct pb_store *st;
    struct pb_protocol proto;
    int status = pb_store_open(argv[optind], MPI_COMM_WORLD, &st);
    if (status == PB_OK) {
      status = pb_protocol_compute(st, MPI_COMM_WORLD, &popt, &proto);
      if (status == PB_OK && cli->rank == 0) pb_summary_print(stdout, pb_store_meta(st), &proto, full);
      if (status == PB_OK) pb_protocol_free(&proto);
      pb_store_close(st);
    }
    rc = pb_cli__status(cli, status);
  }
  pb_cli__protocol_free(&popt);
  return rc;
}

/* A stage run as `pairbound STAGE STORE -o OUTDIR [protocol options] [own options]`. */
struct pb_cli_stage {
  const char *synopsis;
  const struct option *extra;   /* the stage's own long options, {0} terminated, or NULL */
  int (*option)(struct pb_cli *cli, const char *syn, int opt, const char *arg, void *ctx);
  int (*run)(const char *store, const char *outdir, MPI_Comm comm, const struct pb_protocol_options *popt,
             void *ctx, const char *provenance);
  void *ctx;
};

static int pb_cli__stage(struct pb_cli *cli, int argc, char **argv, const struct pb_cli_stage *stage)
{
  static const struct option common[] = {PB_CLI_PROTOCOL_LONGOPTS, {"output", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'}};
  size_t nc = sizeof common / sizeof common[0], ne = 0;
  while (stage->extra && stage->extra[ne].name) ne++;
  struct option *lo = pb_calloc(nc + ne + 1, sizeof *lo);
  memcpy(lo, common, sizeof common);
  if (ne) memcpy(lo + nc, stage->extra, ne * sizeof *lo);
  struct pb_protocol_options popt;
  pb_protocol_options_default(&popt);
  const char *out = NULL, *syn = stage->synopsis;
  int opt, rc = PB_EXIT_OK, help = 0;
  while (rc == PB_EXIT_OK && !help && (opt = pb_cli__next(cli, argc, argv, "o:h", lo, syn)) != -1) {
    if (opt == 'h') help = 1;
    else if (opt == 'o') out = optarg;
    else if (opt >= 1000000) rc = opt - 1000000;
    else if (opt >= OPT_COVERAGE && opt <= OPT_PANEL_CELLS) rc = pb_cli__protocol_opt(cli, syn, opt, optarg, &popt);
    else rc = stage->option(cli, syn, opt, optarg, stage->ctx);
  }
  if (help) rc = pb_cli__help(cli, cli->cmd);
  else if (rc == PB_EXIT_OK && optind != argc - 1)
    rc = pb_cli__usage_error(cli, syn, "%s", optind < argc ? "takes exactly one STORE" : "missing STORE");
  else if (rc == PB_EXIT_OK && !out) rc = pb_cli__usage_error(cli, syn, "%s", "missing -o OUTDIR");
  else if (rc == PB_EXIT_OK) {
    double t0 = pb_cli__now();
    rc = pb_cli__status(cli, stage->run(argv[optind], out, MPI_COMM_WORLD, &popt, stage->ctx, cli->provenance));
    if (rc == PB_EXIT_OK) pb_message("%s: wrote %s in %.2f s", cli->cmd, out, pb_cli__now() - t0);
  }
  pb_cli__protocol_free(&popt);
  free(lo);
  return rc;
}

static int pb_cli__run_protocol(const char *store, const char *outdir, MPI_Comm comm,
                                const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  (void)ctx;
  struct pb_stage st;
  if (pb_stage_open(store, outdir, comm, popt, provenance, &st)) return PB_FAIL;
  return pb_stage_close(&st, PB_OK);
}

static int pb_cli__run_states(const char *store, const char *outdir, MPI_Comm comm,
                              const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  (void)ctx;
  return pb_states_run(store, outdir, comm, popt, provenance);
}

static int pb_cli__protocol(struct pb_cli *cli, int argc, char **argv)
{
  const struct pb_cli_stage stage = {"pairbound protocol STORE -o OUTDIR [protocol options]", NULL, NULL,
                                     pb_cli__run_protocol, NULL};
  return pb_cli__stage(cli, argc, argv, &stage);
}

static int pb_cli__states(struct pb_cli *cli, int argc, char **argv)
{
  const struct pb_cli_stage stage = {"pairbound states STORE -o OUTDIR [protocol options]", NULL, NULL,
                                     pb_cli__run_states, NULL};
  return pb_cli__stage(cli, argc, argv, &stage);
}

/* --tau X, shared by every stage that accepts one threshold for every cell. */
static int pb_cli__tau(struct pb_cli *cli, const char *syn, const char *arg, int *have, float *tau)
{
  double x;
  if (pb_cli__parse_double(arg, 0.0, 1.0, &x)) return pb_cli__usage_error(cli, syn, "--tau must be in [0, 1], got '%s'", arg);
  *have = 1;
  *tau = (float)x;
  return PB_EXIT_OK;
}

static int pb_cli__bounds_option(struct pb_cli *cli, const char *syn, int opt, const char *arg, void *ctx)
{
  struct pb_identify_options *o = ctx;
  switch (opt) {
  case OPT_TAU:
    return pb_cli__tau(cli, syn, arg, &o->have_tau, &o->tau);
  case OPT_I5:
    if (!strcmp(arg, "panel")) o->i5_scope = PB_IDENTIFY_I5_PANEL;
    else if (!strcmp(arg, "all")) o->i5_scope = PB_IDENTIFY_I5_ALL;
    else if (!strcmp(arg, "none")) o->i5_scope = PB_IDENTIFY_I5_NONE;
    else return pb_cli__usage_error(cli, syn, "--i5 must be 'panel', 'all' or 'none', got '%s'", arg);
    return PB_EXIT_OK;
  case OPT_NO_MATCHED:
    o->matched = 0;
    return PB_EXIT_OK;
  case OPT_GROUP_DRAWS:
  case OPT_PERM_REPS:
  case OPT_BOOT_SEED: {
    unsigned long long u;
    if (pb_cli__parse_u64(arg, &u) || (opt != OPT_BOOT_SEED && u > 10000000))
      return pb_cli__usage_error(cli, syn, "expected a non-negative integer (at most 10^7 draws), got '%s'", arg);
    if (opt == OPT_GROUP_DRAWS) o->group_draws = (int64_t)u;
    else if (opt == OPT_PERM_REPS) o->perm_replicates = (int32_t)u;
    else o->seed = u;
    return PB_EXIT_OK;
  }
  }
  return PB_EXIT_USAGE;
}

static int pb_cli__run_bounds(const char *store, const char *outdir, MPI_Comm comm,
                              const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  return pb_identify_run(store, outdir, comm, popt, ctx, provenance);
}

#define PB_CLI_POLICY_SYNOPSIS \
  "pairbound policy STORE -o OUTDIR [--all] [--tau X] [--policy-taus a,b,..] [--lambdas a,b,..] [protocol options]"

/* Comma-separated numbers in [lo, hi]: at most max of them. */
static int pb_cli__parse_list(const char *s, double lo, double hi, int max, double *out, int *n)
{
  char *copy = pb_strdup(s), *save = NULL;
  int rc = 0;
  *n = 0;
  for (char *w = strtok_r(copy, ",", &save); w && !rc; w = strtok_r(NULL, ",", &save)) {
    if (*n >= max || pb_cli__parse_double(w, lo, hi, &out[*n])) rc = -1;
    else (*n)++;
  }
  free(copy);
  return rc || *n == 0 ? -1 : 0;
}

static int pb_cli__policy_option(struct pb_cli *cli, const char *syn, int opt, const char *arg, void *ctx)
{
  struct pb_policy_options *o = ctx;
  double v[PB_POLICY_MAX_LAMBDA];
  int n;
  switch (opt) {
  case OPT_ALL:
    o->all = 1;
    return PB_EXIT_OK;
  case OPT_TAU:
    return pb_cli__tau(cli, syn, arg, &o->have_tau, &o->tau);
  case OPT_POLICY_TAUS:
    if (pb_cli__parse_list(arg, 0.0, 1.0, PB_POLICY_MAX, v, &n))
      return pb_cli__usage_error(cli, syn, "--policy-taus takes 1 to 8 comma-separated values in [0, 1], got '%s'",
                                 arg);
    o->n_taus = n;
    for (int i = 0; i < n; i++) o->taus[i] = (float)v[i];
    return PB_EXIT_OK;
  case OPT_LAMBDAS:
    if (pb_cli__parse_list(arg, 0.0, 1.0, PB_POLICY_MAX_LAMBDA, v, &n))
      return pb_cli__usage_error(cli, syn, "--lambdas takes 1 to 32 comma-separated values in [0, 1], got '%s'",
                                 arg);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < i; j++)
        if (v[i] == v[j]) return pb_cli__usage_error(cli, syn, "--lambdas lists a value twice: '%s'", arg);
    o->n_lambdas = n;
    memcpy(o->lambdas, v, (size_t)n * sizeof *v);
    return PB_EXIT_OK;
  }
  return PB_EXIT_USAGE;
}

static int pb_cli__run_policy(const char *store, const char *outdir, MPI_Comm comm,
                              const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  return pb_policy_run(store, outdir, comm, popt, ctx, provenance);
}

static int pb_cli__policy(struct pb_cli *cli, int argc, char **argv)
{
  static const struct option extra[] = {{"all", no_argument, NULL, OPT_ALL}, {"tau", required_argument, NULL, OPT_TAU},
                                        {"policy-taus", required_argument, NULL, OPT_POLICY_TAUS},
                                        {"lambdas", required_argument, NULL, OPT_LAMBDAS}, {0, 0, 0, 0}};
  struct pb_policy_options o;
  pb_policy_options_default(&o);
  const struct pb_cli_stage stage = {PB_CLI_POLICY_SYNOPSIS, extra, pb_cli__policy_option, pb_cli__run_policy, &o};
  return pb_cli__stage(cli, argc, argv, &stage);
}

static int pb_cli__bounds(struct pb_cli *cli, int argc, char **argv)
{
  static const struct option extra[] = {{"tau", required_argument, NULL, OPT_TAU}, {"i5", required_argument, NULL, OPT_I5},
                                        {"no-matched", no_argument, NULL, OPT_NO_MATCHED},
                                        {"group-draws", required_argument, NULL, OPT_GROUP_DRAWS},
                                        {"perm-replicates", required_argument, NULL, OPT_PERM_REPS},
                                        {"seed", required_argument, NULL, OPT_BOOT_SEED}, {0, 0, 0, 0}};
  struct pb_identify_options o;
  pb_identify_options_default(&o);
  const struct pb_cli_stage stage = {
    "pairbound bounds STORE -o OUTDIR [--tau X] [--i5 panel|all|none] [--no-matched] [--group-draws N] "
    "[--perm-replicates R] [--seed S] [protocol options]", extra,
    pb_cli__bounds_option, pb_cli__run_bounds, &o};
  return pb_cli__stage(cli, argc, argv, &stage);
}


/* ------------------------------------------------------------------ screen */

static int pb_cli__screen_option(struct pb_cli *cli, const char *syn, int opt, const char *arg, void *ctx)
{
  struct pb_screen_options *o = ctx;
  unsigned long long u;
  switch (opt) {
  case OPT_SEED:
    if (pb_cli__parse_u64(arg, &u)) return pb_cli__usage_error(cli, syn, "--seed must be a non-negative integer, got '%s'", arg);
    o->seed = u;
    return PB_EXIT_OK;
  case OPT_TARGETS: {
    char *list = pb_strdup(arg), *save = NULL;
    for (int32_t t = 0; t < o->n_targets; t++) free(o->targets[t]);
    o->n_targets = 0;
    for (char *w = strtok_r(list, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      o->targets = pb_realloc(o->targets, (size_t)(o->n_targets + 1) * sizeof(char *));
      o->targets[o->n_targets++] = pb_strdup(w);
    }
    free(list);
    if (o->n_targets == 0) return pb_cli__usage_error(cli, syn, "--targets needs at least one source, got '%s'", arg);
    return PB_EXIT_OK;
  }
  case OPT_PROBE: {
    struct pb_screen_probeset ps;
    if (pb_screen_parse_probe(arg, &ps) != PB_OK) return pb_cli__usage_error(cli, syn, "%s", pb_error_message());
    for (int32_t p = 0; p < o->n_probesets; p++)
      if (!ps.name && !o->probesets[p].name) {
        free(ps.source);
        for (int32_t c = 0; c < ps.n_conditions; c++) free(ps.conditions[c]);
        free(ps.conditions);
        return pb_cli__usage_error(cli, syn, "only one --probe without NAME= (the primary set), got another: '%s'", arg);
      }
    o->probesets = pb_realloc(o->probesets, (size_t)(o->n_probesets + 1) * sizeof *o->probesets);
    o->probesets[o->n_probesets++] = ps;
    return PB_EXIT_OK;
  }
  case OPT_NO_SEVERITY:
    o->severity_sets = 0;
    return PB_EXIT_OK;
  case OPT_GROUP_DRAWS:
  case OPT_CLASS_DRAWS:
    if (pb_cli__parse_u64(arg, &u) || u > 10000000)
      return pb_cli__usage_error(cli, syn, "expected a non-negative integer (at most 10^7 draws), got '%s'", arg);
    if (opt == OPT_GROUP_DRAWS) o->group_draws = (int64_t)u;
    else o->class_draws = (int64_t)u;
    return PB_EXIT_OK;
  case OPT_DERANGE:
    if (pb_cli__parse_u64(arg, &u) || u > 1000) return pb_cli__usage_error(cli, syn, "--derange must be in 0..1000, got '%s'", arg);
    o->n_derange = (int32_t)u;
    return PB_EXIT_OK;
  case OPT_SPLIT:
    if (!strcmp(arg, "eval")) o->swapped = 0;
    else if (!strcmp(arg, "dev")) o->swapped = 1;
    else return pb_cli__usage_error(cli, syn, "--split must be 'eval' or 'dev', got '%s'", arg);
    return PB_EXIT_OK;
  case OPT_TIERS:
    if (!strcmp(arg, "dev")) o->eval_tiers = 0;
    else if (!strcmp(arg, "eval")) o->eval_tiers = 1;
    else return pb_cli__usage_error(cli, syn, "--tiers must be 'dev' or 'eval', got '%s'", arg);
    return PB_EXIT_OK;
  case OPT_SUBSET_SIZES: {
    o->n_subset_sizes = 0;
    if (!strcmp(arg, "none")) return PB_EXIT_OK;
    char *list = pb_strdup(arg), *save = NULL;
    int bad = 0;
    for (char *w = strtok_r(list, ",", &save); w && !bad; w = strtok_r(NULL, ",", &save)) {
      bad = pb_cli__parse_u64(w, &u) || u < 1 || u > 1000 || o->n_subset_sizes == PB_SCREEN_MAX_SUBSET_SIZES;
      if (!bad) o->subset_sizes[o->n_subset_sizes++] = (int32_t)u;
    }
    free(list);
    if (bad || o->n_subset_sizes == 0)
      return pb_cli__usage_error(cli, syn, "--subset-sizes takes up to 8 sizes m >= 1 (e.g. 1,2,3,6,9) or 'none', got '%s'", arg);
    return PB_EXIT_OK;
  }
  case OPT_SUBSETS:
    if (pb_cli__parse_u64(arg, &u) || u < 1 || u > 10000) return pb_cli__usage_error(cli, syn, "--subsets must be in 1..10000, got '%s'", arg);
    o->subsets_per_size = (int32_t)u;
    return PB_EXIT_OK;
  case OPT_SUBSET_TIERS: {
    o->subset_tiers = 0;
    if (!strcmp(arg, "none")) return PB_EXIT_OK;
    if (!strcmp(arg, "all")) {
      o->subset_tiers = 7;
      return PB_EXIT_OK;
    }
    char *list = pb_strdup(arg), *save = NULL;
    int bad = 0;
    for (char *w = strtok_r(list, ",", &save); w && !bad; w = strtok_r(NULL, ",", &save)) {
      int t = !strcmp(w, "mild") ? PB_TIER_MILD : !strcmp(w, "severe") ? PB_TIER_SEVERE : !strcmp(w, "extreme") ? PB_TIER_EXTREME : -1;
      bad = t < 0;
      if (!bad) o->subset_tiers |= 1 << t;
    }
    free(list);
    if (bad) return pb_cli__usage_error(cli, syn, "--subset-tiers takes mild,severe,extreme, 'all' or 'none', got '%s'", arg);
    return PB_EXIT_OK;
  }
  }
  return PB_EXIT_USAGE;
}

/* -------------------------------------------------------------------- run */

static int pb_cli__run(struct pb_cli *cli, int argc, char **argv)
{
  static const char *syn = "pairbound run [CONFIG] [--store STORE] [-o OUTDIR]";
  static const struct option lo[] = {{"output", required_argument, NULL, 'o'}, {"store", required_argument, NULL, OPT_STORE},
                                     {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  const char *out = NULL, *store = NULL;
  int opt;
  while ((opt = pb_cli__next(cli, argc, argv, "o:h", lo, syn)) != -1) {
    if (opt == 'h') return pb_cli__help(cli, "run");
    if (opt == 'o') out = optarg;
    else if (opt == OPT_STORE) store = optarg;
    else return opt - 1000000;
  }
  if (optind < argc - 1) return pb_cli__usage_error(cli, syn, "unexpected argument '%s'", argv[optind + 1]);
  struct pb_run_config cfg;
  int status = optind < argc ? pb_run_config_load(argv[optind], &cfg)
                             : pb_run_config_parse(pb_embedded_run_ini, "inputs/run.ini", &cfg);
  if (status != PB_OK) return pb_cli__fail(cli);
  if (out) {
    free(cfg.output);
    cfg.output = pb_strdup(out);
  }
  if (store) {
    free(cfg.store);
    cfg.store = pb_strdup(store);
  }
  double t0 = pb_cli__now();
  int rc = pb_cli__status(cli, pb_run(&cfg, MPI_COMM_WORLD, cli->provenance));
  if (rc == PB_EXIT_OK) pb_message("run: wrote %s in %.2f s", cfg.output, pb_cli__now() - t0);
  pb_run_config_free(&cfg);
  return rc;
}

static int pb_cli__verify_option(struct pb_cli *cli, const char *syn, int opt, const char *arg, void *ctx)
{
  struct pb_verify_options *o = ctx;
  unsigned long long u;
  switch (opt) {
  case OPT_TAU:
    return pb_cli__tau(cli, syn, arg, &o->have_tau, &o->tau);
  case OPT_CELLS:
    if (!strcmp(arg, "all")) o->cells = PB_VERIFY_CELLS_ALL;
    else if (!strcmp(arg, "panel")) o->cells = PB_VERIFY_CELLS_PANEL;
    else if (!strcmp(arg, "sample")) o->cells = PB_VERIFY_CELLS_SAMPLE;
    else return pb_cli__usage_error(cli, syn, "--cells must be 'all', 'panel' or 'sample', got '%s'", arg);
    return PB_EXIT_OK;
  case OPT_SAMPLE:
    if (pb_cli__parse_u64(arg, &u) || u < 1 || u > (1u << 30))
      return pb_cli__usage_error(cli, syn, "--sample must be a positive integer, got '%s'", arg);
    o->sample = (int32_t)u;
    return PB_EXIT_OK;
  case OPT_SAMPLE_SEED:
    if (pb_cli__parse_u64(arg, &u)) return pb_cli__usage_error(cli, syn, "--sample-seed must be a non-negative integer, got '%s'", arg);
    o->sample_seed = u;
    return PB_EXIT_OK;
  case OPT_SOURCES:
    if (!arg[0]) return pb_cli__usage_error(cli, syn, "--sources needs a comma-separated list of sources, got '%s'", arg);
    o->sources = (char *)arg;
    return PB_EXIT_OK;
  case OPT_MAX_CLASS:
    if (pb_cli__parse_u64(arg, &u) || u < 1 || u > PB_VERIFY_MAX_N)
      return pb_cli__usage_error(cli, syn, "--max-class must be an integer in [1, 10], got '%s'", arg);
    o->max_class = (int32_t)u;
    return PB_EXIT_OK;
  case OPT_CARTESIAN_MAX:
    if (pb_cli__parse_u64(arg, &u) || u > (1ull << 40))
      return pb_cli__usage_error(cli, syn, "--cartesian-max must be a non-negative integer, got '%s'", arg);
    o->cartesian_max = (int64_t)u;
    return PB_EXIT_OK;
  case OPT_AGAINST:
    o->against = arg;
    return PB_EXIT_OK;
  case OPT_POLICIES:
    o->policies = 1;
    return PB_EXIT_OK;
  case OPT_POLICY_TAUS: {
    double v[PB_VERIFY_MAX_POL];
    int n;
    if (pb_cli__parse_list(arg, 0.0, 1.0, PB_VERIFY_MAX_POL, v, &n))
      return pb_cli__usage_error(cli, syn, "--policy-taus takes 1 to 8 comma-separated values in [0, 1], got '%s'",
                                 arg);
    o->policies = 1;
    o->n_taus = n;
    for (int i = 0; i < n; i++) o->taus[i] = (float)v[i];
    return PB_EXIT_OK;
  }
  case OPT_LAMBDAS: {
    double v[PB_VERIFY_MAX_LAMBDA];
    int n;
    if (pb_cli__parse_list(arg, 0.0, 1.0, PB_VERIFY_MAX_LAMBDA, v, &n))
      return pb_cli__usage_error(cli, syn, "--lambdas takes 1 to 32 comma-separated values in [0, 1], got '%s'", arg);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < i; j++)
        if (v[i] == v[j]) return pb_cli__usage_error(cli, syn, "--lambdas lists a value twice: '%s'", arg);
    o->policies = 1;
    o->n_lambdas = n;
    memcpy(o->lambdas, v, (size_t)n * sizeof *v);
    return PB_EXIT_OK;
  }
  }
  return PB_EXIT_USAGE;
}

static int pb_cli__run_verify(const char *store, const char *outdir, MPI_Comm comm,
                              const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  return pb_verify_run(store, outdir, comm, popt, ctx, provenance);
}

#define PB_CLI_VERIFY_SYNOPSIS \
  "pairbound verify STORE -o OUTDIR [--cells all|panel|sample] [--sample N] [--sample-seed N] [--sources LIST]\n" \
  "       [--max-class N] [--cartesian-max P] [--tau X] [--against RESULTS_H5]\n" \
  "       [--policies] [--policy-taus a,b,..] [--lambdas a,b,..] [protocol options]"

static int pb_cli__verify(struct pb_cli *cli, int argc, char **argv)
{
  static const struct option extra[] = {
    {"tau", required_argument, NULL, OPT_TAU}, {"cells", required_argument, NULL, OPT_CELLS},
    {"sample", required_argument, NULL, OPT_SAMPLE}, {"sample-seed", required_argument, NULL, OPT_SAMPLE_SEED},
    {"sources", required_argument, NULL, OPT_SOURCES}, {"max-class", required_argument, NULL, OPT_MAX_CLASS},
    {"cartesian-max", required_argument, NULL, OPT_CARTESIAN_MAX}, {"against", required_argument, NULL, OPT_AGAINST},
    {"policies", no_argument, NULL, OPT_POLICIES}, {"policy-taus", required_argument, NULL, OPT_POLICY_TAUS},
    {"lambdas", required_argument, NULL, OPT_LAMBDAS}, {0, 0, 0, 0}};
  struct pb_verify_options o;
  pb_verify_options_default(&o);
  const struct pb_cli_stage stage = {PB_CLI_VERIFY_SYNOPSIS, extra, pb_cli__verify_option, pb_cli__run_verify, &o};
  return pb_cli__stage(cli, argc, argv, &stage);
}

static int pb_cli__run_screen(const char *store, const char *outdir, MPI_Comm comm,
                              const struct pb_protocol_options *popt, void *ctx, const char *provenance)
{
  return pb_screen_run(store, outdir, comm, popt, ctx, provenance);
}

#define PB_CLI_SCREEN_SYNOPSIS \
  "pairbound screen STORE -o OUTDIR [--targets SRC,...] [--probe [NAME=]SRC[:cond,...]]... [--seed N] [--derange N]\n" \
  "       [--split eval|dev] [--tiers dev|eval] [--subset-sizes M,...|none] [--subsets N] [--subset-tiers LIST]\n" \
  "       [--no-severity-sets] [--group-draws N] [--class-draws M] [protocol options]"

static int pb_cli__screen(struct pb_cli *cli, int argc, char **argv)
{
  static const struct option extra[] = {
    {"targets", required_argument, NULL, OPT_TARGETS}, {"probe", required_argument, NULL, OPT_PROBE},
    {"seed", required_argument, NULL, OPT_SEED}, {"derange", required_argument, NULL, OPT_DERANGE},
    {"split", required_argument, NULL, OPT_SPLIT}, {"tiers", required_argument, NULL, OPT_TIERS},
    {"subset-sizes", required_argument, NULL, OPT_SUBSET_SIZES}, {"subsets", required_argument, NULL, OPT_SUBSETS},
    {"subset-tiers", required_argument, NULL, OPT_SUBSET_TIERS}, {"no-severity-sets", no_argument, NULL, OPT_NO_SEVERITY},
    {"group-draws", required_argument, NULL, OPT_GROUP_DRAWS}, {"class-draws", required_argument, NULL, OPT_CLASS_DRAWS},
    {0, 0, 0, 0}};
  struct pb_screen_options o;
  pb_screen_options_default(&o);
  const struct pb_cli_stage stage = {PB_CLI_SCREEN_SYNOPSIS, extra, pb_cli__screen_option, pb_cli__run_screen, &o};
  int rc = pb_cli__stage(cli, argc, argv, &stage);
  pb_screen_options_free(&o);
  return rc;
}

static int pb_cli__world(struct pb_cli *cli, int argc, char **argv)
{
  (void)cli;
  return pb_world_main(argc, argv);
}

static int pb_cli__exact(struct pb_cli *cli, int argc, char **argv)
{
  return pb_exact_main(argc, argv, cli->provenance);
}

/* ------------------------------------------------------------------ table */

static const struct pb_cli_command pb_cli__table[] = {
  {"synth", "pairbound synth [--scale paper|small] [--seed N] [--config FILE] [--no-summary] -o STORE",
   "Generate a deterministic synthetic panel (docs/synth.md) and print its summary.\n\n"
   "  --scale paper|small  embedded configuration: the seed paper's dimensions (default) or a small test panel\n"
   "  --seed N             base seed of the generator (default: the configuration's, 20260908)\n"
   "  --config FILE        use an INI configuration instead of the embedded one\n"
   "  --no-summary         do not print the summary after writing\n"
   "  -o, --output STORE   store file to write (written as STORE.tmp, renamed when complete)\n",
   pb_cli__synth},
  {"ingest", "pairbound ingest CSV [--classes N|SRC=N]... -o STORE",
   "Validate a CSV of prediction records (docs/csv.md) and write a store.\n\n"
   "  --classes N          number of classes of every source (default: 1 + largest label or prediction seen)\n"
   "  --classes SRC=N      number of classes of source SRC; repeatable\n"
   "  -o, --output STORE   store file to write; nothing is written when the CSV is invalid\n",
   pb_cli__ingest},
  {"export", "pairbound export STORE -o CSV",
   "Write every record of a store as CSV in canonical order (docs/csv.md).\n\n"
   "  -o, --output CSV     CSV file to write\n",
   pb_cli__export},
  {"info", "pairbound info STORE [--full] [protocol options]",
   "Print `name value` lines describing a store and its protocol (docs/protocol.md).\n\n"
   "  --full               also print every threshold, tier and panel cell\n" PB_CLI_PROTOCOL_HELP,
   pb_cli__info},
  {"protocol", "pairbound protocol STORE -o OUTDIR [protocol options]",
   "Compute thresholds, tiers and the frozen panel; write OUTDIR/results.h5 and OUTDIR/report/protocol_*.tsv.\n\n"
   "  -o, --output OUTDIR  output directory\n" PB_CLI_PROTOCOL_HELP,
   pb_cli__protocol},
  {"states", "pairbound states STORE -o OUTDIR [protocol options]",
   "Per-cell accuracies and five-state counts (h, r, s, w, k) of every model x condition cell;\n"
   "write OUTDIR/results.h5 (/states) and OUTDIR/report/states.tsv.\n\n"
   "  -o, --output OUTDIR  output directory\n" PB_CLI_PROTOCOL_HELP,
   pb_cli__states},
  {"bounds", "pairbound bounds STORE -o OUTDIR [--tau X] [--i5 panel|all|none] [--no-matched] [--group-draws N] "
             "[--perm-replicates R] [--seed S] [protocol options]",
   "Sharp identification intervals of H, L and dM_k at information levels I0, Ik and I5 for every model x\n"
   "condition cell (seed 000 Sections 3-4, Appendix A-C; docs/bounds.md), with observed and independent\n"
   "values and the diagnostics tables (widths, decomposition, variance ratios, accuracy-only K, matched\n"
   "support). Writes OUTDIR/results.h5 (/bounds), OUTDIR/report/bounds.tsv, identification_*.tsv, REPORT.md.\n\n"
   "  -o, --output OUTDIR  output directory\n"
   "  --tau X              one acceptance threshold for every cell instead of the protocol's development\n"
   "                       threshold (a store without development images then works)\n"
   "  --i5 panel|all|none  cells that get the exact I5 H bounds and the variable-support dM_k range at I0\n"
   "                       (default: the frozen panel, as in the seed paper)\n"
   "  --no-matched         skip the matched-support comparison (Appendix B.2)\n"
   "  --group-draws N      model-group bootstrap draws for the intervals of the variance-ratio table\n"
   "                       (default 0 = no intervals; the paper uses 2000)\n"
   "  --perm-replicates R  uniform within-class permutation replicates per cell, the empirical control\n"
   "                       for the independent values (Appendix H.2; default 0, the paper uses 20)\n"
   "  --seed S             base seed of the resampling and permutation streams (default 20260908)\n"
   PB_CLI_PROTOCOL_HELP,
   pb_cli__bounds},
  {"policy", PB_CLI_POLICY_SYNOPSIS,
   "Rejection-policy comparisons under a shared correspondence (seed 000 Section 4.2, Appendix A.7-A.8, D;\n"
   "docs/policy.md): for each cell, clean threshold tau0 and perturbed policies tau_j, at I0, Ik and I5 the sharp\n"
   "H_j, L_j, J_j = lambda H_j + (1 - lambda) L_j intervals, the Lemma 1 upper bound, D+_jl for every ordered\n"
   "pair, minimax regret, the feasible-permutation mean, observed costs; certified orderings, information\n"
   "increments, merged actions, selection tables and the D.1 illustration. Writes OUTDIR/results.h5 (/policy),\n"
   "OUTDIR/report/policy_bounds.tsv, policy_pairs.tsv, policy_*.tsv and policy.md.\n\n"
   "  -o, --output OUTDIR  output directory\n"
   "  --all                every model x condition cell instead of the frozen panel\n"
   "  --tau X              clean threshold tau0 for every cell (default: the 80% development threshold)\n"
   "  --policy-taus a,b,.. perturbed thresholds for every cell, 1 to 8 values (default: the development\n"
   "                       thresholds at coverages .6 .7 .8 .9 1); with it, ties in the selection rules go to\n"
   "                       the lower index and there is no fixed-80% control. --tau and --policy-taus together\n"
   "                       make a store without development images valid\n"
   "  --lambdas a,b,..     cost weights in [0, 1], distinct, 1 to 32 values (default 0, .1, ..., 1; the primary\n"
   "                       weight is .5 when listed, else the first)\n" PB_CLI_PROTOCOL_HELP,
   pb_cli__policy},
  {"verify", PB_CLI_VERIFY_SYNOPSIS,
   "Independent verification of the identification endpoints (seed 000 A.10, B.3, C.1; docs/verify.md):\n"
   "enumerate every within-class bijection of every small class, classify it by its five-state counts, combine\n"
   "classes exactly and compare H, L and dM_k at I0, Ik, I5 (and observed values) with the bounds engine, per\n"
   "cell and per class; brute-force whole-cell Cartesian products of tiny cells; structural checks (nesting,\n"
   "observed values inside, Theorem 1). Writes OUTDIR/results.h5 (/verify/cells), OUTDIR/report/verify.tsv\n"
   "(one row per covered cell) and OUTDIR/report/REPORT.md. Exit status 1 when any residual exceeds 1e-12 or\n"
   "any check fails, after writing the outputs; the message names the cell and class.\n\n"
   "  -o, --output OUTDIR  output directory\n"
   "  --cells all|panel|sample\n"
   "                       cells to cover: every cell (default), the frozen panel, or a sample per source\n"
   "  --sample N           with --cells sample: N cells of each source, first in SHA-256 order of\n"
   "                       'verify|SEED|source|model|condition' (default 12: 48 cells on four sources, as C.1)\n"
   "  --sample-seed N      SEED of that order (default 20260911)\n"
   "  --sources LIST       cover only these sources (comma-separated names)\n"
   "  --max-class N        enumerate classes of at most N records per side, 1..10 (default 8); larger classes\n"
   "                       are skipped and counted, and their cells get no cell-level comparison\n"
   "  --cartesian-max P    brute-force the whole-cell Cartesian product of all classes' bijections when it has\n"
   "                       at most P combinations (default 20000; 0 disables)\n"
   "  --tau X              one acceptance threshold for every cell (as `bounds --tau`)\n"
   "  --against FILE       compare with the /bounds/cells columns of a `pairbound bounds` results.h5 made\n"
   "                       with the same protocol options, instead of running the bounds engine in-process\n"
   "  --policies           also verify the rejection-policy engine (`pairbound policy`; off by default): per\n"
   "                       class and bijection the policy event counts h_j, l_j (Eq. 10) at I0, Ik, I5, their\n"
   "                       extremes, J_j, D+_jl (Eq. 11), J', D'+, feasible means, compared with pb_policy_cell\n"
   "                       per class and per cell (always in-process); Lemma 1 (Eq. 8) and Corollary 1 checks.\n"
   "                       Clean threshold as --tau / the protocol's; policies as `pairbound policy`\n"
   "  --policy-taus a,b,.. perturbed policy thresholds for every cell, 1 to 8 values (default: the development\n"
   "                       thresholds at coverages .6 .7 .8 .9 1); implies --policies\n"
   "  --lambdas a,b,..     cost weights in [0, 1], distinct, 1 to 32 values (default .5, the primary weight;\n"
   "                       the paper's grid is 0,.1,...,1); implies --policies\n"
   PB_CLI_PROTOCOL_HELP,
   pb_cli__verify},
  {"screen", PB_CLI_SCREEN_SYNOPSIS,
   "Prospective screening (seed 000 Section 5, Appendix E; docs/screen.md): for every model, target source and\n"
   "perturbed target condition, rank the clean-correct images by failure-risk scores and measure AUROC (failure\n"
   "positive, ties 1/2) and failure coverage at budgets q = .1 .2 .3 (ties at the cutoff prorated). Scores: S, U,\n"
   "delta, ret, margin, entropy, class baselines, logistic g(S), g(S,U), g(S,U,ret), adapted A3 (Eq. 12), the\n"
   "within-class derangement and leave-one-out controls of U, a seeded random order, U_<set>/A3_<set> for extra\n"
   "probe sets and U over prefixed probe subsets. Writes OUTDIR/results.h5 (/screen), report/screen_cells.tsv,\n"
   "screen_cell_info.tsv, screen_strata.tsv, the summary tables screen_*.tsv and report/screen.md.\n\n"
   "  -o, --output OUTDIR  output directory\n"
   "  --targets SRC,...    target sources whose perturbed conditions are screened (default ES,Diverse)\n"
   "  --probe [NAME=]SRC[:cond,...]\n"
   "                       probe set: responses of the same images (joined by image id) under conditions of SRC\n"
   "                       (default: every perturbed condition). Without NAME= it replaces the primary set (default\n"
   "                       every perturbed condition of Syn-B), which defines U, ret, delta, A3 and the fits; with\n"
   "                       NAME= it adds scores U_NAME and A3_NAME (NAME TTA also gives U - TTA contrasts); repeatable\n"
   "  --no-severity-sets   do not add sets sevN grouping the primary conditions by a trailing -N in their names\n"
   "  --seed N             seed of derangements, random selection and probe subsets (default 20260912)\n"
   "  --derange N          derangement draws averaged in the identity ablation (default 10)\n"
   "  --split eval|dev     images evaluated: evaluation (default; fits on development images) or development\n"
   "                       (the swapped-split check of Tables 23-24; fits on evaluation images)\n"
   "  --tiers dev|eval     tiers from mean development (default) or evaluation accuracy across models (Table 24)\n"
   "  --subset-sizes M,... sizes of the prefixed probe subsets of Table 28 (default 1,2,3,6,9; 'none' to skip)\n"
   "  --subsets N          subsets per size: all of them when there are at most N, else N seeded draws (default 20)\n"
   "  --subset-tiers LIST  tiers whose cells get the subset scores: mild,severe,extreme, all or none (default mild)\n"
   "  --group-draws N      model-group bootstrap draws for the intervals of the paired differences U-S, U-delta,\n"
   "                       U-ret, U-A3 (report/screen_intervals.tsv; default 0 = none; the paper uses 2000)\n"
   "  --class-draws M      class bootstrap draws for the same differences (class-weighted AUROC and coverage, one\n"
   "                       draw per source shared by its cells; default 0 = none; the paper uses 200)\n"
   PB_CLI_PROTOCOL_HELP,
   pb_cli__screen},
  {"world", pb_world_synopsis, pb_world_help, pb_cli__world},
  {"exact", pb_exact_synopsis, pb_exact_help, pb_cli__exact},
  {"run", "pairbound run [CONFIG] [--store STORE] [-o OUTDIR]",
   "Run the whole pipeline from an INI configuration (docs/run.md; default: the compiled-in inputs/run.ini,\n"
   "which generates the paper-scale synthetic store out/paper.h5 if absent and runs every stage with the\n"
   "seed paper's resampling settings). Each stage writes OUTDIR/STAGE/; OUTDIR/REPORT.md joins their reports\n"
   "and is printed.\n\n"
   "  --store STORE        store to analyse (overrides [run] store)\n"
   "  -o, --output OUTDIR  output directory (overrides [run] output)\n",
   pb_cli__run},
  {NULL, NULL, NULL, NULL}};

static const struct pb_cli_command *pb_cli__commands(void) { return pb_cli__table; }

static void pb_cli__main_help(void)
{
  printf("usage: pairbound [-v LEVEL] [--threads N] COMMAND [options]\n\n"
         "Reliability evidence from stored classifier prediction records (MPI + OpenMP).\n\n"
         "Commands:\n");
  for (const struct pb_cli_command *c = pb_cli__table; c->name; c++) printf("  %s\n", c->synopsis);
  printf("\nGlobal options:\n"
         "  -v, --verbose LEVEL  0 quiet, 1 rank-0 messages (default), 2 messages from every rank\n"
         "  --threads N          OpenMP threads per rank (default: OMP_NUM_THREADS or all cores)\n"
         "  -h, --help           this help; `pairbound COMMAND --help` documents each command\n"
         "  --version            print the version and build\n");
}

static char *pb_cli__provenance(int argc, char **argv)
{
  size_t n = strlen(pb_build_info()) + 32;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *p = pb_malloc(n);
  snprintf(p, n, "%s\ncommand:", pb_build_info());
  for (int i = 0; i < argc; i++) {
    strcat(p, " ");
    strcat(p, argv[i]);
  }
  return p;
}

int pb_cli_main(int argc, char **argv)
{
  struct pb_cli cli = {.cmd = "", .rank = 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &cli.rank);
  pb_log_init(cli.rank, 1);
  pb_error_install_gsl_handler();
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      if (cli.rank == 0) pb_cli__main_help();
      return PB_EXIT_OK;
    } else if (!strcmp(argv[i], "--version")) {
      if (cli.rank == 0) printf("%s\n", pb_build_info());
      return PB_EXIT_OK;
    } else if ((!strcmp(argv[i], "-v") || !strcmp(argv[i], "--verbose")) && i + 1 < argc) {
      double v;
      if (pb_cli__parse_double(argv[++i], 0, 2, &v)) goto usage;
      pb_log_init(cli.rank, (int)v);
    } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      double v;
      if (pb_cli__parse_double(argv[++i], 1, 4096, &v)) goto usage;
      omp_set_num_threads((int)v);
    } else {
      goto usage;
    }
  }
  if (i == argc) goto usage;
  for (const struct pb_cli_command *c = pb_cli__table; c->name; c++)
    if (strcmp(c->name, argv[i]) == 0) {
      cli.cmd = c->name;
      cli.provenance = pb_cli__provenance(argc, argv);
      optind = 1;
      int rc = c->run(&cli, argc - i, argv + i);
      free(cli.provenance);
      return rc;
    }
usage:
  if (cli.rank == 0) {
    if (i < argc) fprintf(stderr, "pairbound: unknown command or option '%s'\n", argv[i]);
    else fprintf(stderr, "pairbound: missing command\n");
    fprintf(stderr, "usage: pairbound [-v LEVEL] [--threads N] COMMAND [options]  (pairbound --help lists commands)\n");
  }
  return PB_EXIT_USAGE;
}
