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
#include "pairbound/screen_kernel.h"
#include "pairbound/sort.h"

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

/* Words of 8 cells (one byte each) per image row of the packed failures. */
static int32_t pb_screen__sel_words(int32_t n_cells) { return (n_cells + 7) / 8; }

void pb_screen_sel_pack(struct pb_screen_sel_unit *u)
{
  const int32_t n = u->n, C = u->n_cells, W = pb_screen__sel_words(C);
  uint64_t *rows = pb_calloc((size_t)(n > 0 ? n : 1) * (W > 0 ? W : 1), sizeof *rows);
  int32_t *n_fail = pb_calloc((size_t)(C > 0 ? C : 1), sizeof *n_fail);
  for (int32_t c = 0; c < C; c++)
    for (int32_t i = 0; i < n; i++) {
      uint64_t f = u->fail[(size_t)c * n + i] != 0;
      rows[(size_t)i * W + c / 8] |= f << (8 * (c % 8));
      n_fail[c] += (int32_t)f;
    }
  u->rows = rows;
  u->n_fail = n_fail;
}

void pb_screen_sel_unpack(struct pb_screen_sel_unit *u)
{
  free(u->rows);
  free(u->n_fail);
  u->rows = NULL;
  u->n_fail = NULL;
}

/* Per-cell failure counts of a set of images, a packed row at a time: eight
 * cells per word addition; a byte counts at most 255 rows before it is
 * flushed into acc. */
struct pb_screen__sel_acc {
  uint64_t *w;
  int32_t rows, *acc;
};

static void pb_screen__sel_flush(struct pb_screen__sel_acc *s, int32_t C)
{
  for (int32_t c = 0; c < C; c++) s->acc[c] += (int32_t)(s->w[c / 8] >> (8 * (c % 8)) & 0xff);
  for (int32_t w = 0; w < pb_screen__sel_words(C); w++) s->w[w] = 0;
  s->rows = 0;
}

static void pb_screen__sel_add(struct pb_screen__sel_acc *s, const uint64_t *row, int32_t C)
{
  const int32_t W = pb_screen__sel_words(C);
  for (int32_t w = 0; w < W; w++) s->w[w] += row[w];
  if (++s->rows == 255) pb_screen__sel_flush(s, C);
}

/* Coverage of every cell at once from one score: k = budget, the images
 * above the cutoff value (A of them) and those tied at it (g), then per cell
 * (F_A g + (k - A) f_g) / (g n_fail), the formula of pb_screen_ranked_metrics.
 * Only the top k images and the cutoff group are visited, so a candidate
 * costs a linear-time selection plus O(k cells / 8). */
static void pb_screen__sel_cover(const struct pb_screen_sel_unit *u, const double *score, int pct, double *work,
                                 struct pb_screen__sel_acc *sa, double *sum, int64_t *cnt)
{
  const int32_t n = u->n, C = u->n_cells, W = pb_screen__sel_words(C);
  *sum = 0;
  *cnt = 0;
  if (n == 0) return;
  int32_t k = pb_screen_budget(n, pct);
  for (int32_t i = 0; i < n; i++) work[i] = score[i];
  double v = pb_sort_kth_largest(work, n, k);
  int32_t A = 0, g = 0;
  for (int h = 0; h < 2; h++) {
    for (int32_t c = 0; c < C; c++) sa[h].acc[c] = 0;
    for (int32_t w = 0; w < W; w++) sa[h].w[w] = 0;
    sa[h].rows = 0;
  }
  for (int32_t i = 0; i < n; i++) {
    if (score[i] < v) continue;
    if (score[i] > v) A++;
    else g++;
    pb_screen__sel_add(&sa[score[i] > v ? 0 : 1], u->rows + (size_t)i * W, C);
  }
  pb_screen__sel_flush(&sa[0], C);
  pb_screen__sel_flush(&sa[1], C);
  const int32_t *fa = sa[0].acc, *fg = sa[1].acc, *n_fail = u->n_fail;
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
  struct pb_screen_sel_unit local = *u;
  if (!u->rows) pb_screen_sel_pack(&local); /* else packed once for every step */
  double *base = pb_calloc((size_t)nn, sizeof *base);
  for (int32_t j = 0; j < k; j++)
    for (int32_t i = 0; i < n; i++) base[i] += u->m[(size_t)chosen[j] * n + i];
  double *score = pb_malloc((size_t)nn * sizeof *score), *work = pb_malloc((size_t)nn * sizeof *work);
  struct pb_screen__sel_acc sa[2];
  for (int h = 0; h < 2; h++) {
    sa[h].w = pb_malloc((size_t)pb_screen__sel_words(cc) * sizeof *sa[h].w);
    sa[h].acc = pb_malloc((size_t)cc * sizeof *sa[h].acc);
  }
  for (int32_t a = 0; a < u->n_cand; a++) {
    sum[a] = 0;
    cnt[a] = 0;
    if (pb_screen__sel_in(chosen, k, a)) continue;
    for (int32_t i = 0; i < n; i++) score[i] = -(base[i] + u->m[(size_t)a * n + i]) / (k + 1);
    pb_screen__sel_cover(&local, score, pb_screen_budget_pct[b], work, sa, &sum[a], &cnt[a]);
  }
  for (int h = 0; h < 2; h++) {
    free(sa[h].w);
    free(sa[h].acc);
  }
  free(score);
  free(work);
  free(base);
  if (!u->rows) pb_screen_sel_unpack(&local);
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
