/* Rounding, NaN-skipping means and near vector math (include/pairbound/num.h). */
#include "config.h"

#include <math.h>
#include <stdint.h>

#include "pairbound/num.h"

#if defined(HAVE_LIBMVEC) && defined(__x86_64__)
#include <immintrin.h>
/* libmvec's AVX2 variants, by the x86-64 vector function ABI's names (AVX
 * targets, so that clang passes their vectors in registers as they expect) */
#define PB_NUM__AVX2 __attribute__((target("avx2")))
PB_NUM__AVX2 __m256d _ZGVdN4v_log(__m256d x);
PB_NUM__AVX2 __m256d _ZGVdN4v_cos(__m256d x);
PB_NUM__AVX2 __m256d _ZGVdN4v_exp(__m256d x);
PB_NUM__AVX2 __m256d _ZGVdN4vv_pow(__m256d x, __m256d y);

int pb_num_near(void) { return __builtin_cpu_supports("avx2"); }

/* One vector function over the four-lane blocks of x; the number of lanes done. */
#define PB_NUM__NEAR_N(NAME, CALL)                                                                                  \
  PB_NUM__AVX2 static int NAME(const double *x, double p, double *y, int n)                                     \
  {                                                                                                              \
    const __m256d vp = _mm256_set1_pd(p);                                                                        \
    (void)vp;                                                                                                    \
    int j = 0;                                                                                                   \
    for (; j + 4 <= n; j += 4) _mm256_storeu_pd(y + j, CALL);                                                    \
    return j;                                                                                                    \
  }
PB_NUM__NEAR_N(pb_num__log4, _ZGVdN4v_log(_mm256_loadu_pd(x + j)))
PB_NUM__NEAR_N(pb_num__cos4, _ZGVdN4v_cos(_mm256_loadu_pd(x + j)))
PB_NUM__NEAR_N(pb_num__exp4, _ZGVdN4v_exp(_mm256_loadu_pd(x + j)))
PB_NUM__NEAR_N(pb_num__pow4, _ZGVdN4vv_pow(_mm256_loadu_pd(x + j), vp))
#define PB_NUM__VECTOR(FN) (near && pb_num_near() ? FN(x, p, y, n) : 0)
#else
int pb_num_near(void) { return 0; }
#define PB_NUM__VECTOR(FN) ((void)near, (void)p, 0)
#endif

void pb_num_log_n(const double *x, double *y, int n, int near)
{
  const double p = 0.0;
  for (int j = PB_NUM__VECTOR(pb_num__log4); j < n; j++) y[j] = log(x[j]);
}

void pb_num_cos_n(const double *x, double *y, int n, int near)
{
  const double p = 0.0;
  for (int j = PB_NUM__VECTOR(pb_num__cos4); j < n; j++) y[j] = cos(x[j]);
}

void pb_num_exp_n(const double *x, double *y, int n, int near)
{
  const double p = 0.0;
  for (int j = PB_NUM__VECTOR(pb_num__exp4); j < n; j++) y[j] = exp(x[j]);
}

void pb_num_pow_n(const double *x, double p, double *y, int n, int near)
{
  for (int j = PB_NUM__VECTOR(pb_num__pow4); j < n; j++) y[j] = pow(x[j], p);
}

float pb_num__round_half_rare(double x)
{
  int e;
  frexp(x, &e);
  const int q = e - 11 < -24 ? -24 : e - 11;
  return (float)ldexp(nearbyint(ldexp(x, -q)), q);
}

void pb_num_nanmean_add(struct pb_num_nanmean *m, double x)
{
  if (isnan(x)) return;
  m->sum += x;
  m->n++;
}

double pb_num_nanmean_get(const struct pb_num_nanmean *m) { return m->n ? m->sum / (double)m->n : NAN; }

