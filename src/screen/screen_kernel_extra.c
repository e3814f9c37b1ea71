/* Screening kernels of the protocol-sensitivity and tie-break checks (seed
 * 000 Appendix E.1, Tables 18 and 22): the rank-normalised probe mean U_rank,
 * power means U^gamma, and one seeded random tie-break of a ranked score.
 * docs/screen.md states every rule. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "pairbound/error.h"
#include "pairbound/rng.h"
#include "pairbound/screen.h"
#include "pairbound/screen_kernel.h"

double pb_screen_u_power(const float *const *m, int32_t n_probes, int32_t j, double gamma)
{
  double sum = 0;
  for (int32_t a = 0; a < n_probes; a++) {
    double v = m[a][j]; /* the seed's two exponents exactly: sqrt and the square are correctly rounded */
    sum += gamma == 0.5 ? sqrt(v) : gamma == 2.0 ? v * v : pow(v, gamma);
  }
  return sum / n_probes;
}

void pb_screen_u_rank(const float *const *m, int32_t n_probes, const int32_t *j, int32_t n, double *out)
{
  double *v = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
  /* twice the mid-CDF, an integer: #{<} + #{<=} = (twice the ascending
   * midrank) - 1 per probe, summed over probes exactly before the one division */
  int64_t *acc = pb_calloc((size_t)(n > 0 ? n : 1), sizeof *acc);
  struct pb_screen_ranked r;
  for (int32_t a = 0; a < n_probes; a++) {
    for (int32_t q = 0; q < n; q++) v[q] = m[a][j[q]];
    pb_screen_rank(v, n, NULL, 0, &r);
    for (int32_t q = 0; q < n; q++) acc[q] += r.mid2[q] - 1;
    pb_screen_ranked_free(&r);
  }
  for (int32_t q = 0; q < n; q++) out[q] = (double)acc[q] / (2.0 * (double)n * (double)n_probes);
  free(acc);
  free(v);
}

void pb_screen_ranked_tiebreak(const struct pb_screen_ranked *r, const struct pb_screen_outcome *o,
                               struct pb_rng *rng, double *cov)
{
  int64_t npos = 0, full[PB_SCREEN_N_BUDGETS] = {0, 0, 0}, hit[PB_SCREEN_N_BUDGETS] = {0, 0, 0};
  int64_t need[PB_SCREEN_N_BUDGETS], left[PB_SCREEN_N_BUDGETS];
  /* failures ranked, and those wholly above each cutoff group, from the
   * shorter outcome list (the images above a cutoff group number A) */
  int use_fail = o->n_fail <= o->n - o->n_fail;
  const int32_t *list = use_fail ? o->fail : o->keep;
  int32_t len = use_fail ? o->n_fail : o->n - o->n_fail;
  for (int32_t j = 0; j < len; j++) {
    int32_t q = list[j];
    if (r->mid2[q] < 0) continue;
    npos++;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) full[b] += (r->code[q] >> (2 * b) & 3) == 1;
  }
  if (!use_fail) {
    npos = r->n - npos;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) full[b] = r->A[b] - full[b];
  }
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
    need[b] = r->k[b] - r->A[b];
    left[b] = r->g[b];
  }
  /* selection sampling (Knuth's Algorithm S) over the cutoff group in
   * position order: each (k - A)-subset of its g images equally likely, i.e.
   * the top-k set under a uniformly random order of the tied images */
  for (int32_t j = 0; j < r->n_cut; j++) {
    int32_t q = r->cut[j];
    int y = o->y[q] != 0;
    for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++) {
      if ((r->code[q] >> (2 * b) & 3) != 2) continue;
      int take = need[b] > 0 && (int64_t)pb_rng_below(rng, (uint32_t)left[b]) < need[b];
      need[b] -= take;
      left[b]--;
      hit[b] += take && y;
    }
  }
  for (int b = 0; b < PB_SCREEN_N_BUDGETS; b++)
    cov[b] = npos > 0 && r->n > 0 ? (double)(full[b] + hit[b]) / (double)npos : NAN;
}
