/* `pairbound world info|sample`: exact summaries of a world at a hiding level
 * and seeded, rank-invariant case samples (seed 002 Sections 3.2-4, Appendix
 * B).  A sample's ranks draw contiguous case-index ranges from the counter-based
 * stream and rank 0 writes them in rank order, so the CASES file is identical
 * for any number of ranks and threads.  docs/exact.md gives the CASES format. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/options.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "pairbound/world.h"
#include "pairbound/world_stage.h"
#include "world_stage_internal.h"

#define PB_WORLD_BLOCK 4096   /* cases drawn per parallel block */

static const char *const pb_world__worlds[3] = {"covert", "credit", "review"};
static const char *const pb_world__levels[3] = {"low", "medium", "high"};

/* `pairbound world` options (the command line; docs/exact.md). */
#define PB_W(member) PB_OPTION_FIELD(struct pb_world_options, member)
const struct pb_option pb_world_option_table[] = {
  {.name = "world", .type = PB_OPTION_CHOICE, PB_W(world), .metavar = "covert|credit|review|all",
   .choices = "covert|credit|review|all", .def = "all", .ini = "",
   .help = "covert (covert information transfer), credit (credit risk), review (peer review); all: every world (info only)"},
  {.name = "level", .type = PB_OPTION_CHOICE, PB_W(level), .metavar = "low|medium|high|all",
   .choices = "low|medium|high|all", .def = "all", .ini = "", .help = "hiding level; all: every level (info only)"},
  {.name = "residual-scale", .type = PB_OPTION_DOUBLE, PB_W(residual_scale), .metavar = "S", .def = "1", .min = 0,
   .max = 1e6, .ini = "",
   .help = "multiply every nonzero residual probability by S, the rest on R = 0 (Table 7; 1 = the benchmark; "
           "factor worlds only, at most 1 / P(R != 0))"},
  {.name = "cases", .short_name = 'n', .type = PB_OPTION_INT, PB_W(cases), .metavar = "N", .def = "1000",
   .imax = 1ull << 40, .ini = "", .help = "sample: number of cases to draw"},
  {.name = "seed", .type = PB_OPTION_INT, PB_W(seed), .metavar = "N", .def = "2032", .ini = "",
   .help = "sample: seed of the case stream (the seed paper's first data seed)"},
  {.name = "stream", .type = PB_OPTION_INT, PB_W(stream), .metavar = "K", .def = "0", .imax = 0xffffffffull,
   .ini = "", .help = "sample: independent stream number under the same seed"},
  {.name = "first", .type = PB_OPTION_INT, PB_W(first), .metavar = "I", .def = "0", .imax = 1ull << 62, .ini = "",
   .help = "sample: index of the first case"},
  {.name = "shots", .type = PB_OPTION_INT, PB_W(shots), .metavar = "K", .def = "25", .imax = 100000, .ini = "",
   .help = "prompts: labeled demonstrations per prompt, rows 0..K-1 of the cases' stream, so that smaller K are "
           "prefixes of larger ones (the seed's 0, 10, 25, 50; 25 in its main comparison)"},
  {.name = NULL}};
#undef PB_W

void pb_world_options_default(struct pb_world_options *o)
{
  memset(o, 0, sizeof *o);
  pb_options_defaults(pb_world_option_table, o);
}

static void pb_world__line(const char *name, double v)
{
  char buf[40];
  pb_text_format_double(v, buf);
  printf("%s %s\n", name, buf);
}

/* Every requested world x level: `name value` lines on rank 0. */
static int pb_world__info(int rank, const struct pb_world_options *o)
{
  int w0 = o->world == 3 ? 0 : o->world, w1 = o->world == 3 ? 3 : o->world + 1;
  int l0 = o->level == 3 ? 0 : o->level, l1 = o->level == 3 ? 3 : o->level + 1, opened = 0;
  double t_enum = 0.0;
  for (int a = w0; a < w1; a++)
    for (int b = l0; b < l1; b++) {
      struct pb_world *w;
      double t0 = MPI_Wtime();
      if (pb_world_open(pb_world__worlds[a], pb_world__levels[b], o->residual_scale, &w) != PB_OK) return PB_FAIL;
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
        for (const struct pb_world_choice *c = pb_world_choices(w); c->name; c++)
          printf("ours.%s %s\n", c->name, c->text);
      }
      pb_error_clear();
      pb_world_free(w);
    }
  pb_message("world: exact enumeration of %d world x level settings %.3f s", opened, t_enum);
  return PB_OK;
}

/* Cases [first, first + n) as TSV rows into @p t. */
static void pb_world__block(const struct pb_world *w, const struct pb_world_options *o, uint64_t first, int64_t n,
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
    pb_text_append(t, "\n", 1);
  }
}

/* This rank's rows: cases [lo, hi) in blocks drawn and formatted by the
 * threads, a batch at a time, then written in case order (a rank holds one
 * batch of text, however many cases it draws). */
static void pb_world__rows(const struct pb_world *w, const struct pb_world_options *o, uint64_t lo, uint64_t hi,
                           struct pb_tsv *out)
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
      pb_tsv_write(out, part[k].buf, part[k].len);
      pb_text_free(&part[k]);
    }
  }
}

static int pb_world__sample(int rank, int size, const char *output, const struct pb_world_options *o)
{
  struct pb_world *w;
  if (pb_world_open(pb_world__worlds[o->world], pb_world__levels[o->level], o->residual_scale, &w) != PB_OK)
    return PB_FAIL;
  double t0 = MPI_Wtime();
  struct pb_text head = {0};
  struct pb_tsv *out;
  if (rank == 0) pb_world__cases_header(w, o, &head);
  /* contiguous, nearly equal index ranges in rank order */
  uint64_t n = (uint64_t)o->cases, lo = n * (uint64_t)rank / (uint64_t)size, hi = n * (uint64_t)(rank + 1) / (uint64_t)size;
  int status = pb_tsv_open(MPI_COMM_WORLD, output, rank == 0 ? head.buf : "", &out);
  pb_text_free(&head);
  if (status == PB_OK) pb_world__rows(w, o, lo, hi, out);
  double t1 = MPI_Wtime();
  if (status == PB_OK) status = pb_tsv_commit(out);
  pb_message("world: sample %s %s: %llu cases, draw and write %.3f s, commit %.3f s", pb_world_name(w),
             pb_world_level_name(w), (unsigned long long)n, t1 - t0, MPI_Wtime() - t1);
  pb_world_free(w);
  return status;
}

int pb_world_run(const char *verb, const char *input, const char *output, const struct pb_world_options *o,
                 MPI_Comm comm)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (!strcmp(verb, "info")) return pb_world__info(rank, o);
  if (!strcmp(verb, "render")) return pb_world__render(input, output, comm);
  if (!strcmp(verb, "decode")) return pb_world__decode(input, output, comm);
  if (!strcmp(verb, "prompts")) return pb_world__prompts(input, output, (int)o->shots, comm);
  if (o->world == 3 || o->level == 3) {
    pb_error_set("world sample draws from one world at one level: give --world and --level");
    return PB_FAIL;
  }
  return pb_world__sample(rank, size, output, o);
}
