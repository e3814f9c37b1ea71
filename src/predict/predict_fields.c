/* The names of the predict stage's features, targets and steps, and the
 * field table of its comparisons (report/predict_gains.tsv, results.h5
 * /predict/gains); shared by the stage and the report. */
#include "config.h"

#include "predict_internal.h"

const char *const pb_predict__feat_names[PB_PREDICT__N_FEAT] = {
  "syn_acc0", "real_dev_acc0", "syn_a1", "syn_S0", "syn_S1", "syn_M0", "syn_M1", "syn_logloss", "real_dev_a1",
  "syn_R80", "syn_E", "syn_CR", "F", "A", "Q", "k", "dMk", "ds_s", "ds_w", "Lsyn",
  "F_ind", "A_ind", "Q_ind", "k_ind", "dMk_ind", "ds_s_ind", "ds_w_ind", "Lsyn_ind"};
const char *const pb_predict__target_names[PB_PREDICT__N_TARGETS] = {"a1", "R80", "E", "L"};
const char *const pb_predict__step_names[PB_PREDICT__N_STEPS] = {"C1", "C2", "C3a", "C3b", "C4"};

static const struct pb_field pb_predict__gain_field[PB_PG_N] = {
  [PB_PG_N_MODELS] = {"n_models", PB_FMT_INT},
  [PB_PG_BASE] = {"base_mae", PB_FMT_NUM}, [PB_PG_ALT] = {"alt_mae", PB_FMT_NUM},
  [PB_PG_GAIN] = {"gain", PB_FMT_NUM}, [PB_PG_LO] = {"lo", PB_FMT_NUM}, [PB_PG_HI] = {"hi", PB_FMT_NUM},
  [PB_PG_GGAIN] = {"gain_group_equal", PB_FMT_NUM}, [PB_PG_GLO] = {"lo_group_equal", PB_FMT_NUM},
  [PB_PG_GHI] = {"hi_group_equal", PB_FMT_NUM},
  [PB_PG_REL] = {"rel_gain_pct", PB_FMT_NUM},
  [PB_PG_DEL_MIN] = {"deletion_min", PB_FMT_NUM}, [PB_PG_DEL_MAX] = {"deletion_max", PB_FMT_NUM},
  [PB_PG_DEL_POS] = {"deletion_positive", PB_FMT_INT}, [PB_PG_DEL_N] = {"deletion_refits", PB_FMT_INT},
  [PB_PG_IQR] = {"target_iqr", PB_FMT_NUM},
  [PB_PG_THR + 0] = {"thr_iqr_0.025", PB_FMT_NUM}, [PB_PG_THR + 1] = {"thr_iqr_0.05", PB_FMT_NUM},
  [PB_PG_THR + 2] = {"thr_iqr_0.1", PB_FMT_NUM}, [PB_PG_THR + 3] = {"thr_iqr_0.2", PB_FMT_NUM},
  [PB_PG_THR + 4] = {"thr_mae_5", PB_FMT_NUM}, [PB_PG_THR + 5] = {"thr_mae_10", PB_FMT_NUM},
  [PB_PG_THR + 6] = {"thr_mae_20", PB_FMT_NUM}};
const struct pb_fields pb_predict__gain_fields = {.group = "/predict/gains", .n = PB_PG_N, .f = pb_predict__gain_field};

void pb_predict__gain_record(const struct pb_predict__gain *g, double *r)
{
  r[PB_PG_N_MODELS] = g->n, r[PB_PG_BASE] = g->base, r[PB_PG_ALT] = g->alt, r[PB_PG_GAIN] = g->gain;
  r[PB_PG_LO] = g->lo, r[PB_PG_HI] = g->hi, r[PB_PG_GGAIN] = g->ggain, r[PB_PG_GLO] = g->glo, r[PB_PG_GHI] = g->ghi;
  r[PB_PG_REL] = g->rel, r[PB_PG_DEL_MIN] = g->del_min, r[PB_PG_DEL_MAX] = g->del_max;
  r[PB_PG_DEL_POS] = g->del_pos, r[PB_PG_DEL_N] = g->del_n, r[PB_PG_IQR] = g->iqr;
  for (int k = 0; k < 7; k++) r[PB_PG_THR + k] = g->thr[k];
}
