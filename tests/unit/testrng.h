/* The unit tests' own random numbers (SplitMix64), independent of the
 * library's Philox streams so a test never checks the library against itself,
 * and the test seed: PB_TEST_SEED or a fixed default, printed by each test. */
#ifndef PAIRBOUND_TESTRNG_H
#define PAIRBOUND_TESTRNG_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Every passing assertion of check calls _mark_point, which writes the
 * assertion's place to check's message file (a system call each): in fork
 * mode the parent names that place when the test crashes.  In CK_NOFORK
 * mode (pb_test_run) a crash ends the whole program, so no place is ever
 * read back and the writes only cost time (18 of 19 s of test_util's bulk
 * shuffle test); there the mark is skipped.  A failing assertion reports its
 * own place either way. */
static int pb_test_nofork;
#define _mark_point(file, line) (pb_test_nofork ? (void)0 : _mark_point(file, line))

static uint64_t rng_state;
static inline uint64_t rng_next(void)
{
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline int rng_int(int lo, int hi) { return lo + (int)(rng_next() % (uint64_t)(hi - lo + 1)); }
static inline unsigned long test_seed(void)
{
  const char *s = getenv("PB_TEST_SEED");
  return s ? strtoul(s, NULL, 10) : 20260908ul;
}

/* Run a suite of a test that needs no MPI in check's fork mode (each test
 * isolated, its timeout enforced), after printing the seed. */
static inline int test_run_forked(Suite *s)
{
  printf("test seed %lu (set PB_TEST_SEED to change)\n", test_seed());
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* PAIRBOUND_TESTRNG_H */
