/* The names of verify's targets, compared values and policy targets, and
 * the per-cell record's field table built from them (/verify/cells columns,
 * verify.tsv); shared by the stage and the report. */
#include "config.h"

#include <stdio.h>

#include "verify_internal.h"

const char *const pb_verify_target_names[PB_VERIFY_NTARGETS] = {"H", "L", "dMk"};
const char *const pb_verify_cmp_names[PB_VERIFY_NCMP] = {"obs", "I0", "Ik", "I5"};
const char *const pb_verify_ptarget_names[PB_VERIFY_NPT] = {"obs", "H", "L", "J", "Dplus", "lemma1", "mean", "natural"};
const char *const pb_verify_level_names[PB_VERIFY_NLEVELS] = {"I0", "Ik", "I5"};

static const char *pb_verify__field_name(int f)
{
  static const char *const fixed[PB_VF_VAL] = {
    "covered", "n", "tau", "classes", "classes_enumerated", "classes_skipped", "permutations",
    "cartesian_combinations", "H_I5_narrower_classes", "checks_nesting", "failed_nesting", "checks_observed",
    "failed_observed", "checks_theorem1", "failed_theorem1", "against_i5_missing"};
  static char names[PB_VF_N][40];
  static int ready = 0;
  if (!ready) { /* first call from serial code (the stage's setup) */
    {
      for (int i = 0; i < PB_VF_VAL; i++) snprintf(names[i], sizeof names[i], "%s", fixed[i]);
      static const char *const v[7] = {"obs", "I0_lo", "I0_hi", "Ik_lo", "Ik_hi", "I5_lo", "I5_hi"};
      for (int t = 0; t < PB_VERIFY_NTARGETS; t++) {
        for (int j = 0; j < 7; j++)
          snprintf(names[PB_VF_VAL + 7 * t + j], sizeof names[0], "%s_%s", pb_verify_target_names[t], v[j]);
        for (int j = 0; j < PB_VERIFY_NCMP; j++) {
          const int o = PB_VERIFY_NCMP * t + j;
          snprintf(names[PB_VF_RES + o], sizeof names[0], "res_%s_%s", pb_verify_target_names[t], pb_verify_cmp_names[j]);
          snprintf(names[PB_VF_CRES + o], sizeof names[0], "class_res_%s_%s", pb_verify_target_names[t],
                   pb_verify_cmp_names[j]);
          snprintf(names[PB_VF_CRES_LABEL + o], sizeof names[0], "class_res_%s_%s_label", pb_verify_target_names[t],
                   pb_verify_cmp_names[j]);
        }
      }
      snprintf(names[PB_VF_CART_RES], sizeof names[0], "cartesian_res");
      static const char *const pfixed[] = {"pol_classes", "pol_checks_lemma1", "pol_failed_lemma1",
                                           "pol_checks_corollary1", "pol_failed_corollary1", "pol_checks_structure",
                                           "pol_failed_structure", "pol_shared_strict"};
      for (int i = 0; i < PB_VF_POL_RES - PB_VF_POL_CLASSES; i++)
        snprintf(names[PB_VF_POL_CLASSES + i], sizeof names[0], "%s", pfixed[i]);
      for (int t = 0; t < PB_VERIFY_NPT; t++) {
        for (int lv = 0; lv < (t == PB_VERIFY_PT_OBS ? 1 : PB_VERIFY_NLEVELS); lv++) {
          if (t == PB_VERIFY_PT_OBS) snprintf(names[PB_VF_POL_RES], sizeof names[0], "pol_res_obs");
          else
            snprintf(names[PB_VF_POL_RES + PB_VERIFY_PSLOT(t, lv)], sizeof names[0], "pol_res_%s_%s",
                     pb_verify_ptarget_names[t], pb_verify_level_names[lv]);
        }
        snprintf(names[PB_VF_POL_CRES + t], sizeof names[0], "pol_class_res_%s", pb_verify_ptarget_names[t]);
        snprintf(names[PB_VF_POL_CRES_LABEL + t], sizeof names[0], "pol_class_res_%s_label", pb_verify_ptarget_names[t]);
      }
      snprintf(names[PB_VF_POL_CART_RES], sizeof names[0], "pol_cartesian_res");
      static const char *const lfixed[] = {"classes_lp", "lp_programs", "lp_branch_and_bound", "lp_res_H_I5",
                                           "lp_pol_res_I5", "closed_form_res_I0_Ik"};
      for (int i = 0; i <= PB_VF_CF_RES - PB_VF_LP_CLASSES; i++)
        snprintf(names[PB_VF_LP_CLASSES + i], sizeof names[0], "%s", lfixed[i]);
      snprintf(names[PB_VF_FAILED], sizeof names[0], "failed");
      snprintf(names[PB_VF_FAIL_LABEL], sizeof names[0], "failed_class");
      ready = 1;
    }
  }
  return names[f];
}

const struct pb_fields *pb_verify_fields(void)
{
  static struct pb_field f[PB_VF_N];
  static struct pb_fields fs;
  if (!fs.f) { /* first call from serial code (the stage's setup) */
    for (int i = 0; i < PB_VF_N; i++) f[i] = (struct pb_field){pb_verify__field_name(i), PB_FMT_NUM};
    fs = pb_fields_static("/verify/cells", PB_VF_N, f);
  }
  return &fs;
}
