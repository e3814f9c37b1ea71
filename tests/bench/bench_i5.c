/* Timing of the exact five-state H dynamic program per class, and of the
 * non-I5 path of pb_bounds_cell() on a synthetic grid shaped like the seed's
 * full grid (11,088 cells, 9.1M records).  Usage: bench_i5 [grid_threads]. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "pairbound/bounds.h"

#define BENCH_SEED 20260908u
#include "benchutil.h"

/* Wrong labels from a skewed pool of `pool` confusable classes: label 1 is
 * picked about half the time, as confusions concentrate on a few neighbours. */
static int32_t wrong_label(int pool)
{
  int l = 1;
  while (l < pool && unif() < 0.5) l++;
  return l;
}

static void make_class(int n, double acc0, double acc1, int pool, int32_t *p0, uint8_t *z0,
                       int32_t *p1, uint8_t *z1)
{
  for (int i = 0; i < n; i++) {
    int c0 = unif() < acc0;
    int c1 = c0 ? unif() < acc1 / acc0 * 0.95 : unif() < 0.1;
    p0[i] = c0 ? 0 : wrong_label(pool);
    /* persistent errors are common: keep the clean wrong label half the time */
    p1[i] = c1 ? 0 : (!c0 && unif() < 0.5 ? p0[i] : wrong_label(pool));
    z0[i] = unif() < (c0 ? 0.8 : 0.4);
    z1[i] = unif() < (c1 ? 0.7 : 0.4);
  }
}

static void bench_dp(const char *name, int n, double acc0, double acc1, int pool, int reps)
{
  int32_t p0[256], p1[256];
  uint8_t z0[256], z1[256];
  double total = 0.0, worst = 0.0;
  long states = 0;
  for (int r = 0; r < reps; r++) {
    make_class(n, acc0, acc1, pool, p0, z0, p1, z1);
    int k = 0, s = 0, a = 0;
    for (int i = 0; i < n; i++) {
      k += p0[i] == 0 && p1[i] == 0;
      s += p0[i] != 0 && p1[i] != 0 && p0[i] == p1[i];
      a += p0[i] == 0;
    }
    states += (long)(a - k + 1) * (s + 1);
    int64_t o[2];
    const int inner = 20;
    double t0 = now();
    for (int q = 0; q < inner; q++)
      if (pb_bounds_class_h_i5(n, 0, p0, z0, p1, z1, k, s, o) != 0) {
        fprintf(stderr, "observed counts infeasible?\n");
        exit(1);
      }
    double dt = (now() - t0) / inner;
    total += dt;
    if (dt > worst) worst = dt;
  }
  printf("%-34s n=%3d: mean %8.2f us/class, worst %8.2f us, mean DP states %6.1f\n", name, n,
         1e6 * total / reps, 1e6 * worst, (double)states / reps);
}

struct gcell {
  int32_t n;
  int32_t *label, *pred0, *pred1;
  float *s0, *m0, *s1, *m1;
};

static void make_cell(struct gcell *c, int ncls, int per_lo, int per_hi, double acc0,
                      double acc1)
{
  int n = 0;
  int32_t *sizes = malloc((size_t)ncls * sizeof *sizes);
  for (int y = 0; y < ncls; y++) n += sizes[y] = per_lo + (int)(next64() % (uint64_t)(per_hi - per_lo + 1));
  c->n = n;
  c->label = malloc((size_t)n * sizeof(int32_t));
  c->pred0 = malloc((size_t)n * sizeof(int32_t));
  c->pred1 = malloc((size_t)n * sizeof(int32_t));
  c->s0 = malloc((size_t)n * sizeof(float));
  c->m0 = malloc((size_t)n * sizeof(float));
  c->s1 = malloc((size_t)n * sizeof(float));
  c->m1 = malloc((size_t)n * sizeof(float));
  int i = 0;
  for (int y = 0; y < ncls; y++)
    for (int j = 0; j < sizes[y]; j++, i++) {
      c->label[i] = y;
      int c0 = unif() < acc0, c1 = unif() < acc1;
      c->pred0[i] = c0 ? y : (y + wrong_label(8)) % ncls;
      c->pred1[i] = c1 ? y : (y + wrong_label(8)) % ncls;
      c->s0[i] = (float)unif();
      c->m0[i] = (float)unif();
      c->s1[i] = (float)unif();
      c->m1[i] = (float)unif();
    }
  /* records arrive in storage order, not grouped by class */
  for (int a = n - 1; a > 0; a--) {
    int b = (int)(next64() % (uint64_t)(a + 1));
    int32_t t;
    float f;
    t = c->label[a]; c->label[a] = c->label[b]; c->label[b] = t;
    t = c->pred0[a]; c->pred0[a] = c->pred0[b]; c->pred0[b] = t;
    t = c->pred1[a]; c->pred1[a] = c->pred1[b]; c->pred1[b] = t;
    f = c->s0[a]; c->s0[a] = c->s0[b]; c->s0[b] = f;
    f = c->m0[a]; c->m0[a] = c->m0[b]; c->m0[b] = f;
    f = c->s1[a]; c->s1[a] = c->s1[b]; c->s1[b] = f;
    f = c->m1[a]; c->m1[a] = c->m1[b]; c->m1[b] = f;
  }
  free(sizes);
}

int main(int argc, char **argv)
{
  printf("== exact I5 H dynamic program, per class ==\n");
  bench_dp("realistic (acc .75/.55, 8 labels)", 50, 0.75, 0.55, 8, 2000);
  bench_dp("low accuracy (.4/.25, 8 labels)", 50, 0.40, 0.25, 8, 2000);
  bench_dp("heavy repetition (.5/.3, 2 labels)", 50, 0.50, 0.30, 2, 2000);
  bench_dp("many labels (.5/.3, 40 labels)", 50, 0.50, 0.30, 40, 2000);
  bench_dp("large class (.6/.4, 8 labels)", 200, 0.60, 0.40, 8, 200);

  /* Grid shaped like the seed's: 792 Syn cells of 1000 classes x 5, and
   * 10,296 real/Syn-B cells of 200 classes x 2-3 (500 records). */
  int threads = argc > 1 ? atoi(argv[1]) : 2;
  const int nsyn = 792, nreal = 10296;
  const int ntmpl = 16; /* distinct cell templates reused to bound memory */
  struct gcell syn[16], real[16];
  for (int t = 0; t < ntmpl; t++) {
    make_cell(&syn[t], 1000, 5, 5, 0.75, 0.55);
    make_cell(&real[t], 200, 2, 3, 0.7, 0.4);
  }
  long records = 0;
  for (int c = 0; c < nsyn; c++) records += syn[c % ntmpl].n;
  for (int c = 0; c < nreal; c++) records += real[c % ntmpl].n;
  for (int want = 0; want <= 1; want++) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    double t0 = now();
    double check = 0.0;
#pragma omp parallel for schedule(dynamic, 16) reduction(+ : check)
    for (int c = 0; c < nsyn + nreal; c++) {
      const struct gcell *g = c < nsyn ? &syn[c % ntmpl] : &real[(c - nsyn) % ntmpl];
      struct pb_cell_view in = {.index = -1, .n = g->n, .label = g->label, .pred0 = g->pred0, .s0 = g->s0,
                                .m0 = g->m0, .pred1 = g->pred1, .s1 = g->s1, .m1 = g->m1, .tau = 0.5f};
      struct pb_cell_bounds b;
      if (pb_bounds_cell(&in, want, &b) != 0) abort();
      check += b.L_Ik[1];
    }
    double dt = now() - t0;
    printf("grid want_i5=%d: %d cells, %ld records, %d threads: %.3f s (checksum %.6f)\n", want,
           nsyn + nreal, records, threads, dt, check);
  }
  return 0;
}
