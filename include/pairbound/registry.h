/* The analysis stages, registered once.
 *
 * A stage is one `const struct pb_stage_desc pb_<name>_stage`
 * (pairbound/stage.h) in its own folder (src/<name>/<name>_stage.c).
 * src/run/registry.c lists every descriptor once, in pipeline order; the
 * command line (src/cli/cli.c), the pipeline (src/run/run.c) and REPORT.md
 * with the run's summary (src/run/run_report.c) all iterate that one list.
 * Adding a stage is a folder and one line there (docs/architecture.md). */
#ifndef PAIRBOUND_REGISTRY_H
#define PAIRBOUND_REGISTRY_H

#include "pairbound/stage.h"

/** Every stage, in pipeline order, NULL-terminated (src/run/registry.c). */
extern const struct pb_stage_desc *const pb_registry_stages[];

/** The stage called @p name, or the kind of an instance name KIND.NAME (NAME of letters, digits, '_', '-');
 * NULL when neither. */
const struct pb_stage_desc *pb_registry_find(const char *name);

/** Index of @p d in pb_registry_stages. */
int pb_registry_index(const struct pb_stage_desc *d);

/** Options of @p d with its defaults (calloc'd; release with pb_registry_options_free). */
void *pb_registry_options_new(const struct pb_stage_desc *d);
void pb_registry_options_free(const struct pb_stage_desc *d, void *opts);

#endif /* PAIRBOUND_REGISTRY_H */
