/* Screening kernels of the protocol-sensitivity and tie-break checks (seed
 * 000 Appendix E.1, Tables 18 and 22): the rank-normalised probe mean U_rank,
 * power means U^gamma, and one seeded random tie-break of a ranked score.
 * docs/screen.md states every rule. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "pairbound/error.h"
#include "pairbound/screen.h"
#include "pairbound/util.h"

double pb_screen_u_power(const float *const *m, int32_t n_probes, int32_t j, double gamma)
{
  double sum = 0;
  for (int32_t a = 0; a < n_probes; a++) sum += pow((double)m[a][j], gamma);
  return sum / n_probes;
}

struct pb_screen__fv { float v; int32_t q; };

static int pb_screen__cmp_fv(const void *pa, const void *pb)
{
  const struct pb_screen__fv *a = pa, *b = pb;
  if (a->v != b->v) return a->v < b->v ? -1 : 1;
  return (a->q > b->q) - (a->q < b->q);
}

void pb_screen_u_rank(const float *const *m, int32_t n_probes, const int32_t *j, int32_t n, double *out)
{
  struct pb_screen__fv *fv = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *fv);
  /* twice the mid-CDF, an integer: #{<} + #{<=} per probe, summed over probes
   * exactly before the one division */
  int64_t *acc = pb_calloc((size_t)(n > 0 ? n : 1), sizeof *acc);
  for (int32_t a = 0; a < n_probes; a++) {
    for (int32_t q = 0; q < n; q++) fv[q] = (struct pb_screen__fv){m[a][j[q]], q};
    qsort(fv, (size_t)n, sizeof *fv, pb_screen__cmp_fv);
    for (int32_t s = 0; s < n;) {
      int32_t e = s + 1;
      while (e < n && fv[e].v == fv[s].v) e++;
      for (int32_t i = s; i < e; i++) acc[fv[i].q] += s + e;
      s = e;
    }
  }
  for (int32_t q = 0; q < n; q++) out[q] = (double)acc[q] / (2.0 * (double)n * (double)n_probes);
  free(acc);
  free(fv);
}

void pb_screen_ranked_tiebreak(const struct pb_screen_ranked *r, const struct pb_screen_outcome *o,
                               struct pb_rng *rng, double *cov)
{
  int64_t npos = 0, full[PB_SCREEN_N_BUDGETS] = {0, 0, 0}, hit[PB_SCREEN_N_BUDGETS] = {0, 0, 0};
  int64_t need[PB_SCREEN_N_BUDGETS], left[PB_SCREEN_N_BUDGETS];
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    need[b] = r->k[b] - r->A[b];
    left[b] = r->g[b];
  }
  /* selection sampling (Knuth's Algorithm S) over the cutoff group in
   * position order: each (k - A)-subset of its g images equally likely, i.e.
   * the top-k set under a uniformly random order of the tied images */
  for (int32_t q = 0; q < r->n_all; q++) {
    if (r->mid2[q] < 0) continue;
    int y = o->y[q] != 0;
    npos += y;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
      int c = r->code[q] >> (2 * b) & 3;
      if (c == 1) full[b] += y;
      if (c != 2) continue;
      int take = need[b] > 0 && (int64_t)pb_rng_below(rng, (uint32_t)left[b]) < need[b];
      need[b] -= take;
      left[b]--;
      hit[b] += take && y;
    }
  }
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
    cov[b] = npos > 0 && r->n > 0 ? (double)(full[b] + hit[b]) / (double)npos : NAN;
}
