/* Versions of a hot kernel for AVX-512, AVX2 and the baseline, chosen at load
 * time by the CPU (gcc's target_clones on x86-64).  Only for loops whose
 * result is the same in every version: integer sums, or floating sums proven
 * exact in any order.  Not under the sanitizers (their build has no
 * dispatcher) nor clang. */
#ifndef PAIRBOUND_CLONES_H
#define PAIRBOUND_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* A kernel whose vectors are as wide as AVX-512's registers has a version
 * for x86-64-v4 (AVX-512 with its 8- and 16-bit operations), called where
 * pb_clones_v4() says the CPU has it, and one with vectors half as wide for
 * AVX2 and the baseline: GCC makes a vector wider than the target's registers
 * a round trip through memory and general registers at every operation (the
 * class bootstrap's pass over 32 lanes of 16 bits took 6 times the CPU of two
 * passes over 16 under AVX2: docs/resample.md). */
#define PB_CLONES_HAVE_V4 1
#define PB_TARGET_V4 __attribute__((target("arch=x86-64-v4")))
#define PB_CLONES_V3 __attribute__((target_clones("avx2", "default")))
#define pb_clones_v4() __builtin_cpu_supports("x86-64-v4")
#else
#define PB_CLONES
#define PB_CLONES_HAVE_V4 0
#define PB_CLONES_V3
#endif

#endif /* PAIRBOUND_CLONES_H */
