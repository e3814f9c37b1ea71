/* The benchmark drivers' own random numbers (SplitMix64, fixed seed, so
 * every run times the same inputs) and wall clock. */
#ifndef PAIRBOUND_BENCHUTIL_H
#define PAIRBOUND_BENCHUTIL_H

#include <stdint.h>
#include <time.h>

/* each driver defines BENCH_SEED before including this */
static uint64_t st = BENCH_SEED;

static inline uint64_t next64(void)
{
  uint64_t z = (st += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static inline double unif(void) { return (double)(next64() >> 11) * 0x1.0p-53; }

static inline double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#endif /* PAIRBOUND_BENCHUTIL_H */
