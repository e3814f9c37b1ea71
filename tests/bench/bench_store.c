/* Store read speed by layout (docs/store.md, "Layout"): writes record
 * datasets of the paper store's shapes (pred int32, smax and ptrue float32 of
 * [models][conditions][images] for sources of 19x10,000, 19x1,000, 55x1,000 and
 * 163x1,000) in several chunk layouts, then times reading every record back from
 * the page cache the way the stages do: collective hyperslab reads, one per
 * model slab of a source, or one per dataset.
 *   usage: mpirun -np K bench_store DIR [MODELS] [REPEAT]
 * prints one line per (layout, read mode): median seconds and GB/s. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#define BENCH_SEED 16
#include "benchutil.h"

struct layout {
  const char *name;
  int rows_per_chunk;  /* conditions per chunk; 0 = aim at TARGET bytes; -1 = contiguous */
  int fletcher;
};

#define TARGET (256 << 10)
static const int32_t conds[] = {19, 19, 55, 163}, images[] = {10000, 1000, 1000, 1000};
#define NSRC 4
static const char *names[] = {"pred", "smax", "ptrue"};

static hid_t fapl(MPI_Comm comm)
{
  hid_t p = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_fapl_mpio(p, comm, MPI_INFO_NULL);
  H5Pset_all_coll_metadata_ops(p, 1);
  H5Pset_coll_metadata_write(p, 1);
  return p;
}

static hid_t xfer(int collective)
{
  hid_t p = H5Pcreate(H5P_DATASET_XFER);
  H5Pset_dxpl_mpio(p, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
  return p;
}

/* Model range of this rank: a block distribution of the models. */
static void share(int32_t n, int rank, int size, int32_t *lo, int32_t *hi)
{
  *lo = (int32_t)((int64_t)n * rank / size);
  *hi = (int32_t)((int64_t)n * (rank + 1) / size);
}

static void write_file(const char *path, const struct layout *L, int32_t M, MPI_Comm comm, int rank, int size)
{
  hid_t fa = fapl(comm), f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fa), dx = xfer(1);
  int32_t lo, hi;
  share(M, rank, size, &lo, &hi);
  for (int s = 0; s < NSRC; s++) {
    char g[16];
    snprintf(g, sizeof g, "s%d", s);
    hid_t grp = H5Gcreate2(f, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[3] = {(hsize_t)M, (hsize_t)conds[s], (hsize_t)images[s]};
    int rows = L->rows_per_chunk ? L->rows_per_chunk : (int)(TARGET / (4 * images[s]));
    if (rows < 1) rows = 1;
    if (rows > conds[s]) rows = conds[s];
    hsize_t chunk[3] = {1, (hsize_t)rows, (hsize_t)images[s]};
    size_t n = (size_t)(hi - lo) * conds[s] * images[s];
    float *buf = malloc((n ? n : 1) * sizeof *buf);
    for (size_t k = 0; k < n; k++) buf[k] = (float)unif();
    for (int d = 0; d < 3; d++) {
      hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), space = H5Screate_simple(3, dims, NULL);
      if (L->rows_per_chunk >= 0) H5Pset_chunk(dcpl, 3, chunk);
      if (L->fletcher) H5Pset_fletcher32(dcpl);
      H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);
      H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_EARLY);
      hid_t ds = H5Dcreate2(grp, names[d], d == 0 ? H5T_STD_I32LE : H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl,
                            H5P_DEFAULT);
      hsize_t start[3] = {(hsize_t)lo, 0, 0}, count[3] = {(hsize_t)(hi - lo), dims[1], dims[2]};
      hid_t ms = H5Screate_simple(3, count, NULL);
      H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
      /* the bytes, not the values, matter for read speed: int32 written from floats' bits */
      H5Dwrite(ds, d == 0 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT, ms, space, dx, buf);
      H5Sclose(ms), H5Dclose(ds), H5Sclose(space), H5Pclose(dcpl);
    }
    free(buf);
    H5Gclose(grp);
  }
  H5Pclose(dx), H5Fclose(f), H5Pclose(fa);
}

/* Read this rank's models of every source: per_model = one call per model slab
 * (the stages' pattern), else one call per dataset.  Returns bytes read. */
static double read_file(const char *path, int32_t M, int per_model, int collective, size_t cache, MPI_Comm comm,
                        int rank, int size)
{
  hid_t fa = fapl(comm), f = H5Fopen(path, H5F_ACC_RDONLY, fa), dx = xfer(collective);
  double bytes = 0;
  int32_t lo, hi;
  share(M, rank, size, &lo, &hi);
  for (int s = 0; s < NSRC; s++) {
    char g[16];
    snprintf(g, sizeof g, "s%d", s);
    hid_t grp = H5Gopen2(f, g, H5P_DEFAULT);
    size_t per = (size_t)conds[s] * images[s];
    float *buf = malloc(((size_t)(hi - lo) * per + 1) * sizeof *buf);
    for (int d = 0; d < 3; d++) {
      hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
      if (cache) H5Pset_chunk_cache(dapl, 12421, cache, 1.0);
      hid_t ds = H5Dopen2(grp, names[d], dapl), space = H5Dget_space(ds);
      int calls = per_model ? (M + size - 1) / size : 1;
      for (int c = 0; c < calls; c++) {
        int32_t m0 = per_model ? lo + c : lo, nm = per_model ? (lo + c < hi) : hi - lo;
        hsize_t start[3] = {(hsize_t)m0, 0, 0}, count[3] = {(hsize_t)(nm ? nm : 1), (hsize_t)conds[s],
                                                          (hsize_t)images[s]};
        hid_t ms = H5Screate_simple(3, count, NULL);
        if (nm) H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL);
        else H5Sselect_none(space), H5Sselect_none(ms);
        H5Dread(ds, d == 0 ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT, ms, space, dx,
                buf + (per_model ? (size_t)c * per : 0));
        bytes += (double)nm * per * 4;
        H5Sclose(ms);
      }
      H5Sclose(space), H5Dclose(ds), H5Pclose(dapl);
    }
    free(buf);
    H5Gclose(grp);
  }
  H5Pclose(dx), H5Fclose(f), H5Pclose(fa);
  return bytes;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2) {
    if (rank == 0) fprintf(stderr, "usage: bench_store DIR [MODELS] [REPEAT]\n");
    MPI_Finalize();
    return 2;
  }
  int32_t M = argc > 2 ? atoi(argv[2]) : 44;
  int repeat = argc > 3 ? atoi(argv[3]) : 5;
  const struct layout layouts[] = {{"row chunks (1,1,I) + Fletcher32", 1, 1},
                                   {"row chunks (1,1,I)", 1, 0},
                                   {"~256 KB chunks (1,C',I) + Fletcher32", 0, 1},
                                   {"~256 KB chunks (1,C',I)", 0, 0},
                                   {"model-slab chunks (1,C,I) + Fletcher32", 1 << 20, 1},
                                   {"contiguous", -1, 0}};
  struct mode { int per_model, collective; size_t cache; const char *name; } modes[] = {
    {1, 1, 0, "collective, per model"},
    {0, 1, 0, "collective, per dataset"},
    {1, 0, 0, "independent, per model"},
    {1, 1, 8 << 20, "collective, per model, 8 MB chunk cache"}};
  char path[4096];
  snprintf(path, sizeof path, "%s/bench_store.h5", argv[1]);
  if (rank == 0) printf("%d ranks, %d models: %-40s %-42s %9s %7s\n", size, M, "layout", "read", "seconds", "GB/s");
  for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
    write_file(path, &layouts[l], M, MPI_COMM_WORLD, rank, size);
    for (size_t q = 0; q < sizeof modes / sizeof *modes; q++) {
      double t[64], bytes = 0;
      for (int r = 0; r < repeat && r < 64; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now();
        bytes = read_file(path, M, modes[q].per_model, modes[q].collective, modes[q].cache, MPI_COMM_WORLD, rank,
                          size);
        double dt = now() - t0;
        MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        t[r] = dt;
      }
      MPI_Allreduce(MPI_IN_PLACE, &bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      qsort(t, (size_t)repeat, sizeof *t, cmp);
      if (rank == 0)
        printf("%-58s %-42s %9.3f %7.2f\n", layouts[l].name, modes[q].name, t[repeat / 2],
               bytes / t[repeat / 2] / 1e9);
      fflush(stdout);
    }
  }
  if (rank == 0) unlink(path);
  MPI_Finalize();
  return 0;
}
