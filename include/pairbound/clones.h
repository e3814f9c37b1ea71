/* Versions of a hot kernel for AVX-512, AVX2 and the baseline, chosen at load
 * time by the CPU (gcc's target_clones on x86-64).  Only for loops whose
 * result is the same in every version: integer sums, or floating sums proven
 * exact in any order.  Not under the sanitizers (their build has no
 * dispatcher) nor clang. */
#ifndef PAIRBOUND_CLONES_H
#define PAIRBOUND_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define PB_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* the same for kernels on 8- and 16-bit lanes, which AVX-512 has with its BW part (x86-64-v4) */
#define PB_CLONES_BW __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define PB_CLONES
#define PB_CLONES_BW
#endif

#endif /* PAIRBOUND_CLONES_H */
