/* Fletcher32 (src/core/checksum.c) against values worked by hand from HDF5's
 * definition, against a word-at-a-time transcription of that definition on
 * random bytes, and against the checksums HDF5's own filter stores (chunks
 * read raw with H5Dread_chunk); then the store's direct chunk reads
 * (src/store/store_read.c, docs/store.md "Reading") against HDF5's reads of the same rows:
 * chunks read whole, in part, across a chunk boundary and in the edge chunk,
 * on every rank count, and a chunk whose checksum fails. */
#include "config.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <hdf5.h>

#include "pairbound/checksum.h"
#include "pairbound/error.h"
#include "pairbound/store.h"

#include "testlib.h"

/* HDF5's definition one word at a time (H5_checksum_fletcher32). */
static uint32_t ref_fletcher32(const uint8_t *d, size_t len)
{
  uint32_t s1 = 0, s2 = 0;
  size_t words = len / 2;
  while (words) {
    size_t n = words > 360 ? 360 : words;
    words -= n;
    for (; n; n--, d += 2) {
      s1 += ((uint32_t)d[0] << 8) | d[1];
      s2 += s1;
    }
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  if (len % 2) {
    s1 += (uint32_t)d[0] << 8;
    s2 += s1;
    s1 = (s1 & 0xffff) + (s1 >> 16);
    s2 = (s2 & 0xffff) + (s2 >> 16);
  }
  s1 = (s1 & 0xffff) + (s1 >> 16);
  s2 = (s2 & 0xffff) + (s2 >> 16);
  return (s2 << 16) | s1;
}

/* Worked by hand: "a" is one odd byte, the high half of a word 0x6100: sum1 =
 * sum2 = 0x6100.  "abc": sum1 = 0x6162 + 0x6300 = 0xc462, sum2 = 0x6162 +
 * 0xc462 = 0x125c4, folded 0x25c4 + 1 = 0x25c5.  "abcd": sum1 = 0x6162 +
 * 0x6364 = 0xc4c6, sum2 = 0x6162 + 0xc4c6 = 0x12628 -> 0x2629.  360 words of
 * 0xffff fold to 0xffff, not 0 (the folds are not reductions modulo 65535);
 * one more odd 0xff byte after 361 words: sum1 = 0xffff + 0xffff + 0xff00 ->
 * 0xff00 after two folds, sum2 likewise. */
START_TEST(test_hand_values)
{
  uint8_t ff[723];
  memset(ff, 0xff, sizeof ff);
  ck_assert_uint_eq(pb_checksum_fletcher32("", 0), 0);
  ck_assert_uint_eq(pb_checksum_fletcher32("a", 1), 0x61006100u);
  ck_assert_uint_eq(pb_checksum_fletcher32("ab", 2), 0x61626162u);
  ck_assert_uint_eq(pb_checksum_fletcher32("abc", 3), 0x25c5c462u);
  ck_assert_uint_eq(pb_checksum_fletcher32("abcd", 4), 0x2629c4c6u);
  ck_assert_uint_eq(pb_checksum_fletcher32(ff, 720), 0xffffffffu);
  ck_assert_uint_eq(pb_checksum_fletcher32(ff, 722), 0xffffffffu);
  ck_assert_uint_eq(pb_checksum_fletcher32(ff, 723), 0xff00ff00u);
  /* the stored value is little-endian; its pair-swapped form (HDF5 < 1.6.3) is accepted too */
  const uint8_t le[4] = {0xc6, 0xc4, 0x29, 0x26}, swapped[4] = {0xc4, 0xc6, 0x26, 0x29}, be[4] = {0x26, 0x29, 0xc4, 0xc6};
  ck_assert(pb_checksum_fletcher32_ok("abcd", 4, le));
  ck_assert(pb_checksum_fletcher32_ok("abcd", 4, swapped));
  ck_assert(!pb_checksum_fletcher32_ok("abcd", 4, be));
  ck_assert(!pb_checksum_fletcher32_ok("abce", 4, le));
}
END_TEST

/* Every length up to 3 blocks and a few large ones, random and all-ones
 * bytes (the largest sums), at every alignment of the start. */
START_TEST(test_definition)
{
  rng_state = test_seed();
  const size_t n = (4u << 20) + 7;
  uint8_t *b = malloc(n);
  for (size_t i = 0; i < n; i++) b[i] = (uint8_t)rng_next();
  for (size_t len = 0; len < 2200; len++)
    ck_assert_msg(pb_checksum_fletcher32(b + len % 3, len) == ref_fletcher32(b + len % 3, len),
                  "length %zu (seed %lu)", len, test_seed());
  const size_t big[] = {4u << 20, (4u << 20) + 5, 720 * 999 + 17, 1000001};
  for (int k = 0; k < 4; k++) ck_assert(pb_checksum_fletcher32(b + 1, big[k]) == ref_fletcher32(b + 1, big[k]));
  memset(b, 0xff, n);
  for (size_t len = 0; len < 2200; len += 7) ck_assert(pb_checksum_fletcher32(b, len) == ref_fletcher32(b, len));
  ck_assert(pb_checksum_fletcher32(b, n - 1) == ref_fletcher32(b, n - 1));
  free(b);
}
END_TEST

/* HDF5's filter writes the checksum we compute: chunks of an odd byte count
 * (uint8, 1001) and of 4 MiB of floats, each read back raw. */
static void hdf5_chunks(hid_t mtype, hsize_t n, hsize_t chunk, size_t esize)
{
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char name[64];
  snprintf(name, sizeof name, "fl%zu.%d.h5", esize, rank); /* each rank its own, serial file */
  const char *path = pb_test_path(name);
  uint8_t *data = malloc(n * esize), *raw = malloc(chunk * esize + 4);
  for (size_t i = 0; i < n * esize; i++) data[i] = (uint8_t)rng_next();
  if (esize == 4)
    for (size_t i = 0; i < n; i++) ((float *)data)[i] = (float)(rng_next() >> 40) / 16777216.0f;
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), sp = H5Screate_simple(1, &n, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  ck_assert(f >= 0 && sp >= 0 && dcpl >= 0);
  ck_assert(H5Pset_chunk(dcpl, 1, &chunk) >= 0 && H5Pset_fletcher32(dcpl) >= 0);
  hid_t d = H5Dcreate2(f, "x", mtype, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ck_assert(d >= 0 && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(sp);
  H5Fclose(f);
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  d = H5Dopen2(f, "x", H5P_DEFAULT);
  ck_assert(f >= 0 && d >= 0);
  const size_t bytes = chunk * esize;
  for (hsize_t off = 0; off < n; off += chunk) { /* the last chunk is an edge chunk, stored whole */
    uint32_t mask = 1;
    hsize_t size = 0;
    ck_assert(H5Dget_chunk_storage_size(d, &off, &size) >= 0 && size == bytes + 4);
    ck_assert(H5Dread_chunk(d, H5P_DEFAULT, &off, &mask, raw) >= 0 && mask == 0);
    if (off + chunk <= n) ck_assert(memcmp(raw, data + off * esize, bytes) == 0);
    uint32_t f32 = pb_checksum_fletcher32(raw, bytes);
    const uint8_t *t = raw + bytes;
    ck_assert_msg(((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24) == f32,
                  "chunk at %llu: HDF5 stored %02x%02x%02x%02x, computed %08x", (unsigned long long)off, t[0],
                  t[1], t[2], t[3], f32);
    ck_assert(pb_checksum_fletcher32_ok(raw, bytes, raw + bytes));
    raw[bytes / 2] ^= 0x10;
    ck_assert(!pb_checksum_fletcher32_ok(raw, bytes, raw + bytes));
  }
  H5Dclose(d);
  H5Fclose(f);
  free(data);
  free(raw);
}

START_TEST(test_hdf5_filter)
{
  rng_state = test_seed() + 1;
  hdf5_chunks(H5T_NATIVE_UINT8, 10007, 1001, 1);
  hdf5_chunks(H5T_NATIVE_FLOAT, (hsize_t)3 << 20, (hsize_t)1 << 20, 4);
}
END_TEST

/* ------------------------------------------------ the store's direct reads
 * One source of 100,000 images, 12 conditions, 2 models: a row is 400 KB, so a
 * model's 4.8 MB slab is stored as chunks of 10 conditions and an edge chunk
 * holding conditions 10 and 11 (src/store/store.c, PB_STORE_CHUNK_BYTES). */
#define D_IMG 100000
#define D_COND 12
#define D_MOD 2
static char *d_models[D_MOD] = {"m0", "m1"}, *d_groups[D_MOD] = {"g", "g"};
static char *d_cond[D_COND] = {"clean", "c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9", "c10", "c11"};

static int32_t d_label(int i) { return i % 3; }
static int32_t d_pred(int r, int i) { return (r + i) % 3; }
static float d_smax(int r, int i) { return 0.5f + (float)((r * 7 + i) % 100) / 256.0f; }
static float d_ptrue(int r, int i) { return d_pred(r, i) == d_label(i) ? d_smax(r, i) : d_smax(r, i) / 2; }

static const char *direct_store(void)
{
  static char path[512];
  if (path[0]) return path;
  snprintf(path, sizeof path, "%s", pb_test_path("direct.h5"));
  struct pb_source src;
  char **ids = malloc(D_IMG * sizeof *ids);
  int32_t *labels = malloc(D_IMG * sizeof *labels);
  uint8_t *split = malloc(D_IMG);
  for (int i = 0; i < D_IMG; i++) {
    ids[i] = malloc(12);
    snprintf(ids[i], 12, "i%d", i);
    labels[i] = d_label(i);
    split[i] = i % 2 ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  }
  src = (struct pb_source){.name = "S", .n_classes = 3, .n_images = D_IMG, .image_ids = ids, .labels = labels,
                           .split = split, .n_conditions = D_COND, .conditions = d_cond, .clean = 0};
  struct pb_meta meta = {D_MOD, d_models, d_groups, 1, &src, 0, "direct-read test store"};
  struct pb_store *st;
  ck_assert_msg(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK, "%s", pb_error_message());
  struct pb_rows d;
  int32_t rows[D_MOD * D_COND];
  pb_store_rows_alloc(&d, D_MOD * D_COND, D_IMG, 0);
  for (int r = 0; r < D_MOD * D_COND; r++) {
    rows[r] = r;
    for (int i = 0; i < D_IMG; i++) {
      size_t x = (size_t)r * D_IMG + i;
      d.pred[x] = d_pred(r, i);
      d.smax[x] = d_smax(r, i);
      d.ptrue[x] = d_ptrue(r, i);
    }
  }
  ck_assert_msg(pb_store_write_rows(st, 0, D_MOD * D_COND, rows, &d) == PB_OK, "%s", pb_error_message());
  ck_assert_msg(pb_store_commit(st) == PB_OK, "%s", pb_error_message());
  pb_store_rows_free(&d);
  for (int i = 0; i < D_IMG; i++) free(ids[i]);
  free(ids);
  free(labels);
  free(split);
  return path;
}

/* The same store written the direct way (pb_store_write_span: checksums
 * computed here, chunks written with pwrite): each rank writes the units of
 * its models, a unit a round (10 conditions, then the edge chunk's 2); with
 * @p async on the writer's thread (pb_store_writer) from two buffers in
 * turn, each round's write waited for in the next, as synth writes. */
static const char *direct_written_store(int async)
{
  static char paths[2][512];
  char *path = paths[async];
  if (path[0]) return path;
  snprintf(path, 512, "%s", pb_test_path(async ? "direct_wa.h5" : "direct_w.h5"));
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char **ids = malloc(D_IMG * sizeof *ids);
  int32_t *labels = malloc(D_IMG * sizeof *labels);
  uint8_t *split = malloc(D_IMG);
  for (int i = 0; i < D_IMG; i++) {
    ids[i] = malloc(12);
    snprintf(ids[i], 12, "i%d", i);
    labels[i] = d_label(i);
    split[i] = i % 2 ? PB_SPLIT_EVAL : PB_SPLIT_DEV;
  }
  struct pb_source src = {.name = "S", .n_classes = 3, .n_images = D_IMG, .image_ids = ids, .labels = labels,
                          .split = split, .n_conditions = D_COND, .conditions = d_cond, .clean = 0};
  struct pb_meta meta = {D_MOD, d_models, d_groups, 1, &src, 0, "direct-write test store"};
  struct pb_store *st;
  ck_assert_msg(pb_store_create(path, MPI_COMM_WORLD, &meta, &st) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(pb_store_span_rows(st, 0), 10); /* 4 MiB / 400 KB rows: 10 conditions a chunk */
  struct pb_rows buf[2];
  struct pb_store_writer w = {0};
  pb_store_rows_alloc(&buf[0], 10, D_IMG, 0);
  pb_store_rows_alloc(&buf[1], 10, D_IMG, 0);
  ck_assert_int_eq(pb_store_write_async(st), 1);
  /* a span that is not whole chunks is refused, on every rank: one rank's failure on the writer's thread
   * is every rank's at the wait, with its message */
  struct pb_store_span bad = {.src = 0, .row0 = 3, .n_rows = rank == 0 ? 2 : 0, .rows = buf[0]};
  pb_error_clear(); /* the message is this write's, not one left from before */
  if (async) pb_store_writer_start(&w, st, &bad, 1);
  const int refused = async ? pb_store_writer_wait(&w, MPI_COMM_WORLD) : pb_store_write_span(st, 0, 3, bad.n_rows, &buf[0]);
  ck_assert_int_eq(refused, PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), "do not cover whole chunks") != NULL, "%s", pb_error_message());
  for (int round = 0; round < 2 * D_MOD; round++) {
    const int m = round / 2, unit = round % 2, mine = m % size == rank;
    struct pb_store_span x = {.src = 0, .row0 = m * D_COND + unit * 10, .n_rows = mine ? (unit ? 2 : 10) : 0,
                              .rows = buf[async ? round % 2 : 0]};
    for (int32_t j = 0; j < x.n_rows; j++)
      for (int i = 0; i < D_IMG; i++) {
        size_t k = (size_t)j * D_IMG + i;
        x.rows.pred[k] = d_pred(x.row0 + j, i);
        x.rows.smax[k] = d_smax(x.row0 + j, i);
        x.rows.ptrue[k] = d_ptrue(x.row0 + j, i);
      }
    if (!async) {
      ck_assert_msg(pb_store_write_span(st, 0, x.row0, x.n_rows, &x.rows) == PB_OK, "%s", pb_error_message());
      continue;
    }
    ck_assert_msg(pb_store_writer_wait(&w, MPI_COMM_WORLD) == PB_OK, "%s", pb_error_message());
    pb_store_writer_start(&w, st, &x, 1);
  }
  if (async) ck_assert_msg(pb_store_writer_wait(&w, MPI_COMM_WORLD) == PB_OK, "%s", pb_error_message());
  pb_store_writer_free(&w);
  ck_assert_msg(pb_store_commit(st) == PB_OK, "%s", pb_error_message());
  pb_store_rows_free(&buf[0]);
  pb_store_rows_free(&buf[1]);
  for (int i = 0; i < D_IMG; i++) free(ids[i]);
  free(ids);
  free(labels);
  free(split);
  return path;
}

/* How read_and_check reads: the direct path where it can (collective), HDF5's path only
 * (PAIRBOUND_STORE_READ=hdf5), or independent direct reads (pb_store_reads_independent). */
enum { READ_DIRECT, READ_HDF5, READ_ALONE, READ_WAYS };
static const char *const read_way[READ_WAYS] = {"direct", "HDF5", "independent"};

/* Read @p rows (this rank's) from @p path the way @p way and compare with the values written. */
static void read_and_check(const char *path, int32_t n, const int32_t *rows, int way)
{
  struct pb_store *st;
  struct pb_rows d;
  if (way == READ_HDF5) setenv("PAIRBOUND_STORE_READ", "hdf5", 1);
  ck_assert_msg(pb_store_open(path, MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  if (way == READ_ALONE) ck_assert_int_eq(pb_store_reads_independent(st, PB_FIELD_ALL), 1);
  int status = pb_store_read_fields(st, 0, n, rows, PB_FIELD_ALL, &d);
  if (way == READ_ALONE) status = pb_store_reads_collective(st, status);
  ck_assert_msg(status == PB_OK, "%s", pb_error_message());
  unsetenv("PAIRBOUND_STORE_READ");
  for (int32_t j = 0; j < n; j++)
    for (int i = 0; i < D_IMG; i++) {
      size_t x = (size_t)j * D_IMG + i;
      if (d.pred[x] != d_pred(rows[j], i) || d.smax[x] != d_smax(rows[j], i) || d.ptrue[x] != d_ptrue(rows[j], i))
        ck_abort_msg("row %d image %d differs (%s path)", rows[j], i, read_way[way]);
    }
  pb_store_rows_free(&d);
  pb_store_close(st);
}

START_TEST(test_direct_rows)
{
  const char *path = direct_store();
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* whole model, whole chunk, part of a chunk, across a boundary, the edge chunk, scattered */
  static const int32_t all[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
  static const int32_t part[] = {3, 4, 5}, across[] = {9, 10}, edge[] = {10, 11, 22}, scattered[] = {0, 2, 7, 13, 23};
  for (int way = 0; way < READ_WAYS; way++) {
    read_and_check(path, 24, all, way);
    read_and_check(path, 10, all, way);
    read_and_check(path, 12, all + 12, way);
    read_and_check(path, 3, part, way);
    read_and_check(path, 2, across, way);
    read_and_check(path, 3, edge, way);
    read_and_check(path, 5, scattered, way);
    /* ranks reading different rows, one of them none */
    int32_t mine[24], n = 0;
    for (int32_t r = 0; r < 24; r++)
      if (r % (size + 1) == rank) mine[n++] = r;
    read_and_check(path, n, mine, way);
    read_and_check(path, rank == 0 ? 2 : 0, across, way);
  }
}
END_TEST

/* Chunks written the direct way read back through HDF5, whose Fletcher32
 * filter checks every checksum (a wrong one fails the read), and through the
 * direct reads, at every row pattern; written in the caller's thread or on the writer's. */
START_TEST(test_direct_writes)
{
  static const int32_t all[24] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
  static const int32_t edge[] = {10, 11, 22}, scattered[] = {0, 2, 7, 13, 23};
  for (int async = 0; async < 2; async++) {
    const char *path = direct_written_store(async);
    for (int way = 0; way < READ_WAYS; way++) {
      read_and_check(path, 24, all, way);
      read_and_check(path, 3, edge, way);
      read_and_check(path, 5, scattered, way);
    }
  }
}
END_TEST

/* A flipped byte in chunk (model 1, conditions 0-9) of smax: reads of that
 * chunk fail on every rank with HDF5's damaged-file message, reads of other
 * chunks still succeed. */
START_TEST(test_direct_damage)
{
  const char *path = direct_store(), *bad = pb_test_path("damaged.h5");
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", path, bad);
    ck_assert(system(cmd) == 0);
    hid_t f = H5Fopen(bad, H5F_ACC_RDONLY, H5P_DEFAULT); /* serial: this rank only */
    hid_t d = H5Dopen2(f, "sources/S/smax", H5P_DEFAULT);
    hsize_t off[3] = {1, 0, 0}, size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    ck_assert(d >= 0 && H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF);
    H5Dclose(d);
    H5Fclose(f);
    int fd = open(bad, O_RDWR);
    uint8_t b = 0;
    ck_assert(fd >= 0 && pread(fd, &b, 1, (off_t)addr + 12345) == 1);
    b ^= 0x04;
    ck_assert(pwrite(fd, &b, 1, (off_t)addr + 12345) == 1);
    close(fd);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  static const int32_t ok_rows[] = {0, 10, 11, 22}, bad_rows[] = {13};
  read_and_check(bad, 4, ok_rows, 0);
  struct pb_store *st;
  struct pb_rows d;
  ck_assert_msg(pb_store_open(bad, MPI_COMM_WORLD, &st) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_store_read_fields(st, 0, rank == 0 ? 1 : 0, bad_rows, PB_FIELD_ALL, &d) == PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), "cannot read records 'smax' of source S (damaged file: a chunk fails its "
                                           "checksum or cannot be decoded)") != NULL, "%s", pb_error_message());
  /* pred of the same model is intact */
  ck_assert_msg(pb_store_read_fields(st, 0, 1, bad_rows, PB_FIELD_PRED, &d) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(d.pred[5], d_pred(13, 5));
  pb_store_rows_free(&d);
  /* independent reads: the damaged chunk is rank 0's own error, the other ranks read theirs, and the
   * agreement after gives every rank rank 0's reason */
  ck_assert_int_eq(pb_store_reads_independent(st, PB_FIELD_ALL), 1);
  int status = pb_store_read_fields(st, 0, 1, rank == 0 ? bad_rows : ok_rows, PB_FIELD_ALL, &d);
  ck_assert_int_eq(status, rank == 0 ? PB_FAIL : PB_OK);
  if (status == PB_OK) pb_store_rows_free(&d);
  ck_assert_int_eq(pb_store_reads_collective(st, status), PB_FAIL);
  ck_assert_msg(strstr(pb_error_message(), "cannot read records 'smax' of source S (damaged file: a chunk fails its "
                                           "checksum or cannot be decoded)") != NULL, "%s", pb_error_message());
  pb_store_close(st);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("checksum");
  TCase *tc = tcase_create("fletcher32");
  tcase_add_test(tc, test_hand_values);
  tcase_add_test(tc, test_definition);
  tcase_add_test(tc, test_hdf5_filter);
  suite_add_tcase(s, tc);
  tc = tcase_create("direct");
  tcase_add_test(tc, test_direct_rows);
  tcase_add_test(tc, test_direct_writes);
  tcase_add_test(tc, test_direct_damage);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
