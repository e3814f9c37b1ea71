/* pairbound fragility: the store stage (seed 001; docs/fragility.md); the
 * profile of a law file (--law) is in fragility_stage_law.c. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/cells.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/fields.h"
#include "pairbound/figure.h"
#include "pairbound/fragility.h"
#include "pairbound/options.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/registry.h"
#include "pairbound/results.h"
#include "pairbound/screen.h"
#include "pairbound/sort.h"
#include "pairbound/stage.h"
#include "pairbound/store.h"
#include "pairbound/strmap.h"
#include "pairbound/text.h"
#include "pairbound/timer.h"
#include "fragility_internal.h"

/* ------------------------------------------------------------ options */

/* --rho r1,r2,...: any number of radii, each finite and >= 0. */
static int pb_fragility__opt_rho(void *opts, const char *label, const char *v)
{
  struct pb_fragility_stage_options *o = opts;
  int max = 1, n = 0;
  for (const char *c = v; *c; c++) max += *c == ',';
  double *r = pb_malloc((size_t)max * sizeof *r);
  size_t len = strlen(v); /* an empty radius (",,", a leading or trailing comma) is an error too */
  if (!len || v[0] == ',' || v[len - 1] == ',' || strstr(v, ",,") || pb_parse_list(v, 0, DBL_MAX, max, r, &n)) {
    free(r);
    pb_error_set("%s takes comma-separated radii >= 0, got '%s'", label, v);
    return PB_FAIL;
  }
  free(o->rho);
  o->rho = r;
  o->n_rho = n;
  return PB_OK;
}

#define PB_O(member) PB_OPTION_FIELD(struct pb_fragility_stage_options, member)
#define PB_STORE_OPT .mark = PB_OPTION_AT(struct pb_fragility_stage_options, store_given)
const struct pb_option pb_fragility_option_table[] = {
  {.name = "bins", .type = PB_OPTION_INT, PB_O(k.n_bins), PB_STORE_OPT, .metavar = "J", .def = "20", .imin = 1,
   .imax = PB_FRAGILITY_MAX_BINS, .help = "confidence bins, equal mass on the fitting part"},
  {.name = "groups", .type = PB_OPTION_INT, PB_O(k.n_groups), PB_STORE_OPT, .metavar = "K", .def = "8", .imin = 1,
   .imax = PB_FRAGILITY_MAX_GROUPS, .help = "within-bin quantile groups of U"},
  {.name = "grid", .type = PB_OPTION_INT, PB_O(k.n_grid), PB_STORE_OPT, .metavar = "N", .def = "13", .imin = 2,
   .imax = PB_FRAGILITY_MAX_GRID, .help = "log-spaced radii from --rho-min to --rho-max for the profile columns and FAUC"},
  {.name = "rho-min", .type = PB_OPTION_DOUBLE, PB_O(k.rho_min), PB_STORE_OPT, .metavar = "R", .def = "0.01",
   .min = 1e-12, .max = 1e12, .help = "smallest radius of the grid"},
  {.name = "rho-max", .type = PB_OPTION_DOUBLE, PB_O(k.rho_max), PB_STORE_OPT, .metavar = "R", .def = "3",
   .min = 1e-12, .max = 1e12, .help = "largest radius of the grid"},
  {.name = "lcb-rho", .type = PB_OPTION_DOUBLE, PB_O(k.rho_lcb), PB_STORE_OPT, .metavar = "R", .def = "0.3",
   .min = 1e-12, .max = 1e12, .help = "radius of the lower confidence bound and the held-out diagnostic"},
  {.name = "alpha", .type = PB_OPTION_DOUBLE, PB_O(k.alpha), PB_STORE_OPT, .metavar = "A", .def = "0.05",
   .min = 1e-12, .max = 0.5, .help = "one-sided level of the bound: 1 - A confidence"},
  {.name = "null", .type = PB_OPTION_INT, PB_O(k.n_null), PB_STORE_OPT, .metavar = "N", .def = "200",
   .imax = 1000000, .help_default = 1,
   .help = "permutation-null replicates per model, source and arm (default 200; 0 = none)"},
  {.name = "seed", .type = PB_OPTION_INT, PB_O(k.seed), .mark = PB_OPTION_AT(struct pb_fragility_stage_options,
   seed_given), .metavar = "S", .def = "20260914",
   .help = "seed of the image roles and the null, or of --study's labels (default 20260914; under `pairbound run`: "
           "the run seed + 6, docs/run.md)", .help_default = 1},
  {.name = "probe", .type = PB_OPTION_STRING, PB_O(probe), PB_STORE_OPT, .metavar = "SRC|self",
   .help = "source whose perturbed conditions define U, joined by image id (default: the synthetic source that "
           "shares the most images with the real ones, as screen's; docs/store.md, \"Roles\"); sources with no "
           "joined image, or 'self', use their own perturbed conditions"},
  {.name = "group-file", .type = PB_OPTION_STRING, PB_O(group_file), PB_STORE_OPT, .metavar = "FILE",
   .help = "a user-supplied group column: `source image_id value` lines; the value replaces U for the "
           "listed sources (their unlisted images are left out)"},
  {.name = "law", .type = PB_OPTION_STRING, PB_O(law), .metavar = "FILE", .ini = "",
   .help = "instead of a STORE: the exact profiles of a finite propensity law, one `value mass` line per "
           "atom (value in [0, 1], mass >= 0, masses summing to 1 within 1e-12; blank and # lines ignored)"},
  {.name = "rho", .type = PB_OPTION_CUSTOM, .parse = pb_fragility__opt_rho, .metavar = "r1,r2,...", .ini = "",
   .help = "with --law: radii (chi-square budgets) >= 0"},
  {.name = "study", .type = PB_OPTION_STRING, PB_O(study), .metavar = "known-propensity", .ini = "",
   .help = "instead of a STORE: the known-propensity study of seed 001 U.1 into -o OUTDIR (docs/fragility.md)"},
  {.name = "replicates", .type = PB_OPTION_INT, PB_O(replicates), .mark = PB_OPTION_AT(struct
   pb_fragility_stage_options, replicates_given), .metavar = "N", .def = "2000", .imin = 1, .imax = 100000000,
   .ini = "", .help = "with --study: replicates per design"},
  {.name = NULL}};
#undef PB_STORE_OPT
#undef PB_O

/* ------------------------------------------------------------ store stage */

/* What pb_options_free leaves: the radii of --rho. */
static void pb_fragility__options_release(void *opts)
{
  struct pb_fragility_stage_options *o = opts;
  free(o->rho);
  o->rho = NULL;
  o->n_rho = 0;
}

/* Where each source's group signal U comes from: the probe source's perturbed
 * conditions for images joined to it by image id (with equal labels), or,
 * when no image of the source joins (or --probe self), the source's own
 * perturbed conditions. */
struct pb_fragility__signal {
  int32_t src;                 /* source of the probe rows */
  int32_t *join;               /* [n_images] probe image index, -1 without partner */
  double *user;                /* [n_images] values of --group-file (NaN: not listed), or NULL */
  char *what;                  /* description for the report */
};

/* --group-file: `source image_id value` lines (blank and # lines ignored);
 * the value replaces U as the within-bin group signal of the listed images of
 * that source; images of a listed source that the file omits are left out. */
struct pb_fragility__group_ctx {
  const struct pb_meta *meta;
  struct pb_strmap *maps;
  struct pb_fragility__signal *sig;
};

static int pb_fragility__group_line(void *ctx, const char *path, int64_t lineno, char *line)
{
  struct pb_fragility__group_ctx *x = ctx;
  const struct pb_meta *meta = x->meta;
  char *p = line;
  while (*p == ' ' || *p == '\t') p++;
  if (*p == '#' || *p == '\n' || *p == '\r' || *p == '\0') return PB_OK;
  double v = NAN;
  int32_t s = -1, i = -1;
  char *save = NULL, *w[4];
  for (int k = 0; k < 4; k++) w[k] = strtok_r(k ? NULL : p, " \t\r\n", &save);
  int got = w[2] && !w[3];
  for (int32_t k = 0; got && k < meta->n_sources; k++)
    if (!strcmp(meta->sources[k].name, w[0])) s = k;
  if (s >= 0) i = pb_strmap_get(&x->maps[s], w[1]);
  int bad_value = i >= 0 && pb_parse_double(w[2], -DBL_MAX, DBL_MAX, 0, &v) != PB_OK;
  struct pb_fragility__signal *sig = x->sig;
  const char *why = !got ? "expected 'source image_id value'" : s < 0 ? "unknown source"
                    : i < 0 ? "unknown image id for this source" : bad_value ? "value is not a finite number"
                    : sig[s].user && !isnan(sig[s].user[i]) ? "image listed twice" : NULL;
  if (why) {
    pb_error_set("%s:%lld: %s", path, (long long)lineno, why);
    return PB_FAIL;
  }
  if (!sig[s].user) {
    sig[s].user = pb_malloc((size_t)meta->sources[s].n_images * sizeof(double));
    for (int32_t k = 0; k < meta->sources[s].n_images; k++) sig[s].user[k] = NAN;
  }
  sig[s].user[i] = v;
  return PB_OK;
}

static int pb_fragility__group_file(const struct pb_meta *meta, const char *path, struct pb_fragility__signal *sig)
{
  struct pb_fragility__group_ctx x = {meta, pb_calloc((size_t)meta->n_sources, sizeof *x.maps), sig};
  for (int32_t s = 0; s < meta->n_sources; s++) {
    pb_strmap_init(&x.maps[s]);
    for (int32_t i = 0; i < meta->sources[s].n_images; i++) pb_strmap_put(&x.maps[s], meta->sources[s].image_ids[i], i);
  }
  int status = pb_output_lines_each(path, NULL, pb_fragility__group_line, &x);
  for (int32_t s = 0; s < meta->n_sources; s++) pb_strmap_free(&x.maps[s]);
  free(x.maps);
  return status;
}

static int pb_fragility__signals(const struct pb_meta *meta, const char *probe, int from_config,
                                 struct pb_fragility__signal *sig)
{
  /* the default probe is screen's: the synthetic source the real ones share images with (by role) */
  int32_t ps = probe ? pb_meta_find_source(meta, probe) : pb_meta_role_probe(meta);
  if (ps < 0 && probe && strcmp(probe, "self") != 0) {
    char names[512];
    pb_error_set("%s %s: no such source (or 'self'; %s)", from_config ? "[fragility] probe =" : "--probe", probe,
                 pb_meta_source_names(meta, names, sizeof names));
    return PB_FAIL;
  }
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *S = &meta->sources[s];
    int32_t joined = 0;
    sig[s].join = pb_malloc((size_t)(S->n_images > 0 ? S->n_images : 1) * sizeof(int32_t));
    if (ps >= 0 && ps != s) {
      struct pb_strmap map;
      pb_strmap_init(&map);
      const struct pb_source *P = &meta->sources[ps];
      for (int32_t j = 0; j < P->n_images; j++) pb_strmap_put(&map, P->image_ids[j], j);
      for (int32_t i = 0; i < S->n_images; i++) {
        int32_t j = pb_strmap_get(&map, S->image_ids[i]);
        sig[s].join[i] = j >= 0 && P->labels[j] == S->labels[i] ? j : -1;
        joined += sig[s].join[i] >= 0;
      }
      pb_strmap_free(&map);
    }
    char buf[256];
    if (joined > 0) {
      sig[s].src = ps;
      snprintf(buf, sizeof buf, "U over the %d perturbed conditions of %s (%d of %d images joined by id)",
               meta->sources[ps].n_conditions - 1, meta->sources[ps].name, (int)joined, (int)S->n_images);
    } else {
      sig[s].src = s;
      for (int32_t i = 0; i < S->n_images; i++) sig[s].join[i] = i;
      snprintf(buf, sizeof buf, "U over the %d perturbed conditions of %s itself", S->n_conditions - 1, S->name);
    }
    if (meta->sources[sig[s].src].n_conditions < 2) {
      pb_error_set("source %s: the group signal needs a perturbed condition of %s", S->name,
                   meta->sources[sig[s].src].name);
      return PB_FAIL;
    }
    sig[s].what = pb_strdup(buf);
  }
  return PB_OK;
}

/* Rows this rank reads from each source: the predictions and confidences of
 * every condition of its units' (source, model) rows, and the true-class
 * probabilities only where they are used (about a sixth of the records on the
 * paper's store): the clean rows (the temperature-scaled state) and the
 * perturbed rows that define U (a unit's own, or its probe source's). */
struct pb_fragility__load {
  int32_t *rows, n;            /* pred and smax, ascending */
  struct pb_rows d;
  int32_t *prows, np;          /* ptrue, ascending */
  struct pb_rows pt;
  int32_t *clean, n_clean;     /* the clean rows of this rank's units of the source, ascending */
  struct pb_rows tk;           /* their top-k lists (the temperature-scaled state), when the store keeps them */
};

/* The top-k lists of the clean rows of this rank's units (collective per source unless reads are independent;
 * none without top-k). */
static int pb_fragility__read_topk(struct pb_stage *st, int64_t u0, int64_t u1, struct pb_fragility__load *L)
{
  const struct pb_meta *meta = st->meta;
  int status = PB_OK;
  for (int32_t s = 0; s < meta->n_sources && meta->topk > 0; s++) {
    const struct pb_source *S = &meta->sources[s];
    L[s].clean = pb_malloc((size_t)(u1 - u0 + 1) * sizeof(int32_t));
    L[s].n_clean = 0;
    for (int64_t u = u0; u < u1; u++)
      if (u / meta->n_models == s) L[s].clean[L[s].n_clean++] = (int32_t)(u % meta->n_models) * S->n_conditions + S->clean;
    int rc = pb_store_read_fields(st->store, s, status == PB_OK ? L[s].n_clean : 0, L[s].clean, PB_FIELD_TOPK, &L[s].tk);
    if (status == PB_OK) status = rc;
  }
  return status;
}

/* Which conditions of a model pb_fragility__add_rows appends. */
enum { PB_FRAGILITY_ROWS_ALL, PB_FRAGILITY_ROWS_CLEAN, PB_FRAGILITY_ROWS_PERTURBED };

static void pb_fragility__add_rows(const struct pb_source *S, int32_t m, int which, int32_t **rows, int32_t *n,
                                   int32_t *cap)
{
  const int32_t nc = S->n_conditions;
  while (*n + nc > *cap) *rows = pb_realloc(*rows, (size_t)(*cap *= 2) * sizeof(int32_t));
  for (int32_t c = 0; c < nc; c++)
    if (which == PB_FRAGILITY_ROWS_ALL || (which == PB_FRAGILITY_ROWS_CLEAN) == (c == S->clean)) (*rows)[(*n)++] = m * nc + c;
}

static int pb_fragility__read(struct pb_stage *st, const struct pb_fragility__signal *sig, int64_t u0, int64_t u1,
                              struct pb_fragility__load *L)
{
  const struct pb_meta *meta = st->meta;
  int status = PB_OK;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *S = &meta->sources[s];
    int32_t cap = 16, pcap = 16;
    L[s].rows = pb_malloc((size_t)cap * sizeof(int32_t));
    L[s].prows = pb_malloc((size_t)pcap * sizeof(int32_t));
    L[s].n = L[s].np = 0;
    for (int64_t u = u0; u < u1; u++) {
      int32_t t = (int32_t)(u / meta->n_models), m = (int32_t)(u % meta->n_models);
      if (t == s) {
        pb_fragility__add_rows(S, m, PB_FRAGILITY_ROWS_ALL, &L[s].rows, &L[s].n, &cap);
        pb_fragility__add_rows(S, m, sig[s].src == s ? PB_FRAGILITY_ROWS_ALL : PB_FRAGILITY_ROWS_CLEAN, &L[s].prows,
                               &L[s].np, &pcap);
      } else if (sig[t].src == s) {
        pb_fragility__add_rows(S, m, PB_FRAGILITY_ROWS_PERTURBED, &L[s].prows, &L[s].np, &pcap);
      }
    }
    L[s].n = pb_sort_unique_i32(L[s].rows, L[s].n);
    L[s].np = pb_sort_unique_i32(L[s].prows, L[s].np);
    int rc = pb_store_read_fields(st->store, s, status == PB_OK ? L[s].n : 0, L[s].rows, PB_FIELD_PRED | PB_FIELD_SMAX,
                                  &L[s].d);
    if (status == PB_OK) status = rc;
    rc = pb_store_read_fields(st->store, s, status == PB_OK ? L[s].np : 0, L[s].prows, PB_FIELD_PTRUE, &L[s].pt);
    if (status == PB_OK) status = rc;
  }
  return status;
}

/* The first record of @p row of source @p s in a block read of @p rows (which must hold it). */
static size_t pb_fragility__row(const int32_t *rows, int32_t n, const struct pb_meta *meta, int32_t s, int32_t row)
{
  int32_t j = pb_sort_find_i32(rows, n, row);
  if (j < 0) PB_ERROR("fragility: row %d of source %s was not loaded", row, meta->sources[s].name);
  return (size_t)j * meta->sources[s].n_images;
}

/* Work space of one (source, model) unit. */
struct pb_fragility__unit {
  double *s0, *u;
  int32_t *bin0, *grp0;               /* clean bin and group on the arm-A partition */
  uint8_t *c0;
  const float **mrow;
};

static void pb_fragility__unit_alloc(struct pb_fragility__unit *w, int32_t n, int32_t n_probes)
{
  size_t nn = (size_t)(n > 0 ? n : 1);
  w->s0 = pb_malloc(nn * sizeof(double));
  w->u = pb_malloc(nn * sizeof(double));
  w->bin0 = pb_malloc(nn * sizeof(int32_t));
  w->grp0 = pb_malloc(nn * sizeof(int32_t));
  w->c0 = pb_malloc(nn);
  w->mrow = pb_malloc((size_t)(n_probes > 0 ? n_probes : 1) * sizeof(float *));
}

static void pb_fragility__unit_free(struct pb_fragility__unit *w)
{
  free(w->s0), free(w->u), free(w->bin0), free(w->grp0), free(w->c0), free(w->mrow);
}

/* The temperature-scaled state of unit (t, m): T fitted on the source's
 * clean development records (the store's split) from their top-k lists, the
 * scaled confidence of every image, and both arms on it (no permutation
 * null) into temper[0..2 arm_len), T into *temp; NaN without top-k lists. */
static void pb_fragility__tempered(const struct pb_meta *meta, const struct pb_fragility__load *L,
                                   const struct pb_fragility_input *in, const struct pb_fragility_options *o,
                                   int32_t t, int32_t m, double *temper, double *temp)
{
  const struct pb_source *S = &meta->sources[t];
  const int32_t len = PB_FRAGILITY_ARM_LEN(o->n_grid), n = in->n, k = meta->topk;
  *temp = NAN;
  for (int32_t f = 0; f < 2 * len; f++) temper[f] = NAN;
  int32_t j = k > 0 ? pb_sort_find_i32(L[t].clean, L[t].n_clean, m * S->n_conditions + S->clean) : -1;
  if (j < 0) return;
  size_t r0 = pb_fragility__row(L[t].prows, L[t].np, meta, t, m * S->n_conditions + S->clean);
  struct pb_fragility_topk *rec = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *rec);
  double *sT = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *sT);
  int64_t nd = 0;
  for (int32_t i = 0; i < n; i++) {
    const size_t at = ((size_t)j * n + (size_t)i) * (size_t)k;
    rec[i] = (struct pb_fragility_topk){k, S->n_classes, L[t].tk.topk_class + at, L[t].tk.topk_prob + at, S->labels[i],
                                        L[t].pt.ptrue[r0 + i]};
  }
  /* the development records first, in image order, for the fit */
  struct pb_fragility_topk *dev = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *dev);
  for (int32_t i = 0; i < n; i++)
    if (S->split[i] == PB_SPLIT_DEV) dev[nd++] = rec[i];
  *temp = pb_fragility_temper_fit(dev, nd);
  for (int32_t i = 0; i < n; i++) sT[i] = isnan(*temp) ? in->s[i] : pb_fragility_temper_conf(&rec[i], *temp);
  if (!isnan(*temp)) {
    struct pb_fragility_input tin = *in;
    struct pb_fragility_options to = *o;
    tin.s = sT;
    to.n_null = 0;
    pb_fragility_arm(&tin, &to, PB_FRAGILITY_PART_A, temper);
    pb_fragility_arm(&tin, &to, PB_FRAGILITY_PART_B, temper + len);
  }
  free(dev);
  free(rec);
  free(sT);
}

/* Both arms of unit (t, m) into arm[0..2 arm_len), their diagnostics and
 * random shifts into diag[0..2 diag_len) (struct pb_fragility_out), its
 * monotone score maps into qmap[0..PB_FRAGILITY_QMAP_LEN), and the drift split of each of its perturbed
 * conditions, global cells cell0, cell0 + 1, ..., into drift[] (condition
 * order, clean skipped) with its flagged-bin records in flag[].  PB_FAIL: a
 * cell's error. */
static int pb_fragility__unit(const struct pb_meta *meta, const struct pb_fragility__load *L,
                              const struct pb_fragility__signal *sig, uint8_t *const *part,
                              const struct pb_fragility_options *o, int64_t unit, int64_t cell0, double *arm,
                              double *diag, double *drift, double *flag, double *temper, double *qmap)
{
  int32_t t = (int32_t)(unit / meta->n_models), m = (int32_t)(unit % meta->n_models);
  const struct pb_source *S = &meta->sources[t], *P = &meta->sources[sig[t].src];
  int32_t n = S->n_images, nc = S->n_conditions, na = 0;
  struct pb_fragility__unit w;
  pb_fragility__unit_alloc(&w, n, P->n_conditions);
  const struct pb_fragility__load *LP = &L[sig[t].src];
  size_t r0 = pb_fragility__row(L[t].rows, L[t].n, meta, t, m * nc + S->clean);
  for (int32_t c = 0; c < P->n_conditions; c++)
    if (c != P->clean) w.mrow[na++] = LP->pt.ptrue + pb_fragility__row(LP->prows, LP->np, meta, sig[t].src, m * P->n_conditions + c);
  for (int32_t i = 0; i < n; i++) {
    w.s0[i] = L[t].d.smax[r0 + i];
    w.c0[i] = L[t].d.pred[r0 + i] == S->labels[i];
    w.u[i] = sig[t].user ? sig[t].user[i] : sig[t].join[i] >= 0 ? pb_screen_u(w.mrow, na, sig[t].join[i]) : NAN;
    if (S->split[i] == PB_SPLIT_NONE) w.u[i] = NAN; /* labels = set: an image without a set is in no analysis */
  }
  struct pb_fragility_input in = {n, w.s0, w.u, w.c0, part[t], (uint64_t)unit, {NULL, NULL}};
  /* both arms' partitions once: the arms, their diagnostics, random shifts and score maps, and the drift
   * split (arm A's) all stand on them */
  struct pb_fragility_partition p[2];
  for (int a = 0; a < 2; a++)
    pb_fragility_partition_fit(&in, a ? PB_FRAGILITY_PART_B : PB_FRAGILITY_PART_A, o->n_bins, o->n_groups, &p[a]);
  in.fitted[0] = &p[0], in.fitted[1] = &p[1];
  int32_t len = PB_FRAGILITY_ARM_LEN(o->n_grid);
  pb_fragility_arm(&in, o, PB_FRAGILITY_PART_A, arm);
  pb_fragility_arm(&in, o, PB_FRAGILITY_PART_B, arm + len);
  const int32_t dl = PB_FRAGILITY_DIAG_LEN(o->n_grid), rl = PB_FRAGILITY_RANDOM_LEN(o->n_grid);
  pb_fragility_diag(&in, o, PB_FRAGILITY_PART_A, diag);
  pb_fragility_random(&in, o, PB_FRAGILITY_PART_A, diag + dl);
  pb_fragility_diag(&in, o, PB_FRAGILITY_PART_B, diag + dl + rl);
  pb_fragility_random(&in, o, PB_FRAGILITY_PART_B, diag + 2 * dl + rl);
  pb_fragility_qmap(&in, o, qmap);
  pb_fragility__tempered(meta, L, &in, o, t, m, temper, temper + 2 * len);
  pb_fragility_assign(&in, &p[0], PB_FRAGILITY_PART_A, w.bin0, w.grp0);
  /* the perturbed conditions' cells in condition order, split together: they share the clean side */
  struct pb_cell_view *v = pb_malloc((size_t)(nc > 1 ? nc - 1 : 1) * sizeof *v);
  int32_t k = 0;
  for (int32_t c = 0; c < nc; c++) {
    if (c == S->clean) continue;
    size_t rc = pb_fragility__row(L[t].rows, L[t].n, meta, t, m * nc + c);
    /* every image of the source (the roles, not the store's split, decide what each one serves) */
    const struct pb_cell_data d = {.ref = {.source = t, .model = m, .condition = c}, .index = cell0 + k, .n = n,
                                   .label = S->labels, .pred0 = L[t].d.pred + r0, .pred1 = L[t].d.pred + rc,
                                   .s0 = L[t].d.smax + r0, .s1 = L[t].d.smax + rc}; /* the split reads no m */
    v[k++] = pb_cells_view(meta, &d, NAN); /* no threshold: fragility bins S itself */
  }
  int status = pb_fragility_drift_cells(v, k, &in, &p[0], w.bin0, w.grp0, drift, flag);
  free(v);
  pb_fragility_partition_free(&p[0]);
  pb_fragility_partition_free(&p[1]);
  pb_fragility__unit_free(&w);
  return status;
}

static int pb_fragility__check(const struct pb_fragility_options *o)
{
  const char *bad = o->n_bins < 1 || o->n_bins > PB_FRAGILITY_MAX_BINS ? "--bins must be in 1..1000"
                    : o->n_groups < 1 || o->n_groups > PB_FRAGILITY_MAX_GROUPS ? "--groups must be in 1..64"
                    : o->n_grid < 2 || o->n_grid > PB_FRAGILITY_MAX_GRID ? "--grid must be in 2..64"
                    : !(o->rho_min > 0 && o->rho_min < o->rho_max && isfinite(o->rho_max)) ? "need 0 < --rho-min < --rho-max"
                    : !(o->rho_lcb > 0 && isfinite(o->rho_lcb)) ? "--lcb-rho must be positive"
                    : !(o->alpha > 0 && o->alpha < 1) ? "--alpha must be in (0, 1)"
                    : o->n_null < 0 ? "--null must be >= 0" : NULL;
  if (bad) pb_error_set("%s", bad);
  return bad ? PB_FAIL : PB_OK;
}

/* ------------------------------------------------------------ outputs */

/* The fixed fields of an arm record (PB_FA_*); the two names ending in "rho"
 * get the radius of --lcb-rho appended. */
static const struct pb_field pb_fragility__arm[PB_FA_FIXED] = {
  [PB_FA_N_FIT] = {"n_fit", PB_FMT_INT}, [PB_FA_N_RATE] = {"n_rate", PB_FMT_INT},
  [PB_FA_N_EVAL] = {"n_eval", PB_FMT_INT}, [PB_FA_BINS] = {"bins", PB_FMT_INT},
  [PB_FA_GROUPS] = {"groups", PB_FMT_INT}, [PB_FA_G_R] = {"G_R", PB_FMT_NUM},
  [PB_FA_G_R_CORR] = {"G_R_corrected", PB_FMT_NUM}, [PB_FA_FAUC_UP] = {"FAUC_up", PB_FMT_NUM},
  [PB_FA_FAUC_DOWN] = {"FAUC_down", PB_FMT_NUM}, [PB_FA_RHO_PLUS] = {"rho_plus", PB_FMT_NUM},
  [PB_FA_PLUGIN_LCB_RHO] = {"profile_up_rho", PB_FMT_NUM}, [PB_FA_LCB] = {"lcb_rho", PB_FMT_NUM},
  [PB_FA_ECE] = {"ece", PB_FMT_NUM}, [PB_FA_AGREE] = {"heldout_agreement", PB_FMT_NUM},
  [PB_FA_NULL_MEDIAN] = {"null_median_agreement", PB_FMT_NUM},
  [PB_FA_NULL_DEFINED] = {"null_replicates_defined", PB_FMT_INT},
  [PB_FA_SR_COV80] = {"sr_coverage_0.8", PB_FMT_NUM}, [PB_FA_SR_RISK80] = {"sr_risk_0.8", PB_FMT_NUM},
  [PB_FA_SR_ENV80] = {"sr_risk_envelope_0.8", PB_FMT_NUM}, [PB_FA_SR_REL80] = {"sr_relative_increase_0.8", PB_FMT_NUM},
  [PB_FA_SR_COV90] = {"sr_coverage_0.9", PB_FMT_NUM}, [PB_FA_SR_RISK90] = {"sr_risk_0.9", PB_FMT_NUM},
  [PB_FA_SR_ENV90] = {"sr_risk_envelope_0.9", PB_FMT_NUM}, [PB_FA_SR_REL90] = {"sr_relative_increase_0.9", PB_FMT_NUM}};

/* The per-radius blocks that follow, n_grid fields each, in record order. */
static const char *const pb_fragility__grid_prefix[4] = {"profile_up_", "profile_down_", "var_law_", "capped_law_"};

/* The field table of an arm record (results.h5 /fragility/arms columns,
 * report/fragility.tsv): PB_FRAGILITY_ARM_LEN fields; the lcb and profile
 * names carry their radius, so the table is built per run and released with
 * pb_fields_free. */
static void pb_fragility__arm_fields(const struct pb_fragility_options *o, struct pb_fields *fs)
{
  char r[40];
  pb_fields_alloc(fs, "/fragility/arms", PB_FRAGILITY_ARM_LEN(o->n_grid));
  pb_text_format_double(o->rho_lcb, r);
  for (int32_t f = 0; f < PB_FA_FIXED; f++)
    pb_fields_setf(fs, f, pb_fragility__arm[f].fmt, "%s%s", pb_fragility__arm[f].name,
                   f == PB_FA_PLUGIN_LCB_RHO || f == PB_FA_LCB ? r : "");
  for (int32_t f = PB_FA_FIXED; f < fs->n; f++) {
    int32_t k = (f - PB_FA_FIXED) % o->n_grid, which = (f - PB_FA_FIXED) / o->n_grid;
    pb_text_format_double(pb_fragility_grid(o, k), r);
    pb_fields_setf(fs, f, PB_FMT_NUM, "%s%s", pb_fragility__grid_prefix[which], r);
  }
}

/* ... and of a drift record (/fragility/drift, report/fragility_drift.tsv). */
static const struct pb_field pb_fragility__drift[PB_FD_FIXED] = {
  [PB_FD_N] = {"n", PB_FMT_INT}, [PB_FD_L_TOTAL] = {"L_total", PB_FMT_NUM}, [PB_FD_L_COMP] = {"L_comp", PB_FMT_NUM},
  [PB_FD_L_COND] = {"L_cond", PB_FMT_NUM}, [PB_FD_RATIO] = {"ratio", PB_FMT_NUM},
  [PB_FD_UTIL] = {"utilisation", PB_FMT_NUM}, [PB_FD_N_UTIL] = {"utilisation_bins", PB_FMT_INT},
  [PB_FD_N_UNDEF] = {"undefined_bins", PB_FMT_INT}, [PB_FD_N_UNSUPPORTED] = {"unsupported_bins", PB_FMT_INT},
  [PB_FD_RESIDUAL] = {"additivity_residual", PB_FMT_NUM}};
static const struct pb_fields pb_fragility__drift_fields = {"/fragility/drift", PB_FD_FIXED, pb_fragility__drift, NULL};

/* Row labels: /fragility/arms/{model,source,arm} and /fragility/drift/
 * {model,source,condition} (rank 0 supplies them; names point into meta). */
static int pb_fragility__h5_labels(struct pb_results *res, const struct pb_meta *meta, int64_t n_units, int64_t n_drift)
{
  char **a[3], **d[3];
  for (int j = 0; j < 3; j++) {
    a[j] = pb_malloc((size_t)(2 * n_units + 1) * sizeof(char *));
    d[j] = pb_malloc((size_t)(n_drift + 1) * sizeof(char *));
  }
  static char arm_a[] = "A", arm_b[] = "B";
  int64_t k = 0;
  for (int64_t u = 0; u < n_units; u++) {
    const struct pb_source *S = &meta->sources[u / meta->n_models];
    for (int r = 0; r < 2; r++) {
      a[0][2 * u + r] = meta->model_ids[u % meta->n_models];
      a[1][2 * u + r] = S->name;
      a[2][2 * u + r] = r ? arm_b : arm_a;
    }
    for (int32_t c = 0; c < S->n_conditions; c++)
      if (c != S->clean) d[0][k] = meta->model_ids[u % meta->n_models], d[1][k] = S->name, d[2][k++] = S->conditions[c];
  }
  static const char *an[3] = {"/fragility/arms/model", "/fragility/arms/source", "/fragility/arms/arm"};
  static const char *dn[3] = {"/fragility/drift/model", "/fragility/drift/source", "/fragility/drift/condition"};
  int status = PB_OK;
  for (int j = 0; j < 3 && status == PB_OK; j++) status = pb_results_write_strings(res, an[j], 2 * n_units, a[j]);
  for (int j = 0; j < 3 && status == PB_OK; j++) status = pb_results_write_strings(res, dn[j], n_drift, d[j]);
  for (int j = 0; j < 3; j++) {
    free(a[j]);
    free(d[j]);
  }
  return status;
}

/* /fragility/arms/<field> (rows: unit-major, arm A then B), /fragility/drift/
 * <field> (global cell order), each rank writing its rows, and /fragility/grid. */
static int pb_fragility__h5(struct pb_results *res, const struct pb_meta *meta, const struct pb_fragility_options *o,
                            const struct pb_fields *arm_fields, const double *arm, int64_t u0, int64_t nu,
                            int64_t n_units, const double *drift, int64_t d0, int64_t nd, int64_t n_drift)
{
  int status = pb_results_group(res, "/fragility/arms");
  if (status == PB_OK) status = pb_results_group(res, "/fragility/drift");
  if (status == PB_OK) status = pb_fragility__h5_labels(res, meta, n_units, n_drift);
  if (status == PB_OK) status = pb_fields_write(arm_fields, res, 2 * n_units, 2 * u0, 2 * nu, arm);
  if (status == PB_OK) status = pb_fields_write(&pb_fragility__drift_fields, res, n_drift, d0, nd, drift);
  double grid[PB_FRAGILITY_MAX_GRID];
  for (int32_t k = 0; k < o->n_grid; k++) grid[k] = pb_fragility_grid(o, k);
  int rank;
  MPI_Comm_rank(pb_results_comm(res), &rank);
  if (status == PB_OK)
    status = pb_results_write_f64(res, "/fragility/grid", o->n_grid, 0, rank == 0 ? o->n_grid : 0, grid);
  return status;
}

/* report/fragility.tsv: one row per model, source and arm; each rank its own units (collective). */
static int pb_fragility__arm_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(out->arm_fields, "model\tsource\tarm", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++)
    for (int a = 0; a < 2; a++) {
      const double *r = out->arms + ((size_t)(u - out->u0) * 2 + a) * out->arm_len;
      pb_text_printf(&t, "%s\t%s\t%s", meta->model_ids[u % meta->n_models], meta->sources[u / meta->n_models].name,
                     a == 0 ? "A" : "B");
      pb_fields_tsv_values(out->arm_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  int status = pb_results_tsv(res, "fragility.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

/* report/fragility_drift.tsv: one row per model x perturbed condition; each rank its own units (collective). */
static int pb_fragility__drift_tsv(struct pb_results *res, const struct pb_fragility_out *out)
{
  const struct pb_meta *meta = out->meta;
  struct pb_text h = {0}, t = {0};
  pb_fields_tsv_header(&pb_fragility__drift_fields, "model\tsource\tcondition\ttier", 0, &h);
  pb_text_printf(&h, "\n");
  for (int64_t u = out->u0; u < out->u0 + out->nu; u++) {
    int32_t s = (int32_t)(u / meta->n_models);
    const struct pb_source *S = &meta->sources[s];
    int64_t d = out->drift0[u];
    for (int32_t c = 0; c < S->n_conditions; c++) {
      if (c == S->clean) continue;
      const double *r = out->drift + (size_t)(d++ - out->d0) * PB_FD_FIXED;
      int tier = out->tier[s][c];
      pb_text_printf(&t, "%s\t%s\t%s\t%s", meta->model_ids[u % meta->n_models], S->name, S->conditions[c],
                     tier >= 0 ? pb_protocol_tier_name(tier) : "none");
      pb_fields_tsv_values(&pb_fragility__drift_fields, r, 0, &t);
      pb_text_printf(&t, "\n");
    }
  }
  int status = pb_results_tsv(res, "fragility_drift.tsv", h.buf, t.buf, t.len);
  pb_text_free(&h);
  pb_text_free(&t);
  return status;
}

/* Per-source setup shared by every rank: group signals, image roles, tiers. */
struct pb_fragility__setup {
  struct pb_fragility__signal *sig;
  uint8_t **part;
  int64_t *drift0;             /* [n_units + 1] */
  int64_t n_units;
};

static void pb_fragility__setup_free(struct pb_fragility__setup *U, const struct pb_meta *meta)
{
  for (int32_t s = 0; s < meta->n_sources && U->sig; s++) {
    free(U->sig[s].join);
    free(U->sig[s].user);
    free(U->sig[s].what);
  }
  for (int32_t s = 0; s < meta->n_sources && U->part; s++) free(U->part[s]);
  free(U->sig);
  free(U->part);
  free(U->drift0);
}

/* The per-source setup; @p from_config: under `pairbound run`, whose messages name the [fragility] keys. */
static int pb_fragility__setup(const struct pb_meta *meta, const struct pb_fragility_stage_options *opt,
                               int from_config, struct pb_fragility__setup *U)
{
  memset(U, 0, sizeof *U);
  U->sig = pb_calloc((size_t)meta->n_sources, sizeof *U->sig);
  if (pb_fragility__check(&opt->k) || pb_fragility__signals(meta, opt->probe, from_config, U->sig)) return PB_FAIL;
  if (opt->group_file) {
    if (pb_fragility__group_file(meta, opt->group_file, U->sig)) return PB_FAIL;
    for (int32_t s = 0; s < meta->n_sources; s++) {
      if (!U->sig[s].user) continue;
      int32_t listed = 0;
      for (int32_t i = 0; i < meta->sources[s].n_images; i++) listed += !isnan(U->sig[s].user[i]);
      char buf[512];
      snprintf(buf, sizeof buf, "the column of %s (%d of %d images listed)", opt->group_file, (int)listed,
               (int)meta->sources[s].n_images);
      free(U->sig[s].what);
      U->sig[s].what = pb_strdup(buf);
    }
  }
  U->part = pb_calloc((size_t)meta->n_sources, sizeof *U->part);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *S = &meta->sources[s];
    U->part[s] = pb_malloc((size_t)(S->n_images > 0 ? S->n_images : 1));
    for (int32_t i = 0; i < S->n_images; i++) U->part[s][i] = (uint8_t)pb_fragility_part_of(opt->k.seed, S->image_ids[i]);
  }
  U->n_units = (int64_t)meta->n_sources * meta->n_models;
  U->drift0 = pb_malloc((size_t)(U->n_units + 1) * sizeof(int64_t));
  U->drift0[0] = 0;
  for (int64_t u = 0; u < U->n_units; u++)
    U->drift0[u + 1] = U->drift0[u] + meta->sources[u / meta->n_models].n_conditions - 1;
  return PB_OK;
}

/* `pairbound fragility STORE -o OUTDIR` (the registry's run); under
 * `pairbound run` messages name the configuration's keys instead of options. */
static int pb_fragility__stage_run(const struct pb_stage_call *call, const void *opts)
{
  const struct pb_fragility_stage_options *opt = opts;
  struct pb_stage st;
  if (pb_stage_begin(call, &st)) return PB_FAIL;
  const struct pb_meta *meta = st.meta;
  const struct pb_fragility_options *o = &opt->k;
  struct pb_fragility__setup U;
  int status = pb_fragility__setup(meta, opt, call->section != NULL, &U);
  if (status != PB_OK) {
    pb_fragility__setup_free(&U, meta);
    return pb_stage_close(&st, status);
  }
  int64_t *cost = pb_malloc((size_t)(U.n_units > 0 ? U.n_units : 1) * sizeof *cost);
  for (int64_t u = 0; u < U.n_units; u++) {
    const struct pb_source *S = &meta->sources[u / meta->n_models];
    cost[u] = (int64_t)S->n_images * (S->n_conditions + 2 + (o->n_null + 1) / 4) + 64;
  }
  int64_t *bounds = pb_malloc((size_t)(st.size + 1) * sizeof *bounds);
  pb_dist_partition_bcast(U.n_units, cost, st.comm, bounds);
  int64_t u0 = bounds[st.rank], u1 = bounds[st.rank + 1], nu = u1 - u0;
  free(bounds);
  free(cost);
  struct pb_fragility__load *L = pb_calloc((size_t)meta->n_sources, sizeof *L);
  /* each rank reads its own units' rows without waiting for the others source by source (docs/store.md,
   * "Reading", step 5) */
  const int alone = pb_store_reads_independent(st.store, PB_FIELD_ALL);
  status = pb_store_agree(st.store, pb_fragility__read(&st, U.sig, u0, u1, L));
  if (status == PB_OK) status = pb_store_agree(st.store, pb_fragility__read_topk(&st, u0, u1, L));
  if (alone) status = pb_store_reads_collective(st.store, status);
  pb_timer_lap(&st.timer, "load");
  int32_t len = PB_FRAGILITY_ARM_LEN(o->n_grid);
  int64_t d0 = U.drift0[u0], nd = U.drift0[u1] - d0;
  double *arm = pb_malloc((size_t)(nu > 0 ? nu : 1) * 2 * len * sizeof(double));
  double *drift = pb_malloc((size_t)(nd > 0 ? nd : 1) * PB_FD_FIXED * sizeof(double));
  const int32_t dlen = PB_FRAGILITY_DIAG_LEN(o->n_grid) + PB_FRAGILITY_RANDOM_LEN(o->n_grid);
  double *diag = pb_malloc((size_t)(nu > 0 ? nu : 1) * 2 * dlen * sizeof(double));
  double *flag = pb_malloc((size_t)(nd > 0 ? nd : 1) * PB_FF_FIXED * sizeof(double));
  double *temper = pb_malloc((size_t)(nu > 0 ? nu : 1) * (2 * len + 1) * sizeof(double));
  double *qmap = pb_malloc((size_t)(nu > 0 ? nu : 1) * PB_FRAGILITY_QMAP_LEN * sizeof(double));
  if (status == PB_OK) {
    struct pb_error_first fe;
    pb_error_first_init(&fe);
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t u = u0; u < u1; u++)
      if (pb_fragility__unit(meta, L, U.sig, U.part, o, u, U.drift0[u], arm + (size_t)(u - u0) * 2 * len,
                             diag + (size_t)(u - u0) * 2 * dlen, drift + (size_t)(U.drift0[u] - d0) * PB_FD_FIXED,
                             flag + (size_t)(U.drift0[u] - d0) * PB_FF_FIXED, temper + (size_t)(u - u0) * (2 * len + 1),
                             qmap + (size_t)(u - u0) * PB_FRAGILITY_QMAP_LEN) != PB_OK)
        pb_error_first_record(&fe, u);
    status = pb_error_first_status(&fe);
  }
  status = pb_error_agree(st.comm, status);
  pb_timer_lap(&st.timer, "compute");
  struct pb_fields arm_fields;
  pb_fragility__arm_fields(o, &arm_fields);
  if (status == PB_OK)
    status = pb_fragility__h5(st.results, meta, o, &arm_fields, arm, u0, nu, U.n_units, drift, d0, nd,
                              U.drift0[U.n_units]);
  status = pb_error_agree(st.comm, status);
  if (status == PB_OK) {
    const char **what = pb_malloc((size_t)meta->n_sources * sizeof *what);
    for (int32_t s = 0; s < meta->n_sources; s++) what[s] = U.sig[s].what;
    const int8_t **tier = pb_malloc((size_t)meta->n_sources * sizeof *tier);
    for (int32_t s = 0; s < meta->n_sources; s++) tier[s] = st.protocol.src[s].tier;
    struct pb_fragility_out out = {meta, o, &arm_fields, len, U.n_units, u0, nu, arm, U.drift0[U.n_units], d0, nd,
                                   drift, U.drift0, tier, what, st.comm, dlen, diag, flag, temper, qmap};
    status = pb_fragility__arm_tsv(st.results, &out);
    if (status == PB_OK) status = pb_fragility__drift_tsv(st.results, &out);
    if (status == PB_OK) status = pb_fragility_diag_tsv(st.results, &out);
    if (status == PB_OK) status = pb_fragility_qmap_tsv(st.results, &out);
    if (status == PB_OK) {
      struct pb_fragility_sum S;
      status = pb_fragility_summarise(&out, &S);
      if (status == PB_OK && st.rank == 0) status = pb_fragility_report(st.results, &out, &S);
      pb_fragility_sum_free(&S);
    }
    free(what);
    free(tier);
  }
  status = pb_error_agree(st.comm, status); /* rank 0 holds the report's message */
  pb_timer_end(&st.timer, "write", st.comm);
  pb_message("fragility: %lld units, %lld drift cells; load %.3f s, compute %.3f s, write %.3f s",
             (long long)U.n_units, (long long)U.drift0[U.n_units], pb_timer_get(&st.timer, "load"),
             pb_timer_get(&st.timer, "compute"), pb_timer_get(&st.timer, "write"));
  pb_fields_free(&arm_fields);
  free(arm);
  free(diag);
  free(flag);
  free(temper);
  free(qmap);
  free(drift);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    free(L[s].rows);
    pb_store_rows_free(&L[s].d);
    free(L[s].prows);
    pb_store_rows_free(&L[s].pt);
    free(L[s].clean);
    if (meta->topk > 0) pb_store_rows_free(&L[s].tk);
  }
  free(L);
  pb_fragility__setup_free(&U, meta);
  return pb_stage_end(&st, status);
}

/* The command line: the store stage, or with --law the exact profile of a
 * law file (read on every rank, printed by rank 0). */
static int pb_fragility__command(const struct pb_stage_call *call, const struct pb_stage_args *args, const void *opts)
{
  const struct pb_fragility_stage_options *o = opts;
  const char *bad;
  if (o->study)
    bad = strcmp(o->study, "known-propensity") ? "--study takes known-propensity"
          : o->law ? "--study and --law exclude each other" : args->operand ? "takes no STORE with --study"
          : !args->output ? "missing -o OUTDIR" : o->store_given ? "store options other than --seed are not taken "
          "with --study" : o->rho ? "--rho needs --law FILE" : NULL;
  else if (!o->law)
    bad = !args->operand ? "missing STORE (or --law FILE, or --study known-propensity)" : !args->output
          ? "missing -o OUTDIR" : o->rho ? "--rho needs --law FILE" : NULL;
  else
    bad = args->operand ? "takes no STORE with --law" : args->output ? "takes no -o with --law"
          : o->store_given || o->seed_given ? "store options are not taken with --law" : !o->rho
          ? "missing --rho r1,r2,..." : NULL;
  if (!bad && !o->study && o->replicates_given) bad = "--replicates needs --study known-propensity";
  if (bad) {
    pb_error_set("%s", bad);
    return PB_STAGE_USAGE;
  }
  if (o->study) return pb_fragility_study_run(o, args->output, call->comm, call->provenance);
  if (!o->law) return PB_STAGE_RUN;
  int rank;
  MPI_Comm_rank(call->comm, &rank);
  return pb_fragility_law_print(o, rank == 0 ? stdout : NULL);
}

static const struct pb_stage_inherit pb_fragility__inherits[] = {{"seed", "run.seed", 6}, {NULL, NULL, 0}};

const struct pb_stage_desc pb_fragility_stage = {
  .name = "fragility",
  .operand = "[STORE]",
  .output_optional = 1,
  .store = {.reads = 1, .needs = PB_STAGE_NEEDS_CELLS, .figures = 1},
  .options = {.table = pb_fragility_option_table, .size = sizeof(struct pb_fragility_stage_options),
              .release = pb_fragility__options_release},
  .run = pb_fragility__stage_run,
  .command = pb_fragility__command,
  .pipeline = {.report = "fragility.md", .order = 5, .inherits = pb_fragility__inherits},
  .help = "Fragility profiles (seed 001; docs/fragility.md). `pairbound fragility STORE -o OUTDIR`: per model and\n"
          "source, the restricted fragility profile of the clean records in both split arms (bins of clean\n"
          "confidence x within-bin quantile groups of U), G_R with and without the binomial-noise correction, FAUC\n"
          "up/down, variance laws, the split-sample lower confidence bound, held-out drift agreement and its\n"
          "permutation null; per model x perturbed condition the composition/conditional drift split. Writes\n"
          "OUTDIR/results.h5 (/fragility), report/fragility.tsv, fragility_drift.tsv, fragility.md and figures.\n"
          "`pairbound fragility --law FILE --rho r1,r2,...`: the exact upward and downward profiles of a finite\n"
          "propensity law; prints `G`, `rho_plus` and `rho_sat` (of the upward profile; rho_plus is inf when G = 0)\n"
          "as `name value` lines, then one `rho up down` line per radius, numbers as the shortest decimal that\n"
          "reads back exactly.\n"
          "`pairbound fragility --study known-propensity [--replicates N] [--seed S] -o OUTDIR`: the\n"
          "known-propensity study of seed 001 U.1 (four-cell laws, plug-in profile vs capped variance law, primary,\n"
          "weak-heterogeneity and 30-label arms); writes OUTDIR/results.h5 (/fragility/study),\n"
          "report/known_propensity.tsv and report/REPORT.md in the layout of the seed's Table 20, with the witness\n"
          "laws of Proposition 4 (report/witness_laws.tsv).\n",
};
