/* Prospective screening (seed 000 Section 5, Appendix E.1-E.4): image-level
 * failure-risk scores, AUROC, budgeted failure coverage with tie proration,
 * identity ablation, class baselines, logistic g(S, U), adapted A3 (Eq. 12).
 * See docs/screen.md. */
#ifndef PAIRBOUND_SCREEN_H
#define PAIRBOUND_SCREEN_H

#include <stdint.h>

#include "pairbound/protocol.h"
#include "pairbound/rng.h"
#include "pairbound/screen_kernel.h"

/* ------------------------------------------------------------ stage */

/** Options of `pairbound screen` and [screen] (include/pairbound/options.h). */
extern const struct pb_option pb_screen_option_table[];
/** Parse [NAME=]SRC[:cond,cond...] into a probe set (NAME required for extra sets). */
int pb_screen_parse_probe(const char *spec, struct pb_screen_probeset *ps);


#endif /* PAIRBOUND_SCREEN_H */
