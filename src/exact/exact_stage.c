/* `pairbound exact score CASES PREDICTIONS -o OUTDIR`: score probability
 * forecasts for the cases of a world against their exact class probabilities
 * (seed 002 Sections 3.1, 5, Appendix A.2, C.2-C.5).  The million-input
 * population reference is drawn from the world directly, its fixed blocks of
 * case indices spread over ranks and reduced in block order, so every output
 * is identical for any number of ranks and threads.  Kernel: exact_kernel.c. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <omp.h>

#include "pairbound/error.h"
#include "pairbound/exact.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/results.h"
#include "pairbound/rng.h"
#include "pairbound/world.h"
#include "exact_internal.h"

#define PB_EXACT_BLOCK 16384      /* reference cases per reduction block */

/* --sizes: 1 to PB_EXACT_MAX_SIZES comma-separated integers >= 10. */
static int pb_exact__opt_sizes(void *opts, const char *label, const char *v)
{
  struct pb_exact_options *o = opts;
  double x[PB_EXACT_MAX_SIZES];
  int n;
  if (pb_parse_list(v, 10, 1e12, PB_EXACT_MAX_SIZES, x, &n)) goto bad;
  for (int i = 0; i < n; i++)
    if (x[i] != floor(x[i])) goto bad;
  o->n_sizes = n;
  for (int i = 0; i < n; i++) o->sizes[i] = (int64_t)x[i];
  return PB_OK;
bad:
  pb_error_set("%s must be 1 to %d comma-separated integers >= 10, got '%s'", label, PB_EXACT_MAX_SIZES, v);
  return PB_FAIL;
}

/* Replace an owned list by @p v with the spaces around its items dropped, checking each item against
 * @p valid ("a|b|c"; NULL: any word). */
static int pb_exact__list(char **dst, const char *v, const char *valid)
{
  char *copy = pb_strdup(v), *out = pb_calloc(strlen(v) + 1, 1), *save = NULL;
  int n = 0, ok = 1;
  for (char *t = strtok_r(copy, ", ", &save); t && ok; t = strtok_r(NULL, ", ", &save), n++) {
    char pat[80], all[80];
    snprintf(pat, sizeof pat, "|%s|", t);
    snprintf(all, sizeof all, "|%s|", valid ? valid : "");
    ok = !valid || strstr(all, pat) != NULL;
    if (n) strcat(out, ",");
    strcat(out, t);
  }
  free(copy);
  if (!ok || n == 0) {
    free(out);
    return PB_FAIL;
  }
  free(*dst);
  *dst = out;
  return PB_OK;
}

static int pb_exact__opt_worlds(void *opts, const char *label, const char *v)
{
  if (pb_exact__list(&((struct pb_exact_options *)opts)->worlds, v, "covert|credit|review") == PB_OK) return PB_OK;
  pb_error_set("%s must be a list of covert, credit, review, got '%s'", label, v);
  return PB_FAIL;
}

static int pb_exact__opt_levels(void *opts, const char *label, const char *v)
{
  if (pb_exact__list(&((struct pb_exact_options *)opts)->levels, v, "low|medium|high") == PB_OK) return PB_OK;
  pb_error_set("%s must be a list of low, medium, high, got '%s'", label, v);
  return PB_FAIL;
}

/* Each name is checked where the predictors are built (logistic:n=N needs the cases). */
static int pb_exact__opt_predictors(void *opts, const char *label, const char *v)
{
  if (pb_exact__list(&((struct pb_exact_options *)opts)->predictors, v, NULL) == PB_OK) return PB_OK;
  pb_error_set("%s must be a list of pstar, prior, logistic:n=N, got '%s'", label, v);
  return PB_FAIL;
}

#define PB_X(member) PB_OPTION_FIELD(struct pb_exact_options, member)
const struct pb_option pb_exact_option_table[] = {
  {.name = "reference", .type = PB_OPTION_INT, PB_X(reference), .metavar = "N", .def = "1000000", .imin = 1,
   .help = "population reference inputs for built-in predictors"},
  {.name = "calibration", .type = PB_OPTION_INT, PB_X(calibration), .metavar = "N", .def = "2000", .imin = 1,
   .help = "calibration inputs of the higher-order comparison"},
  {.name = "resamples", .type = PB_OPTION_INT, PB_X(resamples), .metavar = "R", .def = "10", .imin = 1,
   .imax = 1000, .help = "calibration resamples of the empirical MC estimator"},
  {.name = "lambda", .type = PB_OPTION_DOUBLE, PB_X(lambda), .metavar = "L", .def = "1", .min = 0, .max = 1e300,
   .help = "L2 penalty of the logistic regression"},
  {.name = "sizes", .type = PB_OPTION_CUSTOM, .parse = pb_exact__opt_sizes, .metavar = "a,b,..",
   .def = "200,500,1000,2000,4000", .help = "1-8 sample sizes >= 10 of the empirical MC and kNN sweeps"},
  {.name = "worlds", .type = PB_OPTION_CUSTOM, .parse = pb_exact__opt_worlds, .metavar = "a,b",
   .def = "covert,credit,review",
   .help = "worlds: covert, credit, review (worlds only; naming worlds in a run configuration's [exact] "
           "section joins the exact stage to the pipeline)"},
  {.name = "levels", .type = PB_OPTION_CUSTOM, .parse = pb_exact__opt_levels, .metavar = "a,b",
   .def = "low,medium,high", .help = "hiding levels: low, medium, high (worlds only)"},
  {.name = "predictors", .type = PB_OPTION_CUSTOM, .parse = pb_exact__opt_predictors, .metavar = "a,b",
   .def = "pstar,prior,logistic:n=1000", .help = "built-in predictors (worlds only)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_X(seed), .metavar = "S", .def = "2032",
   .help = "seed of the drawn cases and every population stream (worlds only; a score takes the CASES file's)"},
  {.name = "first", .type = PB_OPTION_INT, PB_X(first), .metavar = "I", .def = "1000",
   .help = "first case index, after the training rows as in A.5 (worlds only)"},
  {.name = "cases", .type = PB_OPTION_INT, PB_X(n_cases), .metavar = "N", .def = "500", .imin = 1,
   .help = "cases per world and level (worlds only)"},
  {.name = "knn-bound", .type = PB_OPTION_CHOICE, PB_X(knn_bound), .metavar = "feebee|sqrt2", .choices = "feebee|sqrt2",
   .def = "feebee",
   .help = "lower end of the 5NN interval: feebee R5 / (1 + 1/sqrt(5)), the form of FeeBee's implementation that "
           "seed 002 follows; sqrt2 R5 / (1 + sqrt(2/5)), a smaller, more cautious bound (docs/exact.md)"},
  {.name = NULL}};
#undef PB_X

/* What pb_options_free leaves of the options (the stage's .options.release). */
void pb_exact__options_release(void *opts)
{
  struct pb_exact_options *o = opts;
  free(o->worlds);
  free(o->levels);
  free(o->predictors);
  o->worlds = o->levels = o->predictors = NULL;
}

/* ---------------------------------------------------------------- features, predictor, groups */
/* Encoded width: one-hot categorical values, numeric scaled to [0, 1] by the declared support (A.1, C.3);
 * @p all = 0 leaves the irrelevant fields out (the C.3 ablation). */
static int pb_exact__width(const struct pb_world *w, int all)
{
  int d = 0;
  for (int j = 0; j < pb_world_n_attrs(w); j++) {
    const struct pb_world_attr *a = pb_world_attr(w, j);
    if (all || !a->irrelevant) d += a->kind == PB_WORLD_CATEGORICAL ? a->n_values : 1;
  }
  return d;
}

static void pb_exact__encode(const struct pb_world *w, int all, const double *x, double *f)
{
  int t = 0;
  for (int j = 0; j < pb_world_n_attrs(w); j++) {
    const struct pb_world_attr *a = pb_world_attr(w, j);
    if (!all && a->irrelevant) continue;
    if (a->kind == PB_WORLD_CATEGORICAL) {
      for (int v = 0; v < a->n_values; v++) f[t + v] = v == (int)x[j];
      t += a->n_values;
    } else {
      f[t++] = (x[j] - a->lo) / (a->hi - a->lo);
    }
  }
}

/* Covert transfer has no structured encoding that carries signal (A.1): its
 * one informative feature presupposes the rule, so logistic regression and
 * the nearest-neighbour estimators are not run there, as in the seed. */
static int pb_exact__encodable(const struct pb_world *w)
{
  return pb_world_kind(w) != PB_WORLD_COVERT;
}

static double pb_exact__predict(const struct pb_world *w, const struct pb_exact_predictor *p, const double *x,
                                double pstar, double *scratch)
{
  switch (p->kind) {
  case PB_EXACT_PRED_PSTAR: return pstar;
  case PB_EXACT_PRED_PRIOR: return p->prior;
  case PB_EXACT_PRED_LOGISTIC: pb_exact__encode(w, 1, x, scratch); return pb_exact_logistic_predict(p->d, p->beta, scratch);
  default: return NAN;
  }
}

/* 1 when @p spec names a built-in predictor rather than a predictions file. */
static int pb_exact__builtin(const char *spec)
{
  return !strcmp(spec, "pstar") || !strcmp(spec, "prior") || !strncmp(spec, "logistic:n=", 11);
}

/* Built-in predictor from its name; logistic:n=N trains on rows [0, N) of the cases' stream. */
static int pb_exact__predictor(const char *spec, const struct pb_world_cases *c, double lambda,
                               struct pb_exact_predictor *p)
{
  memset(p, 0, sizeof *p);
  p->kind = PB_EXACT_PRED_FILE;
  snprintf(p->name, sizeof p->name, "%s", spec);
  if (!strcmp(spec, "pstar")) p->kind = PB_EXACT_PRED_PSTAR;
  if (!strcmp(spec, "prior")) {
    struct pb_world_summary s;
    pb_world_summary(c->world, &s);
    p->kind = PB_EXACT_PRED_PRIOR;
    p->prior = s.positive_prior;
  }
  if (strncmp(spec, "logistic:n=", 11) != 0) return PB_OK;
  int64_t n;
  if (pb_parse_int(spec + 11, 2, INT64_MAX, &n)) {
    pb_error_set("predictor '%s': logistic:n=N needs an integer N >= 2", spec);
    return PB_FAIL;
  }
  if (!pb_exact__encodable(c->world)) {
    pb_error_set("predictor '%s': logistic regression is not run in %s (no structured signal, seed 002 A.1)", spec,
                 pb_world_name(c->world));
    return PB_FAIL;
  }
  for (int64_t i = 0; i < c->n; i++)
    if (c->index[i] < (uint64_t)n) {
      pb_error_set("predictor '%s': training rows 0..%lld overlap case %llu of the cases' stream", spec, (long long)n - 1,
                   (unsigned long long)c->index[i]);
      return PB_FAIL;
    }
  int na = c->na, d = pb_exact__width(c->world, 1), status;
  double *x = pb_malloc(sizeof(double) * (size_t)n * na), *f = pb_malloc(sizeof(double) * (size_t)n * d);
  int *y = pb_malloc(sizeof(int) * (size_t)n);
  pb_world_draw_range(c->world, c->seed, (uint32_t)c->stream, 0, n, x, y, NULL);
  for (int64_t i = 0; i < n; i++) pb_exact__encode(c->world, 1, x + i * na, f + i * d);
  p->kind = PB_EXACT_PRED_LOGISTIC;
  p->train_n = n;
  p->d = d;
  p->beta = pb_malloc(sizeof(double) * (size_t)(d + 1));
  status = pb_exact_logistic_fit(n, d, f, y, lambda, p->beta);
  free(x);
  free(f);
  free(y);
  return status;
}

void pb_exact_groups_free(struct pb_exact_groups *g)
{
  for (int i = 0; i < g->n; i++) free(g->name[i]);
  free(g->name);
  free(g->attr);
  free(g->attr2);
  free(g->value);
  free(g->value2);
  free(g->lo);
  free(g->hi);
  free(g->numeric);
}

static void pb_exact__group_add(struct pb_exact_groups *g, int a, int v, int a2, int v2, double lo, double hi,
                                const char *name)
{
  int i = g->n++;
  g->name = pb_realloc(g->name, sizeof *g->name * (size_t)g->n);
  g->attr = pb_realloc(g->attr, sizeof *g->attr * (size_t)g->n);
  g->attr2 = pb_realloc(g->attr2, sizeof *g->attr2 * (size_t)g->n);
  g->value = pb_realloc(g->value, sizeof *g->value * (size_t)g->n);
  g->value2 = pb_realloc(g->value2, sizeof *g->value2 * (size_t)g->n);
  g->lo = pb_realloc(g->lo, sizeof *g->lo * (size_t)g->n);
  g->hi = pb_realloc(g->hi, sizeof *g->hi * (size_t)g->n);
  g->numeric = pb_realloc(g->numeric, sizeof *g->numeric * (size_t)g->n);
  g->name[i] = pb_strdup(name);
  g->attr[i] = a, g->value[i] = v, g->attr2[i] = a2, g->value2[i] = v2, g->lo[i] = lo, g->hi[i] = hi;
  g->numeric[i] = lo < hi;  /* only quartile intervals have lo < hi */
}

void pb_exact_quartiles(const struct pb_world *w, uint64_t seed, struct pb_exact_cuts *q)
{
  const int na = pb_world_n_attrs(w), first = na - PB_WORLD_N_IRRELEVANT;
  const int64_t rank[3] = {PB_EXACT_QUARTILE_N / 4, PB_EXACT_QUARTILE_N / 2, 3 * (PB_EXACT_QUARTILE_N / 4)};
  int64_t *hist[PB_WORLD_N_IRRELEVANT] = {NULL};
  for (int f = 0; f < PB_WORLD_N_IRRELEVANT; f++) {
    const struct pb_world_attr *a = pb_world_attr(w, first + f);
    q->cut[f][0] = q->cut[f][1] = q->cut[f][2] = NAN;
    if (a->kind == PB_WORLD_NUMERIC) hist[f] = pb_calloc((size_t)(a->hi - a->lo + 1), sizeof **hist);
  }
  /* integer counts per value, summed over the threads' blocks: the same for any thread count */
#pragma omp parallel
  {
    double *x = pb_malloc(sizeof(double) * (size_t)na);
#pragma omp for schedule(static)
    for (int64_t b = 0; b < PB_EXACT_QUARTILE_N; b += 1000) {
      int32_t part[PB_WORLD_N_IRRELEVANT][1000];
      for (int64_t i = 0; i < 1000; i++) {
        int y;
        double ps;
        pb_world_draw(w, seed, PB_EXACT_STREAM_QUARTILE, (uint64_t)(b + i), x, &y, &ps);
        for (int f = 0; f < PB_WORLD_N_IRRELEVANT; f++)
          if (hist[f]) part[f][i] = (int32_t)(x[first + f] - pb_world_attr(w, first + f)->lo);
      }
#pragma omp critical(pb_exact_quartiles)
      for (int f = 0; f < PB_WORLD_N_IRRELEVANT; f++)
        for (int64_t i = 0; hist[f] && i < 1000; i++) hist[f][part[f][i]]++;
    }
    free(x);
  }
  /* the order statistic r of the sorted counts is the first value whose cumulative count exceeds r */
  for (int f = 0; f < PB_WORLD_N_IRRELEVANT; f++) {
    const struct pb_world_attr *a = pb_world_attr(w, first + f);
    int64_t below = 0;
    for (int64_t k = 0, r = 0; hist[f] && k <= (int64_t)(a->hi - a->lo) && r < 3; k++) {
      below += hist[f][k];
      while (r < 3 && rank[r] < below) q->cut[f][r++] = a->lo + (double)k;
    }
    free(hist[f]);
  }
}

/* Section 5 groups; the count intervals are cut at @p q. */
void pb_exact_groups_build(const struct pb_world *w, const struct pb_exact_cuts *q, struct pb_exact_groups *g)
{
  int na = pb_world_n_attrs(w), ga[2] = {-1, -1}, ng = 0;
  char name[256];
  memset(g, 0, sizeof *g);
  pb_exact__group_add(g, -1, 0, -1, 0, 0, 0, "all");
  for (int j = 0; j < na; j++)
    if (pb_world_attr(w, j)->group && ng < 2) ga[ng++] = j;
  for (int k = 0; k < ng; k++) {
    const struct pb_world_attr *a = pb_world_attr(w, ga[k]);
    for (int v = 0; v < a->n_values; v++) {
      snprintf(name, sizeof name, "%s=%s", a->name, a->values[v]);
      pb_exact__group_add(g, ga[k], v, -1, 0, 0, 0, name);
    }
  }
  if (ng == 2) {
    const struct pb_world_attr *a = pb_world_attr(w, ga[0]), *b = pb_world_attr(w, ga[1]);
    for (int v = 0; v < a->n_values; v++)
      for (int u = 0; u < b->n_values; u++) {
        snprintf(name, sizeof name, "%s=%s&%s=%s", a->name, a->values[v], b->name, b->values[u]);
        pb_exact__group_add(g, ga[0], v, ga[1], u, 0, 0, name);
      }
  }
  for (int j = na - PB_WORLD_N_IRRELEVANT; j < na; j++) {
    const struct pb_world_attr *a = pb_world_attr(w, j);
    if (a->kind == PB_WORLD_CATEGORICAL) {
      for (int v = 0; v < a->n_values; v++) {
        snprintf(name, sizeof name, "%s=%s", a->name, a->values[v]);
        pb_exact__group_add(g, j, v, -1, 0, 0, 0, name);
      }
      continue;
    }
    const double *c = q->cut[j - (na - PB_WORLD_N_IRRELEVANT)];
    double cut[5] = {-INFINITY, c[0], c[1], c[2], INFINITY};
    for (int k = 0; k < 4; k++) {
      if (!(cut[k + 1] > cut[k])) continue;   /* a repeated cut point leaves an empty interval */
      snprintf(name, sizeof name, "%s in (%g, %g]", a->name, cut[k], cut[k + 1]);
      pb_exact__group_add(g, j, 0, -1, 0, cut[k], cut[k + 1], name);
    }
  }
}

static void pb_exact__member(const struct pb_exact_groups *g, const double *x, unsigned char *m)
{
  for (int i = 0; i < g->n; i++) {
    int a = g->attr[i];
    if (a < 0) m[i] = 1;
    else if (g->numeric[i]) m[i] = x[a] > g->lo[i] && x[a] <= g->hi[i];
    else m[i] = (int)x[a] == g->value[i] && (g->attr2[i] < 0 || (int)x[g->attr2[i]] == g->value2[i]);
  }
}

/* ---------------------------------------------------------------- population reference (C.4) */
/* Distinct values with integer counts: exact, so merging in any order gives the same law. */
struct pb_exact__vc {
  double v;
  int64_t c;
};

static int pb_exact__cmp_vc(const void *pa, const void *pb)
{
  const struct pb_exact__vc *a = pa, *b = pb;
  return (a->v > b->v) - (a->v < b->v);
}

/* Sort and merge equal values in place; returns the new length. */
static int64_t pb_exact__vc_compact(struct pb_exact__vc *vc, int64_t n)
{
  int64_t m = 0;
  qsort(vc, (size_t)n, sizeof *vc, pb_exact__cmp_vc);
  for (int64_t i = 0; i < n; i++) {
    if (m > 0 && vc[m - 1].v == vc[i].v) vc[m - 1].c += vc[i].c;
    else vc[m++] = vc[i];
  }
  return m;
}

/* The Bayes mixture pi*_C of every bin from all ranks' distinct p* values (Eq. 4). */
static int pb_exact__gather_laws(MPI_Comm comm, struct pb_exact__vc **vc, int64_t *nvc, struct pb_exact_law *law,
                                 int64_t *mass)
{
  int size;
  MPI_Comm_size(comm, &size);
  int *cnt = pb_malloc(sizeof(int) * (size_t)size), *disp = pb_malloc(sizeof(int) * (size_t)size);
  int status = PB_OK;
  for (int b = 0; b < PB_EXACT_BINS && status == PB_OK; b++) {
    int mine = (int)(nvc[b] * 2), total = 0;
    if (MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, comm) != MPI_SUCCESS) status = PB_FAIL;
    for (int r = 0; r < size; r++) disp[r] = total, total += cnt[r];
    /* pairs travel as two doubles: the count is below 2^53 */
    double *send = pb_malloc(sizeof(double) * (size_t)(mine + 1)), *recv = pb_malloc(sizeof(double) * (size_t)(total + 1));
    for (int64_t i = 0; i < nvc[b]; i++) send[2 * i] = vc[b][i].v, send[2 * i + 1] = (double)vc[b][i].c;
    if (status == PB_OK && MPI_Allgatherv(send, mine, MPI_DOUBLE, recv, cnt, disp, MPI_DOUBLE, comm) != MPI_SUCCESS)
      status = PB_FAIL;
    struct pb_exact__vc *all = pb_malloc(sizeof *all * (size_t)(total / 2 + 1));
    for (int i = 0; i < total / 2; i++) all[i].v = recv[2 * i], all[i].c = (int64_t)recv[2 * i + 1];
    int64_t m = pb_exact__vc_compact(all, total / 2);
    law[b].n = (int)m;
    law[b].x = pb_malloc(sizeof(double) * (size_t)(m + 1));
    law[b].w = pb_malloc(sizeof(double) * (size_t)(m + 1));
    mass[b] = 0;
    for (int64_t i = 0; i < m; i++) mass[b] += all[i].c;
    for (int64_t i = 0; i < m; i++) law[b].x[i] = all[i].v, law[b].w[i] = (double)all[i].c / (double)mass[b];
    free(send);
    free(recv);
    free(all);
  }
  free(cnt);
  free(disp);
  if (status != PB_OK) pb_error_set("MPI error gathering the reference mixtures");
  return status;
}

/* One reference block: moments of (p* - q), the KL sum, and each input's bin and p*. */
static void pb_exact__ref_block(const struct pb_world *w, const struct pb_exact_predictor *p,
                                const struct pb_exact_groups *g, uint64_t seed, int64_t first, int64_t n, double *sum,
                                int64_t *cnt, double *kl, double *pv, unsigned char *bin)
{
  int na = pb_world_n_attrs(w);
  double *x = pb_malloc(sizeof(double) * (size_t)na), *f = pb_malloc(sizeof(double) * (size_t)(p->d + 1));
  unsigned char *mem = pb_malloc((size_t)g->n);
  struct pb_exact_moments m = {g->n, PB_EXACT_BINS, 0, cnt, sum};
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) {
    int y;
    pb_world_draw(w, seed, PB_EXACT_STREAM_REFERENCE, (uint64_t)(first + i), x, &y, &pv[i]);
    double q = pb_exact__predict(w, p, x, pv[i], f);
    pb_exact__member(g, x, mem);
    pb_exact_moments_add(&m, mem, q, pv[i]);
    bin[i] = (unsigned char)pb_exact_bin(q, PB_EXACT_BINS);
    s += pb_exact_kl_term(pv[i], q);
  }
  *kl = s;
  free(x);
  free(f);
  free(mem);
}

/* Integrate Eq. 2-3 over N reference inputs: this rank's blocks in parallel,
 * every block's sums reduced and added in block order; bin laws for Eq. 4-7. */
static int pb_exact__reference(MPI_Comm comm, const struct pb_world *w, const struct pb_exact_predictor *p,
                               const struct pb_exact_groups *g, uint64_t seed, int64_t N, struct pb_exact_result *r,
                               struct pb_exact_law *law, int64_t *mass)
{
  int rank, size, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int64_t nb = (N + PB_EXACT_BLOCK - 1) / PB_EXACT_BLOCK, cells = (int64_t)g->n * PB_EXACT_BINS;
  int64_t b0 = nb * rank / size, b1 = nb * (rank + 1) / size;
  int64_t lo = b0 * PB_EXACT_BLOCK < N ? b0 * PB_EXACT_BLOCK : N, hi = b1 * PB_EXACT_BLOCK < N ? b1 * PB_EXACT_BLOCK : N;
  double *bsum = pb_calloc((size_t)(nb * cells), sizeof *bsum), *bkl = pb_calloc((size_t)nb, sizeof *bkl);
  int64_t *bcnt = pb_calloc((size_t)(nb * cells), sizeof *bcnt);
  double *pv = pb_malloc(sizeof(double) * (size_t)(hi - lo + 1));
  unsigned char *bin = pb_malloc((size_t)(hi - lo + 1));
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t b = b0; b < b1; b++) {
    int64_t first = b * PB_EXACT_BLOCK, n = first + PB_EXACT_BLOCK < N ? PB_EXACT_BLOCK : N - first;
    pb_exact__ref_block(w, p, g, seed, first, n, bsum + b * cells, bcnt + b * cells, &bkl[b], pv + (first - lo),
                        bin + (first - lo));
  }
  /* each block has one owner and zeros elsewhere, so the sums are exact copies */
  if (MPI_Allreduce(MPI_IN_PLACE, bsum, (int)(nb * cells), MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS ||
      MPI_Allreduce(MPI_IN_PLACE, bcnt, (int)(nb * cells), MPI_INT64_T, MPI_SUM, comm) != MPI_SUCCESS ||
      MPI_Allreduce(MPI_IN_PLACE, bkl, (int)nb, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    pb_error_set("MPI error reducing the reference moments");
    status = PB_FAIL;
    goto done;
  }
  struct pb_exact_moments m;
  pb_exact_moments_init(&m, g->n, PB_EXACT_BINS);
  double kl = 0.0;
  for (int64_t b = 0; b < nb; b++) {
    struct pb_exact_moments part = {g->n, PB_EXACT_BINS, 0, bcnt + b * cells, bsum + b * cells};
    pb_exact_moments_merge(&m, &part);
    kl += bkl[b];
  }
  m.n = N;
  r->have_reference = 1;
  r->reference_n = N;
  r->ref_mc = pb_exact_mc(&m, &r->ref_mc_group, &r->ref_mc_bin);
  r->ref_ece = pb_exact_ece(&m, 0);
  r->ref_kl = kl / (double)N;
  r->ref_halfwidth = pb_exact_hoeffding(N, (int)cells, PB_EXACT_BINS, 0.05);
  pb_exact_moments_free(&m);
  struct pb_exact__vc *vc[PB_EXACT_BINS];
  int64_t nvc[PB_EXACT_BINS] = {0};
  for (int b = 0; b < PB_EXACT_BINS; b++) vc[b] = pb_malloc(sizeof **vc * (size_t)(hi - lo + 1));
  for (int64_t i = 0; i < hi - lo; i++) vc[bin[i]][nvc[bin[i]]++] = (struct pb_exact__vc){pv[i], 1};
  for (int b = 0; b < PB_EXACT_BINS; b++) nvc[b] = pb_exact__vc_compact(vc[b], nvc[b]);
  status = pb_exact__gather_laws(comm, vc, nvc, law, mass);
  for (int b = 0; b < PB_EXACT_BINS; b++) free(vc[b]);
done:
  free(bsum);
  free(bkl);
  free(bcnt);
  free(pv);
  free(bin);
  return status;
}

/* ---------------------------------------------------------------- higher-order calibration (C.5) */
/* Positives among k labels drawn at probability p for calibration input i. */
static int pb_exact__snapshot(uint64_t seed, int64_t i, int k, double p)
{
  struct pb_rng rng;
  int s = 0;
  pb_rng_init(&rng, seed, PB_RNG_EXACT, (uint64_t)i, (uint32_t)k);
  for (int t = 0; t < k; t++) s += pb_rng_uniform(&rng) < p;
  return s;
}

/* E_HO, E_k (fitted and before fitting, Eq. 5, 9) and delta_k (Eq. 7) for
 * every k, bins of the scored predictor weighted by reference mass; a bin
 * without calibration inputs uses the pooled calibration mixture (C.5). */
static void pb_exact__higher_order(const struct pb_world *w, const struct pb_exact_predictor *p, uint64_t seed,
                                   int64_t ncal, const struct pb_exact_law *law, const int64_t *mass, int64_t N,
                                   struct pb_exact_result *r)
{
  int na = pb_world_n_attrs(w);
  double *x = pb_malloc(sizeof(double) * (size_t)(ncal * na)), *ps = pb_malloc(sizeof(double) * (size_t)ncal);
  double *q = pb_malloc(sizeof(double) * (size_t)ncal), *qc = pb_malloc(sizeof(double) * (size_t)ncal);
  double *f = pb_malloc(sizeof(double) * (size_t)(p->d + 1));
  double *ones = pb_malloc(sizeof(double) * (size_t)ncal);
  int *bin = pb_malloc(sizeof(int) * (size_t)ncal), *s = pb_malloc(sizeof(int) * (size_t)ncal);
  int *sc = pb_malloc(sizeof(int) * (size_t)ncal);
  pb_world_draw_range(w, seed, PB_EXACT_STREAM_CALIBRATION, 0, ncal, x, NULL, ps);
  for (int64_t i = 0; i < ncal; i++) {
    q[i] = pb_exact__predict(w, p, x + i * na, ps[i], f);
    bin[i] = pb_exact_bin(q[i], PB_EXACT_BINS);
    ones[i] = 1.0;
  }
  r->have_ho = 1;
  r->covered_mass = 0.0;
  for (int b = 0; b < PB_EXACT_BINS; b++) {
    int64_t nc = 0;
    for (int64_t i = 0; i < ncal; i++) nc += bin[i] == b;
    if (nc > 0) r->covered_mass += (double)mass[b] / (double)N;
  }
  for (int t = 0; t < PB_EXACT_NK; t++) {
    int k = pb_exact_snapshot_k[t];
    double eho = 0.0, ek = 0.0, ekb = 0.0, dk = 0.0;
    for (int64_t i = 0; i < ncal; i++) s[i] = pb_exact__snapshot(seed, i, k, ps[i]);
    for (int b = 0; b < PB_EXACT_BINS; b++) {
      if (mass[b] == 0) continue;
      int64_t nc = 0;
      for (int64_t i = 0; i < ncal; i++)
        if (bin[i] == b) sc[nc] = s[i], qc[nc++] = q[i];
      struct pb_exact_law fit, before, proj;
      pb_exact_law_fractions(k, nc ? nc : ncal, nc ? sc : s, &fit);
      pb_exact_law_snapshot(k, (int)(nc ? nc : ncal), nc ? qc : q, ones, &before);
      pb_exact_law_snapshot(k, law[b].n, law[b].x, law[b].w, &proj);
      double wc = (double)mass[b] / (double)N;
      eho += wc * pb_exact_w1(&fit, &law[b]);
      ek += wc * pb_exact_w1(&fit, &proj);
      ekb += wc * pb_exact_w1(&before, &proj);
      dk += wc * pb_exact_w1(&proj, &law[b]);
      pb_exact_law_free(&fit);
      pb_exact_law_free(&before);
      pb_exact_law_free(&proj);
    }
    r->e_ho[t] = eho, r->e_k[t] = ek, r->e_k_before[t] = ekb, r->delta_k[t] = dk;
  }
  free(x);
  free(ps);
  free(q);
  free(qc);
  free(f);
  free(ones);
  free(bin);
  free(s);
  free(sc);
}

/* ---------------------------------------------------------------- sweeps */
/* Empirical MC (labels as targets, Eq. 3) of the predictor on R calibration
 * resamples of each size; resample r is rows [0, n) of its own stream. */
static void pb_exact__empirical_mc(const struct pb_world *w, const struct pb_exact_predictor *p,
                                   const struct pb_exact_groups *g, uint64_t seed, struct pb_exact_result *r)
{
  int na = pb_world_n_attrs(w);
  r->emp_mc = pb_calloc((size_t)(r->n_sizes * r->resamples), sizeof *r->emp_mc);
#pragma omp parallel
  {
    double *x = pb_malloc(sizeof(double) * (size_t)na), *f = pb_malloc(sizeof(double) * (size_t)(p->d + 1));
    unsigned char *mem = pb_malloc((size_t)g->n);
    struct pb_exact_moments m;
    pb_exact_moments_init(&m, g->n, PB_EXACT_BINS);
#pragma omp for schedule(dynamic, 1)
    for (int item = 0; item < r->n_sizes * r->resamples; item++) {
      int a = item / r->resamples, rep = item % r->resamples;
      pb_exact_moments_clear(&m);
      for (int64_t i = 0; i < r->sizes[a]; i++) {
        int y;
        double ps;
        pb_world_draw(w, seed, PB_EXACT_STREAM_RESAMPLE + (uint32_t)rep, (uint64_t)i, x, &y, &ps);
        pb_exact__member(g, x, mem);
        pb_exact_moments_add(&m, mem, pb_exact__predict(w, p, x, ps, f), (double)y);
      }
      r->emp_mc[item] = pb_exact_mc(&m, NULL, NULL);
    }
    pb_exact_moments_free(&m);
    free(x);
    free(f);
    free(mem);
  }
}

/* 1NN / kNN estimators (C.3) for every size and seed 2032-2034, then the
 * ablation without irrelevant fields at the largest size; item i runs on rank
 * i mod size and the results are summed (zeros elsewhere). */
static int pb_exact__knn_sweep(MPI_Comm comm, const struct pb_world *w, enum pb_exact_knn_bound form,
                               struct pb_exact_result *r)
{
  int rank, size, na = pb_world_n_attrs(w), items = (r->n_sizes + 1) * PB_EXACT_NSEEDS;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double buf[(PB_EXACT_MAX_SIZES + 1) * PB_EXACT_NSEEDS * 6] = {0};
  for (int item = 0; item < items; item++) {
    if (item % size != rank) continue;
    int a = item / PB_EXACT_NSEEDS, sd = item % PB_EXACT_NSEEDS, all = a < r->n_sizes;
    int64_t n = r->sizes[all ? a : r->n_sizes - 1];
    int d = pb_exact__width(w, all);
    double *x = pb_malloc(sizeof(double) * (size_t)(n * na)), *f = pb_malloc(sizeof(double) * (size_t)(n * d));
    int *y = pb_malloc(sizeof(int) * (size_t)n);
    pb_world_draw_range(w, 2032 + (uint64_t)sd, PB_EXACT_STREAM_KNN, 0, n, x, y, NULL);
    for (int64_t i = 0; i < n; i++) pb_exact__encode(w, all, x + i * na, f + i * d);
    struct pb_exact_nn e = {NAN, NAN, NAN, NAN, NAN, NAN};
    pb_exact_nn_estimate(n, d, f, y, PB_EXACT_KNN_K, form, &e); /* k = PB_EXACT_KNN_K, odd, below 64: no failure */
    double *o = buf + item * 6;
    o[0] = e.err_1nn, o[1] = e.err_knn, o[2] = e.ch_lower, o[3] = e.ch_upper, o[4] = e.dv_lower, o[5] = e.dv_upper;
    free(x);
    free(f);
    free(y);
  }
  if (MPI_Allreduce(MPI_IN_PLACE, buf, items * 6, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    pb_error_set("MPI error reducing the nearest-neighbour sweep");
    return PB_FAIL;
  }
  for (int item = 0; item < items; item++) {
    const double *o = buf + item * 6;
    int a = item / PB_EXACT_NSEEDS, sd = item % PB_EXACT_NSEEDS;
    struct pb_exact_nn e = {o[0], o[1], o[2], o[3], o[4], o[5]};
    if (a < r->n_sizes) r->knn[a][sd] = e;
    else r->knn_relevant[sd] = e;
  }
  r->have_knn = 1;
  r->knn_bound = (int)form;
  return PB_OK;
}

/* ---------------------------------------------------------------- stage */
/* Eq. 1-3 on the cases themselves: targets p* (exact, no labels) and y. */
static void pb_exact__score_cases(const struct pb_world_cases *c, const struct pb_exact_groups *g, const double *q,
                                  struct pb_exact_result *r)
{
  struct pb_exact_moments mp, my;
  unsigned char *mem = pb_malloc((size_t)g->n);
  pb_exact_score(c->n, c->pstar, q, c->y, &r->cases);
  r->n_cases = c->n;
  pb_exact_moments_init(&mp, g->n, PB_EXACT_BINS);
  pb_exact_moments_init(&my, g->n, PB_EXACT_BINS);
  for (int64_t i = 0; i < c->n; i++) {
    if (isnan(q[i])) continue;  /* an unknown forecast has no bin */
    pb_exact__member(g, c->x + i * c->na, mem);
    pb_exact_moments_add(&mp, mem, q[i], c->pstar[i]);
    pb_exact_moments_add(&my, mem, q[i], (double)c->y[i]);
  }
  r->cases_mc = pb_exact_mc(&mp, NULL, NULL);
  r->cases_ece = pb_exact_ece(&mp, 0);
  r->emp_cases_mc = pb_exact_mc(&my, NULL, NULL);
  pb_exact_moments_free(&mp);
  pb_exact_moments_free(&my);
  free(mem);
}

/* Phase times of the slowest rank (the bench reads this line). */
int pb_exact_timings(struct pb_timer *t, MPI_Comm comm, struct pb_results *res, int64_t reference)
{
  pb_timer_reduce(t, comm);
  double ref = pb_timer_get(t, "reference");
  pb_message("exact: reference %.3f s (%lld inputs, %.2f M inputs/s); higher-order %.3f s; empirical MC %.3f s; "
             "kNN sweep %.3f s; write %.3f s",
             ref, (long long)reference, ref > 0 ? reference / ref / 1e6 : 0.0, pb_timer_get(t, "higher_order"),
             pb_timer_get(t, "empirical_mc"), pb_timer_get(t, "knn"), pb_timer_get(t, "write"));
  return pb_timer_write(t, res);
}

void pb_exact_eval_free(struct pb_exact_eval *e)
{
  free(e->pred.beta);
  free(e->r.emp_mc);
  memset(e, 0, sizeof *e);
}

/* Everything of one predictor on one set of cases: scores on the cases, and
 * for a built-in predictor the population reference, the higher-order
 * comparison and the empirical-MC sweep; the kNN sweep when @p knn.
 * @p qfile: the forecasts of a predictions file (NULL for a built-in name). */
int pb_exact_evaluate(MPI_Comm comm, const struct pb_world_cases *c, const struct pb_exact_groups *g, const char *pred,
                      const double *qfile, const struct pb_exact_options *o, int knn, struct pb_exact_eval *e)
{
  struct pb_exact_law law[PB_EXACT_BINS] = {{0}};
  int64_t mass[PB_EXACT_BINS];
  double *q = pb_malloc(sizeof(double) * (size_t)c->n);
  int status = PB_FAIL;
  memset(e, 0, sizeof *e);
  pb_timer_start(&e->timer, "exact");
  if (pb_exact__predictor(pred, c, o->lambda, &e->pred)) goto done;
  if (qfile) e->pred.kind = PB_EXACT_PRED_FILE;
  pb_world_summary(c->world, &e->r.world);
  e->groups = g;
  if (qfile) {
    memcpy(q, qfile, sizeof(double) * (size_t)c->n);
  } else {
    double *f = pb_malloc(sizeof(double) * (size_t)(e->pred.d + 1));
    for (int64_t i = 0; i < c->n; i++) q[i] = pb_exact__predict(c->world, &e->pred, c->x + i * c->na, c->pstar[i], f);
    free(f);
  }
  pb_exact__score_cases(c, g, q, &e->r);
  e->r.n_sizes = o->n_sizes;
  e->r.resamples = o->resamples;
  memcpy(e->r.sizes, o->sizes, sizeof e->r.sizes);
  pb_timer_lap(&e->timer, "cases");
  if (!qfile) {
    if (pb_exact__reference(comm, c->world, &e->pred, g, c->seed, o->reference, &e->r, law, mass)) goto done;
    pb_timer_lap(&e->timer, "reference");
    pb_exact__higher_order(c->world, &e->pred, c->seed, o->calibration, law, mass, o->reference, &e->r);
    pb_timer_lap(&e->timer, "higher_order");
    pb_exact__empirical_mc(c->world, &e->pred, g, c->seed, &e->r);
    pb_timer_lap(&e->timer, "empirical_mc");
  }
  if (knn && pb_exact__encodable(c->world) && pb_exact__knn_sweep(comm, c->world, (enum pb_exact_knn_bound)o->knn_bound, &e->r)) goto done;
  pb_timer_lap(&e->timer, "knn");
  status = PB_OK;
done:
  for (int b = 0; b < PB_EXACT_BINS; b++) pb_exact_law_free(&law[b]);
  free(q);
  return status;
}

int pb_exact_score_run(const char *cases, const char *predictions, const char *outdir,
                       const struct pb_exact_options *o, MPI_Comm comm, const char *provenance)
{
  struct pb_world_cases c;
  struct pb_exact_eval e = {0};
  struct pb_exact_groups g = {0};
  struct pb_results *res = NULL;
  double *qfile = NULL;
  int status = PB_FAIL;
  if (pb_world_cases_read(cases, &c)) goto done;
  struct pb_exact_cuts cuts;
  pb_exact_quartiles(c.world, c.seed, &cuts);
  pb_exact_groups_build(c.world, &cuts, &g);
  if (!pb_exact__builtin(predictions)) {
    qfile = pb_malloc(sizeof(double) * (size_t)c.n);
    if (pb_exact_predictions_read(predictions, c.n, qfile)) goto done;
  }
  if (pb_exact_evaluate(comm, &c, &g, predictions, qfile, o, 1, &e)) goto done;
  if (pb_results_create(outdir, comm, provenance, &res)) goto done;
  if (pb_exact_write(res, c.world, &e)) goto done;
  pb_timer_lap(&e.timer, "write");
  pb_exact_timings(&e.timer, comm, res, o->reference);
  status = pb_results_commit(res);
  res = NULL;
done:
  if (res) pb_results_close(res);
  free(qfile);
  pb_exact_eval_free(&e);
  pb_exact_groups_free(&g);
  pb_world_cases_free(&c);
  return status;
}

