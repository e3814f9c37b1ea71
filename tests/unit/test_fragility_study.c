/* Unit tests of the known-propensity study (seed 001 U.1;
 * src/fragility/fragility_kernel_study.c, fragility_stage_study.c).
 *
 * Expected values come from hand derivations on tiny laws, and from an
 * independent solution of the chi-square programme written here: for every
 * support set S of the reweighting, the affine r = a + b z on S that spends
 * the whole budget (b > 0), or r = 1 / P(S) on an S of one value where the
 * budget allows; the best feasible candidate is the profile.  Labels are redrawn
 * here from the documented stream, and the study's statistics recomputed
 * from the redone replicates by plain sums.  The seed is PB_TEST_SEED
 * (default 20260908), printed. */
#include "config.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/fragility.h"
#include "pairbound/rng.h"
#include "testlib.h"
#include "testprofile.h"
#include "../../src/fragility/fragility_internal.h"

#define NC PB_FRAGILITY_STUDY_CELLS
#define ND PB_FRAGILITY_STUDY_DESIGNS
#define NR PB_FRAGILITY_STUDY_RHOS


/* Both estimators of the law (eta, q) of n cells, as the study defines them, computed here. */
static void expected(int n, const double *eta, const double *q, double *est)
{
  double Q = 0, mean = 0, G = 0, z[NC], p[NC], top[2] = {-INFINITY, -INFINITY};
  for (int i = 0; i < n; i++) Q += q[i];
  for (int i = 0; i < n; i++) mean += q[i] / Q * eta[i];
  for (int i = 0; i < n; i++) {
    p[i] = q[i] / Q;
    z[i] = eta[i] - mean;
    G += p[i] * z[i] * z[i];
    top[0] = fmax(top[0], z[i]);
    top[1] = fmax(top[1], -z[i]);
  }
  for (int r = 0; r < NR; r++)
    for (int dir = 0; dir < 2; dir++) {
      double zs[NC];
      for (int i = 0; i < n; i++) zs[i] = dir ? -z[i] : z[i];
      const double rho = pb_fragility_study_rho[r];
      est[(r * 2 + dir) * 2] = testprofile_brute(n, zs, p, rho);
      est[(r * 2 + dir) * 2 + 1] = fmin(sqrt(rho * G), top[dir]);
    }
}

/* Rates 0, 1/2, 1/2, 1 on four cells of mass 1/4 (docs/fragility.md's algebra):
 * mean 1/2, G = 1/8, rho+ = 1/2, rho_sat = 3; between them
 * Phi(rho) = 1/6 + sqrt((rho - 1/3) / 24), so Phi(1) = 1/3. */
START_TEST(test_closed_form)
{
  const double q[NC] = {0.25, 0.25, 0.25, 0.25};
  const int64_t m[NC] = {4, 4, 4, 4}, k[NC] = {0, 2, 2, 4};
  double est[PB_FRAGILITY_STUDY_EST];
  struct pb_fragility_law L;
  pb_fragility_law_init(&L);
  ck_assert_int_eq(pb_fragility_study_estimate(q, m, k, 1, &L, est), 4);
  /* radii 0, 0.01, 0.03, 0.1, 0.3, 1, 3 (r = 4: 0.3, r = 5: 1, r = 6: 3); index (r * 2 + dir) * 2 + e */
  for (int dir = 0; dir < 2; dir++) {
    ck_assert(fabs(est[(0 * 2 + dir) * 2]) < 1e-15 && fabs(est[(0 * 2 + dir) * 2 + 1]) < 1e-15);
    ck_assert(fabs(est[(4 * 2 + dir) * 2] - sqrt(0.3 / 8)) < 1e-12);     /* square-root regime */
    ck_assert(fabs(est[(4 * 2 + dir) * 2 + 1] - sqrt(0.3 / 8)) < 1e-12);
    ck_assert(fabs(est[(5 * 2 + dir) * 2] - 1.0 / 3) < 1e-12);           /* middle regime (symmetric law) */
    ck_assert(fabs(est[(5 * 2 + dir) * 2 + 1] - sqrt(1.0 / 8)) < 1e-12); /* the cap overstates it */
    ck_assert(fabs(est[(6 * 2 + dir) * 2] - 0.5) < 1e-12);               /* saturation at rho_sat = 3 */
    ck_assert(fabs(est[(6 * 2 + dir) * 2 + 1] - 0.5) < 1e-12);           /* sqrt(3/8) > 1/2: capped */
  }
  /* the 30-label rule keeps the two cells with 40 labels: rates 1/4 and 3/4 with equal mass, G = 1/16,
   * a two-point law whose profile is min(sqrt(rho / 16), 1/4), the capped law exactly */
  const int64_t m2[NC] = {10, 40, 40, 10}, k2[NC] = {0, 10, 30, 10};
  ck_assert_int_eq(pb_fragility_study_estimate(q, m2, k2, 30, &L, est), 2);
  for (int r = 0; r < NR; r++)
    for (int e = 0; e < 4; e++)
      ck_assert(fabs(est[r * 4 + e] - fmin(sqrt(pb_fragility_study_rho[r] / 16), 0.25)) < 1e-12);
  /* no cell with enough labels: NaN, none kept */
  ck_assert_int_eq(pb_fragility_study_estimate(q, m2, k2, 50, &L, est), 0);
  ck_assert(isnan(est[0]) && isnan(est[PB_FRAGILITY_STUDY_EST - 1]));
  pb_fragility_law_free(&L);
}
END_TEST

/* The designs as docs/fragility.md tables them: labels per cell, B/16. */
START_TEST(test_laws)
{
  struct pb_fragility_study_law B, W, C;
  pb_fragility_study_law(1, &B);
  pb_fragility_study_law(3, &W);
  pb_fragility_study_law(2, &C);
  int64_t m[NC];
  pb_fragility_study_labels(B.q, 250, m);
  ck_assert(m[0] == 25 && m[1] == 100 && m[2] == 100 && m[3] == 25);
  pb_fragility_study_labels(C.q, 250, m);
  ck_assert(m[0] == 13 && m[1] == 63 && m[2] == 100 && m[3] == 75); /* 12.5 and 62.5 round up */
  pb_fragility_study_labels(C.q, 5000, m);
  ck_assert(m[0] == 250 && m[1] == 1250 && m[2] == 2000 && m[3] == 1500);
  /* B/16: B's mean 0.639 and masses, G = 0.03969 / 16 (G_B = 0.1 0.439^2 + 0.4 0.089^2 + 0.4 0.111^2 + 0.1 0.351^2) */
  double mean = 0, G = 0;
  for (int g = 0; g < NC; g++) mean += W.q[g] * W.eta[g];
  for (int g = 0; g < NC; g++) G += W.q[g] * (W.eta[g] - mean) * (W.eta[g] - mean);
  ck_assert(fabs(mean - 0.639) < 1e-12 && fabs(G - 0.039689 / 16) < 1e-12);
  ck_assert(memcmp(W.q, B.q, sizeof W.q) == 0);
}
END_TEST

/* The labels of sample s, replicate rep, drawn here: cell by cell, one uniform per label. */
static void redraw(int32_t s, uint32_t rep, int64_t *m, int64_t *k, struct pb_fragility_study_law *L)
{
  int32_t law, n;
  pb_fragility_study_sample(s, &law, &n);
  pb_fragility_study_law(law, L);
  struct pb_rng r;
  pb_rng_init(&r, test_seed(), PB_RNG_FRAGILITY_STUDY, (uint64_t)s, rep);
  for (int g = 0; g < NC; g++) {
    m[g] = lround(n * L->q[g]);
    if (m[g] < 1) m[g] = 1;
    k[g] = 0;
    for (int64_t j = 0; j < m[g]; j++) k[g] += pb_rng_uniform(&r) < L->eta[g];
  }
}

/* Every design's estimates of a replicate, redone here (cells below the design's labels left out). */
static void redo(uint32_t rep, double *est, int32_t *kept)
{
  for (int d = 0; d < ND; d++) {
    const struct pb_fragility_study_design *D = &pb_fragility_study_designs[d];
    struct pb_fragility_study_law L;
    int64_t m[NC], k[NC];
    redraw(D->sample, rep, m, k, &L);
    double eta[NC], q[NC];
    int n = 0;
    for (int g = 0; g < NC; g++)
      if (m[g] >= D->min_labels) eta[n] = (double)k[g] / m[g], q[n++] = L.q[g];
    kept[d] = n;
    expected(n, eta, q, est + d * PB_FRAGILITY_STUDY_EST);
  }
}

#define REPS 24

/* The upward profile of K cells of equal mass with rates @p rate, by the support sets that hold the cells
 * above a threshold (the optimiser is (Z - t)+ / E[(Z - t)+]), each solved as in testprofile_brute(). */
static double upper_sets(int K, const double *rate, double rho)
{
  double mean = 0, best = 0;
  for (int i = 0; i < K; i++) mean += rate[i] / K;
  for (int j = 0; j < K; j++) { /* S = cells with rate >= rate[j] */
    double P = 0, M1 = 0, M2 = 0;
    for (int i = 0; i < K; i++)
      if (rate[i] >= rate[j]) P += 1.0 / K, M1 += (rate[i] - mean) / K, M2 += (rate[i] - mean) * (rate[i] - mean) / K;
    const double curv = M2 - M1 * M1 / P, need = 1 + rho - 1 / P;
    if (curv > 1e-15 && need >= 0) {
      const double b = sqrt(need / curv), a = (1 - b * M1) / P;
      int ok = 1;
      for (int i = 0; i < K; i++) ok &= rate[i] < rate[j] || a + b * (rate[i] - mean) >= -1e-12;
      if (ok) best = fmax(best, a * M1 + b * M2);
    }
    if (curv <= 1e-15 && 1 / P - 1 <= rho) best = fmax(best, M1 / P);
  }
  return best;
}

/* The finite-sample nested readouts of replicate rep, redone here: phi[law][n][size][rho], g[law][n][size]. */
static void redo_nested(uint32_t rep, double *phi, double *g)
{
  enum { F = PB_FRAGILITY_NESTED_FINE };
  static const int sizes[5] = {1, 2, 4, 8, 16}, ns[2] = {250, 5000};
  for (int law = 0; law < PB_FRAGILITY_NESTED_LAWS; law++) {
    double eta[PB_FRAGILITY_NESTED_ATOMS];
    (void)pb_fragility_study_nested_law(law, eta);
    for (int ni = 0; ni < 2; ni++) {
      const int64_t m = lround(ns[ni] / 16.0); /* 16 and 313 (312.5 rounds away from zero) */
      ck_assert_int_eq(m, ni ? 313 : 16);
      struct pb_rng r;
      pb_rng_init(&r, test_seed(), PB_RNG_FRAGILITY_NESTED, (uint64_t)(law * 2 + ni), rep);
      int64_t k[F];
      for (int c = 0; c < F; c++) {
        k[c] = 0;
        for (int64_t j = 0; j < m; j++) k[c] += pb_rng_uniform(&r) < (eta[2 * c] + eta[2 * c + 1]) / 2;
      }
      for (int s = 0; s < 5; s++) {
        const int K = sizes[s], row = (law * 2 + ni) * 5 + s;
        double rate[F], mean = 0, G = 0;
        for (int j = 0; j < K; j++) {
          int64_t sum = 0;
          for (int c = j * F / K; c < (j + 1) * F / K; c++) sum += k[c];
          rate[j] = (double)sum / (double)(m * (F / K));
          mean += rate[j] / K;
        }
        for (int j = 0; j < K; j++) G += (rate[j] - mean) * (rate[j] - mean) / K;
        g[row] = G;
        for (int q = 0; q < PB_FRAGILITY_NESTED_RHOS; q++) phi[row * PB_FRAGILITY_NESTED_RHOS + q] = upper_sets(K, rate, pb_fragility_nested_rho[q]);
      }
    }
  }
}

/* U.2's finite-sample part: every replicate's plug-in estimates against labels redrawn here. */
START_TEST(test_nested_replicates)
{
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  double est[PB_FRAGILITY_NESTED_EST], phi[PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS], g[PB_FRAGILITY_NESTED_ROWS];
  for (uint32_t rep = 0; rep < REPS; rep++) {
    pb_fragility_study_nested_replicate(test_seed(), rep, &work, est);
    redo_nested(rep, phi, g);
    for (int i = 0; i < PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS; i++)
      ck_assert_msg(fabs(est[i] - phi[i]) < 1e-9, "rep %u row %d: %g vs %g", rep, i, est[i], phi[i]);
    for (int i = 0; i < PB_FRAGILITY_NESTED_ROWS; i++)
      ck_assert(fabs(est[PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS + i] - g[i]) < 1e-12);
  }
  pb_fragility_law_free(&work);
}
END_TEST

START_TEST(test_replicates_vs_brute)
{
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  double got[ND * PB_FRAGILITY_STUDY_EST], want[ND * PB_FRAGILITY_STUDY_EST];
  int32_t kg[ND], kw[ND];
  for (uint32_t rep = 0; rep < REPS; rep++) {
    pb_fragility_study_replicate(test_seed(), rep, &work, got, kg);
    redo(rep, want, kw);
    for (int d = 0; d < ND; d++) ck_assert_int_eq(kg[d], kw[d]);
    for (int i = 0; i < ND * PB_FRAGILITY_STUDY_EST; i++)
      ck_assert_msg(fabs(got[i] - want[i]) <= 1e-9, "replicate %u value %d: %.17g, brute force %.17g", rep, i,
                    got[i], want[i]);
  }
  /* the true laws too */
  for (int d = 0; d < ND; d++) {
    struct pb_fragility_study_law L;
    pb_fragility_study_law(pb_fragility_study_designs[d].law, &L);
    pb_fragility_study_truth(d, &work, got);
    expected(NC, L.eta, L.q, want);
    for (int i = 0; i < PB_FRAGILITY_STUDY_EST; i++) ck_assert(fabs(got[i] - want[i]) <= 1e-9);
  }
  pb_fragility_law_free(&work);
}
END_TEST

/* testprofile_brute() over the upper sets of the sorted atoms only (r* is non-decreasing in z, so its support is one of
 * them), for laws with more atoms than the full enumeration takes. */
static double brute_upper(int n, const double *z, const double *p, double rho)
{
  double zs[PB_FRAGILITY_NESTED_ATOMS], ps[PB_FRAGILITY_NESTED_ATOMS], best = 0;
  int idx[PB_FRAGILITY_NESTED_ATOMS];
  for (int i = 0; i < n; i++) idx[i] = i;
  for (int i = 1; i < n; i++) /* insertion sort by z */
    for (int j = i; j > 0 && z[idx[j]] < z[idx[j - 1]]; j--) {
      const int t = idx[j];
      idx[j] = idx[j - 1], idx[j - 1] = t;
    }
  for (int i = 0; i < n; i++) zs[i] = z[idx[i]], ps[i] = p[idx[i]];
  for (int lo = 0; lo < n; lo++) { /* support zs[lo .. n) */
    double P = 0, M1 = 0, M2 = 0;
    for (int i = lo; i < n; i++) P += ps[i], M1 += ps[i] * zs[i], M2 += ps[i] * zs[i] * zs[i];
    const double curv = M2 - M1 * M1 / P, need = 1 + rho - 1 / P;
    if (curv > 1e-15 && need >= 0) {
      const double b = sqrt(need / curv), a = (1 - b * M1) / P;
      if (a + b * zs[lo] >= -1e-12) best = fmax(best, a * M1 + b * M2);
    }
    if (1 / P - 1 <= rho && curv <= 1e-15) best = fmax(best, zs[n - 1]); /* all mass on the top value */
  }
  return best;
}

/* Nested readouts (U.2): grouping variances and profiles recomputed here from the atoms; the restricted
 * profile by the full support enumeration (K <= 16 cells), the oracle profile over upper sets; Proposition
 * 5 (nested: G_R and Phi_R grow with K) and Proposition 6 (Phi_P <= Phi_R + sqrt(rho (G_P - G_R))). */
START_TEST(test_nested)
{
  enum { N = PB_FRAGILITY_NESTED_ATOMS };
  static const int32_t sizes[PB_FRAGILITY_NESTED_SIZES] = {1, 2, 4, 8, 16};
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  for (int32_t i = 0; i < PB_FRAGILITY_NESTED_LAWS; i++) {
    double eta[N];
    const char *name = pb_fragility_study_nested_law(i, eta);
    for (int oracle = 0; oracle < 2; oracle++)
      for (int r = 0; r < PB_FRAGILITY_NESTED_RHOS; r++) {
        const double rho = pb_fragility_nested_rho[r];
        double prev_g = -1, prev_phi = -1;
        for (int k = 0; k < PB_FRAGILITY_NESTED_SIZES; k++) {
          const int K = sizes[k];
          double x[N], rec[PB_FN_FIXED], p[N], z[N], mean = 0, GP = 0, cm[16], cq[16], GR = 0;
          for (int a = 0; a < N; a++) x[a] = eta[a], p[a] = 1.0 / N, mean += eta[a] / N;
          if (oracle) /* increasing propensity */
            for (int a = 1; a < N; a++)
              for (int b = a; b > 0 && x[b] < x[b - 1]; b--) {
                const double t = x[b];
                x[b] = x[b - 1], x[b - 1] = t;
              }
          for (int a = 0; a < N; a++) z[a] = x[a] - mean, GP += p[a] * z[a] * z[a];
          for (int c = 0; c < K; c++) { /* N / K atoms per cell: K divides 32 */
            cm[c] = 0;
            for (int a = c * (N / K); a < (c + 1) * (N / K); a++) cm[c] += z[a] / (N / K);
            cq[c] = 1.0 / K;
            GR += cq[c] * cm[c] * cm[c];
          }
          pb_fragility_study_nested(eta, K, oracle, rho, &work, rec);
          const double phiP = brute_upper(N, z, p, rho), phiR = testprofile_brute(K, cm, cq, rho);
          ck_assert_msg(fabs(rec[PB_FN_G_P] - GP) < 1e-12 && fabs(rec[PB_FN_G_R] - GR) < 1e-12, "%s K %d", name, K);
          ck_assert_msg(fabs(rec[PB_FN_PHI_P] - phiP) < 1e-9, "%s K %d rho %g: %.17g vs %.17g", name, K, rho,
                        rec[PB_FN_PHI_P], phiP);
          ck_assert_msg(fabs(rec[PB_FN_PHI_R] - phiR) < 1e-9, "%s K %d rho %g: %.17g vs %.17g", name, K, rho,
                        rec[PB_FN_PHI_R], phiR);
          ck_assert(fabs(rec[PB_FN_EXCESS] - sqrt(rho * fmax(0, GP - GR))) < 1e-9);
          ck_assert(phiP <= phiR + rec[PB_FN_EXCESS] + 1e-12);           /* Proposition 6 */
          ck_assert(GR >= prev_g - 1e-15 && phiR >= prev_phi - 1e-12);   /* Proposition 5 */
          prev_g = GR, prev_phi = phiR;
        }
      }
  }
  /* the wave law's two-cell split in feature order hides most of its heterogeneity (seed: 0.0016 vs 0.050) */
  double eta[N], rec[PB_FN_FIXED];
  pb_fragility_study_nested_law(2, eta);
  pb_fragility_study_nested(eta, 2, 0, 1, &work, rec);
  ck_assert(fabs(rec[PB_FN_G_P] - 0.05) < 1e-4 && rec[PB_FN_G_R] < 0.002);
  pb_fragility_law_free(&work);
}
END_TEST

/* The command's statistics (MPI_COMM_WORLD: the suite runs this at 1-3 ranks)
 * against plain sums over the replicates redone here. */
START_TEST(test_statistics)
{
  struct pb_fragility_stage_options o;
  memset(&o, 0, sizeof o);
  o.k.seed = test_seed();
  o.replicates = REPS;
  const char *out = pb_test_path("study");
  ck_assert_int_eq(pb_fragility_study_run(&o, out, MPI_COMM_WORLD, "test"), PB_OK);
  double sum[ND][2 * NR][2][3] = {{{{0}}}}, truth[ND * PB_FRAGILITY_STUDY_EST], est[ND * PB_FRAGILITY_STUDY_EST];
  double kept_sum[ND] = {0};
  int32_t kept[ND];
  struct pb_fragility_law work;
  pb_fragility_law_init(&work);
  for (int d = 0; d < ND; d++) pb_fragility_study_truth(d, &work, truth + d * PB_FRAGILITY_STUDY_EST);
  pb_fragility_law_free(&work);
  for (uint32_t rep = 0; rep < REPS; rep++) {
    redo(rep, est, kept);
    for (int d = 0; d < ND; d++) {
      kept_sum[d] += kept[d];
      for (int r = 0; r < NR; r++)
        for (int dir = 0; dir < 2; dir++)
          for (int e = 0; e < 2; e++) {
            const double x = est[d * PB_FRAGILITY_STUDY_EST + (r * 2 + dir) * 2 + e];
            const double err = x - truth[d * PB_FRAGILITY_STUDY_EST + (r * 2 + dir) * 2];
            sum[d][dir * NR + r][e][0] += x;
            sum[d][dir * NR + r][e][1] += fabs(err);
            sum[d][dir * NR + r][e][2] += err * err;
          }
    }
  }
  char path[600], line[4096];
  snprintf(path, sizeof path, "%s/report/known_propensity.tsv", out);
  FILE *fp = fopen(path, "r");
  ck_assert_ptr_nonnull(fp);
  ck_assert_ptr_nonnull(fgets(line, sizeof line, fp)); /* header */
  int rows = 0;
  while (fgets(line, sizeof line, fp)) {
    double v[17];
    char *c = line;
    for (int i = 0; i < 3; i++) c = strchr(c, '\t') + 1; /* law, arm, direction */
    for (int i = 0; i < 17; i++) v[i] = strtod(c, &c);
    const int d = rows / (2 * NR), row = rows % (2 * NR);
    const double t = truth[d * PB_FRAGILITY_STUDY_EST + ((row % NR) * 2 + row / NR) * 2];
    ck_assert(v[PB_FS_REPLICATES] == REPS && v[PB_FS_N] == pb_fragility_study_designs[d].n);
    ck_assert(fabs(v[PB_FS_RHO] - pb_fragility_study_rho[row % NR]) == 0);
    ck_assert(fabs(v[PB_FS_CELLS_KEPT] - kept_sum[d] / REPS) < 1e-12);
    ck_assert(fabs(v[PB_FS_TRUTH] - t) < 1e-12);
    for (int e = 0; e < 2; e++) {
      const double *s = sum[d][row][e], *y = v + (e ? PB_FS_CAP_MEAN : PB_FS_PLUG_MEAN);
      /* the brute force agrees with the kernel to 1e-9 per replicate */
      ck_assert_msg(fabs(y[0] - s[0] / REPS) < 1e-9 && fabs(y[1] - (s[0] / REPS - t)) < 1e-9, "row %d", rows);
      ck_assert_msg(fabs(y[2] - s[1] / REPS) < 1e-9 && fabs(y[4] - sqrt(s[2] / REPS)) < 1e-9, "row %d", rows);
      ck_assert(t > 0 ? fabs(y[3] - s[1] / REPS / t) < 1e-9 : isnan(y[3]));
    }
    rows++;
  }
  fclose(fp);
  ck_assert_int_eq(rows, PB_FRAGILITY_STUDY_ROWS);

  /* the finite-sample nested readouts: the command's statistics against plain sums of redone replicates */
  enum { NN = PB_FRAGILITY_NESTED_ROWS * PB_FRAGILITY_NESTED_RHOS };
  static double nsum[NN][3], gsum[PB_FRAGILITY_NESTED_ROWS], phi[NN], g[PB_FRAGILITY_NESTED_ROWS];
  memset(nsum, 0, sizeof nsum), memset(gsum, 0, sizeof gsum);
  double ntruth[NN], x[PB_FN_FIXED];
  struct pb_fragility_law nw;
  pb_fragility_law_init(&nw);
  for (int i = 0; i < NN; i++) {
    double eta[PB_FRAGILITY_NESTED_ATOMS];
    const int row = i / PB_FRAGILITY_NESTED_RHOS;
    (void)pb_fragility_study_nested_law(row / 10, eta);
    pb_fragility_study_nested(eta, pb_fragility_nested_size[row % 5], 0, pb_fragility_nested_rho[i % 4], &nw, x);
    ntruth[i] = x[PB_FN_PHI_R];
  }
  pb_fragility_law_free(&nw);
  for (uint32_t rep = 0; rep < REPS; rep++) {
    redo_nested(rep, phi, g);
    for (int i = 0; i < NN; i++) nsum[i][0] += phi[i], nsum[i][1] += fabs(phi[i] - ntruth[i]),
                                 nsum[i][2] += (phi[i] - ntruth[i]) * (phi[i] - ntruth[i]);
    for (int i = 0; i < PB_FRAGILITY_NESTED_ROWS; i++) gsum[i] += g[i];
  }
  snprintf(path, sizeof path, "%s/report/nested_finite.tsv", out);
  fp = fopen(path, "r");
  ck_assert_ptr_nonnull(fp);
  ck_assert_ptr_nonnull(fgets(line, sizeof line, fp)); /* header */
  rows = 0;
  while (fgets(line, sizeof line, fp)) {
    double v[PB_FN2_FIXED];
    char *c = strchr(line, '\t') + 1; /* law */
    for (int i = 0; i < PB_FN2_FIXED; i++) v[i] = strtod(c, &c);
    const int i = rows, row = i / PB_FRAGILITY_NESTED_RHOS;
    ck_assert(v[PB_FN2_N] == (row / 5 % 2 ? 5000 : 250) && v[PB_FN2_K] == pb_fragility_nested_size[row % 5]);
    ck_assert(v[PB_FN2_RHO] == pb_fragility_nested_rho[i % 4] && v[PB_FN2_REPLICATES] == REPS);
    ck_assert(fabs(v[PB_FN2_TRUTH] - ntruth[i]) < 1e-12);
    ck_assert_msg(fabs(v[PB_FN2_MEAN] - nsum[i][0] / REPS) < 1e-9, "nested row %d", i);
    ck_assert(fabs(v[PB_FN2_BIAS] - (nsum[i][0] / REPS - ntruth[i])) < 1e-9);
    ck_assert(fabs(v[PB_FN2_MAE] - nsum[i][1] / REPS) < 1e-9 && fabs(v[PB_FN2_RMSE] - sqrt(nsum[i][2] / REPS)) < 1e-9);
    ck_assert(ntruth[i] > 0 ? fabs(v[PB_FN2_REL] - nsum[i][1] / REPS / ntruth[i]) < 1e-9 : isnan(v[PB_FN2_REL]));
    ck_assert(fabs(v[PB_FN2_G_R_MEAN] - gsum[row] / REPS) < 1e-12);
    rows++;
  }
  fclose(fp);
  ck_assert_int_eq(rows, NN);

  /* the witness pair of Proposition 4: both laws have mean 1/2 and G = 0.08 (computed here); A is two-point
   * with rho+ = rho_sat = (9/17) / (8/17) = 1.125 and top 0.3, B with rho+ = rho_sat = (2/3) / (1/3) = 2 and
   * top 0.4, so both profiles are sqrt(0.08 rho) up to 1.125, and 0.3 and 0.4 from 2 on (gap 0.1) */
  for (int i = 0; i < 2; i++) {
    double eta[2], q[2];
    pb_fragility_study_witness(i, eta, q);
    const double mean = q[0] * eta[0] + q[1] * eta[1];
    ck_assert(fabs(q[0] + q[1] - 1) < 1e-15 && fabs(mean - 0.5) < 1e-15);
    ck_assert(fabs(q[0] * (eta[0] - mean) * (eta[0] - mean) + q[1] * (eta[1] - mean) * (eta[1] - mean) - 0.08) < 1e-15);
  }
  snprintf(path, sizeof path, "%s/report/witness_laws.tsv", out);
  fp = fopen(path, "r");
  ck_assert_ptr_nonnull(fp);
  ck_assert_ptr_nonnull(fgets(line, sizeof line, fp));
  ck_assert_str_eq(line, "rho\tprofile_A\tprofile_B\tgap\n");
  rows = 0;
  double rho, a, b, gap;
  while (fscanf(fp, "%lf %lf %lf %lf", &rho, &a, &b, &gap) == 4) {
    ck_assert(fabs(a - fmin(sqrt(0.08 * rho), 0.3)) < 1e-12 && fabs(b - fmin(sqrt(0.08 * rho), 0.4)) < 1e-12);
    if (rho <= 1.125) ck_assert(fabs(gap) < 1e-12);
    if (rho >= 2) ck_assert(fabs(gap - 0.1) < 1e-12);
    rows++;
  }
  fclose(fp);
  ck_assert_int_eq(rows, PB_FRAGILITY_WITNESS_RHOS);
}
END_TEST

static Suite *study_suite(void)
{
  Suite *s = suite_create("fragility_study");
  TCase *tc = tcase_create("kernel");
  tcase_set_tags(tc, "serial");
  tcase_add_test(tc, test_closed_form);
  tcase_add_test(tc, test_laws);
  tcase_add_test(tc, test_replicates_vs_brute);
  tcase_add_test(tc, test_nested);
  tcase_add_test(tc, test_nested_replicates);
  suite_add_tcase(s, tc);
  TCase *ts = tcase_create("stage");
  tcase_add_test(ts, test_statistics);
  suite_add_tcase(s, ts);
  return s;
}

int main(void) { return pb_test_run(study_suite()); }
