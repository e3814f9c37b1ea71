/* Numbers in order: qsort comparators, sorted int32 sets (row lists), the
 * small-array sorts of the hot kernels and selection of the k-th largest. */
#ifndef PAIRBOUND_SORT_H
#define PAIRBOUND_SORT_H

#include <stdint.h>

/* ---- ascending qsort comparators (NaN-free input) */
int pb_sort_cmp_i32(const void *a, const void *b);
int pb_sort_cmp_i64(const void *a, const void *b);
int pb_sort_cmp_double(const void *a, const void *b);

/* ---- sorted int32 sets (row lists) */
/** Sort ascending and drop repeats; returns the new length. */
int32_t pb_sort_unique_i32(int32_t *v, int32_t n);
/** Index of x in ascending v, or -1. */
int32_t pb_sort_find_i32(const int32_t *v, int32_t n, int32_t x);

/* ---- small arrays */
/** Ascending and stable: up to @p cutoff entries (the many tiny per-class
 *  arrays) each value placed at its rank, compared with 4 or 8 at a time
 *  (insertion sort up to 8 entries, above 64, or without AVX2), an inlined
 *  merge sort above the cutoff (no call per comparison; O(n log n)). */
void pb_sort_small_double(double *v, int32_t n, int32_t cutoff);
void pb_sort_small_i64(int64_t *v, int32_t n, int32_t cutoff);

/* ---- selection */
/* The k-th largest of v[0..n) (1 <= k <= n) by radix selection (Hoare's for short arrays or with a NaN);
 * v is reordered. Only the value is returned, so the method cannot change a result. */
double pb_sort_kth_largest(double *v, int32_t n, int32_t k);
float pb_sort_kth_largest_f32(float *v, int32_t n, int32_t k);

#endif /* PAIRBOUND_SORT_H */
