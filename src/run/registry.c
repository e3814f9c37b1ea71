/* The one list of stages (include/pairbound/registry.h): the command line,
 * `pairbound run` and REPORT.md all iterate it.  A new stage is a folder
 * with its descriptor and one line here. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/registry.h"

/* Every stage NAME defines pb_NAME_stage in src/NAME/; one line each:
 * commands first (protocol, states), then the pipeline in its order. */
#define PB_STAGES(X) \
  X(protocol)        \
  X(states)          \
  X(bounds)          \
  X(verify)          \
  X(policy)          \
  X(screen)          \
  X(predict)         \
  X(fragility)       \
  X(exact)

#define PB_STAGE_DECLARE(name) extern const struct pb_stage_desc pb_##name##_stage;
#define PB_STAGE_ENTRY(name) &pb_##name##_stage,
PB_STAGES(PB_STAGE_DECLARE)
const struct pb_stage_desc *const pb_registry_stages[] = {PB_STAGES(PB_STAGE_ENTRY) NULL};

const struct pb_stage_desc *pb_registry_find(const char *name)
{
  const char *dot = strchr(name, '.');
  size_t n = dot ? (size_t)(dot - name) : strlen(name);
  if (dot && (dot[1] == '\0' || dot[1 + strspn(dot + 1, "abcdefghijklmnopqrstuvwxyz"
                                                        "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")] != '\0'))
    return NULL;
  for (int i = 0; pb_registry_stages[i]; i++)
    if (strlen(pb_registry_stages[i]->name) == n && strncmp(pb_registry_stages[i]->name, name, n) == 0) return pb_registry_stages[i];
  return NULL;
}

int pb_registry_index(const struct pb_stage_desc *d)
{
  int i = 0;
  while (pb_registry_stages[i] && pb_registry_stages[i] != d) i++;
  return i;
}

void *pb_registry_options_new(const struct pb_stage_desc *d)
{
  void *o = pb_calloc(1, d->options.size ? d->options.size : 1);
  if (d->options.defaults) d->options.defaults(o);
  else if (d->options.table) pb_options_defaults(d->options.table, o);
  return o;
}

void pb_registry_options_free(const struct pb_stage_desc *d, void *opts)
{
  if (!opts) return;
  if (d->options.table) pb_options_free(d->options.table, opts);
  if (d->options.release) d->options.release(opts);
  free(opts);
}
