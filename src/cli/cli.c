/* Subcommand parsing and dispatch.  Every rank parses the same arguments;
 * rank 0 alone prints usage, errors and reports.  Options come from the
 * tables of include/pairbound/options.h: the command's own (output, synth's
 * scale, ...), its stage's and the protocol's; the parser, the synopsis and
 * the --help text are all generated from them. */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/checkpoint.h"
#include "pairbound/checksum.h"
#include "pairbound/clones.h"
#include "pairbound/comm.h"
#include "pairbound/env.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/ingest.h"
#include "pairbound/options.h"
#include "pairbound/output.h"
#include "pairbound/protocol.h"
#include "pairbound/registry.h"
#include "pairbound/results.h"
#include "pairbound/run.h"
#include "pairbound/signals.h"
#include "pairbound/stage.h"
#include "pairbound/store.h"
#include "pairbound/summary.h"
#include "pairbound/synth.h"
#include "pairbound/synth_config.h"
#include "pairbound/verify.h"
#include "pairbound/world.h"
#include "pairbound/world_stage.h"
#include "cli.h"

#define PB_EXIT_OK 0
#define PB_EXIT_FAIL 1
#define PB_EXIT_USAGE 2

struct pb_cli {
  const char *cmd;         /* subcommand name */
  int rank;
  char *provenance;        /* build info + command line */
};

/* Everything one command line sets: the command's own options, the
 * protocol's and its stage's. */
struct pb_cli_args {
  char *output, *store, *config;
  const char *operand;     /* STORE, CSV or CONFIG */
  char **more;             /* the operands after it (exact score CASES PREDICTIONS) */
  int n_more;
  int full, scale, summary, have_seed, force, resume;
  int32_t model_factor, image_factor; /* synth --scale-factor (0 = not given) */
  uint64_t seed;
  int64_t max_lines;       /* check */
  struct pb_ingest_options ingest;
  struct pb_protocol_options protocol;
  struct pb_world_options world;
  int n_roles;             /* roles --set SRC=ROLE, as given */
  char **roles;
  void *stage;             /* a stage's options (its descriptor's options_size), or NULL */
};

struct pb_cli_command {
  const char *name;
  const char *operand;             /* "STORE", "CSV...", "[CONFIG]" or NULL; "...": one or more; several words ("score CASES
                                      PREDICTIONS|worlds"): up to that many operands, checked by .run */
  int output_required;             /* -o must be given */
  const struct pb_option *own;     /* the command's own options (into struct pb_cli_args) */
  const struct pb_option *options;  /* the command's own table beyond `own` (into args.world), or NULL */
  int protocol;                    /* takes the protocol options */
  const struct pb_stage_desc *desc; /* a stage of the registry (its options into args.stage), or NULL */
  int (*run)(struct pb_cli *cli, struct pb_cli_args *a);
  const char *help;                /* description, before the options */
};

#define PB_CLI_MAX_COMMANDS 40
static struct pb_cli_command pb_cli__table[PB_CLI_MAX_COMMANDS];
static int pb_cli__run(struct pb_cli *cli, struct pb_cli_args *a);

/* The message, then the synopsis on one line: the whole one when it fits,
 * else its first line shortened to "... [options]" and a pointer to --help. */
static int pb_cli__usage_error(struct pb_cli *cli, const char *synopsis, const char *fmt, const char *arg)
{
  if (cli->rank == 0) {
    fprintf(stderr, "pairbound %s: ", cli->cmd);
    fprintf(stderr, fmt, arg);
    const char *nl = strchr(synopsis, '\n'), *opt = strstr(synopsis, " [");
    if (!nl) fprintf(stderr, "\nusage: %s\n", synopsis);
    else
      fprintf(stderr, "\nusage: %.*s [options]  (pairbound %s --help)\n",
              (int)(opt && opt < nl ? opt - synopsis : nl - synopsis), synopsis, cli->cmd);
  }
  return PB_EXIT_USAGE;
}

static int pb_cli__fail(struct pb_cli *cli)
{
  if (cli->rank == 0) fprintf(stderr, "pairbound %s: error: %s\n", cli->cmd, pb_error_message());
  /* stopped at a block boundary by SIGTERM/SIGINT: the shell's 128 + signal */
  return pb_signal_stopped() ? pb_signal_exit_status(pb_signal_stopped()) : PB_EXIT_FAIL;
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
  char msg[PB_ERROR_MAX];
  snprintf(msg, sizeof msg, "%s", pb_error_message());
  MPI_Bcast(msg, sizeof msg, MPI_CHAR, who, MPI_COMM_WORLD);
  pb_error_set("%s", msg);
  return pb_cli__fail(cli);
}

static double pb_cli__now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* ------------------------------------------------------- own options */

static int pb_cli__opt_classes(void *opts, const char *label, const char *v)
{
  (void)label;
  return pb_ingest_add_classes(&((struct pb_cli_args *)opts)->ingest, v);
}

static int pb_cli__opt_role(void *opts, const char *label, const char *v)
{
  return pb_ingest_add_role(&((struct pb_cli_args *)opts)->ingest, label, v);
}

static int pb_cli__opt_set_role(void *opts, const char *label, const char *v)
{
  struct pb_cli_args *a = opts;
  (void)label;
  a->roles = pb_realloc(a->roles, (size_t)(a->n_roles + 1) * sizeof *a->roles);
  a->roles[a->n_roles++] = pb_strdup(v);
  return PB_OK;
}

static int pb_cli__opt_scale_factor(void *opts, const char *label, const char *v)
{
  (void)label;
  struct pb_cli_args *a = opts;
  return pb_synth_config_factor_parse(v, &a->model_factor, &a->image_factor);
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_cli_args, member)
#define PB_CLI_OUTPUT(meta, text) \
  {.name = "output", .short_name = 'o', .type = PB_OPTION_STRING, PB_O(output), .metavar = meta, .help = text}
/* never an input, a link or a special file: docs/store.md, "Outputs" */
#define PB_CLI_FORCE(what) \
  {.name = "force", .type = PB_OPTION_FLAG, PB_O(force), .flag = 1, \
   .help = "replace an existing " what " that is not pairbound's (an input, a link or a special file never is)"}
static const struct pb_option pb_cli__synth_options[] = {
  {.name = "scale", .type = PB_OPTION_CHOICE, PB_O(scale), .metavar = "paper|small", .choices = "paper|small",
   .def = "paper", .help_default = 1,
   .help = "embedded configuration: the seed paper's dimensions (default) or a small test panel"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(seed), .metavar = "N", .mark = PB_OPTION_AT(struct pb_cli_args, have_seed),
   .help = "base seed of the generator (default: the configuration's, 20260908)"},
  {.name = "config", .type = PB_OPTION_STRING, PB_O(config), .metavar = "FILE",
   .help = "use an INI configuration instead of the embedded one"},
  {.name = "scale-factor", .type = PB_OPTION_CUSTOM, .parse = pb_cli__opt_scale_factor, .metavar = "F|MxI",
   .help = "multiply the configuration's models by M and images per class by I (F: both by F), same latent model: "
           "records grow M x I times; 5x2 makes a store 10 times the paper's (docs/synth.md)"},
  {.name = "no-summary", .type = PB_OPTION_FLAG, PB_O(summary), .flag = 0, .def = "1",
   .help = "do not print the summary after writing"},
  PB_CLI_OUTPUT("STORE", "store file to write (written under a unique temporary name, renamed when complete)"),
  PB_CLI_FORCE("file"),
  {.name = NULL}};
static const struct pb_option pb_cli__ingest_options[] = {
  {.name = "classes", .type = PB_OPTION_CUSTOM, .parse = pb_cli__opt_classes, .metavar = "N|SRC=N", .repeatable = 1,
   .help = "number of classes of every source (N; default: 1 + largest label or prediction seen) or of source SRC "
           "(SRC=N); repeatable"},
  {.name = "role", .type = PB_OPTION_CUSTOM, .parse = pb_cli__opt_role,
   .metavar = "SRC=ROLE", .repeatable = 1,
   .help = "what source SRC is for the analyses: synthetic (a corruption or probe suite: screening probes, "
           "prediction features), real (captures: screening and prediction targets), natural[:N] (natural-"
           "transformation probes whose first N perturbed conditions are screen's fixed TTA set) or extra:PSRC "
           "(further selection candidates of synthetic source PSRC); a source without one is inferred real "
           "(docs/store.md, \"Roles\"; `pairbound roles` changes them later); repeatable"},
  {.name = "probe-role", .type = PB_OPTION_CUSTOM, .parse = pb_cli__opt_role, .metavar = "SRC=ROLE",
   .repeatable = 1, .help = "the older name of --role"},
  {.name = "append", .type = PB_OPTION_FLAG, PB_O(ingest.append), .flag = 1,
   .help = "add the files' models to the existing STORE (its sources, conditions and images, every cell "
           "complete), in place under an undo journal, so that a failure or a kill leaves STORE as it was "
           "(docs/store.md, \"Appending\")"},
  PB_CLI_OUTPUT("STORE", "store file to write; nothing is written when the CSV is invalid"),
  PB_CLI_FORCE("file"),
  {.name = NULL}};
static const struct pb_option pb_cli__export_options[] = {PB_CLI_OUTPUT("CSV", "CSV file to write"),
                                                          PB_CLI_FORCE("file"), {.name = NULL}};
static const struct pb_option pb_cli__check_options[] = {
  {.name = "max-lines", .type = PB_OPTION_INT, PB_O(max_lines), .metavar = "N", .def = "100", .imax = 1ull << 40,
   .help = "list at most N damaged rows or records; the count is always complete"},
  {.name = NULL}};
static const struct pb_option pb_cli__roles_options[] = {
  {.name = "set", .type = PB_OPTION_CUSTOM, .parse = pb_cli__opt_set_role, .metavar = "SRC=ROLE", .repeatable = 1,
   .help = "give source SRC the role ROLE: synthetic, real, natural[:N] or extra:PSRC (docs/store.md, \"Roles\"); "
           "repeatable; no record is rewritten"},
  {.name = NULL}};
static const struct pb_option pb_cli__info_options[] = {
  {.name = "full", .type = PB_OPTION_FLAG, PB_O(full), .flag = 1, .help = "also print every threshold, tier and panel cell"},
  {.name = NULL}};
#define PB_CLI_RESUME(text) {.name = "resume", .type = PB_OPTION_FLAG, PB_O(resume), .flag = 1, .help = text}
static const struct pb_option pb_cli__stage_options[] = {PB_CLI_OUTPUT("OUTDIR", "output directory"),
  PB_CLI_RESUME("keep OUTDIR when its checkpoint (from an earlier --resume run) says it is the complete output of "
                "this same command on this store and build; otherwise run and checkpoint it, continuing from the "
                "blocks an interrupted --resume run of screen, policy or verify completed (a damaged output or "
                "block is redone, another store or build refused)"),
                                                         PB_CLI_FORCE("non-empty directory"), {.name = NULL}};
static const struct pb_option pb_cli__world_options[] = {
  PB_CLI_OUTPUT("FILE", "the file to write (temporary name, renamed when complete): sample CASES, render MEMOS, "
                        "decode the attributes read back (optional), prompts PROMPTS"),
  {.name = NULL}};
static const struct pb_option pb_cli__run_options[] = {
  {.name = "store", .type = PB_OPTION_STRING, PB_O(store), .metavar = "STORE", .help = "store to analyse, which must exist (overrides [run] store; [run] synth does not apply)"},
  PB_CLI_OUTPUT("OUTDIR", "output directory (overrides [run] output)"),
  PB_CLI_RESUME("keep every stage whose checkpointed output is intact and was made with the same build, store "
                "checksum and settings; recompute the others, continuing an interrupted stage from its completed "
                "blocks; refuse, naming what differs, when a completed stage was made for something else "
                "(docs/run.md)"),
  {.name = NULL}};
#undef PB_CLI_OUTPUT
#undef PB_CLI_FORCE
#undef PB_CLI_RESUME
#undef PB_O

/* ---------------------------------------------------- parsing and help */

/* The tables a command reads, with the struct each one fills. */
struct pb_cli_tables {
  int n;
  const struct pb_option *table[3];
  void *opts[3];
};

static void pb_cli__tables(const struct pb_cli_command *c, struct pb_cli_args *a, struct pb_cli_tables *t)
{
  t->n = 0;
  t->table[t->n] = c->own, t->opts[t->n++] = a;
  if (c->options) t->table[t->n] = c->options, t->opts[t->n++] = &a->world;
  if (c->desc && c->desc->options.table) t->table[t->n] = c->desc->options.table, t->opts[t->n++] = a->stage;
  if (c->protocol) t->table[t->n] = pb_protocol_option_table, t->opts[t->n++] = &a->protocol;
}

/* The required "-o OUTPUT" as the synopsis writes it. */
static const struct pb_option *pb_cli__output(const struct pb_cli_command *c)
{
  for (const struct pb_option *o = c->own; o->name; o++)
    if (o->short_name) return o;
  return NULL;
}

/* "pairbound bounds STORE -o OUTDIR [--tau X] ... [protocol options]" */
static void pb_cli__synopsis(const struct pb_cli_command *c, char *buf, size_t cap)
{
  snprintf(buf, cap, "pairbound %s%s%s", c->name, c->operand ? " " : "", c->operand ? c->operand : "");
  const struct pb_option *o = pb_cli__output(c);
  if (o)
    snprintf(buf + strlen(buf), cap - strlen(buf), c->output_required ? " -%c %s" : " [-%c %s]", o->short_name,
             o->metavar);
  pb_options_synopsis(buf, cap, c->own);
  if (c->options) pb_options_synopsis(buf, cap, c->options);
  if (c->desc && c->desc->options.table) pb_options_synopsis(buf, cap, c->desc->options.table);
  if (c->protocol) snprintf(buf + strlen(buf), cap - strlen(buf), " [protocol options]");
}

static void pb_cli__help(const struct pb_cli_command *c)
{
  char syn[2048];
  pb_cli__synopsis(c, syn, sizeof syn);
  printf("usage: %s\n\n%s\n", syn, c->help);
  pb_options_help(stdout, c->own);
  if (c->options) pb_options_help(stdout, c->options);
  if (c->desc && c->desc->options.table) pb_options_help(stdout, c->desc->options.table);
  if (c->protocol) {
    printf("\nProtocol options (docs/protocol.md):\n");
    pb_options_help(stdout, pb_protocol_option_table);
  }
  if (c->run == pb_cli__run) pb_run_config_help(stdout);
}

/* getopt_long's table for a command's option tables: val = 1000 + 256 table + row. */
static struct option *pb_cli__longopts(const struct pb_cli_tables *t, char *shortopts)
{
  size_t n = 1, k = 0;
  for (int i = 0; i < t->n; i++)
    for (const struct pb_option *o = t->table[i]; o->name; o++) n++;
  struct option *lo = pb_calloc(n + 1, sizeof *lo);
  strcpy(shortopts, "h");
  for (int i = 0; i < t->n; i++)
    for (const struct pb_option *o = t->table[i]; o->name; o++) {
      int has_arg = o->type == PB_OPTION_FLAG ? no_argument : required_argument;
      lo[k++] = (struct option){o->name, has_arg, NULL, 1000 + 256 * i + (int)(o - t->table[i])};
      if (o->short_name) snprintf(shortopts + strlen(shortopts), 4, "%c:", o->short_name);
    }
  lo[k] = (struct option){"help", no_argument, NULL, 'h'};
  return lo;
}

/* Report getopt_long's '?' as a usage error: an unknown option or a missing value. */
static int pb_cli__bad_option(struct pb_cli *cli, char **argv, const char *shortopts, const struct option *lo,
                              const char *syn)
{
  static char s[3] = "-";
  const char *bad = argv[optind - 1];
  int is_short = optopt > 0 && optopt < 256 && strncmp(bad, "--", 2) != 0;
  if (is_short) {
    s[1] = (char)optopt;
    bad = s;
  }
  char word[256];
  snprintf(word, sizeof word, "%s", bad);
  char *eq = strchr(word, '=');
  if (eq && strncmp(word, "--", 2) == 0) *eq = '\0';
  int missing = is_short && strchr(shortopts, optopt) != NULL, extra = 0;
  for (const struct option *o = lo; !missing && !extra && o->name; o++)
    if (strncmp(word, "--", 2) == 0 && strcmp(word + 2, o->name) == 0) {
      missing = o->has_arg == required_argument;
      extra = o->has_arg == no_argument;
    }
  return pb_cli__usage_error(cli, syn,
                             missing ? "option '%s' needs a value"
                             : extra ? "option '%s' takes no value"
                                     : "unknown option '%s'",
                             word);
}

/* Row of getopt_long's answer @p opt, and the index of its table. */
static const struct pb_option *pb_cli__find(const struct pb_cli_tables *t, int opt, int *i)
{
  if (opt >= 1000) {
    *i = (opt - 1000) / 256;
    return &t->table[*i][(opt - 1000) % 256];
  }
  for (*i = 0; *i < t->n; (*i)++)
    for (const struct pb_option *r = t->table[*i]; r->name; r++)
      if (r->short_name == opt) return r;
  return NULL; /* getopt_long only returns what the tables declare */
}

/* Parse a command line into @p a; PB_EXIT_OK, PB_EXIT_USAGE, or -1 after --help. */
static int pb_cli__parse(struct pb_cli *cli, const struct pb_cli_command *c, int argc, char **argv,
                         struct pb_cli_args *a, const char *syn)
{
  struct pb_cli_tables t;
  pb_cli__tables(c, a, &t);
  char shortopts[32];
  struct option *lo = pb_cli__longopts(&t, shortopts);
  int opt, rc = PB_EXIT_OK;
  opterr = 0;
  while (rc == PB_EXIT_OK && (opt = getopt_long(argc, argv, shortopts, lo, NULL)) != -1) {
    if (opt == 'h') {
      rc = -1;
      break;
    }
    if (opt == '?') {
      rc = pb_cli__bad_option(cli, argv, shortopts, lo, syn);
      break;
    }
    int i;
    const struct pb_option *o = pb_cli__find(&t, opt, &i);
    char label[80];
    snprintf(label, sizeof label, "--%s", o->name);
    if (pb_options_set(o, t.opts[i], label, o->type == PB_OPTION_FLAG ? NULL : optarg) != PB_OK)
      rc = pb_cli__usage_error(cli, syn, "%s", pb_error_message());
  }
  free(lo);
  if (rc != PB_EXIT_OK) return rc;
  int optional = c->operand && c->operand[0] == '[', more = 0;
  for (const char *w = c->operand; w && (w = strchr(w, ' ')); w++) more++;
  if (!c->operand && optind < argc) return pb_cli__usage_error(cli, syn, "unexpected argument '%s'", argv[optind]);
  /* "CSV...": one or more */
  if (c->operand && strstr(c->operand, "...")) more = argc;
  if (c->operand && optind + 1 + more < argc)
    return pb_cli__usage_error(cli, syn, optional || more ? "unexpected argument '%s'" : "takes exactly one %s",
                               optional || more ? argv[optind + 1 + more] : c->operand);
  if (c->operand && !optional && optind == argc) return pb_cli__usage_error(cli, syn, "missing %s", c->operand);
  a->operand = optind < argc ? argv[optind] : NULL;
  a->more = argv + optind + (optind < argc);
  a->n_more = optind < argc ? argc - optind - 1 : 0;
  if (c->output_required && !a->output) {
    char what[64];
    snprintf(what, sizeof what, "-%c %s", pb_cli__output(c)->short_name, pb_cli__output(c)->metavar);
    return pb_cli__usage_error(cli, syn, "missing %s", what);
  }
  if (a->output && pb_output_name_ok(a->output) != PB_OK) return pb_cli__usage_error(cli, syn, "%s", pb_error_message());
  return PB_EXIT_OK;
}

/* Defaults, parse, run, release: every command goes through here. */
static int pb_cli__command(struct pb_cli *cli, const struct pb_cli_command *c, int argc, char **argv)
{
  struct pb_cli_args a;
  memset(&a, 0, sizeof a);
  pb_options_defaults(c->own, &a);
  pb_protocol_options_default(&a.protocol);
  if (c->options) pb_options_defaults(c->options, &a.world);
  if (c->desc) a.stage = pb_registry_options_new(c->desc);
  char syn[2048];
  pb_cli__synopsis(c, syn, sizeof syn);
  int rc = pb_cli__parse(cli, c, argc, argv, &a, syn);
  pb_output_set_force(a.force);
  if (rc == -1) {
    if (cli->rank == 0) pb_cli__help(c);
    rc = PB_EXIT_OK;
  } else if (rc == PB_EXIT_OK) {
    rc = c->run(cli, &a);
  }
  pb_options_free(c->own, &a);
  pb_ingest_options_free(&a.ingest);
  pb_protocol_options_free(&a.protocol);
  if (c->desc) pb_registry_options_free(c->desc, a.stage);
  return rc;
}

/* ------------------------------------------------------------ commands */

/* Open STORE, compute the protocol and print the summary on rank 0. */
static int pb_cli__summary(struct pb_cli *cli, const char *path, const struct pb_protocol_options *popt, int full)
{
  struct pb_store *st;
  struct pb_protocol proto;
  int status = pb_store_open(path, MPI_COMM_WORLD, &st);
  if (status == PB_OK) {
    status = pb_protocol_compute(st, MPI_COMM_WORLD, popt, &proto);
    if (status == PB_OK && cli->rank == 0) pb_summary_print(stdout, pb_store_meta(st), &proto, full);
    if (status == PB_OK) pb_protocol_free(&proto);
    pb_store_close(st);
  }
  return pb_cli__status(cli, status);
}

/* --scale-factor on top of the configuration's own; the provenance (the
 * configuration text) records it. */
static int pb_cli__synth_scale(struct pb_synth_config *cfg, const struct pb_cli_args *a)
{
  if (pb_synth_config_scale(cfg, a->model_factor, a->image_factor) != PB_OK) return PB_FAIL;
  size_t n = strlen(cfg->text) + 96;
  char *text = pb_malloc(n);
  snprintf(text, n, "%s\n; --scale-factor %dx%d (models x %d, images per class x %d in all)\n", cfg->text,
           a->model_factor, a->image_factor, cfg->model_factor, cfg->image_factor);
  free(cfg->text);
  cfg->text = text;
  return PB_OK;
}

/* A stage's output is staged inside OUTDIR until its commit (results.h): a
 * signal stops a block loop at its next boundary (pairbound/blocks.h), anything
 * else at once, removing the staging directory, so OUTDIR is as it was; a
 * store or CSV being written goes with its lock file (pb_signal_cleanup_file). */
static void pb_cli__signals(const struct pb_cli *cli, const char *outdir, const char *resume_hint)
{
  char hint[PATH_MAX + 1024];
  snprintf(hint, sizeof hint, "pairbound %s: stopped by a signal; %s is as it was before this run; %s", cli->cmd,
           outdir ? outdir : "OUTDIR", resume_hint ? resume_hint : "to compute it, repeat the same command");
  pb_signal_install(hint, 0, MPI_COMM_WORLD);
}

static int pb_cli__synth(struct pb_cli *cli, struct pb_cli_args *a)
{
  struct pb_synth_config cfg;
  int small = a->scale == 1;
  int status = a->config ? pb_synth_config_load(a->config, &cfg)
                         : pb_synth_config_parse(small ? pb_embedded_small_ini : pb_embedded_paper_ini,
                                                 small ? "inputs/small.ini" : "inputs/paper.ini", &cfg);
  if (status != PB_OK) return pb_cli__fail(cli);
  if (a->have_seed) cfg.seed = a->seed;
  if (a->model_factor && pb_cli__synth_scale(&cfg, a) != PB_OK) {
    pb_synth_config_free(&cfg);
    return pb_cli__fail(cli);
  }
  double t0 = pb_cli__now();
  /* the store must never replace the configuration it is made from */
  status = cli->rank == 0 && a->config ? pb_output_file_ok(a->output, PB_OUTPUT_STORE, (const char *const *)&a->config,
                                                          1, pb_output_force())
                                       : PB_OK;
  pb_cli__signals(cli, a->output, "to write it, repeat the same command");
  if (pb_error_agree(MPI_COMM_WORLD, status) == PB_OK) status = pb_synth_store(&cfg, a->output, MPI_COMM_WORLD);
  pb_synth_config_free(&cfg);
  int rc = pb_cli__status(cli, status);
  if (rc != PB_EXIT_OK) return rc;
  pb_message("synth: wrote %s in %.2f s", a->output, pb_cli__now() - t0);
  return a->summary ? pb_cli__summary(cli, a->output, &a->protocol, 0) : PB_EXIT_OK;
}

static int pb_cli__ingest(struct pb_cli *cli, struct pb_cli_args *a)
{
  a->ingest.provenance = cli->provenance;
  pb_env_int(PB_ENV_INGEST_WINDOW_BYTES, 1, INT64_MAX, &a->ingest.window_bytes); /* unset: the default */
  pb_cli__signals(cli, a->output, "to write it, repeat the same command");
  /* both passes shared by the ranks; rank 0 alone where it must be (docs/csv.md, "Ranks") */
  const char **paths = pb_malloc((size_t)(a->n_more + 1) * sizeof *paths);
  paths[0] = a->operand;
  for (int k = 0; k < a->n_more; k++) paths[k + 1] = a->more[k];
  const int status = pb_ingest_files_comm(a->n_more + 1, paths, &a->ingest, a->output, MPI_COMM_WORLD);
  free(paths);
  return pb_cli__status(cli, status);
}

static int pb_cli__export(struct pb_cli *cli, struct pb_cli_args *a)
{
  pb_cli__signals(cli, a->output, "to write it, repeat the same command");
  /* every rank formats and writes blocks of records in turn */
  int status = pb_export_csv(a->operand, a->output, MPI_COMM_WORLD);
  return pb_cli__status(cli, status);
}

static int pb_cli__check(struct pb_cli *cli, struct pb_cli_args *a)
{
  int64_t bad = 0;
  int status = pb_store_check(a->operand, MPI_COMM_WORLD, a->max_lines, stdout, &bad);
  if (status == PB_OK && bad > 0) {
    pb_error_set("%s: %lld damaged metadata objects, rows or records", a->operand, (long long)bad);
    status = PB_FAIL;
  }
  return pb_cli__status(cli, status);
}

static int pb_cli__info(struct pb_cli *cli, struct pb_cli_args *a)
{
  return pb_cli__summary(cli, a->operand, &a->protocol, a->full);
}

/* `roles STORE [--set SRC=ROLE]...`: change them on rank 0 (under the store's lock), then print them. */
static int pb_cli__roles(struct pb_cli *cli, struct pb_cli_args *a)
{
  pb_cli__signals(cli, a->operand, "to set its roles, repeat the same command");
  int status = cli->rank == 0 && a->n_roles ? pb_store_roles_set(a->operand, a->n_roles, a->roles) : PB_OK;
  if (pb_error_agree(MPI_COMM_WORLD, status) == PB_OK) {
    struct pb_store *st;
    status = pb_store_open(a->operand, MPI_COMM_WORLD, &st);
    if (status == PB_OK && cli->rank == 0) pb_store_roles_print(stdout, pb_store_meta(st));
    if (status == PB_OK) pb_store_close(st);
  }
  for (int i = 0; i < a->n_roles; i++) free(a->roles[i]);
  free(a->roles);
  return pb_cli__status(cli, status);
}

/* The checkpoint settings of a single-stage command: its arguments as
 * provenance records them, without the program path, --resume and the
 * global -v/--threads (which change no output); resuming needs the same
 * command otherwise. */
static char *pb_cli__resume_settings(const struct pb_cli *cli)
{
  const char *c = strstr(cli->provenance, "\ncommand:");
  struct pb_text t = {0};
  pb_text_printf(&t, "command =");
  int word = 0, skip = 0;
  for (const char *w = c ? c + 9 : ""; *w;) {
    size_t n = strcspn(w, " \n");
    if (n) {
      int global = (n == 2 && !strncmp(w, "-v", 2)) || (n == 9 && !strncmp(w, "--threads", 9));
      int inline_global = (n > 2 && !strncmp(w, "-v", 2) && w[2] != '-') || !strncmp(w, "--threads=", 10) ||
                          !strncmp(w, "--verbose", 9);
      if (word++ > 0 && !skip && !global && !inline_global && !(n == 8 && !strncmp(w, "--resume", 8)))
        pb_text_printf(&t, " %.*s", (int)n, w);
      skip = global;
    }
    w += n + (w[n] != '\0');
  }
  pb_text_printf(&t, "\n");
  return t.buf;
}

/* What a stage command runs on (pairbound/registry.h). */
static struct pb_stage_call pb_cli__call(const struct pb_cli *cli, const struct pb_cli_args *a,
                                         const struct pb_stage_desc *d)
{
  return (struct pb_stage_call){a->operand, a->output, MPI_COMM_WORLD, &a->protocol, cli->provenance, NULL, d};
}

/* With --resume: 1 when OUTDIR holds this command's complete output (skip),
 * 0 to run, PB_FAIL when refused; @p key is filled for the commit.  A stage
 * that reads no store is keyed by "none" in its place. */
static int pb_cli__resumable(struct pb_cli *cli, const struct pb_stage_desc *d, struct pb_cli_args *a,
                             struct pb_checkpoint_key *key, char digest[65])
{
  int status = PB_OK;
  if (d->store.reads) status = cli->rank == 0 ? pb_checksum_xxh128_file(a->operand, digest) : PB_OK;
  else snprintf(digest, 65, "none");
  MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (status != PB_OK) return PB_FAIL;
  *key = (struct pb_checkpoint_key){cli->cmd, pb_results_build_info(), digest, pb_cli__resume_settings(cli)};
  int done = pb_checkpoint_resumable(a->output, key, MPI_COMM_WORLD);
  if (done == 1) pb_message("%s: %s is complete (checkpoint matches): not recomputed", cli->cmd, a->output);
  return done;
}

/* Every stage of the registry: its own command-line forms first (fragility
 * --law, exact score), else run it on STORE into OUTDIR and say how long it
 * took; with --resume keep a matching checkpointed OUTDIR, else run and
 * checkpoint it (without --resume nothing is hashed: no cost on plain runs). */
static int pb_cli__stage(struct pb_cli *cli, struct pb_cli_args *a)
{
  const struct pb_cli_command *c = pb_cli__table;
  while (strcmp(c->name, cli->cmd)) c++;
  const struct pb_stage_desc *d = c->desc;
  double t0 = pb_cli__now();
  const char *out = a->output;
  const struct pb_stage_call call = pb_cli__call(cli, a, d);
  char *hint = pb_blocks_resume_hint(cli->provenance);
  pb_cli__signals(cli, out, hint);
  if (d->command) {
    const struct pb_stage_args args = {a->operand, a->more, a->n_more, a->output};
    int r = d->command(&call, &args, a->stage);
    if (r == PB_STAGE_USAGE) {
      char syn[2048];
      pb_cli__synopsis(c, syn, sizeof syn);
      free(hint);
      return pb_cli__usage_error(cli, syn, "%s", pb_error_message());
    }
    if (r != PB_STAGE_RUN) {
      free(hint);
      return pb_cli__status(cli, r);
    }
  }
  MPI_Comm comm = MPI_COMM_WORLD;
  struct pb_checkpoint_key key = {NULL, NULL, NULL, NULL};
  char digest[65] = "";
  int status = PB_OK, done = a->resume ? pb_cli__resumable(cli, d, a, &key, digest) : 0;
  if (done != 0) {
    /* blocks a kill left between the commit and their removal */
    if (done == 1 && cli->rank == 0) pb_blocks_remove(out);
    free((char *)key.settings);
    free(hint);
    return pb_cli__status(cli, done == 1 ? PB_OK : PB_FAIL);
  }
  /* with --resume the long loops keep completed blocks (pairbound/blocks.h) */
  pb_blocks_context(a->resume ? &key : NULL, a->resume, hint);
  free(hint);
  status = d->run(&call, a->stage);
  if (a->resume) {
    pb_comm_allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MIN, comm);
    if (status == PB_OK) status = pb_checkpoint_commit_all(out, &key, comm);
    if (status == PB_OK && cli->rank == 0) pb_blocks_remove(out);
    free((char *)key.settings);
  }
  pb_blocks_context(NULL, 0, NULL);
  int rc = pb_cli__status(cli, status);
  if (rc == PB_EXIT_OK) pb_message("%s: wrote %s in %.2f s", cli->cmd, out, pb_cli__now() - t0);
  return rc;
}

static int pb_cli__run(struct pb_cli *cli, struct pb_cli_args *a)
{
  struct pb_run_config cfg;
  int status = a->operand ? pb_run_config_load(a->operand, &cfg)
                          : pb_run_config_parse(pb_embedded_run_ini, "inputs/run.ini", &cfg);
  if (status != PB_OK) return pb_cli__fail(cli);
  if (a->output) {
    free(cfg.output);
    cfg.output = pb_strdup(a->output);
  }
  if (a->store) { /* the user's store must exist: synth generates only the configuration's own */
    free(cfg.store);
    cfg.store = pb_strdup(a->store);
    free(cfg.synth);
    cfg.synth = NULL;
  }
  cfg.resume = a->resume;
  /* the run ends with its summary on stdout (total time included) */
  int rc = pb_cli__status(cli, pb_run_pipeline(&cfg, MPI_COMM_WORLD, cli->provenance));
  pb_run_config_free(&cfg);
  return rc;
}

/* `world info` prints, `world sample` writes CASES, `world render` MEMOS, `world decode` checks MEMOS (and writes
 * what it read back), `world prompts` the prompt set (docs/exact.md). */
static int pb_cli__world(struct pb_cli *cli, struct pb_cli_args *a)
{
  static const char *const verbs[] = {"info", "sample", "render", "decode", "prompts"};
  static const int takes_file[] = {0, 0, 1, 1, 1}, needs_output[] = {0, 1, 1, 0, 1};
  const struct pb_cli_command *c = pb_cli__table;
  while (strcmp(c->name, cli->cmd)) c++;
  char syn[2048];
  pb_cli__synopsis(c, syn, sizeof syn);
  int v = 0;
  while (v < 5 && strcmp(a->operand, verbs[v])) v++;
  if (v == 5) return pb_cli__usage_error(cli, syn, "expected info, sample, render, decode or prompts, got '%s'", a->operand);
  if (a->n_more != takes_file[v])
    return pb_cli__usage_error(cli, syn, takes_file[v] ? "%s takes one file" : "%s takes no file", verbs[v]);
  if (needs_output[v] && !a->output) return pb_cli__usage_error(cli, syn, "%s needs -o", verbs[v]);
  if (v == 1 && (a->world.world == 3 || a->world.level == 3))
    return pb_cli__usage_error(cli, syn, "%s", "sample needs one --world and one --level");
  return pb_cli__status(cli, pb_world_run(verbs[v], takes_file[v] ? a->more[0] : NULL, a->output, &a->world,
                                          MPI_COMM_WORLD));
}

/* ------------------------------------------------------------------ table */

/* Commands that are not stages: before the stages (records in and out, a
 * store's integrity and summary) and after them (worlds, the pipeline). */
static const struct pb_cli_command pb_cli__before[] = {
  {"synth", NULL, 1, pb_cli__synth_options, NULL, 0, NULL, pb_cli__synth,
   "Generate a deterministic synthetic panel (docs/synth.md) and print its summary.\n"},
  {"ingest", "CSV...", 1, pb_cli__ingest_options, NULL, 0, NULL, pb_cli__ingest,
   "Validate CSV files of prediction records (docs/csv.md; - reads stdin) and write a store: the files are one\n"
   "CSV whose rows are theirs in the order given, each with its own header (one file per model, say); errors\n"
   "name the file and line, the first in file order. Memory is bounded whatever the number of rows.\n"},
  {"export", "STORE", 1, pb_cli__export_options, NULL, 0, NULL, pb_cli__export,
   "Write every record of a store as CSV in canonical order (docs/csv.md).\n"},
  {"check", "STORE", 0, pb_cli__check_options, NULL, 0, NULL, pb_cli__check,
   "Read every record of a store, verify its per-chunk Fletcher32 checksums and the record rules of\n"
   "docs/store.md (classes in range, probabilities in [0, 1], M <= S, M = S when correct, top-k order)\n"
   "and name every damaged row or record; exit status 1 when anything is damaged.\n"},
  {"info", "STORE", 0, pb_cli__info_options, NULL, 1, NULL, pb_cli__info,
   "Print `name value` lines describing a store and its protocol (docs/protocol.md).\n"},
  {"roles", "STORE", 0, pb_cli__roles_options, NULL, 0, NULL, pb_cli__roles,
   "Print what each source of a store is for the analyses, `SRC ROLE (declared|inferred: not declared)`, after\n"
   "giving the roles of --set (docs/store.md, \"Roles\"): synthetic (a corruption or probe suite: screening\n"
   "probes, prediction features), real (captures: screening and prediction targets), natural[:N] or\n"
   "extra:PSRC (probe sources without cells). Every stage takes its defaults from the roles.\n"},
  {NULL, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL}};
static const struct pb_cli_command pb_cli__after[] = {
  {"world", "info|sample|render CASES|decode MEMOS|prompts CASES", 0, pb_cli__world_options, pb_world_option_table,
   0, NULL, pb_cli__world, PB_WORLD_HELP},
  {"run", "[CONFIG]", 0, pb_cli__run_options, NULL, 0, NULL, pb_cli__run,
   "Run the whole pipeline from an INI configuration (docs/run.md; default: the compiled-in inputs/run.ini,\n"
   "which generates the paper-scale synthetic store out/paper.h5 if absent and runs every stage with the\n"
   "seed paper's resampling settings). Each stage writes OUTDIR/STAGE/ and a checkpoint; OUTDIR/REPORT.md\n"
   "opens with the findings and holds every stage's report and figures; a one-screen summary is printed.\n"
   "A stage the store's roles cannot serve is skipped with its reason. A [STAGE] section of CONFIG sets\n"
   "that stage's options: the options of `pairbound STAGE --help` spelt with '_' for '-', listed below.\n"},
  {NULL, NULL, 0, NULL, NULL, 0, NULL, NULL, NULL}};

/* Every command: the ones above around one per stage of the registry
 * (pairbound/registry.h), which takes -o OUTDIR, --resume and --force, its
 * stage's table and (when it reads a store) the protocol options. */
static struct pb_cli_command pb_cli__table[PB_CLI_MAX_COMMANDS];

static void pb_cli__table_init(void)
{
  int n = 0;
  for (const struct pb_cli_command *c = pb_cli__before; c->name; c++) pb_cli__table[n++] = *c;
  for (int i = 0; pb_registry_stages[i]; i++) {
    const struct pb_stage_desc *d = pb_registry_stages[i];
    pb_cli__table[n++] = (struct pb_cli_command){d->name, d->operand ? d->operand : "STORE", !d->output_optional,
                                                 pb_cli__stage_options, NULL, d->store.reads, d, pb_cli__stage, d->help};
  }
  for (const struct pb_cli_command *c = pb_cli__after; c->name; c++) pb_cli__table[n++] = *c;
  pb_cli__table[n].name = NULL;
}

static void pb_cli__main_help(void)
{
  printf("usage: pairbound [-v LEVEL] [--threads N] COMMAND [options]\n\n"
         "Reliability evidence from stored classifier prediction records (MPI + OpenMP).\n\n"
         "Commands:\n");
  for (const struct pb_cli_command *c = pb_cli__table; c->name; c++) {
    char syn[2048];
    pb_cli__synopsis(c, syn, sizeof syn);
    printf("  %s\n", syn);
  }
  printf("\nGlobal options:\n"
         "  -v, --verbose LEVEL  0 quiet, 1 rank-0 messages (default), 2 messages from every rank\n"
         "  --threads N          OpenMP threads per rank (default: OMP_NUM_THREADS or all cores)\n"
         "  -h, --help           this help; `pairbound COMMAND --help` documents each command\n"
         "  --version            print the version, the build and the kernels' vector level\n");
}

static char *pb_cli__provenance(int argc, char **argv)
{
  size_t n = strlen(pb_results_build_info()) + 32;
  for (int i = 0; i < argc; i++) n += strlen(argv[i]) + 1;
  char *p = pb_malloc(n);
  snprintf(p, n, "%s\ncommand:", pb_results_build_info());
  for (int i = 0; i < argc; i++) {
    strcat(p, " ");
    strcat(p, argv[i]);
  }
  return p;
}

/* A global option with a value: "-v 1", "--verbose 1", "--verbose=1".  On a
 * match *val points at the value and *i at its argument. */
static int pb_cli__global_value(int argc, char **argv, int *i, const char *shortname, const char *longname,
                                const char **val)
{
  const char *a = argv[*i];
  const size_t n = strlen(longname);
  if (strncmp(a, longname, n) == 0 && a[n] == '=') {
    *val = a + n + 1;
    return 1;
  }
  if ((strcmp(a, longname) == 0 || (shortname && strcmp(a, shortname) == 0)) && *i + 1 < argc) {
    *val = argv[++*i];
    return 1;
  }
  return 0;
}

/* The value of a global option, or a message saying what it takes. */
static int pb_cli__global_int(int rank, const char *what, const char *val, int64_t lo, int64_t hi, int64_t *v)
{
  if (pb_parse_int(val, lo, hi, v) == 0) return 0;
  if (rank == 0) {
    fprintf(stderr, "pairbound: %s must be an integer from %lld to %lld, not '%s'\n", what, (long long)lo,
            (long long)hi, val);
    fprintf(stderr, "usage: pairbound [-v LEVEL] [--threads N] COMMAND [options]  (pairbound --help lists commands)\n");
  }
  return 1;
}

int pb_cli_main(int argc, char **argv)
{
  struct pb_cli cli = {.cmd = "", .rank = 0};
  MPI_Comm_rank(MPI_COMM_WORLD, &cli.rank);
  pb_log_init(cli.rank, 1);
  pb_error_install_gsl_handler();
  pb_cli__table_init();
  int i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    int64_t v;
    const char *val;
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      if (cli.rank == 0) pb_cli__main_help();
      return PB_EXIT_OK;
    } else if (!strcmp(argv[i], "--version")) {
      /* the level is not part of the build info, which keys checkpoints: every level writes the same bytes */
      static const char *const level[3] = {"baseline (no AVX2)", "x86-64-v3 (AVX2)", "x86-64-v4 (AVX-512)"};
      if (cli.rank == 0) printf("%s\nkernels: %s\n", pb_results_build_info(), level[pb_clones_isa()]);
      return PB_EXIT_OK;
    } else if (pb_cli__global_value(argc, argv, &i, "-v", "--verbose", &val)) {
      if (pb_cli__global_int(cli.rank, "-v (verbosity)", val, 0, 2, &v)) return PB_EXIT_USAGE;
      pb_log_init(cli.rank, (int)v);
    } else if (pb_cli__global_value(argc, argv, &i, NULL, "--threads", &val)) {
      if (pb_cli__global_int(cli.rank, "--threads", val, 1, 4096, &v)) return PB_EXIT_USAGE;
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
      int rc = pb_cli__command(&cli, c, argc - i, argv + i);
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
