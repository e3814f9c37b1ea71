/* libFuzzer harness: the store reader on stores whose record values come from
 * the fuzzer.  HDF5's own file parser is not what is tested (a flipped byte in
 * its structures is HDF5's business, and a flipped byte in our chunks fails
 * their Fletcher32 checksum, tests/mpi/check.sh); what is tested is that any
 * values and any `topk` attribute written through HDF5 are either read back
 * valid or refused with a message, by the cell loader, export and check.
 * An input starting with 'M' also flips bits in the metadata as stored -- the
 * values of every metadata dataset and attribute, their checksums, the roles
 * -- and a store that still opens must hold exactly the metadata written
 * (roles aside: they carry no checksum).  One starting with 'V' is a
 * metadata of its own, names from a three-letter alphabet so that repeats are
 * common, given to pb_meta_validate: what it accepts has unique names, one
 * clean condition per source and roles naming sources (checked here). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/cells.h"
#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/store.h"
#include "pairbound/strmap.h"
#include "store/store_internal.h"

#define N_IMG 6
#define N_COND 2
#define N_MOD 2
#define TOPK 2

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  MPI_Init(argc, argv);
  pb_log_init(0, 0);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return 0;
}

static char *sdup(const char *s) { return strcpy(malloc(strlen(s) + 1), s); }

static void make_meta(struct pb_meta *m)
{
  static const char *img[N_IMG] = {"a", "b", "c", "d", "e", "f"};
  memset(m, 0, sizeof *m);
  m->n_models = N_MOD;
  m->model_ids = malloc(N_MOD * sizeof(char *));
  m->model_groups = malloc(N_MOD * sizeof(char *));
  m->model_ids[0] = sdup("m0");
  m->model_ids[1] = sdup("m1");
  m->model_groups[0] = sdup("g0");
  m->model_groups[1] = sdup("g1");
  m->n_sources = 1;
  m->topk = TOPK;
  m->provenance = sdup("fuzz");
  struct pb_source *s = m->sources = calloc(1, sizeof *s);
  s->name = sdup("Syn");
  s->n_classes = 4;
  s->n_images = N_IMG;
  s->image_ids = malloc(N_IMG * sizeof(char *));
  s->labels = malloc(N_IMG * sizeof(int32_t));
  s->split = malloc(N_IMG);
  for (int i = 0; i < N_IMG; i++) {
    s->image_ids[i] = sdup(img[i]);
    s->labels[i] = i % 4;
    s->split[i] = i % 2 ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  }
  s->n_conditions = N_COND;
  s->conditions = malloc(N_COND * sizeof(char *));
  s->conditions[0] = sdup("clean");
  s->conditions[1] = sdup("blur");
  s->clean = 0;
}

/* Bytes to values: mostly valid records, with every rule broken now and then. */
static float prob(uint8_t b) { return b == 255 ? NAN : b == 254 ? -0.5f : (float)b / 200.0f; }

static void fill(struct pb_rows *d, const uint8_t *data, size_t size)
{
  size_t at = 0;
#define NEXT() (size ? data[at++ % size] : 0)
  for (int64_t k = 0; k < (int64_t)N_MOD * N_COND * N_IMG; k++) {
    d->pred[k] = (int32_t)(NEXT() % 7) - 1;
    d->smax[k] = prob(NEXT());
    d->ptrue[k] = prob(NEXT());
    for (int j = 0; j < TOPK; j++) {
      d->topk_class[k * TOPK + j] = (int32_t)(NEXT() % 7) - 1;
      d->topk_prob[k * TOPK + j] = prob(NEXT());
    }
  }
#undef NEXT
}


/* Flip bit (b % 8) of stored byte (at % size) of the value of dataset or attribute @p name of @p obj, behind
 * HDF5's back for a dataset (its contiguous data in the file), through it for an attribute (read and written in
 * its own type, no conversion). */
static void flip_dataset(const char *path, const char *name, unsigned at, unsigned b)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, name, H5P_DEFAULT);
  const haddr_t addr = H5Dget_offset(d);
  const hsize_t size = H5Dget_storage_size(d);
  H5Dclose(d);
  H5Fclose(f);
  if (addr == HADDR_UNDEF || size == 0) abort();
  FILE *fp = fopen(path, "r+b");
  fseek(fp, (long)(addr + at % size), SEEK_SET);
  int c = fgetc(fp);
  fseek(fp, (long)(addr + at % size), SEEK_SET);
  fputc(c ^ (1 << (b % 8)), fp);
  fclose(fp);
}

static void flip_attr(const char *path, const char *obj, const char *name, unsigned at, unsigned b)
{
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), o = H5Oopen(f, obj, H5P_DEFAULT);
  hid_t a = H5Aopen(o, name, H5P_DEFAULT), t = H5Aget_type(a), sp = H5Aget_space(a);
  const size_t n = (size_t)H5Sget_simple_extent_npoints(sp) * H5Tget_size(t);
  unsigned char *buf = calloc(n, 1);
  if (H5Aread(a, t, buf) < 0) abort();
  buf[at % n] ^= (unsigned char)(1 << (b % 8));
  H5Awrite(a, t, buf);
  free(buf);
  H5Sclose(sp), H5Tclose(t), H5Aclose(a), H5Oclose(o), H5Fclose(f);
}

/* The metadata an 'M' input flips: datasets, then attributes (object, name). */
static const char *const flip_dsets[] = {"/models/id", "/models/group", "/source_names", "/sources/Syn/image_id",
                                         "/sources/Syn/label", "/sources/Syn/split", "/sources/Syn/condition"};
static const char *const flip_attrs[][2] = {
    {"/", "format"},         {"/", "schema_version"},       {"/", "topk"},
    {"/", "roles"},          {"/sources/Syn", "n_classes"}, {"/sources/Syn", "clean_index"},
    {"/", "xxh3_128"},       {"/models/id", "xxh3_128"},    {"/sources/Syn", "xxh3_128"},
    {"/sources/Syn/label", "xxh3_128"}};

static void flip_meta(const char *path, const uint8_t *data, size_t size)
{
  const size_t nd = sizeof flip_dsets / sizeof *flip_dsets, na = sizeof flip_attrs / sizeof *flip_attrs;
  for (size_t i = 1; i + 2 < size && i < 1 + 3 * 8; i += 3) { /* at most 8 flips */
    const unsigned which = data[i] % (nd + na), at = data[i + 1], b = data[i + 2];
    if (which < nd) flip_dataset(path, flip_dsets[which], at, b);
    else flip_attr(path, flip_attrs[which - nd][0], flip_attrs[which - nd][1], at, b);
  }
}

static int same_strings(char *const *a, char *const *b, int32_t n)
{
  for (int32_t i = 0; i < n; i++)
    if (strcmp(a[i], b[i]) != 0) return 0;
  return 1;
}

/* Whether a store that opened holds the metadata written (roles aside). */
static int same_meta(const struct pb_meta *a, const struct pb_meta *b)
{
  if (a->n_models != b->n_models || a->n_sources != b->n_sources || a->topk != b->topk) return 0;
  if (!same_strings(a->model_ids, b->model_ids, a->n_models) ||
      !same_strings(a->model_groups, b->model_groups, a->n_models))
    return 0;
  for (int32_t s = 0; s < a->n_sources; s++) {
    const struct pb_source *x = &a->sources[s], *y = &b->sources[s];
    if (strcmp(x->name, y->name) || x->n_classes != y->n_classes || x->clean != y->clean ||
        x->n_images != y->n_images || x->n_conditions != y->n_conditions)
      return 0;
    if (!same_strings(x->image_ids, y->image_ids, x->n_images) ||
        !same_strings(x->conditions, y->conditions, x->n_conditions) ||
        memcmp(x->labels, y->labels, (size_t)x->n_images * sizeof *x->labels) ||
        memcmp(x->split, y->split, (size_t)x->n_images))
      return 0;
  }
  return 1;
}

/* Names from three letters, so that a short input repeats some. */
static char *tiny_name(const uint8_t **p, const uint8_t *end)
{
  static const char *const names[] = {"a", "b", "clean"};
  const char *n = names[*p < end ? *(*p)++ % 3 : 0];
  return sdup(n);
}

static void validate_meta(const uint8_t *data, size_t size)
{
  const uint8_t *p = data + 1, *end = data + size;
#define NEXT() (p < end ? *p++ : 0)
  struct pb_meta m;
  memset(&m, 0, sizeof m);
  m.n_models = 1 + NEXT() % 3;
  m.model_ids = malloc((size_t)m.n_models * sizeof(char *));
  m.model_groups = malloc((size_t)m.n_models * sizeof(char *));
  for (int32_t i = 0; i < m.n_models; i++) m.model_ids[i] = tiny_name(&p, end), m.model_groups[i] = sdup("g");
  m.n_sources = 1 + NEXT() % 3;
  m.sources = calloc((size_t)m.n_sources, sizeof *m.sources);
  for (int32_t s = 0; s < m.n_sources; s++) {
    struct pb_source *src = &m.sources[s];
    src->name = tiny_name(&p, end);
    src->n_classes = 1 + NEXT() % 3;
    src->n_images = 1 + NEXT() % 3;
    src->image_ids = malloc((size_t)src->n_images * sizeof(char *));
    src->labels = malloc((size_t)src->n_images * sizeof(int32_t));
    src->split = malloc((size_t)src->n_images);
    for (int32_t i = 0; i < src->n_images; i++) {
      src->image_ids[i] = tiny_name(&p, end);
      src->labels[i] = NEXT() % 4;
      src->split[i] = NEXT() % 3;
    }
    src->n_conditions = 1 + NEXT() % 3;
    src->conditions = malloc((size_t)src->n_conditions * sizeof(char *));
    for (int32_t c = 0; c < src->n_conditions; c++) src->conditions[c] = tiny_name(&p, end);
    src->clean = NEXT() % src->n_conditions;
    const int role = NEXT() % 4;
    if (role == 3) {
      char text[16];
      snprintf(text, sizeof text, "extra:%s", "ab"[NEXT() % 2] == 'a' ? "a" : "b");
      pb_meta_role_parse(src, text);
    } else if (role) {
      pb_meta_role_parse(src, role == 1 ? "synthetic" : "natural");
    }
  }
#undef NEXT
  pb_meta_infer_roles(&m);
  pb_error_clear();
  if (pb_meta_validate(&m) == PB_OK) {
    struct pb_strmap seen;
    pb_strmap_init(&seen);
    for (int32_t i = 0; i < m.n_models; i++)
      if (pb_strmap_put(&seen, m.model_ids[i], i) != i) abort();
    pb_strmap_free(&seen);
    for (int32_t s = 0; s < m.n_sources; s++) {
      const struct pb_source *src = &m.sources[s];
      int clean = 0;
      for (int32_t t = 0; t < s; t++)
        if (!strcmp(m.sources[t].name, src->name)) abort();
      for (int32_t c = 0; c < src->n_conditions; c++) {
        clean += !strcmp(src->conditions[c], "clean");
        for (int32_t d = 0; d < c; d++)
          if (!strcmp(src->conditions[c], src->conditions[d])) abort();
      }
      for (int32_t i = 0; i < src->n_images; i++)
        for (int32_t j = 0; j < i; j++)
          if (!strcmp(src->image_ids[i], src->image_ids[j])) abort();
      if (clean != 1 || strcmp(src->conditions[src->clean], "clean")) abort();
      if (src->role == PB_ROLE_EXTRA && pb_meta_find_source(&m, src->role_of) < 0) abort();
    }
  } else if (!pb_error_message()[0]) {
    abort();
  }
  pb_meta_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[64], csv[64];
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/pbfuzz_store.%d.h5", (int)getpid());
    snprintf(csv, sizeof csv, "/tmp/pbfuzz_store.%d.csv", (int)getpid());
  }
  if (size > 0 && data[0] == 'V') {
    validate_meta(data, size);
    return 0;
  }
  struct pb_meta meta;
  make_meta(&meta);
  struct pb_rows d;
  pb_store_rows_alloc(&d, N_MOD * N_COND, N_IMG, TOPK);
  fill(&d, data, size);
  int32_t rows[N_MOD * N_COND];
  for (int r = 0; r < N_MOD * N_COND; r++) rows[r] = r;
  struct pb_store *st = NULL;
  if (pb_store_create(path, MPI_COMM_SELF, &meta, &st) || pb_store_write_rows(st, 0, N_MOD * N_COND, rows, &d) ||
      pb_store_commit(st))
    abort();
  if (size > 0 && data[0] == 'K') { /* a topk attribute that lies about the datasets, behind a valid checksum */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "topk", H5P_DEFAULT);
    int k = size > 1 ? data[1] % 6 : 3;
    H5Awrite(a, H5T_NATIVE_INT, &k);
    H5Aclose(a);
    meta.topk = k; /* so that the shape checks, not the root's checksum, answer */
    if (pb_store__digests_write(f, &meta, PB_STORE_SCHEMA_VERSION) != PB_OK) abort();
    meta.topk = TOPK;
    H5Fclose(f);
  }
  if (size > 0 && data[0] == 'M') flip_meta(path, data, size);
  pb_error_clear();
  if (pb_store_open(path, MPI_COMM_SELF, &st) == PB_OK) {
    /* accepted: exactly what was written (the checksums and the structural checks leave nothing else) */
    if (!same_meta(&meta, pb_store_meta(st))) abort();
    struct pb_cell_block b;
    if (pb_cells_load(st, 0, pb_meta_cells(pb_store_meta(st)), PB_FIELD_ALL, &b) == PB_OK) {
      /* what was accepted must satisfy every rule the kernels rely on */
      for (int64_t c = 0; c < b.n_cells; c++)
        for (int32_t i = 0; i < b.cells[c].n; i++)
          if (b.cells[c].pred1[i] < 0 || b.cells[c].pred1[i] >= 4 || !(b.cells[c].s1[i] <= 1.0f)) abort();
      pb_cells_free(&b);
    } else if (!pb_error_message()[0]) abort();
    pb_store_close(st);
  }
  if (pb_export_csv(path, csv, MPI_COMM_SELF) == PB_OK) unlink(csv);
  int64_t bad;
  FILE *null = fopen("/dev/null", "w");
  pb_store_check(path, MPI_COMM_SELF, 10, null, &bad);
  fclose(null);
  pb_store_rows_free(&d);
  pb_meta_free(&meta);
  unlink(path);
  return 0;
}
