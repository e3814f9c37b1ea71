/* Versions of a hot kernel for AVX-512, AVX2 and the baseline: chosen at load
 * time by the CPU (PB_CLONES: gcc's target_clones on x86-64), or per call by
 * pb_clones_isa.  Only for loops whose result is the same in every version:
 * integer sums, or floating sums proven exact in any order.  PB_CLONES is not
 * used under the sanitizers (their build has no dispatcher) nor with clang. */
#ifndef PAIRBOUND_CLONES_H
#define PAIRBOUND_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PB_CLONES
#endif

/* The instruction-set level the processor runs: 2 for x86-64-v4 (AVX-512
 * with its 8- and 16-bit operations), 1 for x86-64-v3 (AVX2), else 0, for
 * kernels written once per level (a target attribute each, chosen per call)
 * where target_clones will not do: GCC scalarises vector comparisons in a
 * target_clones clone, and makes a vector wider than the target's registers
 * a round trip through memory and general registers at every operation (the
 * class bootstrap's pass over 32 lanes of 16 bits took 6 times the CPU of two
 * passes over 16 under AVX2: docs/resample.md).  clang (the fuzz build)
 * knows no level names in __builtin_cpu_supports, so it asks for the
 * features those levels use. */
extern int pb_clones__cap;
/* For tests: the highest level pb_clones_isa reports (2, the default, 1 or
 * 0), so that every version of every kernel written per level is checked on
 * a machine that has the highest (src/core/clones.c).  Not thread-safe. */
void pb_clones_isa_cap(int level);

static inline int pb_clones_isa(void)
{
#if defined(__x86_64__) && defined(__clang__)
  const int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
                 __builtin_cpu_supports("bmi2");
  const int isa = v3 ? 1 + (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
                            __builtin_cpu_supports("avx512cd"))
                     : 0;
#elif defined(__x86_64__) && defined(__GNUC__)
  const int isa = __builtin_cpu_supports("x86-64-v4") ? 2 : __builtin_cpu_supports("x86-64-v3") ? 1 : 0;
#else
  const int isa = 0;
#endif
  return isa < pb_clones__cap ? isa : pb_clones__cap;
}

#endif /* PAIRBOUND_CLONES_H */
