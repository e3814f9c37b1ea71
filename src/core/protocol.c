/* Evaluation protocol: development thresholds (Appendix F), tiers (Section 3.3)
 * and the frozen panel (Appendix B.1). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/checksum.h"
#include "pairbound/clones.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/protocol.h"
#include "pairbound/stage.h"

const double pb_protocol_q[PB_PROTOCOL_N_Q] = {0.6, 0.7, 0.8, 0.9, 1.0};

int pb_protocol_tier_of_accuracy(double accuracy)
{
  if (accuracy >= 0.40) return PB_TIER_MILD;
  if (accuracy >= 0.20) return PB_TIER_SEVERE;
  return PB_TIER_EXTREME;
}

const char *pb_protocol_tier_name(int tier)
{
  static const char *names[] = {"mild", "severe", "extreme"};
  return tier >= 0 && tier < PB_N_TIERS ? names[tier] : "none";
}

/* --panel-cells SRC=N (repeatable) */
static int pb_protocol__opt_panel_cells(void *opts, const char *label, const char *v)
{
  struct pb_protocol_options *p = opts;
  const char *eq = strchr(v, '=');
  uint64_t n;
  if (!eq || eq == v || pb_parse_uint(eq + 1, 1u << 30, &n)) {
    pb_error_set("%s takes SRC=N, got '%s'", label, v);
    return PB_FAIL;
  }
  p->quota_source = pb_realloc(p->quota_source, (size_t)(p->n_quota + 1) * sizeof(char *));
  p->quota = pb_realloc(p->quota, (size_t)(p->n_quota + 1) * sizeof(int32_t));
  p->quota_source[p->n_quota] = pb_strdup(v);
  p->quota_source[p->n_quota][eq - v] = '\0';
  p->quota[p->n_quota++] = (int32_t)n;
  return PB_OK;
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_protocol_options, member)
const struct pb_option pb_protocol_option_table[] = {
  {.name = "coverage", .type = PB_OPTION_DOUBLE, PB_O(coverage), .metavar = "X", .min = 0, .open_min = 1, .max = 1,
   .def = "0.8", .help = "clean-development coverage of the acceptance threshold"},
  {.name = "panel-seed", .type = PB_OPTION_INT, PB_O(panel_seed), .metavar = "N", .def = "20260910",
   .help = "seed of the frozen panel's name ordering"},
  {.name = "panel-cells", .type = PB_OPTION_CUSTOM, .parse = pb_protocol__opt_panel_cells, .metavar = "SRC=N",
   .repeatable = 1, .help = "panel size of source SRC (default 90 for a synthetic source, 135 for a real one; docs/protocol.md); "
           "repeatable"},
  {.name = "labels", .type = PB_OPTION_CHOICE, PB_O(labels), .choices = "auto|single|set", .metavar = "single|set|auto",
   .def = "auto", .help = "correctness: single (pred = label), set (pred in the image's label set; images without "
                          "one left out), auto (set when the store has label sets; docs/protocol.md)"},
  {.name = NULL}};
#undef PB_O

void pb_protocol_options_default(struct pb_protocol_options *opt)
{
  memset(opt, 0, sizeof *opt);
  pb_options_defaults(pb_protocol_option_table, opt);
}

void pb_protocol_options_free(struct pb_protocol_options *opt)
{
  for (int32_t i = 0; i < opt->n_quota; i++) free(opt->quota_source[i]);
  free(opt->quota_source);
  free(opt->quota);
  pb_protocol_options_default(opt);
}

/* Descending order's integer image of x: larger floats get smaller images;
 * -0 and +0 the same one. */
static inline uint32_t pb_protocol__image(float x)
{
  uint32_t u = 0;
  if (x != 0.0f) memcpy(&u, &x, sizeof u);
  return ~(u >> 31 ? ~u : u | 0x80000000u);
}

/* v[0 .. n) in descending order, stably: an LSD radix sort (passes of 11,
 * 11 and 10 bits, @p tmp holds n more) on each value's order-preserving
 * integer image, complemented.  Values equal as floats share an image (-0
 * takes +0's), so equal values keep their input order, as the stable merge
 * sort of glibc's qsort kept them: the value at a rank, -0 or +0 included,
 * is the one qsort gave (the protocol's compute on the paper store took
 * 0.055-0.060 s with qsort, 0.044-0.045 s with this).  NaN-free input
 * (records are checked when read). */
static void pb_protocol__sort_desc(float *v, float *tmp, int32_t n)
{
  static const int shift[3] = {0, 11, 22};
  float *src = v, *dst = tmp;
  for (int pass = 0; pass < 3; pass++) {
    int32_t cnt[2049] = {0};
    for (int32_t i = 0; i < n; i++) cnt[(pb_protocol__image(src[i]) >> shift[pass] & 2047u) + 1]++;
    for (int b = 0; b < 2048; b++) cnt[b + 1] += cnt[b];
    for (int32_t i = 0; i < n; i++) dst[cnt[pb_protocol__image(src[i]) >> shift[pass] & 2047u]++] = src[i];
    float *t = src;
    src = dst;
    dst = t;
  }
  if (src != v) memcpy(v, src, (size_t)n * sizeof *v);
}

int32_t pb_protocol_rank(int32_t n, double q)
{
  /* rank round(q n), half up, in integers with q taken to 1e-6: q * n in
   * floating point puts .7 * 175 just below 122.5 */
  int64_t qm = llround(q * 1e6);
  int32_t r = (int32_t)((qm * n + 500000) / 1000000);
  if (r < 1) r = 1;
  if (r > n) r = n;
  return r;
}

float pb_protocol_threshold(const float *scores, int32_t n, double q)
{
  if (n <= 0) return NAN;
  float *s = pb_malloc(2 * (size_t)n * sizeof *s);
  memcpy(s, scores, (size_t)n * sizeof *s);
  pb_protocol__sort_desc(s, s + n, n);
  float t = s[pb_protocol_rank(n, q) - 1];
  free(s);
  return t;
}

int32_t pb_protocol_default_quota(const struct pb_source *src)
{
  if (pb_meta_is_probe(src)) return 0;
  return src->role == PB_ROLE_SYNTHETIC ? PB_PROTOCOL_QUOTA_SYNTHETIC : PB_PROTOCOL_QUOTA_REAL;
}

struct pb_protocol__key { uint64_t key; int32_t index; };

static int pb_protocol__cmp_key(const void *a, const void *b)
{
  const struct pb_protocol__key *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->index - y->index;
}

/* Order names by SHA-256("panel|seed|source|kind|name"). */
static void pb_protocol__order(uint64_t seed, const char *source, const char *kind, char *const *names,
                               int32_t n, int32_t skip, int32_t *order, int32_t *count)
{
  struct pb_protocol__key *k = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  int32_t m = 0;
  for (int32_t i = 0; i < n; i++) {
    if (i == skip) continue;
    size_t len = strlen(source) + strlen(kind) + strlen(names[i]) + 48;
    char *text = pb_malloc(len);
    snprintf(text, len, "panel|%llu|%s|%s|%s", (unsigned long long)seed, source, kind, names[i]);
    k[m++] = (struct pb_protocol__key){pb_checksum_sha256_key(text), i};
    free(text);
  }
  qsort(k, (size_t)m, sizeof *k, pb_protocol__cmp_key);
  for (int32_t i = 0; i < m; i++) order[i] = k[i].index;
  *count = m;
  free(k);
}

void pb_protocol_panel(const struct pb_meta *meta, int32_t s, uint64_t seed, int32_t quota, uint8_t *panel)
{
  const struct pb_source *src = &meta->sources[s];
  int32_t M = meta->n_models, C = 0, nm = 0;
  int32_t *morder = pb_malloc((size_t)M * sizeof *morder);
  int32_t *corder = pb_malloc((size_t)src->n_conditions * sizeof *corder);
  pb_protocol__order(seed, src->name, "model", meta->model_ids, M, -1, morder, &nm);
  pb_protocol__order(seed, src->name, "condition", src->conditions, src->n_conditions, src->clean, corder, &C);
  memset(panel, 0, (size_t)M * (size_t)src->n_conditions);
  if (quota > M * C) quota = M * C;
  for (int32_t k = 0, cursor = 0; k < quota; k++) {
    int32_t m = morder[k % M];
    while (panel[(size_t)m * src->n_conditions + corder[cursor % C]]) cursor++;
    panel[(size_t)m * src->n_conditions + corder[cursor % C]] = 1;
    cursor++;
  }
  free(morder);
  free(corder);
}

static void pb_protocol__alloc(struct pb_protocol *p, const struct pb_meta *meta, const struct pb_protocol_options *opt)
{
  memset(p, 0, sizeof *p);
  p->coverage = opt->coverage;
  p->panel_seed = opt->panel_seed;
  p->n_sources = meta->n_sources;
  p->n_models = meta->n_models;
  p->src = pb_calloc((size_t)meta->n_sources, sizeof *p->src);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    struct pb_protocol_source *ps = &p->src[s];
    size_t M = (size_t)meta->n_models, C = (size_t)meta->sources[s].n_conditions;
    ps->n_eval = pb_dist_eval_count(&meta->sources[s]);
    /* not n_images - n_eval: under label sets an image without a set is neither (PB_SPLIT_NONE) */
    ps->n_dev = 0;
    for (int32_t i = 0; i < meta->sources[s].n_images; i++) ps->n_dev += meta->sources[s].split[i] == PB_SPLIT_DEV;
    ps->tau = pb_calloc(M, sizeof(float));
    ps->policy_tau = pb_calloc(M * PB_PROTOCOL_N_Q, sizeof(float));
    ps->dev_correct = pb_calloc(M * C, sizeof(int64_t));
    ps->eval_correct = pb_calloc(M * C, sizeof(int64_t));
    ps->mean_dev_acc = pb_calloc(C, sizeof(double));
    ps->tier = pb_calloc(C, sizeof(int8_t));
    ps->panel = pb_calloc(M * C, 1);
    /* probe sources have no cells (docs/store.md), so no panel */
    ps->panel_quota = pb_protocol_default_quota(&meta->sources[s]);
    for (int32_t i = 0; i < opt->n_quota; i++)
      if (!pb_meta_is_probe(&meta->sources[s]) && strcmp(opt->quota_source[i], meta->sources[s].name) == 0)
        ps->panel_quota = opt->quota[i];
  }
}

/* Pred rows are read a batch of models at a time into one buffer of this
 * many bytes (at least one model): every row is only counted, so the buffer
 * is touched once and reused, instead of the whole share's rows in fresh
 * memory (608 MB for a 100,000-image source of 20 models x 76 conditions). */
#define PB_PROTOCOL_BATCH_BYTES ((size_t)8 << 20)

/* Development and evaluation correct counts of rows [lo, hi) of source s.
 * The batches depend on the metadata only, so every rank makes the same
 * reads (with no rows where it has none) and the collective calls match. */
/* One row's correct predictions on the development and evaluation halves,
 * without a branch and in vector lanes (GCC's -O2 cost model left the loop
 * scalar: 7% of bounds on an ImageNet-shaped store). */
PB_CLONES static void pb_protocol__count(const int32_t *pr, const struct pb_source *src, int64_t *dev_out,
                                         int64_t *eval_out)
{
  const int32_t *lab = src->labels;
  const uint8_t *split = src->split;
  int32_t dev = 0, eval = 0;
  /* both halves counted: an image without a label set (PB_SPLIT_NONE, labels = set) is in neither */
#pragma omp simd reduction(+ : dev, eval)
  for (int32_t i = 0; i < src->n_images; i++) {
    const int32_t hit = pr[i] == lab[i];
    dev += hit & (split[i] == PB_SPLIT_DEV);
    eval += hit & (split[i] == PB_SPLIT_EVAL);
  }
  *dev_out = dev;
  *eval_out = eval;
}

static int pb_protocol__correct(struct pb_store *st, int32_t s, int32_t lo, int32_t hi, struct pb_protocol *p)
{
  const struct pb_source *src = &pb_store_meta(st)->sources[s];
  const int32_t C = src->n_conditions, M = pb_store_meta(st)->n_models;
  const size_t model_bytes = (size_t)C * (size_t)src->n_images * sizeof(int32_t);
  const int32_t per = model_bytes > 0 && PB_PROTOCOL_BATCH_BYTES / model_bytes > 1
                        ? (int32_t)(PB_PROTOCOL_BATCH_BYTES / model_bytes) : 1;
  int32_t *rows = pb_malloc((size_t)per * (size_t)C * sizeof *rows);
  struct pb_rows buf;
  pb_store_rows_alloc(&buf, per * C, src->n_images, 0);
  free(buf.smax);
  free(buf.ptrue);
  buf.smax = buf.ptrue = NULL;
  int status = PB_OK;
  for (int32_t m = 0; m < M && status == PB_OK; m += per) {
    const int32_t a = lo > m * C ? lo : m * C, b = hi < (m + per) * C ? hi : (m + per) * C;
    int32_t nr = 0;
    for (int32_t r = a; r < b; r++) rows[nr++] = r;
    status = pb_store_read_fields_into(st, s, nr, rows, PB_FIELD_PRED, &buf);
    if (status != PB_OK) break;
#pragma omp parallel for schedule(static)
    for (int32_t j = 0; j < nr; j++)
      pb_protocol__count(buf.pred + (size_t)j * src->n_images, src, &p->src[s].dev_correct[rows[j]],
                         &p->src[s].eval_correct[rows[j]]);
  }
  pb_store_rows_free(&buf);
  free(rows);
  return status;
}

/* Correct counts of my rows, and thresholds of my clean rows. */
static int pb_protocol__rows(struct pb_store *st, int32_t s, int32_t lo, int32_t hi, struct pb_protocol *p)
{
  const struct pb_meta *meta = pb_store_meta(st);
  const struct pb_source *src = &meta->sources[s];
  struct pb_protocol_source *ps = &p->src[s];
  int32_t nr = hi - lo, nclean = 0;
  int32_t *clean = pb_malloc((size_t)(nr > 0 ? nr : 1) * sizeof *clean);
  for (int32_t r = lo; r < hi; r++)
    if (r % src->n_conditions == src->clean) clean[nclean++] = r;
  struct pb_rows smax = {0};
  int status = pb_protocol__correct(st, s, lo, hi, p);
  if (status == PB_OK) status = pb_store_read_fields(st, s, nclean, clean, PB_FIELD_SMAX, &smax);
  if (status == PB_OK) {
    /* the thresholds of a model are ranks of its development scores sorted
     * once in pb_protocol_threshold's order; models over threads */
#pragma omp parallel
    {
      float *dev = pb_malloc(2 * (size_t)(ps->n_dev > 0 ? ps->n_dev : 1) * sizeof *dev);
#pragma omp for schedule(static)
      for (int32_t j = 0; j < nclean; j++) {
        int32_t m = clean[j] / src->n_conditions, n = 0;
        for (int32_t i = 0; i < src->n_images; i++)
          if (src->split[i] == PB_SPLIT_DEV) dev[n++] = smax.smax[(size_t)j * src->n_images + i];
        pb_protocol__sort_desc(dev, dev + n, n);
        ps->tau[m] = n > 0 ? dev[pb_protocol_rank(n, p->coverage) - 1] : NAN;
        for (int32_t q = 0; q < PB_PROTOCOL_N_Q; q++)
          ps->policy_tau[m * PB_PROTOCOL_N_Q + q] = n > 0 ? dev[pb_protocol_rank(n, pb_protocol_q[q]) - 1] : NAN;
      }
      free(dev);
    }
  }
  pb_store_rows_free(&smax);
  free(clean);
  return status;
}

int pb_protocol_compute(struct pb_store *st, MPI_Comm comm, const struct pb_protocol_options *opt,
                        struct pb_protocol *out)
{
  const struct pb_meta *meta = pb_store_meta(st);
  int status = PB_OK;
  pb_protocol__alloc(out, meta, opt);
  int32_t *lo = pb_malloc((size_t)meta->n_sources * sizeof *lo), *hi = pb_malloc((size_t)meta->n_sources * sizeof *hi);
  pb_dist_my_rows(meta, comm, lo, hi);
  /* each rank reads its own rows without waiting for the others source by source (docs/store.md, "Reading",
   * step 5; @p comm is the store's) */
  const int alone = pb_store_reads_independent(st, PB_FIELD_PRED | PB_FIELD_SMAX);
  for (int32_t s = 0; s < meta->n_sources && status == PB_OK; s++) status = pb_protocol__rows(st, s, lo[s], hi[s], out);
  free(lo);
  free(hi);
  status = alone ? pb_store_reads_collective(st, status) : pb_error_agree(comm, status);
  if (status != PB_OK) goto done;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    struct pb_protocol_source *ps = &out->src[s];
    int MC = meta->n_models * src->n_conditions;
    /* each entry was set by exactly one rank and is zero elsewhere, so sums are exact */
    pb_comm_allreduce(MPI_IN_PLACE, ps->dev_correct, MC, MPI_INT64_T, MPI_SUM, comm);
    pb_comm_allreduce(MPI_IN_PLACE, ps->eval_correct, MC, MPI_INT64_T, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, ps->tau, meta->n_models, MPI_FLOAT, MPI_SUM, comm);
    MPI_Allreduce(MPI_IN_PLACE, ps->policy_tau, meta->n_models * PB_PROTOCOL_N_Q, MPI_FLOAT, MPI_SUM, comm);
    for (int32_t c = 0; c < src->n_conditions; c++) {
      /* every model has the same n_dev, so the mean of accuracies is one exact
       * integer ratio: a mean of exactly .40 or .20 lands on its tier boundary */
      int64_t total = 0;
      for (int32_t m = 0; m < meta->n_models; m++) total += ps->dev_correct[m * src->n_conditions + c];
      ps->mean_dev_acc[c] = ps->n_dev > 0 ? (double)total / ((double)ps->n_dev * meta->n_models) : NAN;
      ps->tier[c] = c == src->clean || ps->n_dev == 0 ? -1 : (int8_t)pb_protocol_tier_of_accuracy(ps->mean_dev_acc[c]);
    }
    pb_protocol_panel(meta, s, out->panel_seed, ps->panel_quota, ps->panel);
  }
done:
  if (status != PB_OK) pb_protocol_free(out);
  return status;
}

static void *pb_protocol__dup(const void *a, size_t n)
{
  void *b = pb_malloc(n > 0 ? n : 1);
  if (n > 0) memcpy(b, a, n);
  return b;
}

void pb_protocol_copy(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_protocol *out)
{
  *out = *p;
  out->src = pb_calloc((size_t)p->n_sources, sizeof *out->src);
  for (int32_t s = 0; s < p->n_sources; s++) {
    const struct pb_protocol_source *a = &p->src[s];
    struct pb_protocol_source *b = &out->src[s];
    const size_t M = (size_t)meta->n_models, C = (size_t)meta->sources[s].n_conditions;
    *b = *a;
    b->tau = pb_protocol__dup(a->tau, M * sizeof *a->tau);
    b->policy_tau = pb_protocol__dup(a->policy_tau, M * PB_PROTOCOL_N_Q * sizeof *a->policy_tau);
    b->dev_correct = pb_protocol__dup(a->dev_correct, M * C * sizeof *a->dev_correct);
    b->eval_correct = pb_protocol__dup(a->eval_correct, M * C * sizeof *a->eval_correct);
    b->mean_dev_acc = pb_protocol__dup(a->mean_dev_acc, C * sizeof *a->mean_dev_acc);
    b->tier = pb_protocol__dup(a->tier, C * sizeof *a->tier);
    b->panel = pb_protocol__dup(a->panel, M * C * sizeof *a->panel);
  }
}

void pb_protocol_free(struct pb_protocol *p)
{
  for (int32_t s = 0; s < p->n_sources && p->src; s++) {
    struct pb_protocol_source *ps = &p->src[s];
    free(ps->tau), free(ps->policy_tau), free(ps->dev_correct), free(ps->eval_correct);
    free(ps->mean_dev_acc), free(ps->tier), free(ps->panel);
  }
  free(p->src);
  memset(p, 0, sizeof *p);
}

/* Thresholds table (one row per model and source) and conditions table. */
static void pb_protocol__tables(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_text *thr,
                                struct pb_text *cond, struct pb_text *panel)
{
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    const struct pb_protocol_source *ps = &p->src[s];
    for (int32_t m = 0; m < meta->n_models; m++) {
      pb_text_printf(thr, "%s\t%s\t%s\t%d", meta->model_ids[m], meta->model_groups[m], src->name, ps->n_dev);
      pb_text_double(thr, ps->tau[m]);
      for (int32_t q = 0; q < PB_PROTOCOL_N_Q; q++) pb_text_double(thr, ps->policy_tau[m * PB_PROTOCOL_N_Q + q]);
      pb_text_printf(thr, "\n");
      for (int32_t c = 0; c < src->n_conditions; c++)
        if (ps->panel[m * src->n_conditions + c])
          pb_text_printf(panel, "%s\t%s\t%s\n", meta->model_ids[m], src->name, src->conditions[c]);
    }
    for (int32_t c = 0; c < src->n_conditions; c++) {
      pb_text_printf(cond, "%s\t%s", src->name, src->conditions[c]);
      pb_text_double(cond, ps->mean_dev_acc[c]);
      pb_text_printf(cond, "\t%s\n", c == src->clean ? "clean" : pb_protocol_tier_name(ps->tier[c]));
    }
  }
}

static const char *pb_protocol__path(char *buf, size_t n, const char *source, const char *leaf)
{
  snprintf(buf, n, "/protocol/%s/%s", source, leaf);
  return buf;
}

static int pb_protocol__h5(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_results *res)
{
  char path[512];
  /* every rank holds the protocol; rank 0 writes it (the others' selections are empty) */
  int rank;
  MPI_Comm_rank(pb_results_comm(res), &rank);
  const int64_t r0 = rank == 0;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    const struct pb_protocol_source *ps = &p->src[s];
    int64_t M = meta->n_models, C = src->n_conditions;
    double *v = pb_malloc((size_t)(M * C * PB_PROTOCOL_N_Q) * sizeof *v);
    int64_t *w = pb_malloc((size_t)(M * C) * sizeof *w);
    int status = PB_OK;
    snprintf(path, sizeof path, "/protocol/%s", src->name);
    status |= pb_results_group(res, path);
    for (int64_t m = 0; m < M; m++) v[m] = ps->tau[m];
    status |= pb_results_write_f64(res, pb_protocol__path(path, sizeof path, src->name, "tau"), M, 0, r0 * (M), v);
    for (int64_t i = 0; i < M * PB_PROTOCOL_N_Q; i++) v[i] = ps->policy_tau[i];
    status |= pb_results_write_f64(res, pb_protocol__path(path, sizeof path, src->name, "policy_tau"), M * PB_PROTOCOL_N_Q, 0, r0 * (M * PB_PROTOCOL_N_Q), v);
    status |= pb_results_write_f64(res, pb_protocol__path(path, sizeof path, src->name, "mean_dev_accuracy"), C, 0, r0 * (C), ps->mean_dev_acc);
    for (int64_t c = 0; c < C; c++) w[c] = ps->tier[c];
    status |= pb_results_write_i64(res, pb_protocol__path(path, sizeof path, src->name, "tier"), C, 0, r0 * (C), w);
    for (int64_t i = 0; i < M * C; i++) w[i] = ps->panel[i];
    status |= pb_results_write_i64(res, pb_protocol__path(path, sizeof path, src->name, "panel"), M * C, 0, r0 * (M * C), w);
    status |= pb_results_write_i64(res, pb_protocol__path(path, sizeof path, src->name, "dev_correct"), M * C, 0, r0 * (M * C), ps->dev_correct);
    status |= pb_results_write_i64(res, pb_protocol__path(path, sizeof path, src->name, "eval_correct"), M * C, 0, r0 * (M * C), ps->eval_correct);
    free(v);
    free(w);
    if (status != PB_OK) return PB_FAIL;
  }
  return PB_OK;
}

int pb_protocol_write(const struct pb_protocol *p, const struct pb_meta *meta, struct pb_results *res)
{
  int status = pb_results_group(res, "/protocol");
  if (status == PB_OK) status = pb_protocol__h5(p, meta, res);
  if (status != PB_OK) return status;
  char attrs[256];
  snprintf(attrs, sizeof attrs, "coverage %.17g; policy q .6 .7 .8 .9 1; panel seed %llu; tiers mild >= .40, "
           "severe .20-.40, extreme < .20", p->coverage, (unsigned long long)p->panel_seed);
  if (pb_results_attr_str(res, "/protocol", "rule", attrs)) return PB_FAIL;
  struct pb_text thr = {0}, cond = {0}, panel = {0};
  int rank;
  MPI_Comm comm = pb_results_comm(res);
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) pb_protocol__tables(p, meta, &thr, &cond, &panel);
  status = pb_results_tsv(res, "protocol_thresholds.tsv",
                          "model\tgroup\tsource\tn_dev\ttau\ttau_q60\ttau_q70\ttau_q80\ttau_q90\ttau_q100\n", thr.buf,
                          thr.len);
  if (status == PB_OK)
    status = pb_results_tsv(res, "protocol_conditions.tsv", "source\tcondition\tmean_dev_accuracy\ttier\n", cond.buf,
                            cond.len);
  if (status == PB_OK)
    status = pb_results_tsv(res, "protocol_panel.tsv", "model\tsource\tcondition\n", panel.buf, panel.len);
  pb_text_free(&thr);
  pb_text_free(&cond);
  pb_text_free(&panel);
  return status;
}
