/* Fragility profiles of finite propensity laws (seed 001 Section 3,
 * Appendix E; derivations in docs/fragility.md).
 *
 * A law is a finite set of propensity values eta_i with masses p_i.  With
 * Z = eta - E[eta] and G = Var(Z), the upward profile is
 *   Phi_up(rho) = sup { E[(r - 1) Z] : r >= 0, E[r] = 1, E[(r - 1)^2] <= rho }
 * and the downward profile is the same for -Z.  Both are computed exactly:
 * the square-root law sqrt(rho G) on [0, rho_plus], the truncated-affine
 * optimiser r = (Z - t)+ / E[(Z - t)+] between rho_plus and rho_sat with t
 * solved in closed form on the piece between two atoms, and max Z beyond. */
#ifndef PAIRBOUND_FRAGILITY_H
#define PAIRBOUND_FRAGILITY_H

#include <stdint.h>

/* One direction of a law: the atoms x_0 < ... < x_{n-1} of Z (up) or -Z (down). */
struct pb_fragility_side {
  double rho_plus;  /* end of the square-root regime, G / x_0^2 (inf when G = 0) */
  double rho_sat;   /* start of saturation, 1 / P(x_{n-1}) - 1 (0 when G = 0) */
  double top;       /* the saturation value x_{n-1} */
  /* For k = 0 .. n-2, the atoms above x_k: mass P[k], mean mu[k], centred
   * second moment V[k] = sum p (x - mu)^2, and the budget brk[k] = rho(t = x_k). */
  double *P, *mu, *V, *brk;
};

struct pb_fragility_law {
  int32_t n;        /* distinct atoms with positive mass */
  int32_t cap;      /* allocated length of every array */
  double mean;      /* E[eta] */
  double G;         /* Var(eta) */
  double *z;        /* centred atoms ascending (z = eta - mean) */
  double *p;        /* their probabilities (masses divided by the total) */
  struct pb_fragility_side up, down;
  void *scratch;    /* sorting workspace of cap (value, mass) pairs */
};

enum pb_fragility_dir { PB_FRAGILITY_UP = 0, PB_FRAGILITY_DOWN = 1 };

/** Empty law; buffers grow on demand in pb_fragility_law_set. */
void pb_fragility_law_init(struct pb_fragility_law *law);
void pb_fragility_law_free(struct pb_fragility_law *law);

/**
 * Set the law of n values with non-negative masses (normalised by their
 * total; zero masses are dropped and equal values merged).
 * @return PB_OK, or PB_FAIL (pb_error_set) for a non-finite value, a negative
 *         or non-finite mass, or a zero total mass.
 */
int pb_fragility_law_set(struct pb_fragility_law *law, const double *value, const double *mass, int32_t n);

/** Phi(rho) in direction dir for rho >= 0 (rho = inf gives the saturation value). */
double pb_fragility_profile(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho);

/**
 * The optimal reweighting at rho in direction dir: r[i] for atom law->z[i]
 * (r >= 0, E[r] = 1, E[(r-1)^2] <= rho, E[(r-1) Z] = +-Phi(rho)).  Beyond
 * saturation the cheapest optimiser (all mass on the top atom) is returned.
 */
void pb_fragility_weights(const struct pb_fragility_law *law, enum pb_fragility_dir dir, double rho, double *r);

/* ------------------------------------------------------------ command line */

#define PB_FRAGILITY_SYNOPSIS "pairbound fragility --law FILE --rho r1,r2,..."
#define PB_FRAGILITY_HELP \
  "Fragility profiles (seed 001; docs/fragility.md).\n\n" \
  "With --law: the exact upward and downward profiles of a finite propensity law. Prints `G`, `rho_plus`\n" \
  "and `rho_sat` (of the upward profile; rho_plus is inf when G = 0) as `name value` lines, then one\n" \
  "`rho up down` line per radius, numbers as the shortest decimal that reads back exactly.\n\n" \
  "  --law FILE           one `value mass` line per atom: value in [0, 1], mass >= 0, masses summing to 1\n" \
  "                       within 1e-12; blank lines and lines starting with # are ignored\n" \
  "  --rho r1,r2,...      radii (chi-square budgets) >= 0\n"

/* ------------------------------------------------------------ law files */

/**
 * Read a law file: one `value mass` line per atom (value in [0, 1], mass
 * >= 0, masses summing to 1 within 1e-12; blank and `#` lines ignored).
 * On success *value and *mass are malloc'd arrays of *n atoms in file order.
 * @return PB_OK, or PB_FAIL with a message naming the file and line.
 */
int pb_fragility_read_law(const char *path, double **value, double **mass, int32_t *n);

/**
 * `pairbound fragility --law FILE --rho r1,r2,...`: print G, rho_plus and
 * rho_sat of the upward profile, then `rho up down` per radius (rank 0).
 * @return process exit status: 0 ok, 1 bad input, 2 usage error.
 */
int pb_fragility_law_main(int argc, char **argv, int rank);

#endif /* PAIRBOUND_FRAGILITY_H */
