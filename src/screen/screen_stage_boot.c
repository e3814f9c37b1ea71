/* Intervals of the screening paired differences U - S, U - delta, U - ret,
 * U - A3, U - margin, U - entropy, g_SU - S (seed 000 Tables 16-20, 38):
 * model-group bootstrap of cell means and the class bootstrap of
 * class-weighted AUROC and coverage (E.1); with a TTA set the class
 * bootstrap also gives U - U_TTA, U - A3_TTA and U - agree_TTA (Tables 31,
 * 34, 37, 38), which the natural tables report.  Every interval the reports
 * print is resampled here (pb_screen_ivs_boot, collective); the report files
 * only format them on rank 0. */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/clones.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"
#include "pairbound/figure.h"
#include "pairbound/num.h"
#include "pairbound/resample.h"
#include "screen_internal.h"

const int pb_screen_boot_scores[PB_SB_NSCORES] = {PB_SR_U,      PB_SR_S,       PB_SR_DELTA, PB_SR_RET,
                                                  PB_SR_A3,     PB_SR_MARGIN,  PB_SR_ENTROPY, PB_SR_G_SU};
/* Tables 16-20 and 34-35 (S, delta, ret, A3), 38 (margin, entropy), 17 (g_SU - S), 25 (derangement,
 * leave-one-out), 26 (class baselines) */
const int pb_screen_boot_contrast[PB_SB_NCON] = {PB_SR_S,         PB_SR_DELTA,       PB_SR_RET,        PB_SR_A3,
                                                 PB_SR_MARGIN,    PB_SR_ENTROPY,     PB_SR_S,          PB_SR_U_DERANGE,
                                                 PB_SR_U_LOO,     PB_SR_CLASS_DELTA, PB_SR_CLASS_U_CC, PB_SR_CLASS_U_ALL};
const int pb_screen_boot_base[PB_SB_NCON] = {PB_SR_U, PB_SR_U, PB_SR_U, PB_SR_U, PB_SR_U, PB_SR_U,
                                             PB_SR_G_SU, PB_SR_U, PB_SR_U, PB_SR_U, PB_SR_U, PB_SR_U};

int32_t pb_screen_boot_score_row(const struct pb_screen_boot *B, int j)
{
  return j < PB_SB_NSCORES ? pb_screen_boot_scores[j] : B->dyn_row[j - PB_SB_NSCORES];
}

int pb_screen_boot_class_contrast(const struct pb_screen_boot *B, int32_t base, int32_t x)
{
  for (int c = 0; c < PB_SB_NCLASSCON; c++)
    if (pb_screen_boot_base[c] == base && pb_screen_boot_contrast[c] == x) return c;
  for (int d = 0; d < B->n_dyn && base == PB_SR_U; d++)
    if (B->dyn_row[d] == x) return PB_SB_NCON + d;
  return -1;
}

/* Index of score row r among the class bootstrap's scores (the class contrasts' rows are all there). */
static int pb_sb__score_index(const struct pb_screen_boot *B, int32_t r)
{
  int j = 0;
  while (j < B->n_scores - 1 && pb_screen_boot_score_row(B, j) != r) j++;
  return j;
}

/* Fixed point 2^-40: sums of differences in [-1, 1] over at most millions of
 * cells stay far inside int64, and integer sums are exact in any order. */
#define PB_SB_SCALE 1099511627776.0

void pb_screen_boot_init(struct pb_screen_boot *B, const struct pb_meta *meta, const struct pb_screen_layout *L,
                         const int32_t *targets, int32_t n_targets, uint64_t seed, int64_t draws)
{
  memset(B, 0, sizeof *B);
  B->n_targets = n_targets;
  B->draws = draws;
  /* the first set named TTA (as the natural tables): U - U_TTA, U - A3_TTA and U - agree_TTA; the
   * statistics of the fixed contrasts keep their places, so without it nothing moves */
  const int32_t tta = pb_screen_tta_row(L);
  if (tta >= 0) {
    B->dyn_row[B->n_dyn] = tta; /* by tier: Tables 31, 37; mild: Table 38 */
    B->dyn_tier[B->n_dyn++] = -1;
    B->dyn_row[B->n_dyn] = tta + 1; /* Table 34's natural rows report mild cells only */
    B->dyn_tier[B->n_dyn++] = PB_TIER_MILD;
    if (L->tta_rows >= 0) { /* TTA agreement: Table 38, mild */
      B->dyn_row[B->n_dyn] = L->tta_rows + PB_SN_AGREE;
      B->dyn_tier[B->n_dyn++] = PB_TIER_MILD;
    }
  }
  B->n_scores = PB_SB_NSCORES + B->n_dyn;
  B->n_stat = PB_SB_NSTAT + B->n_dyn * PB_SB_NMET;
  B->n_classes = pb_malloc((size_t)(n_targets > 0 ? n_targets : 1) * sizeof *B->n_classes);
  B->mult = pb_malloc((size_t)(n_targets > 0 ? n_targets : 1) * sizeof *B->mult);
  B->mult16 = pb_malloc((size_t)(n_targets > 0 ? n_targets : 1) * sizeof *B->mult16);
  for (int32_t t = 0; t < n_targets; t++) {
    int32_t K = meta->sources[targets[t]].n_classes;
    struct pb_boot_spec spec = {seed, PB_RNG_CLASS_BOOT, (uint32_t)targets[t], draws, PB_BOOT_LEVEL};
    B->n_classes[t] = K;
    const size_t blocks = (size_t)(draws > 0 ? draws + PB_WM_LANES - 1 : PB_WM_LANES) / PB_WM_LANES;
    int32_t *one = pb_malloc((size_t)(K > 0 ? K : 1) * sizeof *one);
    B->mult[t] = pb_calloc(blocks * (size_t)(K > 0 ? K : 1) * PB_WM_LANES, sizeof(int32_t));
    for (int64_t b = 0; b < draws; b++) {
      pb_resample_boot_multiplicities(&spec, b, K, one);
      int32_t *blk = B->mult[t] + (size_t)(b / PB_WM_LANES) * (size_t)K * PB_WM_LANES + b % PB_WM_LANES;
      for (int32_t c = 0; c < K; c++) blk[(size_t)c * PB_WM_LANES] = one[c];
    }
    free(one);
    /* a class count is at most K, the classes drawn */
    const size_t cells = blocks * (size_t)(K > 0 ? K : 1) * PB_WM_LANES;
    B->mult16[t] = K <= 65535 ? pb_malloc(cells * sizeof(uint16_t)) : NULL;
    for (size_t i = 0; i < cells && B->mult16[t]; i++) B->mult16[t][i] = (uint16_t)B->mult[t][i];
  }
  size_t rows = (size_t)n_targets * PB_SB_NROWS_PER_TARGET;
  B->sum = pb_calloc(rows * (size_t)(draws > 0 ? draws : 1) * (size_t)B->n_stat, sizeof *B->sum);
  B->cnt = pb_calloc(rows * (size_t)(draws > 0 ? draws : 1) * (size_t)B->n_stat, sizeof *B->cnt);
  B->cells = pb_calloc(rows * (size_t)(draws > 0 ? draws : 1), sizeof *B->cells);
}

void pb_screen_boot_free(struct pb_screen_boot *B)
{
  for (int32_t t = 0; t < B->n_targets && B->mult && !B->shared; t++) free(B->mult[t]), free(B->mult16[t]);
  if (!B->shared) {
    free(B->mult), free(B->mult16), free(B->n_classes);
  }
  free(B->sum), free(B->cnt), free(B->cells);
  memset(B, 0, sizeof *B);
}

static void pb_sb__add(int64_t *v, int64_t x)
{
#pragma omp atomic
  *v += x;
}

void pb_screen_boot_local(const struct pb_screen_boot *B, struct pb_screen_boot *L)
{
  *L = *B;
  L->shared = 1;
  size_t rows = (size_t)B->n_targets * PB_SB_NROWS_PER_TARGET, d = (size_t)(B->draws > 0 ? B->draws : 1);
  L->sum = pb_calloc(rows * d * (size_t)B->n_stat, sizeof *L->sum);
  L->cnt = pb_calloc(rows * d * (size_t)B->n_stat, sizeof *L->cnt);
  L->cells = pb_calloc(rows * d, sizeof *L->cells);
}

/* The accumulators of targets [t0, t1]: rows are target-major, so one run each. */
static void pb_sb__span(const struct pb_screen_boot *B, int32_t t0, int32_t t1, size_t *off, size_t *n)
{
  *off = (size_t)t0 * PB_SB_NROWS_PER_TARGET * (size_t)B->draws;
  *n = (size_t)(t1 - t0 + 1) * PB_SB_NROWS_PER_TARGET * (size_t)B->draws;
}

size_t pb_screen_boot_bytes(const struct pb_screen_boot *B, int32_t t0, int32_t t1)
{
  size_t off, n;
  if (t0 < 0 || t1 < t0 || t1 >= B->n_targets) return (size_t)-1;
  pb_sb__span(B, t0, t1, &off, &n);
  return (2 * n * (size_t)B->n_stat + n) * sizeof(int64_t);
}

void pb_screen_boot_put(const struct pb_screen_boot *L, int32_t t0, int32_t t1, struct pb_bytes *out)
{
  size_t off, n;
  pb_sb__span(L, t0, t1, &off, &n);
  size_t ns = (size_t)L->n_stat;
  pb_blocks_put(out, L->sum + off * ns, n * ns * sizeof *L->sum);
  pb_blocks_put(out, L->cnt + off * ns, n * ns * sizeof *L->cnt);
  pb_blocks_put(out, L->cells + off, n * sizeof *L->cells);
}

int pb_screen_boot_add(struct pb_screen_boot *B, int32_t t0, int32_t t1, struct pb_bytes *in)
{
  size_t off, n, ns = (size_t)B->n_stat;
  pb_sb__span(B, t0, t1, &off, &n);
  int64_t *v = pb_malloc((n * ns > 0 ? n * ns : 1) * sizeof *v);
  int status = PB_OK;
  for (int part = 0; part < 3 && status == PB_OK; part++) {
    size_t len = part < 2 ? n * ns : n;
    int64_t *dst = part == 0 ? B->sum + off * ns : part == 1 ? B->cnt + off * ns : B->cells + off;
    status = pb_blocks_get(in, v, len * sizeof *v);
    for (size_t i = 0; i < len && status == PB_OK; i++)
      if (v[i]) pb_sb__add(&dst[i], v[i]);
  }
  free(v);
  return status;
}

struct pb_sb__key { double s; int32_t i; };

static int pb_sb__cmp(const void *a, const void *b)
{
  const struct pb_sb__key *x = a, *y = b;
  if (x->s != y->s) return x->s < y->s ? -1 : 1;
  return (x->i > y->i) - (x->i < y->i);
}

void pb_screen_boot_orders(const double *const *score, int n_scores, int32_t n, int32_t **order, int32_t *n_order)
{
  struct pb_sb__key *k = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
  for (int j = 0; j < n_scores; j++) {
    int32_t m = 0;
    for (int32_t q = 0; q < n; q++)
      if (!isnan(score[j][q])) k[m++] = (struct pb_sb__key){score[j][q], q};
    qsort(k, (size_t)m, sizeof *k, pb_sb__cmp);
    order[j] = pb_malloc((size_t)(m > 0 ? m : 1) * sizeof(int32_t));
    for (int32_t q = 0; q < m; q++) order[j][q] = k[q].i;
    n_order[j] = m;
  }
  free(k);
}

/* A cell's scores packed for the draws: score j's codes (pb_screen_weighted_codes)
 * in codes[j] (their words at words + off[j]), and the classes among its
 * coded images with their image and failure counts at cls/in/fail + coff[j]
 * (ncls[j] of them), so a draw's weighted totals cost O(classes).  A score
 * defined on every image shares the cell's class counts (full[j]), summed
 * once per draw. */
struct pb_sb__cell {
  uint32_t *words;
  struct pb_wm_codes codes[PB_SB_NSCORES + PB_SB_NDYN];
  int32_t *cls, *in, *fail;
  size_t off[PB_SB_NSCORES + PB_SB_NDYN], coff[PB_SB_NSCORES + PB_SB_NDYN + 2];
  int32_t ncls[PB_SB_NSCORES + PB_SB_NDYN + 1];
  int full[PB_SB_NSCORES + PB_SB_NDYN];
};

/* Class counts of the images order[0..m) (all n images when order is NULL) appended at slot j. */
static void pb_sb__classes(struct pb_sb__cell *C, int j, const int32_t *label, const uint8_t *y, const int32_t *order,
                           int32_t m, int32_t *dense_in, int32_t *dense_fail)
{
  size_t o = C->coff[j];
  int32_t k = 0;
  for (int32_t i = 0; i < m; i++) {
    int32_t q = order ? order[i] : i, c = label[q];
    if (dense_in[c]++ == 0) C->cls[o + k++] = c;
    dense_fail[c] += y[q] != 0;
  }
  for (int32_t i = 0; i < k; i++) {
    int32_t c = C->cls[o + i];
    C->in[o + i] = dense_in[c];
    C->fail[o + i] = dense_fail[c];
    dense_in[c] = dense_fail[c] = 0;
  }
  C->ncls[j] = k;
  C->coff[j + 1] = o + (size_t)k;
}

static void pb_sb__cell_pack(struct pb_sb__cell *C, const struct pb_screen_boot *B, int32_t K, const int *use,
                             int32_t n, const int32_t *label, const uint8_t *y, const double *const *score,
                             int32_t *const *order, const int32_t *n_order)
{
  const int ns = B->n_scores;
  size_t nc = 0, cls = (size_t)(n < K ? n : K);
  for (int j = 0; j < ns; j++) {
    C->off[j] = nc;
    nc += use[j] ? PB_WM_CODE_WORDS(n_order[j]) : 0;
  }
  C->words = pb_malloc((nc > 0 ? nc : 1) * sizeof *C->words);
  size_t room = cls * (size_t)(ns + 1) + 1;
  C->cls = pb_malloc(room * sizeof *C->cls);
  C->in = pb_malloc(room * sizeof *C->in);
  C->fail = pb_malloc(room * sizeof *C->fail);
  int32_t *dense = pb_calloc(2 * (size_t)(K > 0 ? K : 1), sizeof *dense);
  C->coff[0] = 0;
  pb_sb__classes(C, 0, label, y, NULL, n, dense, dense + K); /* slot 0: every image */
  for (int j = 0; j < ns; j++) {
    C->full[j] = n_order[j] == n;
    C->coff[j + 2] = C->coff[j + 1];
    C->ncls[j + 1] = 0;
    if (!use[j]) continue;
    pb_screen_weighted_codes(score[j], y, label, order[j], n_order[j], C->words + C->off[j], &C->codes[j]);
    if (!C->full[j]) pb_sb__classes(C, j + 1, label, y, order[j], n_order[j], dense, dense + K);
  }
  free(dense);
}

/* Weighted failures and images among slot j's classes under each lane's class weights
 * (multT: class-major, PB_WM_LANES per class). */
PB_CLONES static void pb_sb__totals(const struct pb_sb__cell *C, int j, const int32_t *multT, int64_t *pos, int64_t *total)
{
  /* weights and counts are non-negative 32-bit numbers: unsigned 32 x 32 -> 64-bit products */
  uint64_t p[PB_WM_LANES] = {0}, t[PB_WM_LANES] = {0};
  for (size_t i = C->coff[j]; i < C->coff[j] + (size_t)C->ncls[j]; i++) {
    const int32_t *w = multT + (size_t)C->cls[i] * PB_WM_LANES;
    const uint64_t f = (uint32_t)C->fail[i], m = (uint32_t)C->in[i];
    for (int l = 0; l < PB_WM_LANES; l++) {
      p[l] += (uint64_t)(uint32_t)w[l] * f;
      t[l] += (uint64_t)(uint32_t)w[l] * m;
    }
  }
  for (int l = 0; l < PB_WM_LANES; l++) pos[l] = (int64_t)p[l], total[l] = (int64_t)t[l];
}

/* Score j's metrics m[j][lane][auroc, cov...] for draws b0 .. b0 + PB_WM_LANES - 1 (class-major weights multT). */
static void pb_sb__draws(const struct pb_screen_boot *B, const struct pb_sb__cell *C, const int *use,
                         const int32_t *multT, const uint16_t *mult16, double (*m)[PB_WM_LANES][PB_SB_NMET])
{
  static const int pcts[PB_SB_NMET - 1] = {10, 20, 30};
  int64_t pos_all[PB_WM_LANES], total_all[PB_WM_LANES], pos[PB_WM_LANES], total[PB_WM_LANES];
  double auroc[PB_WM_LANES], cov[PB_WM_LANES * (PB_SB_NMET - 1)];
  pb_sb__totals(C, 0, multT, pos_all, total_all);
  for (int j = 0; j < B->n_scores; j++) {
    if (!use[j]) continue;
    if (C->full[j]) {
      memcpy(pos, pos_all, sizeof pos);
      memcpy(total, total_all, sizeof total);
    } else {
      pb_sb__totals(C, j + 1, multT, pos, total);
    }
    pb_screen_weighted_metrics(&C->codes[j], multT, mult16, pos, total, pcts, PB_SB_NMET - 1, auroc, cov);
    for (int l = 0; l < PB_WM_LANES; l++) {
      m[j][l][0] = auroc[l];
      for (int k = 1; k < PB_SB_NMET; k++) m[j][l][k] = cov[l * (PB_SB_NMET - 1) + k - 1];
    }
  }
}

void pb_screen_boot_cell(struct pb_screen_boot *B, int32_t t, int tier, int32_t n, const int32_t *label,
                         const uint8_t *y, const double *const *score, int32_t *const *order, const int32_t *n_order)
{
  int32_t K = B->n_classes[t];
  size_t rows[2] = {(size_t)t * PB_SB_NROWS_PER_TARGET, (size_t)t * PB_SB_NROWS_PER_TARGET + 1 + (size_t)tier};
  /* class contrasts: the first PB_SB_NCLASSCON fixed ones, then U - dyn_row[d] at statistic PB_SB_NCON + d */
  int nrows = tier >= 0 ? 2 : 1, ncc = PB_SB_NCLASSCON + B->n_dyn, ia[PB_SB_NCLASSCON + PB_SB_NDYN],
      ib[PB_SB_NCLASSCON + PB_SB_NDYN], at[PB_SB_NCLASSCON + PB_SB_NDYN];
  /* a contrast restricted to one tier (dyn_tier) is ranked and summed only in that tier's row */
  int in_row[PB_SB_NCLASSCON + PB_SB_NDYN][2], live[PB_SB_NCLASSCON + PB_SB_NDYN], use[PB_SB_NSCORES + PB_SB_NDYN];
  for (int j = 0; j < B->n_scores; j++)
    use[j] = j < PB_SB_NSCORES || B->dyn_tier[j - PB_SB_NSCORES] < 0 || B->dyn_tier[j - PB_SB_NSCORES] == tier;
  for (int c = 0; c < ncc; c++) {
    int fixed = c < PB_SB_NCLASSCON, only = fixed ? -1 : B->dyn_tier[c - PB_SB_NCLASSCON];
    ia[c] = pb_sb__score_index(B, fixed ? pb_screen_boot_base[c] : PB_SR_U);
    ib[c] = fixed ? pb_sb__score_index(B, pb_screen_boot_contrast[c]) : PB_SB_NSCORES + c - PB_SB_NCLASSCON;
    at[c] = fixed ? c : PB_SB_NCON + c - PB_SB_NCLASSCON;
    in_row[c][0] = only < 0;
    in_row[c][1] = only < 0 || only == tier;
    live[c] = in_row[c][0] || (nrows > 1 && in_row[c][1]); /* else its scores may not be computed here */
  }
  struct pb_sb__cell C;
  pb_sb__cell_pack(&C, B, K, use, n, label, y, score, order, n_order);
  /* draws PB_WM_LANES at a time, their class weights interleaved (B->mult) */
  for (int64_t b0 = 0; b0 < B->draws; b0 += PB_WM_LANES) {
    const size_t blk = (size_t)(b0 / PB_WM_LANES) * (size_t)K * PB_WM_LANES;
    const int32_t *multT = B->mult[t] + blk;
    const uint16_t *mult16 = B->mult16[t] ? B->mult16[t] + blk : NULL;
    double m[PB_SB_NSCORES + PB_SB_NDYN][PB_WM_LANES][PB_SB_NMET];
    pb_sb__draws(B, &C, use, multT, mult16, m);
    for (int l = 0; l < PB_WM_LANES && b0 + l < B->draws; l++) {
      int64_t b = b0 + l;
      if (isnan(m[0][l][0])) continue; /* the draw left no failure or no retained image: cell skipped */
      size_t base[2];
      for (int r = 0; r < nrows; r++) {
        base[r] = (rows[r] * (size_t)B->draws + (size_t)b) * (size_t)B->n_stat;
        B->cells[rows[r] * (size_t)B->draws + (size_t)b]++;
      }
      for (int c = 0; c < ncc; c++)
        for (int k = 0; k < PB_SB_NMET && live[c]; k++) {
          double d = m[ia[c]][l][k] - m[ib[c]][l][k];
          if (isnan(d)) continue;
          int64_t v = pb_num_round_half_away(d * PB_SB_SCALE);
          for (int r = 0; r < nrows; r++)
            if (in_row[c][r]) {
              B->sum[base[r] + at[c] * PB_SB_NMET + k] += v;
              B->cnt[base[r] + at[c] * PB_SB_NMET + k]++;
            }
        }
    }
  }
  free(C.words);
  free(C.cls);
  free(C.in);
  free(C.fail);
}

/* Per-cell paired differences of the stored metrics (no resampling). */
static double pb_sb__diff(const struct pb_screen_layout *L, const double *rec, int c, int k)
{
  const int met = 2 + k; /* n, n_fail, auroc, cov_q10, cov_q20, cov_q30 */
  return rec[L->row_off + PB_SCREEN_MET * pb_screen_boot_base[c] + met] -
         rec[L->row_off + PB_SCREEN_MET * pb_screen_boot_contrast[c] + met];
}

static int pb_sb__in_row(const double *rec, int row)
{
  return row == 0 || rec[PB_SI_TIER] == row - 1;
}

/* Percentile interval of one class-bootstrap statistic over the draws where it is defined. */
void pb_screen_boot_class_interval(const struct pb_screen_boot *B, int32_t row, int stat, struct pb_interval *out)
{
  double *v = pb_malloc((size_t)(B->draws > 0 ? B->draws : 1) * sizeof *v);
  int64_t n = 0;
  for (int64_t b = 0; b < B->draws; b++) {
    size_t i = ((size_t)row * (size_t)B->draws + (size_t)b) * (size_t)B->n_stat + (size_t)stat;
    if (B->cnt[i] > 0) v[n++] = (double)B->sum[i] / PB_SB_SCALE / (double)B->cnt[i];
  }
  out->n_draws = n;
  out->lo = pb_resample_percentile_select(v, n, (1 - PB_BOOT_LEVEL) / 2);
  out->hi = pb_resample_percentile_select(v, n, 1 - (1 - PB_BOOT_LEVEL) / 2);
  free(v);
}

void pb_screen_gsum_init(struct pb_screen_gsum *G, int32_t n_stat, int32_t n_groups)
{
  G->n_stat = n_stat;
  G->n_groups = n_groups;
  pb_agg_init(&G->a, (int64_t)n_stat * n_groups);
}

int pb_screen_gsum_boot(struct pb_screen_gsum *G, const struct pb_boot_spec *spec, MPI_Comm comm,
                        struct pb_interval *out)
{
  const int32_t ns = G->n_stat, ng = G->n_groups;
  int status = pb_agg_reduce(&G->a, comm, -1);
  double *sum = pb_malloc((size_t)(ng > 0 ? ng : 1) * (ns > 0 ? ns : 1) * sizeof *sum);
  double *cnt = pb_malloc((size_t)(ng > 0 ? ng : 1) * (ns > 0 ? ns : 1) * sizeof *cnt);
  for (int32_t g = 0; g < ng; g++)
    for (int32_t k = 0; k < ns; k++) {
      sum[(size_t)g * ns + k] = pb_agg_sum(&G->a, (int64_t)k * ng + g);
      cnt[(size_t)g * ns + k] = (double)pb_agg_count(&G->a, (int64_t)k * ng + g);
    }
  /* the point estimate (the sample's draw): the exact mean over every group's cells, rounded once */
  double *full = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *full);
  for (int32_t k = 0; k < ns; k++) full[k] = pb_agg_mean_of(&G->a, (int64_t)k * ng, 1, ng);
  if (status == PB_OK) status = pb_resample_boot_group_sums(sum, cnt, full, ng, ns, spec, comm, out);
  free(full);
  free(sum);
  free(cnt);
  pb_agg_free(&G->a);
  return status;
}

/* ------------------------------------------------------------ the reports' model-group intervals */

/* Per-cell value of statistic k of a table, from the cell's record (ctx: the table's own). */
typedef double (*pb_sb__value_fn)(const void *ctx, const struct pb_screen_layout *L, const double *rec, int k);

/* What every model-group bootstrap of the reports reads. */
struct pb_sb__grp {
  const struct pb_meta *meta;
  const struct pb_screen_layout *L;
  int32_t n_targets;
  const struct pb_screen_cells *C;   /* this rank's cells */
  const struct pb_screen_options *opt;
  MPI_Comm comm;
};

/* Model-group bootstrap of per-row cell means into R: statistic k of a row
 * (target, all tiers / one tier) is the mean of value(ctx, L, rec, k) over
 * the row's cells.  Every rank adds its own cells to exact per-group sums;
 * collective. */
static int pb_sb__group_rows(const struct pb_sb__grp *g, int32_t n_stat, pb_sb__value_fn value, const void *ctx,
                             uint32_t stream, struct pb_screen_rows *R)
{
  const struct pb_screen_cells *C = g->C;
  int32_t nr = g->n_targets * PB_SB_NROWS_PER_TARGET, ns = nr * n_stat;
  int32_t *mg = pb_malloc((size_t)g->meta->n_models * sizeof *mg), ng = pb_meta_model_groups(g->meta, mg);
  struct pb_screen_gsum G;
  pb_screen_gsum_init(&G, ns, ng);
  R->n_stat = n_stat;
  R->cells = pb_calloc((size_t)(nr > 0 ? nr : 1), sizeof *R->cells);
  for (int64_t c = 0; c < C->n; c++) {
    const double *rec = C->recs + c * g->L->rec_len;
    for (int32_t j = 0; j < PB_SB_NROWS_PER_TARGET; j++) {
      const int32_t row = C->target[c] * PB_SB_NROWS_PER_TARGET + j;
      if (!pb_sb__in_row(rec, j)) continue;
      R->cells[row]++;
      for (int e = 0; e < n_stat; e++) pb_screen_gsum_add(&G, row * n_stat + e, mg[C->model[c]], value(ctx, g->L, rec, e));
    }
  }
  pb_comm_allreduce(MPI_IN_PLACE, R->cells, nr, MPI_INT64_T, MPI_SUM, g->comm);
  struct pb_boot_spec spec = {g->opt->seed, PB_RNG_GROUP_BOOT, stream, g->opt->group_draws, PB_BOOT_LEVEL};
  R->iv = pb_malloc((size_t)(ns > 0 ? ns : 1) * sizeof *R->iv);
  int status = pb_screen_gsum_boot(&G, &spec, g->comm, R->iv);
  free(mg);
  return status;
}

static double pb_sb__met(const struct pb_screen_layout *L, const double *rec, int32_t r, int f)
{
  return rec[L->row_off + PB_SCREEN_MET * r + f];
}

/* The paired differences of contrast s / PB_SB_NMET, metric s % PB_SB_NMET (screen_intervals.tsv). */
static double pb_sb__diff_stat(const void *ctx, const struct pb_screen_layout *L, const double *rec, int s)
{
  (void)ctx;
  return pb_sb__diff(L, rec, s / PB_SB_NMET, s % PB_SB_NMET);
}

/* The Table 27 tercile gaps (U minus its derangement control on the
 * non-singleton subset, AUROC) for e < 3, then U - U_<set> AUROC and
 * coverage at 20% for each extra probe set. */
static double pb_sb__extra_value(const void *ctx, const struct pb_screen_layout *L, const double *rec, int e)
{
  (void)ctx;
  if (e < PB_SCREEN_STRATA) {
    const double *o = rec + L->strata_off + PB_SCREEN_STRATUM_F * e;
    return o[4] - o[5];
  }
  int j = e - PB_SCREEN_STRATA, set = j / 2, met = j % 2 ? 4 : 2; /* auroc, cov_q20 */
  return pb_sb__met(L, rec, PB_SR_U, met) - pb_sb__met(L, rec, PB_SR_FIXED + 2 * set, met);
}

/* Table 22: AUROC of S, U, U_rank, U^0.5, U^2, then U_rank - S. */
static double pb_sb__t22(const void *ctx, const struct pb_screen_layout *L, const double *rec, int k)
{
  static const int32_t row[5] = {PB_SR_S, PB_SR_U, PB_SR_U_RANK, PB_SR_U_POW05, PB_SR_U_POW2};
  (void)ctx;
  if (k < 5) return pb_sb__met(L, rec, row[k], 2);
  return pb_sb__met(L, rec, PB_SR_U_RANK, 2) - pb_sb__met(L, rec, PB_SR_S, 2);
}

/* The delta ablation: AUROC of U, its derangement, delta, its derangement; delta beats its control; the gap. */
static double pb_sb__delta(const void *ctx, const struct pb_screen_layout *L, const double *rec, int k)
{
  static const int32_t row[4] = {PB_SR_U_NS, PB_SR_U_DERANGE, PB_SR_DELTA_NS, PB_SR_DELTA_DERANGE};
  (void)ctx;
  if (k < 4) return pb_sb__met(L, rec, row[k], 2);
  double gap = pb_sb__met(L, rec, PB_SR_DELTA_NS, 2) - pb_sb__met(L, rec, PB_SR_DELTA_DERANGE, 2);
  if (k == 4) return isnan(gap) ? NAN : gap > 0;
  return gap;
}

/* Table 38, score j = k / 3 of the rows ctx: recall at q = 0.2, AUROC, U - score recall (none for U itself). */
static double pb_sb__base(const void *ctx, const struct pb_screen_layout *L, const double *rec, int k)
{
  const int32_t *rows = ctx;
  const int j = k / 3;
  const double o0 = pb_sb__met(L, rec, rows[j], 4);
  switch (k % 3) {
  case 0: return o0;
  case 1: return pb_sb__met(L, rec, rows[j], 2);
  default: return j > 0 ? pb_sb__met(L, rec, PB_SR_U, 4) - o0 : NAN;
  }
}

/* One natural statistic: rec[row a] - rec[row b] (b < 0: the level of a) of metric met. */
struct pb_sb__stat { int32_t a, b; int met; };
#define PB_SB_NATSTAT 64

static double pb_sb__natural(const void *ctx, const struct pb_screen_layout *L, const double *rec, int k)
{
  const struct pb_sb__stat *s = (const struct pb_sb__stat *)ctx + k;
  const double a = pb_sb__met(L, rec, s->a, s->met);
  return s->b < 0 ? a : a - pb_sb__met(L, rec, s->b, s->met);
}

/* The natural tables' statistics into st (at most PB_SB_NATSTAT), where each table's start in N; their count. */
static int32_t pb_sb__natural_stats(const struct pb_screen_layout *L, int32_t tta, struct pb_screen_natural *N,
                                    struct pb_sb__stat *st)
{
  static const char *const base_names[PB_SCREEN_NAT_BASE] = {"S", "TTA", "margin", "entropy", "agree_TTA", "A3_TTA"};
  const int32_t r0 = L->tta_rows, a3t = tta + 1;
  const int32_t u0 = r0 + PB_SN_U0, t0 = r0 + PB_SN_TTA0, agr = r0 + PB_SN_AGREE, us = r0 + PB_SN_USEL,
                ts = r0 + PB_SN_TTASEL;
  const int32_t base_rows[PB_SCREEN_NAT_BASE] = {PB_SR_S, tta, PB_SR_MARGIN, PB_SR_ENTROPY, agr, a3t};
  int32_t n = 0;
  N->tta = tta;
  N->n_base = PB_SCREEN_NAT_BASE;
  memcpy(N->base_row, base_rows, sizeof base_rows);
  memcpy(N->base_name, base_names, sizeof base_names);
  /* the tier table (8), the variants (9), the baselines (4 each), Figure 4 (8), U_sel - U */
  N->e_tiers = n;
  st[n++] = (struct pb_sb__stat){PB_SR_S, -1, PB_SM_COV20};
  st[n++] = (struct pb_sb__stat){PB_SR_U, -1, PB_SM_COV20};
  st[n++] = (struct pb_sb__stat){tta, -1, PB_SM_COV20};
  st[n++] = (struct pb_sb__stat){PB_SR_U, tta, PB_SM_COV20};
  st[n++] = (struct pb_sb__stat){PB_SR_U, -1, PB_SM_AUROC};
  st[n++] = (struct pb_sb__stat){tta, -1, PB_SM_AUROC};
  st[n++] = (struct pb_sb__stat){PB_SR_U, tta, PB_SM_AUROC};
  st[n++] = (struct pb_sb__stat){PB_SR_U, ts, PB_SM_COV20};
  N->e_var = n;
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_sb__stat){u0, t0, PB_SM_COV10 + b};
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_sb__stat){PB_SR_U, ts, PB_SM_COV10 + b};
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) st[n++] = (struct pb_sb__stat){ts, tta, PB_SM_COV10 + b};
  N->e_base = n;
  for (int32_t j = 0; j < PB_SCREEN_NAT_BASE; j++) {
    st[n++] = (struct pb_sb__stat){base_rows[j], -1, PB_SM_COV20};
    st[n++] = (struct pb_sb__stat){base_rows[j], -1, PB_SM_AUROC};
    st[n++] = (struct pb_sb__stat){PB_SR_U, base_rows[j], PB_SM_COV20};
    st[n++] = (struct pb_sb__stat){PB_SR_U, base_rows[j], PB_SM_AUROC};
  }
  N->e_fig = n; /* set (natural, corruption) x rule (mean, A3) x metric (recall, AUROC) */
  const int32_t fig_rows[4] = {tta, a3t, PB_SR_U, PB_SR_A3};
  for (int j = 0; j < 4; j++) {
    st[n++] = (struct pb_sb__stat){fig_rows[j], -1, PB_SM_COV20};
    st[n++] = (struct pb_sb__stat){fig_rows[j], -1, PB_SM_AUROC};
  }
  N->e_usel = n;
  st[n++] = (struct pb_sb__stat){us, PB_SR_U, PB_SM_COV20};
  return n;
}

/* Class sums of every rank's cells: integer sums, the same totals whatever the partition (collective). */
static void pb_sb__reduce(struct pb_screen_boot *B, MPI_Comm comm)
{
  size_t nacc = (size_t)B->n_targets * PB_SB_NROWS_PER_TARGET * (size_t)B->draws;
  pb_comm_allreduce(MPI_IN_PLACE, B->sum, (int)(nacc * (size_t)B->n_stat), MPI_INT64_T, MPI_SUM, comm);
  pb_comm_allreduce(MPI_IN_PLACE, B->cnt, (int)(nacc * (size_t)B->n_stat), MPI_INT64_T, MPI_SUM, comm);
  pb_comm_allreduce(MPI_IN_PLACE, B->cells, (int)nacc, MPI_INT64_T, MPI_SUM, comm);
}

/* Group draws of stream 0 (the paired differences), 1 (the gaps and set contrasts) and 2 (Appendix E and
 * the natural tables): a draw depends on its stream only, so a table's intervals do not depend on which
 * others are computed. */
int pb_screen_ivs_boot(struct pb_screen_boot *B, const struct pb_meta *meta, const struct pb_screen_layout *L,
                       const struct pb_screen_cells *C, const struct pb_screen_options *opt, MPI_Comm comm,
                       struct pb_screen_ivs *I)
{
  const struct pb_sb__grp g = {meta, L, B->n_targets, C, opt, comm};
  const int32_t tta = pb_screen_tta_row(L);
  int status = PB_OK;
  memset(I, 0, sizeof *I);
  I->nat.tta = -1;
  if (B->draws > 0) pb_sb__reduce(B, comm);
  if (opt->group_draws > 0 || opt->class_draws > 0)
    status = pb_sb__group_rows(&g, PB_SB_NSTAT, pb_sb__diff_stat, NULL, 0, &I->diff);
  if (status == PB_OK && opt->group_draws > 0)
    status = pb_sb__group_rows(&g, PB_SCREEN_STRATA + 2 * L->n_extra, pb_sb__extra_value, NULL, 1, &I->more);
  if (status == PB_OK) status = pb_sb__group_rows(&g, 6, pb_sb__t22, NULL, 2, &I->t22);
  if (status == PB_OK) status = pb_sb__group_rows(&g, 6, pb_sb__delta, NULL, 2, &I->delta);
  const int32_t base_rows[5] = {PB_SR_U, PB_SR_S, PB_SR_MARGIN, PB_SR_ENTROPY, tta};
  memcpy(I->base_row, base_rows, sizeof base_rows);
  I->n_base = tta >= 0 ? 5 : 4;
  if (status == PB_OK) status = pb_sb__group_rows(&g, 3 * I->n_base, pb_sb__base, I->base_row, 2, &I->base);
  if (status == PB_OK && tta >= 0 && L->tta_rows >= 0) {
    struct pb_sb__stat st[PB_SB_NATSTAT];
    const int32_t n = pb_sb__natural_stats(L, tta, &I->nat, st);
    status = pb_sb__group_rows(&g, n, pb_sb__natural, st, 2, &I->natural);
  }
  return status;
}

void pb_screen_ivs_free(struct pb_screen_ivs *I)
{
  struct pb_screen_rows *all[] = {&I->diff, &I->more, &I->t22, &I->delta, &I->base, &I->natural};
  for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
    free(all[k]->cells);
    free(all[k]->iv);
  }
  memset(I, 0, sizeof *I);
}
