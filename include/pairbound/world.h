/* Worlds with exact class probabilities (seed 002 Sections 3.2-4, Appendix B):
 * covert transfer, credit risk and peer review at three hiding levels, with
 * their irrelevant fields.  Exact summaries come from enumerating latent
 * states (Eq. 6); cases are drawn from a counter-based stream so that any
 * rank can draw any range of case indices.  See docs/exact.md. */
#ifndef PAIRBOUND_WORLD_H
#define PAIRBOUND_WORLD_H

#include <stdint.h>


#include "pairbound/options.h"

/* RNG analysis id base (pb_rng_init): a world's cases use
 * PB_RNG_WORLD + world kind, item = case index, replicate = stream. */
#define PB_RNG_WORLD 0x57440000u

/* Irrelevant fields per world: the last attributes of every world and level (Section 4). */
#define PB_WORLD_N_IRRELEVANT 8

enum pb_world_kind { PB_WORLD_COVERT = 0, PB_WORLD_CREDIT = 1, PB_WORLD_REVIEW = 2 };
enum pb_world_level { PB_WORLD_LOW = 0, PB_WORLD_MEDIUM = 1, PB_WORLD_HIGH = 2 };
enum pb_world_attr_kind { PB_WORLD_CATEGORICAL = 0, PB_WORLD_NUMERIC = 1 };

/* One visible attribute of a world at a hiding level. */
struct pb_world_attr {
  const char *name;                 /* e.g. "sector", "customer_concentration_pct" */
  enum pb_world_attr_kind kind;
  int n_values;                     /* categorical: number of values (value index 0..n-1) */
  const char *const *values;        /* categorical: value names */
  double lo, hi;                    /* numeric: declared support [lo, hi] (inclusive grid endpoints) */
  double step;                      /* numeric: grid step (0.1 or 1); values lie on lo + k step */
  int irrelevant;                   /* 1: an irrelevant field (independent of everything) */
  int group;                        /* 1: one of the two attributes whose values and
                                       conjunctions form multicalibration groups (Section 5) */
};

/* Exact population summaries at one hiding level (Appendix B). */
struct pb_world_summary {
  double bayes_error;       /* eps* = E[min(p*, 1 - p*)] */
  double bayes_accuracy;    /* A* = 1 - eps* */
  double positive_prior;    /* P(Y = 1) */
  double entropy_bits;      /* H(Y | X_vis) in bits */
  int64_t states;           /* latent states enumerated (residual included) */
  int64_t patterns;         /* visible category patterns of positive mass (factor worlds; -1 covert) */
  double coverage50;        /* expected pattern mass seen by 50 training cases, sum P(v)(1-(1-P(v))^50)
                               (Appendix B; factor worlds; NAN for covert, whose identifiers never repeat) */
};

/* A value seed 002's text leaves open and we chose (docs/exact.md, "What is ours"). */
struct pb_world_choice {
  const char *name;   /* e.g. "factor_weights" */
  const char *text;   /* what we chose and how, on one line */
};

struct pb_world;

/**
 * Open a world and enumerate it.
 * @param name "covert", "credit" or "review"
 * @param level "low", "medium" or "high"
 * @param residual_scale s of Table 7: each nonzero residual probability is
 *   multiplied by s, the rest goes to R = 0 (1 = the benchmark; must be 1
 *   for covert, which has no residual; 0 <= s <= 1 / P(R != 0)).
 * @return PB_OK, or PB_FAIL with pb_error_set() naming the bad argument.
 */
int pb_world_open(const char *name, const char *level, double residual_scale, struct pb_world **out);
void pb_world_free(struct pb_world *w);

enum pb_world_kind pb_world_kind(const struct pb_world *w);
enum pb_world_level pb_world_level(const struct pb_world *w);
const char *pb_world_name(const struct pb_world *w);        /* "covert", ... */
const char *pb_world_level_name(const struct pb_world *w);  /* "low", ... */
double pb_world_residual_scale(const struct pb_world *w);

/** Visible attributes in their fixed order (substantive first, then the 8 irrelevant fields). */
int pb_world_n_attrs(const struct pb_world *w);
const struct pb_world_attr *pb_world_attr(const struct pb_world *w, int j);

/** Our choices behind world @p w (every level alike), {NULL}-terminated. */
const struct pb_world_choice *pb_world_choices(const struct pb_world *w);

/** Exact summaries by enumeration of the latent states. */
void pb_world_summary(const struct pb_world *w, struct pb_world_summary *s);

/**
 * Closed-form summaries where the seed gives them (covert transfer, Sec. 4.2:
 * eps* = sum m_i^2 / (2 26^2)); PB_FAIL for worlds without a closed form.
 */
int pb_world_closed_form(const struct pb_world *w, struct pb_world_summary *s);

/**
 * Draw case @p index of stream (@p seed, @p stream): visible attributes into
 * @p x[pb_world_n_attrs] (categorical as value index, numeric as grid value),
 * realised label into @p y, exact p* = P(Y = 1 | visible) into @p pstar.
 * Depends only on (world, level, residual scale, seed, stream, index).
 */
void pb_world_draw(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t index, double *x, int *y,
                   double *pstar);

/** Cases first .. first + n - 1; @p x is row-major [n][n_attrs]; @p y / @p pstar may be NULL. */
void pb_world_draw_range(const struct pb_world *w, uint64_t seed, uint32_t stream, uint64_t first, int64_t n,
                         double *x, int *y, double *pstar);

/**
 * Exact p* for a visible vector @p x (same layout as a drawn case).
 * Every valid visible vector has positive probability in these worlds.
 * @return PB_OK, or PB_FAIL (pb_error_set names the attribute) when a value is
 *   outside its support, off the grid, or not a category index.
 */
int pb_world_pstar(const struct pb_world *w, const double *x, double *pstar);

/**
 * Exact law of irrelevant count attribute @p j (a numeric attribute with
 * irrelevant = 1): P(N <= k), 0 below the support and 1 above it; NAN when
 * attribute j is not such a count.
 */
double pb_world_count_cdf(const struct pb_world *w, int j, double k);

/**
 * Exact population quantile of irrelevant count attribute @p j: the smallest
 * count k with P(N <= k) >= q, for q in (0, 1] (e.g. fixed quartile cut points
 * for the multicalibration groups of Section 5).
 * @return PB_OK, or PB_FAIL when j is not such a count or q is outside (0, 1].
 */
int pb_world_count_quantile(const struct pb_world *w, int j, double q, double *k);

/* ---- memos (Section 3.4, Appendix B; src/world/world_kernel_memo.c, docs/exact.md "Memos") */
struct pb_text;
/**
 * The renderer r: the memo of the visible attributes @p x (a drawn case's
 * layout) appended to @p out.  Deterministic; reads nothing but @p x and the
 * world's kind and level, so hidden factors and the residual cannot reach it.
 */
void pb_world_render(const struct pb_world *w, const double *x, struct pb_text *out);
/**
 * The decoder h: the visible attributes of @p memo into @p x, so that
 * h(r(x)) = x.  PB_FAIL with the attribute and the reason (pb_error_set):
 * missing, repeated, out of range, off the grid, malformed (a number that is
 * not one, a line that states none of its values, an identifier not in 4
 * hyphen-separated groups of 4), or a hidden attribute stated.
 */
int pb_world_decode(const struct pb_world *w, const char *memo, double *x);
/** Every fixed phrase h searches for at the world's level (categorical phrases, the labels before numbers, the
 *  identifier's slot), NUL-terminated one after another into @p out; returns how many. */
int pb_world_memo_phrases(const struct pb_world *w, struct pb_text *out);
/* What a prompt asks (docs/exact.md, "Prompts"): the question and the two classes with their criteria. */
struct pb_world_question {
  const char *question;
  const char *positive, *negative;                     /* class names: accept / reject, ... */
  const char *positive_criterion, *negative_criterion;
};
const struct pb_world_question *pb_world_question(const struct pb_world *w);

/* ---- `pairbound world info|sample` (src/world/world_stage.c) */
struct pb_world_options {
  int world, level;          /* choice index; 3 = all (info only) */
  double residual_scale;
  int64_t cases, stream, first;
  uint64_t seed;
  int64_t shots;             /* prompts: labeled demonstrations */
};
extern const struct pb_option pb_world_option_table[];
void pb_world_options_default(struct pb_world_options *o);


#define PB_WORLD_HELP \
  "Worlds with exact class probabilities (seed 002 Sections 3.2-4, Appendix B; docs/exact.md).\n" \
  "  info    print `name value` lines: bayes_error, bayes_accuracy, positive_prior, entropy_bits (H(Y|X_vis)\n" \
  "          in bits), states (latent states enumerated) and attributes, all by exact enumeration (Eq. 6); the\n" \
  "          factor worlds add patterns and coverage_50 (expected category-pattern mass seen by 50 training\n" \
  "          cases, Appendix B), covert transfer the closed form of Sec. 4.2 as closed_form_* lines; then one\n" \
  "          ours.NAME line for each value the seed's text leaves open and we chose (the peer-review weights,\n" \
  "          value names, irrelevant-field ranges, ...). One block per world and level, each starting with its\n" \
  "          world and level lines\n" \
  "  sample  draw cases FIRST .. FIRST+N-1 of stream (SEED, K) of one world at one level and write CASES: a\n" \
  "          TSV whose header names every visible attribute with its kind and support, then the realised\n" \
  "          label y and the exact p* = P(Y=1 | visible)\n" \
  "  render  the memo of every case of CASES (Sec. 3.4, App. B: a fixed phrase per visible attribute, numbers\n" \
  "          in delimited templates with units, the run identifier in 4 hyphen-separated groups of 4) as MEMOS:\n" \
  "          one JSON line per case, {\"case\", \"world\", \"level\", \"residual_scale\", \"memo\"}\n" \
  "  decode  read every memo of MEMOS back (the decoder h, h(r(x)) = x); stop at the first memo with a value\n" \
  "          missing, repeated, out of range, off the grid or malformed, naming its line, case and reason;\n" \
  "          with -o write the attributes read back, with their exact p_star\n" \
  "  prompts the prompt set of CASES for a language model (App. A.2): one JSON line per case with the system\n" \
  "          message, question, class criteria, K labeled demonstration memos (rows 0..K-1 of the cases'\n" \
  "          stream, --shots) and the test memo, and the whole user message; its replies, one probability per\n" \
  "          case, are the PREDICTIONS of `pairbound exact score CASES PREDICTIONS`\n" \
  "Every file is identical for any number of ranks and threads.\n"

#endif /* PAIRBOUND_WORLD_H */
