/* `pairbound world info|sample`: exact summaries of a world at a hiding level
 * and seeded, rank-invariant case samples (seed 002 Sections 3.2-4, Appendix
 * B).  A sample's ranks draw contiguous case-index ranges from the counter-based
 * stream and rank 0 writes them in rank order, so the CASES file is identical
 * for any number of ranks and threads.  docs/exact.md gives the CASES format. */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/results.h"
#include "pairbound/util.h"
#include "pairbound/world.h"

#define PB_WORLD_EXIT_FAIL 1
#define PB_WORLD_EXIT_USAGE 2
#define PB_WORLD_BLOCK 4096   /* cases drawn per parallel block */

const char pb_world_synopsis[] =
  "pairbound world info|sample --world covert|credit|review --level low|medium|high [--residual-scale S]\n"
  "       [sample: -n N [--seed N] [--stream K] [--first I] -o CASES]";

const char pb_world_help[] =
  "Worlds with exact class probabilities (seed 002 Sections 3.2-4, Appendix B; docs/exact.md).\n\n"
  "  info     print `name value` lines: bayes_error, bayes_accuracy, positive_prior, entropy_bits (H(Y|X_vis)\n"
  "           in bits) and states (latent states enumerated), all by exact enumeration (Eq. 6); covert\n"
  "           transfer also prints the closed form of Sec. 4.2 as closed_form_* lines; the factor worlds\n"
  "           print patterns (visible category patterns) and coverage_50 (expected pattern mass seen by 50\n"
  "           training cases, Appendix B). --world all and\n"
  "           --level all print every combination, each block starting with its world and level lines\n"
  "  sample   draw cases FIRST .. FIRST+N-1 of the stream (SEED, K) and write CASES: a TSV whose header\n"
  "           names every visible attribute with its kind and support, then the realised label y and the\n"
  "           exact p* = P(Y=1 | visible). Identical for any number of ranks and threads\n\n"
  "  --world NAME         covert (covert information transfer), credit (credit risk) or review (peer review)\n"
  "  --level LEVEL        hiding level: low, medium or high\n"
  "  --residual-scale S   multiply every nonzero residual probability by S, the rest on R = 0 (Table 7;\n"
  "                       default 1, the benchmark; factor worlds only)\n"
  "  -n, --cases N        number of cases to draw (default 1000)\n"
  "  --seed N             seed of the case stream (default 2032, the seed paper's first data seed)\n"
  "  --stream K           independent stream number under the same seed (default 0)\n"
  "  --first I            index of the first case (default 0)\n"
  "  -o, --output CASES   file to write (temporary name, renamed when complete)\n";

struct pb_world__opts {
  const char *world, *level, *output;
  double scale;
  unsigned long long n, seed, stream, first;
};

static int pb_world__usage(int rank, const char *fmt, const char *arg)
{
  if (rank == 0) {
    fprintf(stderr, "pairbound world: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nusage: %s\n", pb_world_synopsis);
  }
  return PB_WORLD_EXIT_USAGE;
}

static int pb_world__u64(const char *s, unsigned long long *out)
{
  char *end;
  if (!s[0] || s[0] == '-') return PB_FAIL;
  *out = strtoull(s, &end, 10);
  return *end == '\0' ? PB_OK : PB_FAIL;
}

/* Parse the options after the verb; -1 on success, else the exit status. */
static int pb_world__parse(int rank, int argc, char **argv, struct pb_world__opts *o)
{
  enum { O_WORLD = 1000, O_LEVEL, O_SCALE, O_SEED, O_STREAM, O_FIRST };
  static const struct option lo[] = {
    {"world", required_argument, NULL, O_WORLD}, {"level", required_argument, NULL, O_LEVEL},
    {"residual-scale", required_argument, NULL, O_SCALE}, {"cases", required_argument, NULL, 'n'},
    {"seed", required_argument, NULL, O_SEED}, {"stream", required_argument, NULL, O_STREAM},
    {"first", required_argument, NULL, O_FIRST}, {"output", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'}, {0, 0, 0, 0}};
  *o = (struct pb_world__opts){.scale = 1.0, .n = 1000, .seed = 2032};
  opterr = 0;
  optind = 1;
  for (int c; (c = getopt_long(argc, argv, "n:o:h", lo, NULL)) != -1;) {
    char *end;
    switch (c) {
    case O_WORLD: o->world = optarg; break;
    case O_LEVEL: o->level = optarg; break;
    case 'o': o->output = optarg; break;
    case O_SCALE:
      o->scale = strtod(optarg, &end);
      if (*end || end == optarg) return pb_world__usage(rank, "--residual-scale must be a number, got '%s'", optarg);
      break;
    case 'n':
      if (pb_world__u64(optarg, &o->n) || o->n > (1ull << 40))
        return pb_world__usage(rank, "--cases must be a non-negative integer, got '%s'", optarg);
      break;
    case O_SEED:
      if (pb_world__u64(optarg, &o->seed)) return pb_world__usage(rank, "--seed must be a non-negative integer, got '%s'", optarg);
      break;
    case O_STREAM:
      if (pb_world__u64(optarg, &o->stream) || o->stream > 0xffffffffull)
        return pb_world__usage(rank, "--stream must be an integer in [0, 2^32), got '%s'", optarg);
      break;
    case O_FIRST:
      if (pb_world__u64(optarg, &o->first)) return pb_world__usage(rank, "--first must be a non-negative integer, got '%s'", optarg);
      break;
    case 'h':
      if (rank == 0) printf("usage: %s\n\n%s", pb_world_synopsis, pb_world_help);
      return 0;
    default:
      return pb_world__usage(rank, "unknown option or missing value '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return pb_world__usage(rank, "unexpected argument '%s'", argv[optind]);
  if (!o->world) return pb_world__usage(rank, "%s", "--world is required");
  if (!o->level) return pb_world__usage(rank, "%s", "--level is required");
  return -1;
}

static void pb_world__line(const char *name, double v)
{
  char buf[40];
  pb_format_double(v, buf);
  printf("%s %s\n", name, buf);
}

/* Every requested world x level: `name value` lines on rank 0. */
static int pb_world__info(int rank, const struct pb_world__opts *o)
{
  static const char *const worlds[] = {"covert", "credit", "review"}, *const levels[] = {"low", "medium", "high"};
  int all_w = strcmp(o->world, "all") == 0, all_l = strcmp(o->level, "all") == 0, opened = 0;
  double t_enum = 0.0;
  for (int a = 0; a < (all_w ? 3 : 1); a++)
    for (int b = 0; b < (all_l ? 3 : 1); b++) {
      struct pb_world *w;
      double t0 = MPI_Wtime();
      if (pb_world_open(all_w ? worlds[a] : o->world, all_l ? levels[b] : o->level, o->scale, &w) != PB_OK)
        return PB_FAIL;
      t_enum += MPI_Wtime() - t0;
      opened++;
      struct pb_world_summary s, cf;
      pb_world_summary(w, &s);
      if (rank == 0) {
        printf("world %s\nlevel %s\n", pb_world_name(w), pb_world_level_name(w));
        pb_world__line("residual_scale", pb_world_residual_scale(w));
        pb_world__line("bayes_error", s.bayes_error);
        pb_world__line("bayes_accuracy", s.bayes_accuracy);
        pb_world__line("positive_prior", s.positive_prior);
        pb_world__line("entropy_bits", s.entropy_bits);
        printf("states %lld\nattributes %d\n", (long long)s.states, pb_world_n_attrs(w));
        if (s.patterns >= 0) {
          printf("patterns %lld\n", (long long)s.patterns);
          pb_world__line("coverage_50", s.coverage50);
        }
        if (pb_world_closed_form(w, &cf) == PB_OK) {
          pb_world__line("closed_form_bayes_error", cf.bayes_error);
          pb_world__line("closed_form_bayes_accuracy", cf.bayes_accuracy);
          pb_world__line("closed_form_positive_prior", cf.positive_prior);
          pb_world__line("closed_form_entropy_bits", cf.entropy_bits);
        }
      }
      pb_error_clear();
      pb_world_free(w);
    }
  pb_message("world: exact enumeration of %d world x level settings %.3f s", opened, t_enum);
  return PB_OK;
}

/* CASES header: parameter comment lines, then the column names
 * `case`, NAME:cat(v0,v1,...) or NAME:num[lo,hi] (":irrelevant" appended for
 * irrelevant fields), `y`, `p_star`. */
static void pb_world__header(const struct pb_world *w, const struct pb_world__opts *o, struct pb_text *t)
{
  char a[40], b[40];
  pb_format_double(pb_world_residual_scale(w), a);
  pb_text_printf(t, "# pairbound world cases 1\n# world %s\n# level %s\n# residual_scale %s\n# seed %llu\n"
                    "# stream %llu\n# first %llu\n# cases %llu\ncase",
                 pb_world_name(w), pb_world_level_name(w), a, o->seed, o->stream, o->first, o->n);
  for (int j = 0; j < pb_world_n_attrs(w); j++) {
    const struct pb_world_attr *at = pb_world_attr(w, j);
    if (at->kind == PB_WORLD_CATEGORICAL) {
      pb_text_printf(t, "\t%s:cat(", at->name);
      for (int v = 0; v < at->n_values; v++) pb_text_printf(t, "%s%s", v ? "," : "", at->values[v]);
      pb_text_printf(t, ")");
    } else {
      pb_format_double(at->lo, a);
      pb_format_double(at->hi, b);
      pb_text_printf(t, "\t%s:num[%s,%s]", at->name, a, b);
    }
    if (at->irrelevant) pb_text_printf(t, ":irrelevant");
  }
  pb_text_printf(t, "\ty\tp_star\n");
}

/* Append @p n bytes to @p t (the rows are built a cell at a time, where a
 * printf per cell would cost more than drawing the case). */
static void pb_world__put(struct pb_text *t, const char *s, size_t n)
{
  if (t->len + n + 1 > t->cap) {
    t->cap = 2 * (t->cap + n + 64);
    t->buf = pb_realloc(t->buf, t->cap);
  }
  memcpy(t->buf + t->len, s, n);
  t->len += n;
  t->buf[t->len] = '\0';
}

/* A tab and an unsigned integer in decimal. */
static void pb_world__put_uint(struct pb_text *t, uint64_t v, int tab)
{
  char b[24];
  int i = 24;
  do b[--i] = (char)('0' + v % 10); while ((v /= 10) > 0);
  if (tab) b[--i] = '\t';
  pb_world__put(t, b + i, (size_t)(24 - i));
}

/* One TSV cell: non-negative integers (categories, counts, labels) directly,
 * other values as pb_format_double's shortest round-trip decimal, which is
 * the same text the integers would get from it. */
static void pb_world__cell(struct pb_text *t, double v)
{
  if (v >= 0.0 && v < 4294967296.0 && v == (double)(uint32_t)v) {
    pb_world__put_uint(t, (uint32_t)v, 1);
    return;
  }
  char b[40];
  pb_format_double(v, b);
  pb_world__put(t, "\t", 1);
  pb_world__put(t, b, strlen(b));
}

/* Cases [first, first + n) as TSV rows into @p t. */
static void pb_world__block(const struct pb_world *w, const struct pb_world__opts *o, uint64_t first, int64_t n,
                            double *x, struct pb_text *t)
{
  int na = pb_world_n_attrs(w);
  for (int64_t i = 0; i < n; i++) {
    int y;
    double p;
    uint64_t c = o->first + first + (uint64_t)i;
    pb_world_draw(w, o->seed, (uint32_t)o->stream, c, x, &y, &p);
    pb_world__put_uint(t, c, 0);
    for (int j = 0; j < na; j++) pb_world__cell(t, x[j]);
    pb_world__put_uint(t, (uint64_t)y, 1);
    pb_world__cell(t, p);
    pb_world__put(t, "\n", 1);
  }
}

/* This rank's rows: cases [lo, hi) in blocks drawn and formatted by the
 * threads, a batch at a time, then appended in case order. */
static void pb_world__rows(const struct pb_world *w, const struct pb_world__opts *o, uint64_t lo, uint64_t hi,
                           struct pb_text *t)
{
  enum { BATCH = 64 };
  struct pb_text part[BATCH];
  int na = pb_world_n_attrs(w);
  for (uint64_t b = lo; b < hi; b += (uint64_t)BATCH * PB_WORLD_BLOCK) {
    int nb = (int)((hi - b + PB_WORLD_BLOCK - 1) / PB_WORLD_BLOCK);
    if (nb > BATCH) nb = BATCH;
    memset(part, 0, sizeof part);
#pragma omp parallel
    {
      double *x = pb_malloc(sizeof(double) * (size_t)na);
#pragma omp for schedule(dynamic, 1)
      for (int k = 0; k < nb; k++) {
        uint64_t first = b + (uint64_t)k * PB_WORLD_BLOCK;
        int64_t n = (int64_t)(hi - first < PB_WORLD_BLOCK ? hi - first : PB_WORLD_BLOCK);
        pb_world__block(w, o, first, n, x, &part[k]);
      }
      free(x);
    }
    for (int k = 0; k < nb; k++) {
      if (part[k].len) pb_world__put(t, part[k].buf, part[k].len);
      pb_text_free(&part[k]);
    }
  }
}

static int pb_world__sample(int rank, int size, const struct pb_world__opts *o)
{
  if (!o->output) {
    pb_error_set("world sample needs -o CASES");
    return PB_FAIL;
  }
  struct pb_world *w;
  if (pb_world_open(o->world, o->level, o->scale, &w) != PB_OK) return PB_FAIL;
  double t0 = MPI_Wtime();
  struct pb_text head = {0}, rows = {0};
  if (rank == 0) pb_world__header(w, o, &head);
  /* contiguous, nearly equal index ranges in rank order */
  uint64_t lo = o->n * (uint64_t)rank / (uint64_t)size, hi = o->n * (uint64_t)(rank + 1) / (uint64_t)size;
  pb_world__rows(w, o, lo, hi, &rows);
  double t1 = MPI_Wtime();
  int status = pb_results_tsv_file(MPI_COMM_WORLD, o->output, rank == 0 ? head.buf : "", rows.buf, rows.len);
  pb_message("world: sample %s %s: %llu cases, draw %.3f s, write %.3f s", pb_world_name(w), pb_world_level_name(w),
             o->n, t1 - t0, MPI_Wtime() - t1);
  pb_text_free(&head);
  pb_text_free(&rows);
  pb_world_free(w);
  return status;
}

int pb_world_main(int argc, char **argv)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2 || (strcmp(argv[1], "info") && strcmp(argv[1], "sample"))) {
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
      if (rank == 0) printf("usage: %s\n\n%s", pb_world_synopsis, pb_world_help);
      return 0;
    }
    return pb_world__usage(rank, "expected the verb info or sample, got '%s'", argc < 2 ? "" : argv[1]);
  }
  struct pb_world__opts o;
  int rc = pb_world__parse(rank, argc - 1, argv + 1, &o);
  if (rc >= 0) return rc;
  int status = strcmp(argv[1], "info") == 0 ? pb_world__info(rank, &o) : pb_world__sample(rank, size, &o);
  int all = status;
  MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all == PB_OK) return 0;
  /* every rank opens the same world, so rank 0's message names the problem; a
   * write failure is reported by rank 0 itself */
  if (rank == 0) fprintf(stderr, "pairbound world: error: %s\n", status != PB_OK ? pb_error_message() : "failed on another rank");
  return PB_WORLD_EXIT_FAIL;
}
