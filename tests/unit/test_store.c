/* Record store (src/store/store.c) and cell loading (src/core/cells.c): a store built
 * from a hand-made pb_meta with known values, read back through arbitrary row
 * subsets and field masks; the temporary-name life cycle; the exact error
 * messages of bad files; metadata validation and counts worked by hand. */
#include "config.h"

#include <glob.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/cells.h"
#include "pairbound/checksum.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/pack.h"
#include "pairbound/store.h"

#include "testlib.h"

/* ------------------------------------------------------- the hand-made store
 * Source A: conditions {fog, clean, snow} (clean at 1), 4 images, 3 classes,
 *           split dev, eval, eval, dev  -> 2 evaluation images.
 * Source B: conditions {clean, blur, "lo w"} (clean at 0), 5 images, 4 classes,
 *           split eval, dev, eval, eval, dev -> 3 evaluation images.
 * Three models; top-2 lists. */
#define NM 3
#define TOPK 2
static char *h_models[NM] = {"m0", "m1", "m2"}, *h_groups[NM] = {"gA", "gB", "gA"};
static char *h_condA[3] = {"fog", "clean", "snow"}, *h_condB[3] = {"clean", "blur", "lo w"};
static char *h_imgA[4] = {"a1", "a2", "a3", "a4"}, *h_imgB[5] = {"b1", "b2", "b3", "b4", "b5"};
static int32_t h_labA[4] = {0, 2, 1, 2}, h_labB[5] = {3, 0, 1, 3, 2};
static uint8_t h_splA[4] = {0, 1, 1, 0}, h_splB[5] = {1, 0, 1, 1, 0};
static struct pb_source h_src[2];

static void hand_meta(struct pb_meta *m)
{
  h_src[0] = (struct pb_source){"A", 3, 4, h_imgA, h_labA, h_splA, 3, h_condA, 1, PB_ROLE_REAL, 0, 0, NULL, NULL};
  h_src[1] = (struct pb_source){"B", 4, 5, h_imgB, h_labB, h_splB, 3, h_condB, 0, PB_ROLE_REAL, 0, 0, NULL, NULL};
  *m = (struct pb_meta){NM, h_models, h_groups, 2, h_src, TOPK, "hand-made test store"};
}

/* The value written for (source s, row r, image i): max probabilities are
 * distinct everywhere, and every record is valid (docs/store.md, "Integrity":
 * M = S when the prediction is correct, top-1 is the prediction, top-k classes
 * distinct and in range, probabilities non-increasing), since the reader
 * refuses anything else. */
static int32_t v_pred(int s, int r, int i) { return (r * 7 + i * 3 + s) % (s ? 4 : 3); }
static float v_smax(int s, int r, int i) { return (float)(100 * s + 10 * r + i + 1) / 512.0f; }
static float v_ptrue(int s, int r, int i)
{
  int32_t label = s ? h_labB[i] : h_labA[i];
  return v_pred(s, r, i) == label ? v_smax(s, r, i) : v_smax(s, r, i) / 4;
}
static int32_t v_tkc(int s, int r, int i, int k) { return (v_pred(s, r, i) + k) % (s ? 4 : 3); }
static float v_tkp(int s, int r, int i, int k) { return v_smax(s, r, i) / (float)(k + 1); }

static void fill_rows(const struct pb_meta *meta, int s, struct pb_rows *d)
{
  const struct pb_source *src = &meta->sources[s];
  int nr = meta->n_models * src->n_conditions;
  pb_store_rows_alloc(d, nr, src->n_images, meta->topk);
  for (int r = 0; r < nr; r++)
    for (int i = 0; i < src->n_images; i++) {
      size_t x = (size_t)r * src->n_images + i;
      d->pred[x] = v_pred(s, r, i);
      d->smax[x] = v_smax(s, r, i);
      d->ptrue[x] = v_ptrue(s, r, i);
      for (int k = 0; k < meta->topk; k++) {
        d->topk_class[x * meta->topk + k] = v_tkc(s, r, i, k);
        d->topk_prob[x * meta->topk + k] = v_tkp(s, r, i, k);
      }
    }
}

/* Create and commit the hand-made store at path (all rows, one call per source). */
static void make_store(const char *path)
{
  struct pb_meta meta;
  hand_meta(&meta);
  struct pb_store *st;
  ck_assert_msg(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_test_temps(path) == 1); /* written under a unique temporary name */
  ck_assert(!pb_test_exists(path));
  for (int s = 0; s < 2; s++) {
    struct pb_rows d;
    fill_rows(&meta, s, &d);
    int32_t rows[16];
    for (int r = 0; r < d.n_rows; r++) rows[r] = r;
    ck_assert_msg(pb_store_write_rows(st, s, d.n_rows, rows, &d) == PB_OK, "%s", pb_error_message());
    pb_store_rows_free(&d);
  }
  ck_assert_msg(pb_store_commit(st) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_test_exists(path));
  ck_assert_msg(pb_test_temps(path) == 0, "a temporary of %s left behind after commit", path);
}

static const char *store_path(void)
{
  static char path[512];
  if (!path[0]) {
    snprintf(path, sizeof path, "%s", pb_test_path("hand.h5"));
    make_store(path);
  }
  return path;
}

/* Compare rows read (fields in mask) against the values written. */
static void check_rows(int s, int n, const int32_t *rows, const struct pb_rows *got, int fields, int topk)
{
  int ni = h_src[s].n_images;
  ck_assert_int_eq(got->n_rows, n);
  ck_assert_int_eq(got->n_images, ni);
  ck_assert(fields & PB_FIELD_PRED ? got->pred != NULL : got->pred == NULL);
  ck_assert(fields & PB_FIELD_SMAX ? got->smax != NULL : got->smax == NULL);
  ck_assert(fields & PB_FIELD_PTRUE ? got->ptrue != NULL : got->ptrue == NULL);
  ck_assert(fields & PB_FIELD_TOPK ? got->topk_class != NULL && got->topk_prob != NULL
                                   : got->topk_class == NULL && got->topk_prob == NULL);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < ni; i++) {
      size_t x = (size_t)j * ni + i;
      int r = rows[j];
      if (got->pred) ck_assert_msg(got->pred[x] == v_pred(s, r, i), "s %d row %d image %d", s, r, i);
      if (got->smax) ck_assert(got->smax[x] == v_smax(s, r, i));
      if (got->ptrue) ck_assert(got->ptrue[x] == v_ptrue(s, r, i));
      if (got->topk_class)
        for (int k = 0; k < topk; k++) {
          ck_assert_int_eq(got->topk_class[x * topk + k], v_tkc(s, r, i, k));
          ck_assert(got->topk_prob[x * topk + k] == v_tkp(s, r, i, k));
        }
    }
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_metadata_round_trip)
{
  struct pb_store *st;
  ck_assert_msg(pb_store_open(store_path(), MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  const struct pb_meta *m = pb_store_meta(st);
  struct pb_meta want;
  hand_meta(&want);
  ck_assert_int_eq(m->n_models, NM);
  ck_assert_int_eq(m->topk, TOPK);
  ck_assert_str_eq(m->provenance, "hand-made test store");
  for (int i = 0; i < NM; i++) {
    ck_assert_str_eq(m->model_ids[i], want.model_ids[i]);
    ck_assert_str_eq(m->model_groups[i], want.model_groups[i]);
  }
  ck_assert_int_eq(m->n_sources, 2);
  for (int s = 0; s < 2; s++) {
    const struct pb_source *a = &m->sources[s], *b = &want.sources[s];
    ck_assert_str_eq(a->name, b->name);
    ck_assert_int_eq(a->n_classes, b->n_classes);
    ck_assert_int_eq(a->n_images, b->n_images);
    ck_assert_int_eq(a->n_conditions, b->n_conditions);
    ck_assert_int_eq(a->clean, b->clean);
    for (int c = 0; c < a->n_conditions; c++) ck_assert_str_eq(a->conditions[c], b->conditions[c]);
    for (int i = 0; i < a->n_images; i++) {
      ck_assert_str_eq(a->image_ids[i], b->image_ids[i]);
      ck_assert_int_eq(a->labels[i], b->labels[i]);
      ck_assert_int_eq(a->split[i], b->split[i]);
    }
  }
  ck_assert_int_eq(pb_meta_find_source(m, "B"), 1);
  ck_assert_int_eq(pb_meta_find_source(m, "C"), -1);
  pb_store_close(st);
}
END_TEST

START_TEST(test_read_subsets)
{
  struct pb_store *st;
  ck_assert(pb_store_open(store_path(), MPI_COMM_WORLD, &st) == PB_OK);
  struct pb_rows r;
  /* non-contiguous rows across models of A (9 rows) */
  const int32_t sub[4] = {0, 2, 3, 7};
  ck_assert(pb_store_read_rows(st, 0, 4, sub, &r) == PB_OK);
  check_rows(0, 4, sub, &r, PB_FIELD_ALL, TOPK);
  pb_store_rows_free(&r);
  /* a contiguous run crossing a model boundary, and the last row */
  const int32_t run[6] = {1, 2, 3, 4, 5, 8};
  ck_assert(pb_store_read_rows(st, 0, 6, run, &r) == PB_OK);
  check_rows(0, 6, run, &r, PB_FIELD_ALL, TOPK);
  pb_store_rows_free(&r);
  /* every row of B */
  const int32_t allB[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
  ck_assert(pb_store_read_rows(st, 1, 9, allB, &r) == PB_OK);
  check_rows(1, 9, allB, &r, PB_FIELD_ALL, TOPK);
  pb_store_rows_free(&r);
  /* single fields: the others stay NULL */
  const int32_t subB[3] = {1, 5, 6};
  ck_assert(pb_store_read_fields(st, 1, 3, subB, PB_FIELD_PRED, &r) == PB_OK);
  check_rows(1, 3, subB, &r, PB_FIELD_PRED, TOPK);
  pb_store_rows_free(&r);
  ck_assert(pb_store_read_fields(st, 0, 4, sub, PB_FIELD_SMAX | PB_FIELD_TOPK, &r) == PB_OK);
  check_rows(0, 4, sub, &r, PB_FIELD_SMAX | PB_FIELD_TOPK, TOPK);
  pb_store_rows_free(&r);
  ck_assert(pb_store_read_fields(st, 1, 3, subB, PB_FIELD_PTRUE, &r) == PB_OK);
  check_rows(1, 3, subB, &r, PB_FIELD_PTRUE, TOPK);
  pb_store_rows_free(&r);
  /* no rows at all (a rank without work) */
  ck_assert(pb_store_read_rows(st, 0, 0, sub, &r) == PB_OK);
  ck_assert_int_eq(r.n_rows, 0);
  pb_store_rows_free(&r);
  pb_store_close(st);
}
END_TEST

START_TEST(test_row_errors)
{
  struct pb_store *st;
  ck_assert(pb_store_open(store_path(), MPI_COMM_WORLD, &st) == PB_OK);
  struct pb_rows r;
  const int32_t unsorted[2] = {3, 1}, dup[2] = {2, 2}, out[1] = {9}, neg[1] = {-1};
  ck_assert(pb_store_read_rows(st, 0, 2, unsorted, &r) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "row list for source A is not sorted, distinct and in range");
  ck_assert(pb_store_read_rows(st, 0, 2, dup, &r) == PB_FAIL);
  ck_assert(pb_store_read_rows(st, 0, 1, out, &r) == PB_FAIL); /* A has 3 x 3 rows */
  ck_assert(pb_store_read_rows(st, 1, 1, neg, &r) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "row list for source B is not sorted, distinct and in range");
  ck_assert(pb_store_read_rows(st, 2, 0, out, &r) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "no source 2");
  /* an opened store is read-only */
  struct pb_rows d;
  struct pb_meta meta;
  hand_meta(&meta);
  fill_rows(&meta, 0, &d);
  const int32_t one[1] = {0};
  ck_assert(pb_store_write_rows(st, 0, 1, one, &d) == PB_FAIL);
  char want[700];
  snprintf(want, sizeof want, "%s: store is not open for writing", store_path());
  ck_assert_str_eq(pb_error_message(), want);
  pb_store_rows_free(&d);
  pb_store_close(st);
}
END_TEST

/* Rows written in pieces by one call per source (sorted, non-contiguous list)
 * land where they belong: write only odd rows of A, read them back. */
START_TEST(test_partial_write)
{
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("partial.h5"));
  struct pb_meta meta;
  hand_meta(&meta);
  struct pb_store *st;
  ck_assert(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK);
  struct pb_rows full, part;
  fill_rows(&meta, 0, &full);
  const int32_t odd[4] = {1, 3, 5, 7};
  pb_store_rows_alloc(&part, 4, 4, TOPK);
  for (int j = 0; j < 4; j++) {
    memcpy(part.pred + j * 4, full.pred + odd[j] * 4, 4 * sizeof(int32_t));
    memcpy(part.smax + j * 4, full.smax + odd[j] * 4, 4 * sizeof(float));
    memcpy(part.ptrue + j * 4, full.ptrue + odd[j] * 4, 4 * sizeof(float));
    memcpy(part.topk_class + j * 4 * TOPK, full.topk_class + odd[j] * 4 * TOPK, 4 * TOPK * sizeof(int32_t));
    memcpy(part.topk_prob + j * 4 * TOPK, full.topk_prob + odd[j] * 4 * TOPK, 4 * TOPK * sizeof(float));
  }
  ck_assert(pb_store_write_rows(st, 0, 4, odd, &part) == PB_OK);
  ck_assert(pb_store_write_rows(st, 1, 0, odd, &part) == PB_OK); /* nothing for B */
  ck_assert(pb_store_commit(st) == PB_OK);
  pb_store_rows_free(&full);
  pb_store_rows_free(&part);
  ck_assert(pb_store_open(path, MPI_COMM_WORLD, &st) == PB_OK);
  struct pb_rows r;
  const int32_t back[2] = {3, 7};
  ck_assert(pb_store_read_rows(st, 0, 2, back, &r) == PB_OK);
  check_rows(0, 2, back, &r, PB_FIELD_ALL, TOPK);
  pb_store_rows_free(&r);
  pb_store_close(st);
}
END_TEST

/* A new store's record chunks are placed but not written until their
 * records come (src/store/store_skeleton.c): just after pb_store_create its
 * temporary holds the records' bytes as holes, and a chunk never written
 * reads back through HDF5 (which verifies its Fletcher32 sum) as zeros. */
#define SPARSE_IMAGES 65536
START_TEST(test_fill_left_out)
{
  static char *models[2] = {"m0", "m1"}, *groups[2] = {"g", "g"}, *conds[4] = {"clean", "c1", "c2", "c3"};
  char **ids = pb_malloc(SPARSE_IMAGES * sizeof *ids);
  int32_t *labels = pb_calloc(SPARSE_IMAGES, sizeof *labels);
  uint8_t *split = pb_calloc(SPARSE_IMAGES, 1);
  for (int i = 0; i < SPARSE_IMAGES; i++) {
    ids[i] = pb_malloc(8);
    snprintf(ids[i], 8, "i%d", i);
  }
  struct pb_source src = {"S", 3, SPARSE_IMAGES, ids, labels, split, 4, conds, 0, PB_ROLE_REAL, 0, 0, NULL, NULL};
  struct pb_meta meta = {2, models, groups, 1, &src, 2, "sparse test store"};
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("sparse.h5"));
  struct pb_store *st;
  ck_assert_msg(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK, "%s", pb_error_message());
  /* records: 2 models x 4 conditions x 65,536 images x (pred, smax, ptrue, 2 top-k classes and probabilities) */
  const double record_bytes = 2.0 * 4 * SPARSE_IMAGES * 4 * 7;
  char pat[600];
  glob_t g;
  snprintf(pat, sizeof pat, "%s.tmp.*", path);
  ck_assert(glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1);
  struct stat sb;
  ck_assert(stat(g.gl_pathv[0], &sb) == 0);
  ck_assert_msg((double)sb.st_size >= record_bytes, "size %lld", (long long)sb.st_size);
  /* the metadata, image ids, labels and splits: well under a megabyte */
  ck_assert_msg((double)sb.st_blocks * 512 < record_bytes / 8, "%lld bytes allocated of %lld",
                (long long)sb.st_blocks * 512, (long long)sb.st_size);
  globfree(&g);
  /* model 1's rows only: every record valid (label 0, prediction 0, top-2 classes 0 and 1) */
  struct pb_rows d;
  pb_store_rows_alloc(&d, 4, SPARSE_IMAGES, 2);
  for (size_t x = 0; x < (size_t)4 * SPARSE_IMAGES; x++) {
    d.pred[x] = 0, d.smax[x] = d.ptrue[x] = 0.75f;
    d.topk_class[2 * x] = 0, d.topk_class[2 * x + 1] = 1, d.topk_prob[2 * x] = 0.75f, d.topk_prob[2 * x + 1] = 0.25f;
  }
  const int32_t rows[4] = {4, 5, 6, 7};
  ck_assert_msg(pb_store_write_rows(st, 0, 4, rows, &d) == PB_OK, "%s", pb_error_message());
  pb_store_rows_free(&d);
  ck_assert_msg(pb_store_commit(st) == PB_OK, "%s", pb_error_message());
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) { /* HDF5 alone, serially: model 0's smax is zeros that pass the checksum, model 1's 0.75 */
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), ds = H5Dopen2(f, "/sources/S/smax", H5P_DEFAULT);
    float *v = pb_malloc((size_t)2 * 4 * SPARSE_IMAGES * sizeof *v);
    ck_assert(ds >= 0 && H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    for (size_t x = 0; x < (size_t)2 * 4 * SPARSE_IMAGES; x++)
      ck_assert_msg(v[x] == (x < (size_t)4 * SPARSE_IMAGES ? 0.0f : 0.75f), "smax %zu is %g", x, v[x]);
    free(v);
    H5Dclose(ds);
    H5Fclose(f);
  }
  for (int i = 0; i < SPARSE_IMAGES; i++) free(ids[i]);
  free(ids);
  free(labels);
  free(split);
}
END_TEST

START_TEST(test_uncommitted_removed)
{
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("abandoned.h5"));
  struct pb_meta meta;
  hand_meta(&meta);
  struct pb_store *st;
  ck_assert(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK);
  ck_assert(pb_test_temps(path) == 1);
  pb_store_close(st);
  MPI_Barrier(MPI_COMM_WORLD); /* under mpirun: the removal is done before any rank looks */
  ck_assert_msg(pb_test_temps(path) == 0, "uncommitted temporary of %s left behind", path);
  ck_assert(!pb_test_exists(path));
  /* invalid metadata creates nothing */
  meta.model_ids = (char *[]){"m0", "m/1", "m2"};
  pb_error_clear();
  ck_assert(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_FAIL);
  ck_assert(st == NULL);
  ck_assert_str_eq(pb_error_message(),
                   "model name 'm/1' contains a character that is not allowed ('/', ',', '\"' or a newline)");
  ck_assert(pb_test_temps(path) == 0 && !pb_test_exists(path));
}
END_TEST

static void expect_open_error(const char *path, const char *suffix)
{
  struct pb_store *st = (struct pb_store *)1;
  char want[700];
  pb_error_clear();
  ck_assert(pb_store_open(path, MPI_COMM_WORLD, &st) == PB_FAIL);
  ck_assert(st == NULL);
  snprintf(want, sizeof want, "%s%s", path, suffix);
  ck_assert_str_eq(pb_error_message(), want);
}

START_TEST(test_open_errors)
{
  /* missing file */
  expect_open_error(pb_test_path("missing.h5"), ": cannot read file: No such file or directory");
  /* not HDF5; the damaged files are written by one rank (under mpirun -np K) */
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char text[512];
  snprintf(text, sizeof text, "%s", pb_test_path("text.h5"));
  if (rank == 0) {
    FILE *fp = fopen(text, "w");
    fputs("model,group\nnot hdf5 at all\n", fp);
    fclose(fp);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_open_error(text, ": not an HDF5 file");
  /* HDF5 without the format attribute */
  char bare[512];
  snprintf(bare, sizeof bare, "%s", pb_test_path("bare.h5"));
  hid_t f;
  if (rank == 0) {
    f = H5Fcreate(bare, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(f >= 0);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_open_error(bare, ": not a pairbound store");
  /* a store whose schema_version is rewritten to 99 */
  char v99[512];
  snprintf(v99, sizeof v99, "%s", pb_test_path("v99.h5"));
  make_store(v99);
  hid_t a;
  int32_t v = 99;
  if (rank == 0) {
    f = H5Fopen(v99, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(f >= 0);
    a = H5Aopen(f, "schema_version", H5P_DEFAULT);
    ck_assert(a >= 0);
    ck_assert(H5Awrite(a, H5T_NATIVE_INT32, &v) >= 0);
    H5Aclose(a);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_open_error(v99, ": unsupported store schema version 99 (this pairbound reads versions 1 to 3)");
  /* and back to 3: readable again (the rewrite itself did no damage) */
  if (rank == 0) {
    f = H5Fopen(v99, H5F_ACC_RDWR, H5P_DEFAULT);
    a = H5Aopen(f, "schema_version", H5P_DEFAULT);
    v = PB_STORE_SCHEMA_VERSION;
    ck_assert(H5Awrite(a, H5T_NATIVE_INT32, &v) >= 0);
    H5Aclose(a);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  struct pb_store *st;
  ck_assert_msg(pb_store_open(v99, MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  pb_store_close(st);
}
END_TEST

START_TEST(test_meta_validate)
{
  struct pb_meta meta;
  hand_meta(&meta);
  ck_assert(pb_meta_validate(&meta) == PB_OK);
  /* a name with '/' */
  char *bad_groups[NM] = {"gA", "g/B", "gA"};
  meta.model_groups = bad_groups;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(),
                   "group name 'g/B' contains a character that is not allowed ('/', ',', '\"' or a newline)");
  hand_meta(&meta);
  char *bad_cond[3] = {"fog", "clean", "sn,ow"};
  h_src[0].conditions = bad_cond;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(),
                   "condition name 'sn,ow' contains a character that is not allowed ('/', ',', '\"' or a newline)");
  /* a source without 'clean' (the clean index names another condition) */
  hand_meta(&meta);
  char *no_clean[3] = {"fog", "Clean", "snow"};
  h_src[0].conditions = no_clean;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source A has no 'clean' condition");
  hand_meta(&meta);
  h_src[1].clean = 3; /* out of range */
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source B has no 'clean' condition");
  /* a label outside the classes */
  hand_meta(&meta);
  int32_t bad_lab[4] = {0, 3, 1, 2};
  h_src[0].labels = bad_lab;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source A image a2: label 3 outside [0, 3)");
  /* names that identify something are unique (issue 47, item 7) */
  hand_meta(&meta);
  char *dup_models[NM] = {"m0", "m1", "m0"};
  meta.model_ids = dup_models;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "model id 'm0' twice (model ids 0 and 2)");
  hand_meta(&meta);
  h_src[1].name = "A";
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source name 'A' twice (source names 0 and 1)");
  hand_meta(&meta);
  char *two_clean[3] = {"clean", "clean", "snow"};
  h_src[0].conditions = two_clean;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(),
                   "source A: a second condition named 'clean' (conditions 0 and 1): a source has exactly one");
  hand_meta(&meta);
  char *dup_cond[3] = {"clean", "blur", "blur"};
  h_src[1].conditions = dup_cond;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source B: condition 'blur' twice (conditions 1 and 2)");
  hand_meta(&meta);
  char *dup_img[5] = {"b1", "b2", "b3", "b4", "b2"};
  h_src[1].image_ids = dup_img;
  ck_assert(pb_meta_validate(&meta) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "source B: image id 'b2' twice (image ids 1 and 4)");
  /* the same image id in two sources is the same base image, not a repeat */
  hand_meta(&meta);
  char *shared[5] = {"a1", "a2", "b3", "b4", "b5"};
  h_src[1].image_ids = shared;
  ck_assert_msg(pb_meta_validate(&meta) == PB_OK, "%s", pb_error_message());
  hand_meta(&meta);
  ck_assert(pb_meta_validate(&meta) == PB_OK);
}
END_TEST

/* Rank 0 rewrites a label of source A, or deletes or reads an attribute, then every rank waits. */
static void poke_label(const char *path, int32_t value)
{
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD); /* no rank still reads the file rank 0 rewrites */
  if (rank == 0) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "/sources/A/label", H5P_DEFAULT);
    hid_t fs = H5Dget_space(d), ms = H5Screate(H5S_SCALAR);
    hsize_t at = 0, one = 1;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &at, NULL, &one, NULL);
    ck_assert(H5Dwrite(d, H5T_NATIVE_INT32, ms, fs, H5P_DEFAULT, &value) >= 0);
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The xxh3_128 attribute of @p obj (every rank reads it). */
static void read_sum(const char *path, const char *obj, char hex[33])
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), a = H5Aopen_by_name(f, obj, "xxh3_128", H5P_DEFAULT, H5P_DEFAULT);
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, 33);
  memset(hex, 0, 33);
  ck_assert_msg(a >= 0 && H5Aread(a, t, hex) >= 0, "no checksum on %s", obj);
  H5Tclose(t), H5Aclose(a), H5Fclose(f);
}

static void expect_sum(const char *path, const char *obj, const void *bytes, size_t n)
{
  char have[33], want[65];
  read_sum(path, obj, have);
  pb_checksum_xxh128_hex(bytes, n, want);
  ck_assert_msg(!strcmp(have, want), "%s: stored %s, canonical bytes %s", obj, have, want);
}

/* Metadata checksums (issue 47, item 6; docs/store.md, "Integrity"): written as the XXH3-128 of the canonical
 * bytes written out here by hand, and a changed value that breaks no rule (label 0 -> 1 < 3 classes) or a missing
 * checksum is refused at open, naming the object; a store of schema 1 has none and opens. */
START_TEST(test_meta_checksums)
{
  char path[512];
  snprintf(path, sizeof path, "%s", pb_test_path("sums.h5"));
  make_store(path);
  expect_sum(path, "/", "format pairbound-store\nschema_version 3\ntopk 2\n", 47);
  expect_sum(path, "/models/id", "m0\0m1\0m2", 9);
  expect_sum(path, "/models/group", "gA\0gB\0gA", 9);
  expect_sum(path, "/source_names", "A\0B", 4);
  expect_sum(path, "/sources/A", "n_classes 3\nclean_index 1\n", 26);
  expect_sum(path, "/sources/B/image_id", "b1\0b2\0b3\0b4\0b5", 15);
  expect_sum(path, "/sources/A/label", "\0\0\0\0\2\0\0\0\1\0\0\0\2\0\0", 16);
  expect_sum(path, "/sources/B/split", "\1\0\1\1", 5);
  expect_sum(path, "/sources/A/condition", "fog\0clean\0snow", 15);
  char old[33], want[700], now[65];
  read_sum(path, "/sources/A/label", old);
  poke_label(path, 1);
  pb_checksum_xxh128_hex("\1\0\0\0\2\0\0\0\1\0\0\0\2\0\0", 16, now);
  snprintf(want, sizeof want,
           ": damaged metadata: sources/A/label: values do not match their checksum (XXH3-128 %s, stored %s)", now,
           old);
  expect_open_error(path, want);
  poke_label(path, 0);
  struct pb_store *st;
  ck_assert_msg(pb_store_open(path, MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  pb_store_close(st);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* no rank has the file open while rank 0 rewrites it (HDF5's file lock would refuse the write) */
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) {
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(H5Adelete_by_name(f, "/sources/B/condition", "xxh3_128", H5P_DEFAULT) >= 0);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  expect_open_error(path, ": damaged metadata: sources/B/condition: no checksum (attribute xxh3_128)");
  /* schema_version 3 -> 1 with the checksums kept: the root's checksum (which covers it) says it was 3 */
  hid_t f;
  char root[33];
  read_sum(path, "/", root);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank has read it before rank 0 rewrites the file */
  if (rank == 0) {
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "schema_version", H5P_DEFAULT);
    const int32_t v = 1;
    ck_assert(H5Awrite(a, H5T_NATIVE_INT32, &v) >= 0);
    H5Aclose(a), H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  pb_checksum_xxh128_hex("format pairbound-store\nschema_version 1\ntopk 2\n", 47, now);
  snprintf(want, sizeof want, ": damaged metadata: the attributes of the root: values do not match their checksum "
           "(XXH3-128 %s, stored %s)", now, root);
  expect_open_error(path, want);
  if (rank == 0) { /* schema 1 without a root checksum: none compared (the changed label is read as it is) */
    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(H5Adelete(f, "xxh3_128") >= 0);
    H5Fclose(f);
  }
  poke_label(path, 1);
  ck_assert_msg(pb_store_open(path, MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(pb_store_meta(st)->sources[0].labels[0], 1);
  pb_store_close(st);
}
END_TEST

START_TEST(test_meta_counts)
{
  struct pb_meta meta;
  hand_meta(&meta);
  /* A: 3 models x 2 perturbed conditions; B: 3 x 2 */
  ck_assert_int_eq(pb_meta_cells(&meta), 12);
  /* A: 6 cells x 2 evaluation images; B: 6 cells x 3 */
  ck_assert_int_eq(pb_meta_paired_records(&meta), 6 * 2 + 6 * 3);
}
END_TEST

/* Every loaded cell holds exactly its evaluation records, paired with the
 * same model's clean records, indexed here from what was written. */
static void check_block_selected(const struct pb_cell_block *b, int64_t first, int64_t last, int fields,
                                 const uint8_t *want);

static void check_block(const struct pb_cell_block *b, int64_t first, int64_t last, int fields)
{
  check_block_selected(b, first, last, fields, NULL);
}

/* Cells not wanted keep their identity but carry no records. */
static void check_block_selected(const struct pb_cell_block *b, int64_t first, int64_t last, int fields,
                                 const uint8_t *want)
{
  /* global cell list by hand: A (m, fog), (m, snow) for m = 0..2, then B (m, blur), (m, lo w) */
  const int cs[12] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
  const int cm[12] = {0, 0, 1, 1, 2, 2, 0, 0, 1, 1, 2, 2};
  const int cc[12] = {0, 2, 0, 2, 0, 2, 1, 2, 1, 2, 1, 2};
  const int evalA[2] = {1, 2}, evalB[3] = {0, 2, 3};
  ck_assert_int_eq(b->first, first);
  ck_assert_int_eq(b->n_cells, last - first);
  for (int64_t c = first; c < last; c++) {
    const struct pb_cell_data *d = &b->cells[c - first];
    int s = cs[c], m = cm[c], cond = cc[c];
    ck_assert_int_eq(d->index, c);
    ck_assert_int_eq(d->ref.source, s);
    ck_assert_int_eq(d->ref.model, m);
    ck_assert_int_eq(d->ref.condition, cond);
    if (want && !want[c - first]) {
      ck_assert_int_eq(d->n, 0);
      ck_assert(d->pred0 == NULL && d->pred1 == NULL && d->s0 == NULL && d->m1 == NULL);
      continue;
    }
    int n = s == 0 ? 2 : 3;
    const int *ev = s == 0 ? evalA : evalB;
    const int32_t *lab = s == 0 ? h_labA : h_labB;
    ck_assert_int_eq(d->n, n);
    int ncond = 3, clean = s == 0 ? 1 : 0;
    int r0 = m * ncond + clean, r1 = m * ncond + cond;
    for (int k = 0; k < n; k++) {
      int i = ev[k];
      ck_assert_int_eq(d->label[k], lab[i]);
      ck_assert_msg(d->pred0[k] == v_pred(s, r0, i), "cell %lld image %d: pred0", (long long)c, i);
      ck_assert_msg(d->pred1[k] == v_pred(s, r1, i), "cell %lld image %d: pred1", (long long)c, i);
      if (fields & PB_FIELD_SMAX) {
        ck_assert(d->s0[k] == v_smax(s, r0, i));
        ck_assert(d->s1[k] == v_smax(s, r1, i));
      } else {
        ck_assert(d->s0 == NULL && d->s1 == NULL);
      }
      if (fields & PB_FIELD_PTRUE) {
        ck_assert(d->m0[k] == v_ptrue(s, r0, i));
        ck_assert(d->m1[k] == v_ptrue(s, r1, i));
      } else {
        ck_assert(d->m0 == NULL && d->m1 == NULL);
      }
    }
  }
}

START_TEST(test_cells_load)
{
  struct pb_store *st;
  ck_assert(pb_store_open(store_path(), MPI_COMM_WORLD, &st) == PB_OK);
  struct pb_cell_block b;
  ck_assert(pb_cells_load(st, 0, 12, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, &b) == PB_OK);
  check_block(&b, 0, 12, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE);
  pb_cells_free(&b);
  /* a range crossing the source boundary, without smax */
  ck_assert(pb_cells_load(st, 3, 8, PB_FIELD_PRED | PB_FIELD_PTRUE, &b) == PB_OK);
  check_block(&b, 3, 8, PB_FIELD_PRED | PB_FIELD_PTRUE);
  pb_cells_free(&b);
  /* a range inside B only, with the top-k bit (ignored by cells) */
  ck_assert(pb_cells_load(st, 9, 11, PB_FIELD_ALL, &b) == PB_OK);
  check_block(&b, 9, 11, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE);
  pb_cells_free(&b);
  /* selected cells only: every third cell of a range crossing the sources, then none */
  uint8_t want[10];
  for (int i = 0; i < 10; i++) want[i] = i % 3 == 1;
  ck_assert(pb_cells_load_selected(st, 1, 11, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, want, &b) == PB_OK);
  check_block_selected(&b, 1, 11, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, want);
  pb_cells_free(&b);
  memset(want, 0, sizeof want);
  ck_assert(pb_cells_load_selected(st, 1, 11, PB_FIELD_PRED, want, &b) == PB_OK);
  check_block_selected(&b, 1, 11, PB_FIELD_PRED, want);
  pb_cells_free(&b);
  /* an empty range */
  ck_assert(pb_cells_load(st, 5, 5, PB_FIELD_PRED, &b) == PB_OK);
  ck_assert_int_eq(b.n_cells, 0);
  pb_cells_free(&b);
  pb_store_close(st);
}
END_TEST

/* Pieces of [first, last), @p piece_bytes of records each, read in batches of
 * @p batch_bytes: together they tile the range in order, each within its
 * range of models, and each piece's cells hold their own records
 * (check_block), whatever the pieces before them left in the reused buffers. */
static void check_stream(struct pb_store *st, int64_t first, int64_t last, int fields, size_t piece_bytes,
                         size_t batch_bytes)
{
  const struct pb_meta *meta = pb_store_meta(st);
  struct pb_cells_stream cs;
  pb_cells_stream_open(st, MPI_COMM_WORLD, first, last, fields, &cs);
  cs.piece_bytes = piece_bytes;
  cs.batch_bytes = batch_bytes;
  int64_t next = first;
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const int32_t n = pb_cells_stream_pieces(&cs, s);
    for (int32_t j = 0; j < n; j++) {
      ck_assert(pb_cells_stream_load(&cs, j) == PB_OK);
      const struct pb_cell_block *b = &cs.block;
      if (b->n_cells == 0) continue;
      ck_assert_int_eq(b->first, next);
      for (int64_t c = 0; c < b->n_cells; c++) {
        ck_assert_int_eq(b->cells[c].ref.source, s);
        ck_assert(b->cells[c].ref.model >= cs.m_lo + j * cs.per && b->cells[c].ref.model < cs.m_lo + (j + 1) * cs.per);
      }
      check_block(b, b->first, b->first + b->n_cells, fields);
      next = b->first + b->n_cells;
    }
  }
  ck_assert_int_eq(next, last);
  pb_cells_stream_close(&cs);
}

START_TEST(test_cells_stream)
{
  struct pb_store *st;
  ck_assert(pb_store_open(store_path(), MPI_COMM_WORLD, &st) == PB_OK);
  ck_assert_int_eq(pb_store_meta(st)->n_models, 3);
  /* one model per piece and per read; two models per piece; the defaults (a piece per source) */
  const size_t piece[3] = {1, 2 * 3 * 3 * 4 * 3, 64 << 20}, batch[3] = {1, 1, 4 << 20};
  for (int k = 0; k < 3; k++) {
    check_stream(st, 0, 12, PB_FIELD_PRED | PB_FIELD_SMAX | PB_FIELD_PTRUE, piece[k], batch[k]);
    check_stream(st, 3, 8, PB_FIELD_PRED | PB_FIELD_PTRUE, piece[k], batch[k]); /* across the sources, no smax */
    check_stream(st, 9, 11, PB_FIELD_ALL, piece[k], batch[k]);                  /* inside B, top-k bit ignored */
    check_stream(st, 5, 5, PB_FIELD_PRED, piece[k], batch[k]);                  /* nothing */
    /* each rank its own share, as a stage has them: the ranks' piece counts differ */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_stream(st, 12 * rank / size, 12 * (rank + 1) / size, PB_FIELD_PRED | PB_FIELD_SMAX, piece[k], batch[k]);
  }
  /* at most the models there are: source A's model is 3 conditions x 2 evaluation images x 4 bytes a field */
  struct pb_cells_stream cs;
  pb_cells_stream_open(st, MPI_COMM_WORLD, 0, 12, PB_FIELD_PRED, &cs);
  ck_assert_int_eq(pb_cells_stream_pieces(&cs, 0), 1);
  ck_assert_int_eq(cs.per, 3);
  pb_cells_stream_close(&cs);
  pb_store_close(st);
}
END_TEST

/* ------------------------------------------------- metadata between ranks
 * The hand-made metadata with everything a store can hold set (label sets on
 * B, roles, seed values, a name with a comma, a blank and UTF-8, an empty
 * provenance), packed on rank 0 and sent to every rank, must come back equal
 * field by field (pairbound/pack.h: ingest's dictionaries after pass 1). */
static int64_t h_loff[6] = {0, 2, 2, 3, 5, 6};
static int32_t h_lids[6] = {0, 3, 1, 1, 2, 0};
static char *h_models2[NM] = {"m0", "m,1 \xc3\xa9", "m2"};

static void hand_meta_full(struct pb_meta *m)
{
  hand_meta(m);
  m->model_ids = h_models2;
  h_src[1].lset_off = h_loff;
  h_src[1].lset_ids = h_lids;
  h_src[1].role = PB_ROLE_EXTRA;
  h_src[1].role_declared = 1;
  h_src[1].role_of = "A";
  h_src[0].role = PB_ROLE_SYNTHETIC;
  h_src[0].role_fixed = 2;
  h_src[0].seed_values = "auroc:0.91, cov:0.6";
  m->provenance = "";
  m->seed_values = "t4_plus:0.25";
  m->schema_version = 3;
  m->summaries = PB_SUMMARY_ENTROPY | PB_SUMMARY_COLLISION;
}

static void same_str(const char *a, const char *b)
{
  ck_assert_msg((a == NULL) == (b == NULL), "NULL against '%s'", a ? a : b);
  if (a) ck_assert_str_eq(a, b);
}

static void same_meta(const struct pb_meta *a, const struct pb_meta *b)
{
  ck_assert_int_eq(a->n_models, b->n_models);
  for (int32_t i = 0; i < a->n_models; i++) {
    ck_assert_str_eq(a->model_ids[i], b->model_ids[i]);
    ck_assert_str_eq(a->model_groups[i], b->model_groups[i]);
  }
  ck_assert_int_eq(a->n_sources, b->n_sources);
  for (int32_t s = 0; s < a->n_sources; s++) {
    const struct pb_source *x = &a->sources[s], *y = &b->sources[s];
    ck_assert_str_eq(x->name, y->name);
    ck_assert_int_eq(x->n_classes, y->n_classes);
    ck_assert_int_eq(x->n_images, y->n_images);
    for (int32_t i = 0; i < x->n_images; i++) {
      ck_assert_str_eq(x->image_ids[i], y->image_ids[i]);
      ck_assert_int_eq(x->labels[i], y->labels[i]);
      ck_assert_int_eq(x->split[i], y->split[i]);
    }
    ck_assert_int_eq(x->n_conditions, y->n_conditions);
    for (int32_t c = 0; c < x->n_conditions; c++) ck_assert_str_eq(x->conditions[c], y->conditions[c]);
    ck_assert_int_eq(x->clean, y->clean);
    ck_assert_int_eq(x->role, y->role);
    ck_assert_int_eq(x->role_declared, y->role_declared);
    ck_assert_int_eq(x->role_fixed, y->role_fixed);
    same_str(x->role_of, y->role_of);
    same_str(x->seed_values, y->seed_values);
    ck_assert_int_eq(x->lset_off == NULL, y->lset_off == NULL);
    for (int32_t i = 0; x->lset_off && i <= x->n_images; i++) ck_assert_int_eq(x->lset_off[i], y->lset_off[i]);
    for (int64_t j = 0; x->lset_off && j < x->lset_off[x->n_images]; j++) ck_assert_int_eq(x->lset_ids[j], y->lset_ids[j]);
  }
  ck_assert_int_eq(a->topk, b->topk);
  same_str(a->provenance, b->provenance);
  ck_assert_int_eq(a->schema_version, b->schema_version);
  same_str(a->seed_values, b->seed_values);
  ck_assert_int_eq(a->summaries, b->summaries);
}

START_TEST(test_meta_pack)
{
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct pb_meta want, got;
  struct pb_pack p = {0};
  hand_meta_full(&want);
  if (rank == 0) pb_pack_meta(&p, &want);
  ck_assert_int_eq(pb_pack_bcast(&p, 0, MPI_COMM_WORLD), MPI_SUCCESS);
  ck_assert_msg(pb_pack_get_meta(&p, &got) == PB_OK, "%s", pb_error_message());
  ck_assert_uint_eq(p.at, p.n); /* every byte read, none left over */
  same_meta(&got, &want);
  pb_meta_free(&got);
  /* a buffer cut short anywhere is refused, with nothing left allocated (valgrind, ASan) */
  const size_t cuts[4] = {0, 1, p.n / 2, p.n - 1};
  for (int c = 0; c < 4; c++) {
    struct pb_pack q = {.buf = p.buf, .n = cuts[c], .cap = cuts[c]};
    ck_assert_int_eq(pb_pack_get_meta(&q, &got), PB_FAIL);
    ck_assert_str_eq(pb_error_message(), "metadata from another rank: buffer too short");
  }
  pb_pack_free(&p);
  /* a count is believed only when the bytes it announces follow: 2 items of 4 bytes after it, then 3 */
  struct pb_pack c = {0};
  pb_pack_i64(&c, 2);
  pb_pack_i64(&c, 0); /* 8 bytes */
  ck_assert(pb_pack_get_count(&c, 4) == 2 && !c.short_read);
  c.at = 0;
  ck_assert(pb_pack_get_count(&c, 5) == 0 && c.short_read); /* 2 x 5 > 8 */
  pb_pack_free(&c);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("store");
  TCase *tc = tcase_create("store");
  tcase_add_test(tc, test_metadata_round_trip);
  tcase_add_test(tc, test_read_subsets);
  tcase_add_test(tc, test_cells_stream);
  tcase_add_test(tc, test_row_errors);
  tcase_add_test(tc, test_partial_write);
  tcase_add_test(tc, test_fill_left_out);
  tcase_add_test(tc, test_uncommitted_removed);
  tcase_add_test(tc, test_open_errors);
  suite_add_tcase(s, tc);
  tc = tcase_create("meta_cells");
  tcase_add_test(tc, test_meta_validate);
  tcase_add_test(tc, test_meta_checksums);
  tcase_add_test(tc, test_meta_counts);
  tcase_add_test(tc, test_meta_pack);
  tcase_add_test(tc, test_cells_load);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
