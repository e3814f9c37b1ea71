/* The known-propensity study of seed 001 U.1 (docs/fragility.md,
 * "Known-propensity study"): label draws and the two estimators of one
 * replicate.  Pure computation; the stage distributes the replicates. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/rng.h"

const double pb_fragility_study_rho[PB_FRAGILITY_STUDY_RHOS] = {0, 0.01, 0.03, 0.1, 0.3, 1, 3};

/* A: symmetric, every cell common; B: rare endpoints (mass 0.1: 25 labels at
 * n = 250); C: asymmetric with a rare hard cell (mass 0.05: 13 labels). */
static const struct pb_fragility_study_law pb_fragility__study_laws[3] = {
  {"A", {0.2, 0.4, 0.6, 0.8}, {0.25, 0.25, 0.25, 0.25}},
  {"B", {0.2, 0.55, 0.75, 0.99}, {0.1, 0.4, 0.4, 0.1}},
  {"C", {0.05, 0.6, 0.8, 0.95}, {0.05, 0.25, 0.4, 0.3}}};

const struct pb_fragility_study_design pb_fragility_study_designs[PB_FRAGILITY_STUDY_DESIGNS] = {
  {"primary", 0, 250, 1, 0}, {"primary", 0, 5000, 1, 1}, {"primary", 1, 250, 1, 2}, {"primary", 1, 5000, 1, 3},
  {"primary", 2, 250, 1, 4}, {"primary", 2, 5000, 1, 5}, {"weak", 3, 250, 1, 6},     {"weak", 3, 5000, 1, 7},
  {"min30", 1, 250, PB_FRAGILITY_STUDY_MIN_LABELS, 2},   {"min30", 2, 250, PB_FRAGILITY_STUDY_MIN_LABELS, 4}};

void pb_fragility_study_law(int32_t i, struct pb_fragility_study_law *out)
{
  if (i < 3) {
    *out = pb_fragility__study_laws[i];
    return;
  }
  /* B/16: Z/4 has a quarter of B's spread, so G / 16, with B's mean and masses */
  *out = pb_fragility__study_laws[1];
  out->name = "B/16";
  double mean = 0;
  for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) mean += out->q[g] * out->eta[g];
  for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) out->eta[g] = mean + (out->eta[g] - mean) / 4;
}

const double pb_fragility_witness_rho[PB_FRAGILITY_WITNESS_RHOS] = {0, 0.5, 1, 1.125, 1.5, 2, 3, 10};

/* A: centred atoms -4/15, 3/10 with masses 9/17, 8/17 (rho+ = rho_sat = 9/8, top 0.3);
 * B: -1/5, 2/5 with masses 2/3, 1/3 (rho+ = rho_sat = 2, top 0.4); both G = 0.08. */
void pb_fragility_study_witness(int32_t i, double *eta, double *q)
{
  if (i == 0) {
    eta[0] = 0.5 - 4.0 / 15, eta[1] = 0.8, q[0] = 9.0 / 17, q[1] = 8.0 / 17;
  } else {
    eta[0] = 0.3, eta[1] = 0.9, q[0] = 2.0 / 3, q[1] = 1.0 / 3;
  }
}

void pb_fragility_study_sample(int32_t s, int32_t *law, int32_t *n)
{
  *law = s / 2;
  *n = s % 2 ? 5000 : 250;
}

void pb_fragility_study_labels(const double *q, int32_t n, int64_t *m)
{
  for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) {
    m[g] = (int64_t)lround(n * q[g]);
    if (m[g] < 1) m[g] = 1;
  }
}

void pb_fragility_study_draw(uint64_t seed, int32_t sample, uint32_t replicate, const double *eta, const int64_t *m,
                             int64_t *k)
{
  struct pb_rng r;
  pb_rng_init(&r, seed, PB_RNG_FRAGILITY_STUDY, (uint64_t)sample, replicate);
  for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) {
    int64_t c = 0;
    for (int64_t j = 0; j < m[g]; j++) c += pb_rng_uniform(&r) < eta[g];
    k[g] = c;
  }
}

/* Both estimators of a law at every radius and direction (est as documented). */
static void pb_fragility__study_estimators(const struct pb_fragility_law *L, double *est)
{
  for (int r = 0; r < PB_FRAGILITY_STUDY_RHOS; r++)
    for (int dir = 0; dir < 2; dir++) {
      const double rho = pb_fragility_study_rho[r];
      const struct pb_fragility_side *side = dir == PB_FRAGILITY_UP ? &L->up : &L->down;
      est[(r * 2 + dir) * 2] = pb_fragility_profile(L, (enum pb_fragility_dir)dir, rho);
      est[(r * 2 + dir) * 2 + 1] = fmin(sqrt(rho * L->G), side->top);
    }
}

int32_t pb_fragility_study_estimate(const double *q, const int64_t *m, const int64_t *k, int32_t min_labels,
                                    struct pb_fragility_law *work, double *est)
{
  double rate[PB_FRAGILITY_STUDY_CELLS], mass[PB_FRAGILITY_STUDY_CELLS];
  int32_t kept = 0;
  for (int g = 0; g < PB_FRAGILITY_STUDY_CELLS; g++) {
    if (m[g] < min_labels) continue;
    rate[kept] = (double)k[g] / (double)m[g];
    mass[kept++] = q[g];
  }
  if (kept == 0 || pb_fragility_law_set(work, rate, mass, kept) != PB_OK) {
    for (int i = 0; i < PB_FRAGILITY_STUDY_EST; i++) est[i] = NAN;
    return 0;
  }
  pb_fragility__study_estimators(work, est);
  return kept;
}

void pb_fragility_study_truth(int32_t design, struct pb_fragility_law *work, double *est)
{
  struct pb_fragility_study_law L;
  pb_fragility_study_law(pb_fragility_study_designs[design].law, &L);
  /* the tabled laws are valid: law_set cannot fail on them */
  (void)pb_fragility_law_set(work, L.eta, L.q, PB_FRAGILITY_STUDY_CELLS);
  pb_fragility__study_estimators(work, est);
}

void pb_fragility_study_replicate(uint64_t seed, uint32_t replicate, struct pb_fragility_law *work, double *est,
                                  int32_t *kept)
{
  int64_t m[PB_FRAGILITY_STUDY_SAMPLES][PB_FRAGILITY_STUDY_CELLS], k[PB_FRAGILITY_STUDY_SAMPLES][PB_FRAGILITY_STUDY_CELLS];
  for (int32_t s = 0; s < PB_FRAGILITY_STUDY_SAMPLES; s++) {
    int32_t law, n;
    struct pb_fragility_study_law L;
    pb_fragility_study_sample(s, &law, &n);
    pb_fragility_study_law(law, &L);
    pb_fragility_study_labels(L.q, n, m[s]);
    pb_fragility_study_draw(seed, s, replicate, L.eta, m[s], k[s]);
  }
  for (int32_t d = 0; d < PB_FRAGILITY_STUDY_DESIGNS; d++) {
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[d];
    struct pb_fragility_study_law L;
    pb_fragility_study_law(D->law, &L);
    kept[d] = pb_fragility_study_estimate(L.q, m[D->sample], k[D->sample], D->min_labels, work,
                                          est + (size_t)d * PB_FRAGILITY_STUDY_EST);
  }
}

const double pb_fragility_nested_rho[PB_FRAGILITY_NESTED_RHOS] = {0.1, 0.3, 1, 3};

/* Atom i has feature x = (i + 1/2) / 32.  smooth: eta = 0.2 + 0.6 x; rare: 0.5 but
 * 0.95 on the last atom (mass 1/32); wave: 0.5 + 0.317 sin(6.5 pi x), three and a
 * quarter periods (G_P = 0.0500), whose two halves have nearly equal means. */
const char *pb_fragility_study_nested_law(int32_t i, double *eta)
{
  static const char *const name[PB_FRAGILITY_NESTED_LAWS] = {"smooth", "rare", "wave"};
  for (int a = 0; a < PB_FRAGILITY_NESTED_ATOMS; a++) {
    const double x = (a + 0.5) / PB_FRAGILITY_NESTED_ATOMS;
    eta[a] = i == 0 ? 0.2 + 0.6 * x : i == 1 ? (a == PB_FRAGILITY_NESTED_ATOMS - 1 ? 0.95 : 0.5)
                                             : 0.5 + 0.317 * sin(6.5 * M_PI * x);
  }
  return name[i];
}

static int pb_fragility__cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void pb_fragility_study_nested(const double *eta, int32_t K, int oracle, double rho, struct pb_fragility_law *work,
                               double *rec)
{
  enum { N = PB_FRAGILITY_NESTED_ATOMS };
  double x[N], q[N], cell[N], mass[N];
  for (int a = 0; a < N; a++) x[a] = eta[a], q[a] = 1.0 / N;
  if (oracle) qsort(x, N, sizeof *x, pb_fragility__cmp_double);
  (void)pb_fragility_law_set(work, x, q, N); /* values in [0, 1], equal masses: valid */
  rec[PB_FN_G_P] = work->G;
  rec[PB_FN_PHI_P] = pb_fragility_profile(work, PB_FRAGILITY_UP, rho);
  for (int c = 0; c < K; c++) { /* cell c holds atoms [c N / K, (c + 1) N / K) */
    double sum = 0;
    for (int a = c * N / K; a < (c + 1) * N / K; a++) sum += x[a];
    mass[c] = (double)((c + 1) * N / K - c * N / K) / N;
    cell[c] = sum / ((c + 1) * N / K - c * N / K);
  }
  (void)pb_fragility_law_set(work, cell, mass, K);
  rec[PB_FN_G_R] = work->G;
  rec[PB_FN_PHI_R] = pb_fragility_profile(work, PB_FRAGILITY_UP, rho);
  rec[PB_FN_GAP] = rec[PB_FN_PHI_P] - rec[PB_FN_PHI_R];
  rec[PB_FN_EXCESS] = sqrt(rho * fmax(0, rec[PB_FN_G_P] - rec[PB_FN_G_R]));
  /* a gap of rounding size: the readout resolves the law, no ratio */
  rec[PB_FN_RATIO] = rec[PB_FN_GAP] > 1e-12 ? rec[PB_FN_EXCESS] / rec[PB_FN_GAP] : NAN;
}

const int32_t pb_fragility_nested_size[PB_FRAGILITY_NESTED_SIZES] = {1, 2, 4, 8, 16};
const int32_t pb_fragility_nested_n[PB_FRAGILITY_NESTED_NS] = {250, 5000};

int64_t pb_fragility_study_nested_draw(uint64_t seed, int32_t law, int32_t ni, uint32_t replicate, int64_t *k)
{
  enum { F = PB_FRAGILITY_NESTED_FINE, A = PB_FRAGILITY_NESTED_ATOMS / PB_FRAGILITY_NESTED_FINE };
  double eta[PB_FRAGILITY_NESTED_ATOMS];
  (void)pb_fragility_study_nested_law(law, eta);
  int64_t m = (int64_t)lround((double)pb_fragility_nested_n[ni] / F);
  if (m < 1) m = 1;
  struct pb_rng r;
  pb_rng_init(&r, seed, PB_RNG_FRAGILITY_NESTED, (uint64_t)law * PB_FRAGILITY_NESTED_NS + (uint64_t)ni, replicate);
  for (int c = 0; c < F; c++) {
    double rate = 0; /* the cell's mean propensity: its atoms have equal masses */
    for (int a = 0; a < A; a++) rate += eta[c * A + a];
    rate /= A;
    int64_t cnt = 0;
    for (int64_t j = 0; j < m; j++) cnt += pb_rng_uniform(&r) < rate;
    k[c] = cnt;
  }
  return m;
}

/* Readout K pools fine cells [j F / K, (j + 1) F / K) of equal label counts:
 * its rate is their pooled rate, its mass 1 / K. */
void pb_fragility_study_nested_replicate(uint64_t seed, uint32_t replicate, struct pb_fragility_law *work, double *est)
{
  enum { F = PB_FRAGILITY_NESTED_FINE, R = PB_FRAGILITY_NESTED_RHOS };
  for (int32_t law = 0; law < PB_FRAGILITY_NESTED_LAWS; law++)
    for (int32_t ni = 0; ni < PB_FRAGILITY_NESTED_NS; ni++) {
      int64_t k[F];
      const int64_t m = pb_fragility_study_nested_draw(seed, law, ni, replicate, k);
      for (int32_t s = 0; s < PB_FRAGILITY_NESTED_SIZES; s++) {
        const int32_t K = pb_fragility_nested_size[s], row = (law * PB_FRAGILITY_NESTED_NS + ni) * PB_FRAGILITY_NESTED_SIZES + s;
        double rate[F], mass[F];
        for (int32_t j = 0; j < K; j++) {
          int64_t sum = 0;
          for (int32_t c = j * F / K; c < (j + 1) * F / K; c++) sum += k[c];
          rate[j] = (double)sum / (double)(m * (F / K));
          mass[j] = 1.0 / K;
        }
        (void)pb_fragility_law_set(work, rate, mass, K); /* rates in [0, 1], equal masses: valid */
        for (int r = 0; r < R; r++)
          est[row * R + r] = pb_fragility_profile(work, PB_FRAGILITY_UP, pb_fragility_nested_rho[r]);
        est[PB_FRAGILITY_NESTED_ROWS * R + row] = work->G;
      }
    }
}
