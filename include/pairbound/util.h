/* Small shared pieces: counter-based RNG, string index, SHA-256 keys,
 * float formatting, half-precision rounding and atomic output files. */
#ifndef PAIRBOUND_UTIL_H
#define PAIRBOUND_UTIL_H

#include <stdint.h>
#include <stdio.h>

/* Versions of a hot kernel for AVX-512, AVX2 and the baseline, chosen at load
 * time by the CPU (gcc on x86-64).  Only for loops whose result is the same in
 * every version: integer sums, or floating sums proven exact in any order.
 * Not under the sanitizers (their build has no dispatcher) nor clang. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* the same for kernels on 8- and 16-bit lanes, which AVX-512 has with its BW part (x86-64-v4) */
#define PB_CLONES_BW __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define PB_CLONES
#define PB_CLONES_BW
#endif

/* ---- counter-based random numbers (Random123 Philox4x32-10).
 * A stream is named by (seed, analysis, item, replicate); draws within it are
 * numbered, so results never depend on rank, thread or call order. */
struct pb_rng {
  uint32_t key[2];
  uint32_t ctr[4];
  uint32_t out[4];
  int left;
};
void pb_rng_init(struct pb_rng *r, uint64_t seed, uint32_t analysis, uint64_t item, uint32_t replicate);
uint32_t pb_rng_u32(struct pb_rng *r);
double pb_rng_uniform(struct pb_rng *r);          /* in (0, 1) */
double pb_rng_normal(struct pb_rng *r);           /* standard normal (Box-Muller) */
uint32_t pb_rng_below(struct pb_rng *r, uint32_t n); /* uniform in [0, n), unbiased */
/* Fisher-Yates shuffle of v[0..n): for i = n-1 down to 1, swap v[i] with v[pb_rng_below(r, i + 1)]. */
void pb_rng_shuffle(struct pb_rng *r, int32_t *v, int32_t n);
/* pb_rng_shuffle of v[beg[s] .. beg[s + 1]) for s = 0 .. n_seg - 1 in turn: the same draws as n_seg calls. */
void pb_rng_shuffle_segments(struct pb_rng *r, int32_t *v, int32_t n_seg, const int32_t *beg);

/* ---- string -> index map (open addressing, insertion order kept by caller). */
struct pb_strmap {
  char **keys;
  int32_t *vals;
  size_t cap;
  size_t count;
};
void pb_strmap_init(struct pb_strmap *m);
void pb_strmap_free(struct pb_strmap *m);
/* Value of key, or -1. */
int32_t pb_strmap_get(const struct pb_strmap *m, const char *key);
/* Insert key with value if absent; returns the stored value. */
int32_t pb_strmap_put(struct pb_strmap *m, const char *key, int32_t value);

/* ---- sorted int32 sets (row lists) */
/** Sort ascending and drop repeats; returns the new length. */
int32_t pb_sort_unique_i32(int32_t *v, int32_t n);
/** Index of x in ascending v, or -1. */
int32_t pb_sort_find_i32(const int32_t *v, int32_t n, int32_t x);
int pb_sort_cmp_i32(const void *a, const void *b);

/* ---- ascending sorts of numbers (qsort comparators; NaN-free input) */
int pb_sort_cmp_i64(const void *a, const void *b);
int pb_sort_cmp_double(const void *a, const void *b);
/** Ascending and stable: up to @p cutoff entries (the many tiny per-class
 *  arrays) each value placed at its rank, compared with 4 or 8 at a time
 *  (insertion sort up to 8 entries, above 64, or without AVX2), an inlined
 *  merge sort above the cutoff (no call per comparison; O(n log n)). */
void pb_sort_small_double(double *v, int32_t n, int32_t cutoff);
void pb_sort_small_i64(int64_t *v, int32_t n, int32_t cutoff);
/* For tests: the highest instruction-set version the small sorts may use
 * (0 insertion sort only, 1 x86-64-v3, 2 x86-64-v4, the default), so that
 * every version is checked on a machine that has the highest. */
void pb_sort_small_isa_cap(int cap);

/* ---- SHA-256 of a text, first 8 bytes as a big-endian integer (ordering key). */
uint64_t pb_checksum_sha256_key(const char *text);
void pb_checksum_sha256_hex(const void *data, size_t n, char hex[65]);

/* ---- numbers */
/* Shortest decimal text that reads back as exactly the same float. */
void pb_text_format_float(float x, char buf[32]);
/* Format a double for TSV output: shortest round-trip text, "nan" when undefined. */
void pb_text_format_double(double x, char buf[40]);
/* Mean of the defined values added (NaN = undefined, skipped), summed in the order added; NaN when none. */
struct pb_num_nanmean {
  double sum;
  int64_t n;
};
/* The k-th largest of v[0..n) (1 <= k <= n) by radix selection (Hoare's for short arrays or with a NaN);
 * v is reordered. Only the value is returned, so the method cannot change a result. */
double pb_sort_kth_largest(double *v, int32_t n, int32_t k);
float pb_sort_kth_largest_f32(float *v, int32_t n, int32_t k);
void pb_num_nanmean_add(struct pb_num_nanmean *m, double x);
double pb_num_nanmean_get(const struct pb_num_nanmean *m);
/* llround(x) (halves away from zero) for |x| < 2^63, without the library call: the
 * truncation and the remainder x - t are exact. */
static inline int64_t pb_num_round_half_away(double x)
{
  int64_t t = (int64_t)x;
  double r = x - (double)t;
  return t + (r >= 0.5) - (r <= -0.5);
}
/* Round to the nearest IEEE half-precision value (ties to even), as float. */
float pb_num_round_half(double x);

/* ---- whole file as a string (caller frees), NULL with a message on failure. */
char *pb_output_text_load(const char *path);

/* ---- a text file line by line: @p fn gets each line (newline kept, writable) and its 1-based number, and
 * stops the walk by returning non-zero (with a message set). Open and read errors are named with @p what,
 * the path and the system's reason. Returns PB_OK when every line was accepted. */
typedef int (*pb_output_line_fn)(void *ctx, const char *path, int64_t line, char *text);
int pb_output_lines_each(const char *path, const char *what, pb_output_line_fn fn, void *ctx);

/* ---- output files written under a temporary name and renamed when complete. */
struct pb_outfile {
  FILE *fp;
  char *path;
  char *tmp;
};
int pb_output_file_open(struct pb_outfile *f, const char *path);
int pb_output_file_commit(struct pb_outfile *f);   /* closes and renames; PB_FAIL on I/O error */
void pb_output_file_abort(struct pb_outfile *f);   /* closes and removes the temporary */
int pb_output_mkdir_p(const char *dir);
char *pb_output_path_join(const char *dir, const char *name);

#endif /* PAIRBOUND_UTIL_H */
