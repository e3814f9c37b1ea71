/* The test hook of include/pairbound/clones.h: the highest instruction-set
 * level pb_clones_isa reports, so that one machine checks every version of
 * every kernel written per level. */
#include "config.h"

#include "pairbound/clones.h"

int pb_clones__cap = 2;

void pb_clones_isa_cap(int level)
{
  pb_clones__cap = level < 0 ? 0 : level > 2 ? 2 : level;
}
