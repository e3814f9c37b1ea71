/* What the `exact score` stage files share: options, the scored predictor and
 * the results the report writes. */
#ifndef PAIRBOUND_EXACT_INTERNAL_H
#define PAIRBOUND_EXACT_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "pairbound/exact.h"
#include "pairbound/results.h"
#include "pairbound/text.h"
#include "pairbound/timer.h"
#include "pairbound/world.h"
#include "pairbound/world_stage.h"

#include <mpi.h>

#define PB_EXACT_NSEEDS 3
#define PB_EXACT_QUARTILE_N 100000 /* inputs behind the fixed population quartiles */
#define PB_EXACT_KNN_K 5

/* Streams of the cases' seed (world.h: replicate = stream); the CASES file's
 * own stream supplies the logistic training rows [0, n) as in A.5. */
enum {
  PB_EXACT_STREAM_REFERENCE = 101,   /* million-input population reference (C.4) */
  PB_EXACT_STREAM_CALIBRATION = 102, /* higher-order calibration inputs (C.5) */
  PB_EXACT_STREAM_QUARTILE = 103,    /* fixed population quartiles of counts (Section 5) */
  PB_EXACT_STREAM_RESAMPLE = 110,    /* + r: empirical MC calibration resample r */
  PB_EXACT_STREAM_KNN = 120          /* kNN samples, with seeds 2032-2034 (C.3) */
};
/* RNG analysis id of the k labels per calibration input (item = input, replicate = k). */
#define PB_RNG_EXACT 0x45580000u

enum pb_exact_pred_kind { PB_EXACT_PRED_FILE, PB_EXACT_PRED_PSTAR, PB_EXACT_PRED_PRIOR, PB_EXACT_PRED_LOGISTIC };

struct pb_exact_predictor {
  enum pb_exact_pred_kind kind;
  char name[64];
  double prior;
  int64_t train_n;
  int d;          /* encoded features */
  double *beta;   /* [d + 1] */
};

/* Multicalibration groups (Section 5): everyone, the two group attributes'
 * values and conjunctions, categorical irrelevant values, quartile intervals
 * of numeric irrelevant counts. */
struct pb_exact_groups {
  int n;
  char **name;
  int *attr, *attr2;  /* attribute (and second attribute of a conjunction, else -1); -1 for everyone */
  int *value, *value2;
  double *lo, *hi;    /* quartile interval (lo, hi] of a numeric attribute (lo = -inf for the first) */
  int *numeric;       /* 1 for a quartile interval */
};

struct pb_exact_result {
  struct pb_world_summary world;
  struct pb_exact_accuracy cases;
  int64_t n_cases;
  /* population reference (callable predictors) */
  int have_reference;
  int64_t reference_n;
  double ref_ece, ref_mc, ref_kl, ref_halfwidth;
  int ref_mc_group, ref_mc_bin;
  double cases_mc, cases_ece;  /* on the cases with p* as target (every predictor) */
  double emp_cases_mc;         /* on the cases with their sampled labels */
  /* empirical MC over sizes x resamples */
  int n_sizes, resamples;
  int64_t sizes[PB_EXACT_MAX_SIZES];
  double *emp_mc;              /* [size][resample] */
  /* higher-order calibration over k */
  int have_ho;
  double e_ho[PB_EXACT_NK], e_k[PB_EXACT_NK], e_k_before[PB_EXACT_NK], delta_k[PB_EXACT_NK];
  double covered_mass;
  /* nearest-neighbour estimators over sizes x seeds */
  int have_knn;
  int knn_bound;               /* enum pb_exact_knn_bound of the dv_lower endpoints */
  struct pb_exact_nn knn[PB_EXACT_MAX_SIZES][PB_EXACT_NSEEDS];
  struct pb_exact_nn knn_relevant[PB_EXACT_NSEEDS];  /* largest size without the irrelevant fields (C.3) */
};

/** @p n forecasts of a PREDICTIONS file into @p q (NaN: unknown). */
int pb_exact_predictions_read(const char *path, int64_t n, double *q);

/* Fixed population quartiles (Section 5) of the irrelevant counts: cut[f] for irrelevant field f (the
 * attributes' last PB_WORLD_N_IRRELEVANT), NAN for a categorical field. */
struct pb_exact_cuts {
  double cut[PB_WORLD_N_IRRELEVANT][3];
};
/** Order statistics 1/4, 1/2, 3/4 of PB_EXACT_QUARTILE_N inputs of stream PB_EXACT_STREAM_QUARTILE of @p seed:
 *  the same at every hiding level, whose cases share their irrelevant fields (exact_stage.c). */
void pb_exact_quartiles(const struct pb_world *w, uint64_t seed, struct pb_exact_cuts *q);
/** The Section 5 groups of world @p w, count intervals cut at @p q. */
void pb_exact_groups_build(const struct pb_world *w, const struct pb_exact_cuts *q, struct pb_exact_groups *g);
void pb_exact_groups_free(struct pb_exact_groups *g);

/* One predictor evaluated on one set of cases. */
struct pb_exact_eval {
  struct pb_exact_predictor pred;
  const struct pb_exact_groups *groups;  /* the cases' world's groups (the caller's, shared by its predictors) */
  struct pb_exact_result r;
  struct pb_timer timer;  /* reference, higher_order, empirical_mc (built-in predictors), knn */
};
int pb_exact_evaluate(MPI_Comm comm, const struct pb_world_cases *c, const struct pb_exact_groups *g, const char *pred,
                      const double *qfile, const struct pb_exact_options *o, int knn, struct pb_exact_eval *e);
void pb_exact_eval_free(struct pb_exact_eval *e);
/** Reduce @p t to the slowest rank, print it (-v 1) and write it as results.h5 /timings/exact (collective). */
int pb_exact_timings(struct pb_timer *t, MPI_Comm comm, struct pb_results *res, int64_t reference);

/* `exact worlds`: every predictor scored in every world x level. */
#define PB_EXACT_MAXL 8
/* One scored (world, level, predictor); have = 0 when the predictor does not apply there. */
struct pb_exact_entry {
  char world[16], level[16], pred[64];
  int have;
  struct pb_exact_result r;
};
struct pb_exact_grid {
  int nw, nl, np;
  char *w[PB_EXACT_MAXL], *l[PB_EXACT_MAXL], *p[PB_EXACT_MAXL];
  char *buf[3];
  struct pb_exact_entry *e;  /* [w][l][p] */
};
static inline struct pb_exact_entry *pb_exact_at(const struct pb_exact_grid *g, int w, int l, int p)
{
  return &g->e[(w * g->nl + l) * g->np + p];
}

/** One evaluation's datasets under @p prefix (e.g. "/exact") of results.h5 (collective; exact_stage_write.c). */
int pb_exact_write_h5(struct pb_results *res, const char *prefix, const struct pb_exact_result *r);
/** results.h5 /exact and the report of one evaluation (collective; rank 0 writes the report). */
int pb_exact_write(struct pb_results *res, const struct pb_world *w, const struct pb_exact_eval *e);

/* The reports (exact_report.c, exact_report_worlds.c; rank 0): report/exact_*.tsv,
 * the figures and report/exact.md of one evaluation, or of the worlds grid. */
int pb_exact_report(struct pb_results *res, const struct pb_world *w, const struct pb_exact_predictor *p,
                    const struct pb_exact_groups *g, const struct pb_exact_result *r);
int pb_exact_report_worlds(struct pb_results *res, const struct pb_exact_grid *g, const struct pb_exact_options *o);

/* The summary values of an evaluation by name (/exact/summary, report/exact_scores.tsv). */
#define PB_EXACT_NSUM 26
void pb_exact_summary(const struct pb_exact_result *r, const char **name, double *v);
/* Mean and sample s.d. of v[0], v[stride], ... (n values); the kNN interval
 * endpoints ch_lower .. dv_upper at size index a (n_sizes: the ablation),
 * averaged over the seeds, and the exact Bayes error. */
double pb_exact_mean(const double *v, int n, int stride);
double pb_exact_sd(const double *v, int n, int stride);
void pb_exact_knn_row(const struct pb_exact_result *r, int a, double x[5]);
/* The kNN lower bound of @p knn_bound as the reports state it ("R5 / (1 + 1/sqrt(5)) (FeeBee's form ...)"). */
const char *pb_exact_knn_bound_text(int knn_bound);
/* A row of the report tables: its labels, integers and values; a column's
 * .arg says which, its .slot which one. */
struct pb_exact_row {
  const char *key[4];
  int64_t n[2];
  const double *x;
};
enum { PB_EXACT_ROW_KEY, PB_EXACT_ROW_N, PB_EXACT_ROW_X };
union pb_cell pb_exact_row_cell(const void *row, const struct pb_column *c);
#define PB_EXACT_COL_KEY(name, i) {name, PB_COL_STR, .slot = i, .arg = PB_EXACT_ROW_KEY}
#define PB_EXACT_COL_X(name, i) {name, PB_COL_NUM, 4, .slot = i, .arg = PB_EXACT_ROW_X} /* 4 decimals */
/* The value columns that the score and the worlds reports share: the kNN
 * interval ends and the exact Bayes error (x of pb_exact_knn_row), the
 * empirical MC mean and s.d. with the reference MC, the higher-order and
 * snapshot errors. */
#define PB_EXACT_COLS_KNN                                                                                  \
  PB_EXACT_COL_X("ch_lower", 0), PB_EXACT_COL_X("ch_upper", 1), PB_EXACT_COL_X("dv_lower", 2),           \
      PB_EXACT_COL_X("dv_upper", 3), PB_EXACT_COL_X("bayes_error", 4)
#define PB_EXACT_COLS_MC PB_EXACT_COL_X("mc_mean", 0), PB_EXACT_COL_X("mc_sd", 1), PB_EXACT_COL_X("reference_mc", 2)
#define PB_EXACT_COLS_HO \
  PB_EXACT_COL_X("E_HO", 0), PB_EXACT_COL_X("E_k", 1), PB_EXACT_COL_X("E_k_before", 2), PB_EXACT_COL_X("delta_k", 3)

/** The stage's lines of `pairbound run`'s summary and its REPORT.md finding (.summary; exact_report_summary.c). */
void pb_exact_run_summary(FILE *fp, struct pb_text *md, const char *dir, const char *rel);

/** `exact score` (collective): score the forecasts @p predictions (a file or a built-in predictor name) for the
 *  CASES file @p cases into @p outdir. */
int pb_exact_score_run(const char *cases, const char *predictions, const char *outdir,
                       const struct pb_exact_options *o, MPI_Comm comm, const char *provenance);
/** `exact worlds` (collective): score every predictor in every world x level into @p outdir. */
int pb_exact_worlds_run(const struct pb_exact_options *o, const char *outdir, MPI_Comm comm, const char *provenance);

/** What pb_options_free leaves of the options: the stage's .release (exact_stage.c). */
void pb_exact__options_release(void *opts);

#endif /* PAIRBOUND_EXACT_INTERNAL_H */
