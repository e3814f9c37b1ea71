/* The rows of the identification tables: Table 2's summaries and B.2's
 * stratifiers (what a cell adds and what a table prints), the source and
 * tier rows of Tables 10 and 11, and the one getter that reads a row's
 * values from the per-source totals (bounds_stage_internal.h). */
#include "config.h"

#include <math.h>

#include "bounds_stage_internal.h"

#define PP 100.0

const struct pb_bounds_t2 pb_bounds_t2[PB_BOUNDS_N_T2] = {
  {"E", PB_IF_E, -1, PP},          {"H", PB_IF_H_OBS, PB_IF_H_IND, PP}, {"L", PB_IF_L_OBS, PB_IF_L_IND, PP},
  {"dMk", PB_IF_D_OBS, PB_IF_D_IND, PP}, {"ds_s", PB_IF_DSS, PB_IF_DSS_IND, PP},
  {"ds_w", PB_IF_DSW, PB_IF_DSW_IND, PP}, {"F", PB_IF_F, PB_IF_F_IND, PP}, {"A", PB_IF_A, PB_IF_A_IND, PP},
  {"Q", PB_IF_Q, PB_IF_Q_IND, 1.0},      {"k", PB_IF_K, PB_IF_K_IND, PP},
};

const struct pb_bounds_stratum pb_bounds_strata[PB_BOUNDS_N_STRATA] = {
  {"K/N", PB_IF_K, {0.1, 0.5}},
  {"U", PB_IF_U, {0.1, 0.3}},
  {"E", PB_IF_E, {0.1, 0.3}},
  {"V", PB_IF_V1, {0.1, 0.3}},
};

int32_t pb_bounds_tier_rows(const struct pb_meta *meta, const int64_t *cells, int32_t (*rows)[2])
{
  int32_t n = 0;
  PB_BOUNDS_SOURCES(meta, s)
  for (int tier = -1; tier < PB_N_TIERS; tier++)
    if (cells[(size_t)s * PB_RS_TIER_ROWS + tier + 1] > 0) rows[n][0] = s, rows[n][1] = tier, n++;
  return n;
}

union pb_cell pb_bounds_row_cell(const void *row, const struct pb_column *c)
{
  const struct pb_bounds_row *r = row;
  const int slot = r->base + c->slot;
  switch ((enum pb_irow_kind)c->arg) {
  case PB_IROW_KEY: return (union pb_cell){.s = r->key[c->slot]};
  case PB_IROW_MEAN: return (union pb_cell){.x = pb_rs_mean(r->S, r->s, slot)};
  case PB_IROW_INT: return (union pb_cell){.i = pb_rs_int(r->S, r->s, slot)};
  case PB_IROW_COUNT: return (union pb_cell){.i = pb_rs_count(r->S, r->s, slot)};
  case PB_IROW_SHARE: {
    const int64_t n = pb_rs_int(r->S, r->s, r->base), k = pb_rs_int(r->S, r->s, slot);
    return (union pb_cell){.x = n ? PP * (double)k / n : NAN};
  }
  }
  return (union pb_cell){.s = ""};
}
