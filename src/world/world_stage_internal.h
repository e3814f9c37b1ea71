/* What the `pairbound world` command's files share: the CASES header and
 * cell text (world_stage_cases.c), and the memo verbs (world_stage_memo.c). */
#ifndef PAIRBOUND_WORLD_STAGE_INTERNAL_H
#define PAIRBOUND_WORLD_STAGE_INTERNAL_H

#include <stdint.h>

#include <mpi.h>

#include "pairbound/text.h"
#include "pairbound/world.h"

/* Room for one case's visible attributes: more than any world has (32 at most, world_internal.h). */
#define PB_WORLD_MEMO_MAX_ATTRS 64

/* The CASES format (world_stage_cases.c).  The header of `world sample`: comment lines, `case`, the attribute
 * columns, `y`, `p_star`. */
void pb_world__cases_header(const struct pb_world *w, const struct pb_world_options *o, struct pb_text *t);
/* "# pairbound world KIND 1", world, level, residual scale and case count lines, then `case` and the
 * attribute columns of a CASES header. */
void pb_world__columns_header(const struct pb_world *w, const char *kind, int64_t n, struct pb_text *t);
/* A tab (when @p tab) and an unsigned integer in decimal. */
void pb_world__put_uint(struct pb_text *t, uint64_t v, int tab);
/* One TSV cell of a CASES row: a tab and the value's shortest round-trip text. */
void pb_world__cell(struct pb_text *t, double v);

/* `world render CASES -o MEMOS`, `world decode MEMOS [-o TSV]`, `world prompts CASES --shots K -o PROMPTS`
 * (collective; world_stage_memo.c). */
int pb_world__render(const char *cases, const char *output, MPI_Comm comm);
int pb_world__decode(const char *memos, const char *output, MPI_Comm comm);
int pb_world__prompts(const char *cases, const char *output, int shots, MPI_Comm comm);

#endif /* PAIRBOUND_WORLD_STAGE_INTERNAL_H */
