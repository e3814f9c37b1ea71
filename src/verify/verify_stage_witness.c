/* `pairbound verify --witnesses FILE`: every witness correspondence that
 * `pairbound bounds --witnesses` wrote to FILE is checked on this rank's
 * cells against the store's records: a within-class bijection keeping the
 * level's counts whose H count is the stored end (docs/verify.md, "Witnesses"). */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>
#include <mpi.h>
#include <omp.h>

#include "pairbound/bounds.h"
#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/lsets.h"
#include "pairbound/stage.h"
#include "pairbound/verify.h"
#include "core/h5io.h"
#include "verify_stage_internal.h"

/* how a missing witness dataset is explained */
#define PB_VERIFY__WHINT "(not written by `pairbound bounds --witnesses`?)"

static const char *const pb_verify__wnames[PB_WITNESS_N] = {"Ik_lo", "Ik_hi", "I5_lo", "I5_hi"};
static const char *const pb_verify__wends[PB_WITNESS_N] = {"H_Ik_lo", "H_Ik_hi", "H_I5_lo", "H_I5_hi"};
static const char *const pb_verify__wtext[PB_WITNESS_N] = {"H at Ik, lower end", "H at Ik, upper end",
                                                           "H at I5, lower end", "H at I5, upper end"};

/* What FILE holds for the rank's nc cells. */
struct pb_verify__wfile {
  int64_t *col[5];              /* offset, n, source, model, condition */
  double *tau, *end[PB_WITNESS_N];
  int32_t *perm[PB_WITNESS_N];  /* from the first cell's offset on */
};

static int pb_verify__wfile_read(const struct pb_stage *st, const char *path, int64_t nc, struct pb_verify__wfile *f)
{
  static const char *const cols[5] = {"offset", "n", "source", "model", "condition"};
  const size_t na = (size_t)(nc > 0 ? nc : 1);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    pb_error_set("%s: cannot open results file", path);
    return PB_FAIL;
  }
  /* witnesses attain their ends under one correctness: checked under another, every count would differ */
  const char *mine = pb_store_labels_mode(st->store) == PB_LABELS_SET ? "set" : "single";
  hid_t grp = H5Oexists_by_name(file, "/bounds/witnesses", H5P_DEFAULT) > 0 ? H5Gopen2(file, "/bounds/witnesses", H5P_DEFAULT)
                                                                            : -1;
  char *theirs = grp >= 0 && H5Aexists(grp, "labels") > 0 ? pb_h5_read_attr_str(grp, "labels") : NULL;
  if (grp >= 0) H5Gclose(grp);
  int status = PB_OK;
  if (strcmp(theirs ? theirs : "single", mine) != 0) {
    pb_error_set("%s: its witnesses are of labels = %s, this run judges correctness by labels = %s: give --labels %s",
                 path, theirs ? theirs : "single", mine, theirs ? theirs : "single");
    status = PB_FAIL;
  }
  free(theirs);
  char name[128];
  for (int j = 0; j < 5 && status == PB_OK; j++) {
    f->col[j] = pb_malloc(na * sizeof(int64_t));
    snprintf(name, sizeof name, "/bounds/witnesses/%s", cols[j]);
    status = pb_h5_read_slice(file, path, name, H5T_NATIVE_INT64, st->n_cells, st->first, nc, f->col[j],
                              PB_VERIFY__WHINT);
  }
  f->tau = pb_malloc(na * sizeof *f->tau);
  if (status == PB_OK)
    status = pb_h5_read_slice(file, path, "/bounds/cells/tau", H5T_NATIVE_DOUBLE, st->n_cells, st->first, nc, f->tau,
                              PB_VERIFY__WHINT);
  const int64_t lo = nc > 0 && status == PB_OK ? f->col[0][0] : 0;
  const int64_t len = nc > 0 && status == PB_OK ? f->col[0][nc - 1] + f->col[1][nc - 1] - lo : 0;
  for (int w = 0; w < PB_WITNESS_N; w++) {
    f->end[w] = pb_malloc(na * sizeof *f->end[w]);
    f->perm[w] = pb_malloc((size_t)(len > 0 ? len : 1) * sizeof *f->perm[w]);
    if (status != PB_OK) continue;
    snprintf(name, sizeof name, "/bounds/cells/%s", pb_verify__wends[w]);
    status = pb_h5_read_slice(file, path, name, H5T_NATIVE_DOUBLE, st->n_cells, st->first, nc, f->end[w],
                              PB_VERIFY__WHINT);
    snprintf(name, sizeof name, "/bounds/witnesses/%s", pb_verify__wnames[w]);
    if (status == PB_OK)
      status = pb_h5_read_slice(file, path, name, H5T_NATIVE_INT32, -1, lo, len, f->perm[w], PB_VERIFY__WHINT);
  }
  H5Fclose(file);
  return status;
}

static void pb_verify__wfile_free(struct pb_verify__wfile *f)
{
  for (int j = 0; j < 5; j++) free(f->col[j]);
  free(f->tau);
  for (int w = 0; w < PB_WITNESS_N; w++) free(f->end[w]), free(f->perm[w]);
}

/* The first class whose witness count differs from its own end by the bounds
 * engine on the class alone, into @p why; -1 when every class attains its end. */
static int32_t pb_verify__wclass(const struct pb_cell_view *d, const struct pb_verify_wgroup *g, int w, char *why,
                                 size_t len)
{
  int32_t *idx = pb_malloc((size_t)d->n * sizeof *idx), found = -1;
  for (int32_t c = 0; c < g->ncls && found < 0; c++) {
    int32_t ny = 0;
    for (int32_t i = 0; i < d->n; i++)
      if (g->cid[i] == c) idx[ny++] = i;
    int32_t *lab = pb_malloc((size_t)ny * 3 * sizeof(int32_t)), *p0 = lab + ny, *p1 = p0 + ny;
    float *f = pb_malloc((size_t)ny * 4 * sizeof *f);
    for (int32_t i = 0; i < ny; i++) {
      lab[i] = d->label[idx[i]], p0[i] = d->pred0[idx[i]], p1[i] = d->pred1[idx[i]];
      f[i] = d->s0[idx[i]], f[ny + i] = d->s1[idx[i]], f[2 * ny + i] = f[3 * ny + i] = 0.0f;
    }
    struct pb_cell_view cv = *d;
    cv.n = ny, cv.label = lab, cv.pred0 = p0, cv.pred1 = p1, cv.s0 = f, cv.s1 = f + ny, cv.m0 = f + 2 * ny,
    cv.m1 = f + 3 * ny;
    struct pb_cell_bounds cb;
    if (pb_bounds_cell(&cv, w >= PB_WITNESS_I5_LO, &cb) == 0) {
      const double e = (w < PB_WITNESS_I5_LO ? cb.H_Ik : cb.H_I5)[w % 2] * ny;
      if ((double)g->cnt[c][2] != round(e)) {
        found = g->label[c];
        snprintf(why, len, "the witness has H count %lld in the class, the class's end (bounds engine on the "
                 "class alone) is %.0f", (long long)g->cnt[c][2], round(e));
      }
    }
    free(lab);
    free(f);
  }
  free(idx);
  return found;
}

/* One cell's four witnesses; the first failure into @p msg (0: none). */
static int pb_verify__wcell(const struct pb_cell_view *d, const struct pb_verify__wfile *f, int64_t c, int64_t lo,
                            int64_t counts[2], char *msg, size_t len)
{
  struct pb_verify_wgroup g;
  if (pb_verify_witness_group(d, &g) != 0) {
    snprintf(msg, len, "cell %s/%s/%s: out of memory", d->model, d->source, d->condition);
    return 1;
  }
  int bad = 0;
  char why[512];
  for (int w = 0; w < PB_WITNESS_N && !bad; w++) {
    const int32_t *perm = f->perm[w] + (f->col[0][c] - lo);
    const double end = f->end[w][c];
    int32_t label = -1;
    int64_t H = 0;
    if (isnan(end) && perm[0] < 0) { /* I5 outside the bounds run's --i5 cells: no witness */
      counts[1]++;
      continue;
    }
    if (perm[0] < 0 || isnan(end)) {
      snprintf(why, sizeof why, "%s", perm[0] < 0 ? "no witness, but the file has this end" : "a witness, but the "
               "file has no end (NaN)");
      bad = 1;
    } else if (pb_verify_witness_check(d, &g, perm, w >= PB_WITNESS_I5_LO, &H, &label, why, sizeof why) != 0) {
      bad = 1;
    } else if ((double)H / d->n != end) {
      bad = 1;
      label = pb_verify__wclass(d, &g, w, why, sizeof why);
      if (label < 0)
        snprintf(why, sizeof why, "the witness has H = %lld/%d = %.17g, the file %.17g (every class attains its "
                 "own end by the bounds engine)", (long long)H, d->n, (double)H / d->n, end);
    }
    counts[0]++;
    if (bad && label >= 0)
      snprintf(msg, len, "cell %s/%s/%s, class %d: witness %s (%s): %s", d->model, d->source, d->condition, (int)label,
               pb_verify__wnames[w], pb_verify__wtext[w], why);
    else if (bad)
      snprintf(msg, len, "cell %s/%s/%s: witness %s (%s): %s", d->model, d->source, d->condition,
               pb_verify__wnames[w], pb_verify__wtext[w], why);
  }
  pb_verify_witness_group_free(&g);
  return bad;
}

int pb_verify__witnesses(const struct pb_stage *st, const struct pb_cell_block *b, const char *path,
                        struct pb_verify__wsum *sum)
{
  const int64_t nc = b->n_cells;
  struct pb_verify__wfile f;
  memset(&f, 0, sizeof f);
  memset(sum, 0, sizeof *sum);
  sum->first_fail = INT64_MAX;
  int status = pb_verify__wfile_read(st, path, nc, &f);
  for (int64_t c = 0; c < nc && status == PB_OK; c++) {
    const struct pb_cell_ref *r = &b->cells[c].ref;
    if (f.col[1][c] != b->cells[c].n || f.col[2][c] != r->source || f.col[3][c] != r->model ||
        f.col[4][c] != r->condition) {
      pb_error_set("%s: cell %lld is not this store's (source, model, condition, records) = (%d, %d, %d, %d) "
                   "(witnesses of another store?)", path, (long long)(st->first + c), (int)r->source, (int)r->model,
                   (int)r->condition, (int)b->cells[c].n);
      status = PB_FAIL;
    }
  }
  if (status == PB_OK) {
    char *msgs = pb_calloc((size_t)(nc > 0 ? nc : 1), PB_VERIFY__MSG);
    int64_t checked = 0, skipped = 0, failed = 0;
#pragma omp parallel for schedule(dynamic, 8) reduction(+ : checked, skipped, failed)
    for (int64_t c = 0; c < nc; c++) {
      const struct pb_cell_view d = pb_cells_view(st->meta, &b->cells[c], (float)f.tau[c]);
      int64_t counts[2] = {0, 0};
      failed += pb_verify__wcell(&d, &f, c, f.col[0][0], counts, msgs + c * PB_VERIFY__MSG, PB_VERIFY__MSG);
      checked += counts[0], skipped += counts[1];
    }
    sum->checked = checked, sum->skipped = skipped, sum->failed = failed;
    for (int64_t c = 0; c < nc && sum->first_fail == INT64_MAX; c++)
      if (msgs[c * PB_VERIFY__MSG]) {
        sum->first_fail = st->first + c;
        snprintf(sum->msg, sizeof sum->msg, "%s", msgs + c * PB_VERIFY__MSG);
      }
    free(msgs);
  }
  pb_verify__wfile_free(&f);
  return status;
}

void pb_verify__witness_reduce(const struct pb_stage *st, struct pb_verify__wsum *sum)
{
  int64_t t[3] = {sum->checked, sum->skipped, sum->failed}, first;
  MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_INT64_T, MPI_SUM, st->comm);
  MPI_Allreduce(&sum->first_fail, &first, 1, MPI_INT64_T, MPI_MIN, st->comm);
  if (first != INT64_MAX) { /* its text from the rank that holds it */
    int holder = sum->first_fail == first ? st->rank : st->size, root;
    MPI_Allreduce(&holder, &root, 1, MPI_INT, MPI_MIN, st->comm);
    MPI_Bcast(sum->msg, sizeof sum->msg, MPI_CHAR, root, st->comm);
  }
  sum->checked = t[0], sum->skipped = t[1], sum->failed = t[2], sum->first_fail = first;
}
