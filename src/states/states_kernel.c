/* Five-state counts of one cell (seed 000 Table 1) under the observed
 * correspondence: pure computation. */
#include "config.h"

#include <string.h>

#include "pairbound/states.h"

void pb_states_count(const struct pb_cell_data *d, struct pb_states *out)
{
  memset(out, 0, sizeof *out);
  out->n = d->n;
  for (int32_t i = 0; i < d->n; i++) {
    int c0 = d->pred0[i] == d->label[i], c1 = d->pred1[i] == d->label[i];
    if (c0 && c1) out->k++;
    else if (c0) out->h++;
    else if (c1) out->r++;
    else if (d->pred0[i] == d->pred1[i]) out->s++;
    else out->w++;
  }
}
