/* `pairbound info`: name-value summary of a store and its protocol. */
#ifndef PAIRBOUND_SUMMARY_H
#define PAIRBOUND_SUMMARY_H

#include <stdio.h>

#include "pairbound/protocol.h"
#include "pairbound/store.h"

/**
 * Print `name value` lines: cells, paired_records, models, sources, groups,
 * per-source sizes, tier mix, mean clean/perturbed evaluation accuracy and
 * threshold ranges; with @p full also every threshold, tier and panel cell.
 */
void pb_summary_print(FILE *fp, const struct pb_meta *meta, const struct pb_protocol *p, int full);

#endif /* PAIRBOUND_SUMMARY_H */
