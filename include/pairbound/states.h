/* Five-state counts (seed 000 Table 1) of a cell under the observed
 * correspondence: the kernel of `pairbound states`. */
#ifndef PAIRBOUND_STATES_H
#define PAIRBOUND_STATES_H

#include <stdint.h>

#include "pairbound/cell.h"

struct pb_states {
  int64_t n, h, r, s, w, k;  /* evaluation pairs and their five-state counts */
};

/** Five-state counts of one cell (h: correct->wrong, r: wrong->correct,
 *  s: same wrong label, w: different wrong labels, k: correct both). */
void pb_states_count(const struct pb_cell_data *cell, struct pb_states *out);

#endif /* PAIRBOUND_STATES_H */
