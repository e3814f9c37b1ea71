/* Prospective screening (seed 000 Section 5, Appendix E.1-E.4): image-level
 * failure-risk scores, AUROC, budgeted failure coverage with tie proration,
 * identity ablation, class baselines, logistic g(S, U), adapted A3 (Eq. 12).
 * See docs/screen.md. */
#ifndef PAIRBOUND_SCREEN_H
#define PAIRBOUND_SCREEN_H

#include <stdint.h>
#include <mpi.h>

#include "pairbound/protocol.h"
#include "pairbound/screen_kernel.h"
#include "pairbound/util.h"

/* ------------------------------------------------------------ stage */

/** Options of `pairbound screen` and [screen] (include/pairbound/options.h). */
extern const struct pb_option pb_screen_option_table[];
void pb_screen_options_default(struct pb_screen_options *opt);
/* (group_draws / class_draws live in the options: 0 = no intervals.) */
void pb_screen_options_free(struct pb_screen_options *opt);
/** Parse [NAME=]SRC[:cond,cond...] into a probe set (NAME required for extra sets). */
int pb_screen_parse_probe(const char *spec, struct pb_screen_probeset *ps);

/** Run the stage on STORE, writing OUTDIR (collective). */
int pb_screen_run(const char *store_path, const char *outdir, MPI_Comm comm, const struct pb_protocol_options *popt,
                  const struct pb_screen_options *opt, const char *provenance);

#endif /* PAIRBOUND_SCREEN_H */
