/* libFuzzer harness: the store reader on stores whose record values come from
 * the fuzzer.  HDF5's own file parser is not what is tested (a flipped byte in
 * its structures is HDF5's business, and a flipped byte in our chunks fails
 * their Fletcher32 checksum, tests/mpi/check.sh); what is tested is that any
 * values and any `topk` attribute written through HDF5 are either read back
 * valid or refused with a message, by the cell loader, export and check. */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[64], csv[64];
  if (!path[0]) {
    snprintf(path, sizeof path, "/tmp/pbfuzz_store.%d.h5", (int)getpid());
    snprintf(csv, sizeof csv, "/tmp/pbfuzz_store.%d.csv", (int)getpid());
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
  if (size > 0 && data[0] == 'K') { /* a topk attribute that lies about the datasets */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    hid_t a = H5Aopen(f, "topk", H5P_DEFAULT);
    int k = size > 1 ? data[1] % 6 : 3;
    H5Awrite(a, H5T_NATIVE_INT, &k);
    H5Aclose(a);
    H5Fclose(f);
  }
  pb_error_clear();
  if (pb_store_open(path, MPI_COMM_SELF, &st) == PB_OK) {
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
