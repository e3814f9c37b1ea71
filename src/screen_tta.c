/* Natural-transformation probe scores of seed 000 Section 5.3 and Appendix
 * E.2-E.4 (docs/screen.md, "Natural probes"): the +0 variant, TTA agreement
 * and the greedy development selection of a probe set (TTA^sel, U^sel).
 * Pure computation: the stage (screen_stage.c) gathers the step sums of its
 * ranks' units, so the selection is the same for any partition. */
#include "config.h"

#include <math.h>
#include <stdlib.h>

#include "pairbound/error.h"
#include "pairbound/screen.h"
#include "pairbound/util.h"

double pb_screen_u0(double m0, const float *const *m, int32_t n_probes, int32_t j)
{
  double sum = m0;
  for (int32_t a = 0; a < n_probes; a++) sum += m[a][j];
  return sum / (n_probes + 1);
}

double pb_screen_agreement(const int32_t *const *pred, int32_t n_probes, int32_t j, int32_t clean_pred)
{
  int32_t same = 0;
  for (int32_t a = 0; a < n_probes; a++) same += pred[a][j] == clean_pred;
  return n_probes > 0 ? (double)same / n_probes : NAN;
}

static int pb_screen__sel_in(const int32_t *chosen, int32_t k, int32_t c)
{
  for (int32_t j = 0; j < k; j++)
    if (chosen[j] == c) return 1;
  return 0;
}

/* Coverage of every cell at once from one score: k = budget, the images
 * above the cutoff value (A of them) and those tied at it (g), then per cell
 * (F_A g + (k - A) f_g) / (g n_fail), the formula of pb_screen_ranked_metrics.
 * Only the top k images and the cutoff group are visited, so a candidate
 * costs a linear-time selection plus O(k cells). */
static void pb_screen__sel_cover(const struct pb_screen_sel_unit *u, const double *score, const uint8_t *fail_t,
                                 const int32_t *n_fail, int pct, double *work, int32_t *fa, int32_t *fg, double *sum,
                                 int64_t *cnt)
{
  const int32_t n = u->n, C = u->n_cells;
  *sum = 0;
  *cnt = 0;
  if (n == 0) return;
  int32_t k = pb_screen_budget(n, pct);
  for (int32_t i = 0; i < n; i++) work[i] = score[i];
  double v = pb_kth_largest(work, n, k);
  int32_t A = 0, g = 0;
  for (int32_t c = 0; c < C; c++) fa[c] = fg[c] = 0;
  for (int32_t i = 0; i < n; i++) {
    if (score[i] < v) continue;
    int32_t *acc = score[i] > v ? fa : fg;
    if (score[i] > v) A++;
    else g++;
    const uint8_t *row = fail_t + (size_t)i * C;
    for (int32_t c = 0; c < C; c++) acc[c] += row[c];
  }
  for (int32_t c = 0; c < C; c++) {
    if (n_fail[c] == 0) continue;
    *sum += (double)((int64_t)fa[c] * g + (int64_t)(k - A) * fg[c]) / ((double)g * (double)n_fail[c]);
    (*cnt)++;
  }
}

void pb_screen_sel_step(const struct pb_screen_sel_unit *u, const int32_t *chosen, int32_t k, int b, double *sum,
                        int64_t *cnt)
{
  const int32_t n = u->n, nn = n > 0 ? n : 1, C = u->n_cells, cc = C > 0 ? C : 1;
  double *base = pb_calloc((size_t)nn, sizeof *base);
  for (int32_t j = 0; j < k; j++)
    for (int32_t i = 0; i < n; i++) base[i] += u->m[(size_t)chosen[j] * n + i];
  /* failures image-major, so the top images' rows are read contiguously */
  uint8_t *fail_t = pb_malloc((size_t)nn * cc);
  int32_t *n_fail = pb_calloc((size_t)cc, sizeof *n_fail);
  for (int32_t c = 0; c < C; c++)
    for (int32_t i = 0; i < n; i++) {
      fail_t[(size_t)i * C + c] = u->fail[(size_t)c * n + i] != 0;
      n_fail[c] += u->fail[(size_t)c * n + i] != 0;
    }
  {
    double *score = pb_malloc((size_t)nn * sizeof *score), *work = pb_malloc((size_t)nn * sizeof *work);
    int32_t *fa = pb_malloc((size_t)cc * sizeof *fa), *fg = pb_malloc((size_t)cc * sizeof *fg);
    for (int32_t a = 0; a < u->n_cand; a++) {
      sum[a] = 0;
      cnt[a] = 0;
      if (pb_screen__sel_in(chosen, k, a)) continue;
      for (int32_t i = 0; i < n; i++) score[i] = -(base[i] + u->m[(size_t)a * n + i]) / (k + 1);
      pb_screen__sel_cover(u, score, fail_t, n_fail, pb_screen_budget_pct[b], work, fa, fg, &sum[a], &cnt[a]);
    }
    free(score);
    free(work);
    free(fa);
    free(fg);
  }
  free(fail_t);
  free(n_fail);
  free(base);
}

int32_t pb_screen_sel_pick(const double *sum, const int64_t *cnt, const int32_t *chosen, int32_t k, int32_t n_cand)
{
  int32_t best = -1;
  double best_v = 0;
  for (int32_t a = 0; a < n_cand; a++) {
    if (cnt[a] == 0 || pb_screen__sel_in(chosen, k, a)) continue;
    double v = sum[a] / (double)cnt[a];
    if (best < 0 || v > best_v) {
      best = a;
      best_v = v;
    }
  }
  return best;
}

int32_t pb_screen_sel_greedy(const struct pb_screen_sel_unit *units, int32_t n_units, int32_t n_pick, int b,
                             int32_t *chosen)
{
  int32_t n_cand = n_units > 0 ? units[0].n_cand : 0, k = 0;
  size_t nc = (size_t)(n_cand > 0 ? n_cand : 1);
  double *sum = pb_malloc(nc * sizeof *sum), *us = pb_malloc(nc * sizeof *us);
  int64_t *cnt = pb_malloc(nc * sizeof *cnt), *uc = pb_malloc(nc * sizeof *uc);
  for (; k < n_pick && k < n_cand; k++) {
    for (int32_t a = 0; a < n_cand; a++) sum[a] = 0, cnt[a] = 0;
    for (int32_t x = 0; x < n_units; x++) {
      pb_screen_sel_step(&units[x], chosen, k, b, us, uc);
      for (int32_t a = 0; a < n_cand; a++) sum[a] += us[a], cnt[a] += uc[a];
    }
    int32_t c = pb_screen_sel_pick(sum, cnt, chosen, k, n_cand);
    if (c < 0) break;
    chosen[k] = c;
  }
  free(sum);
  free(us);
  free(cnt);
  free(uc);
  return k;
}
