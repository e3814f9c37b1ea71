/* `pairbound protocol`: thresholds, tiers and the frozen panel of a store
 * (seed 000 Section 3.3, Appendix D; docs/protocol.md) written on their own;
 * every other stage computes them the same way when it opens the store. */
#include "config.h"

#include "pairbound/error.h"
#include "pairbound/registry.h"
#include "pairbound/stage.h"
#include "pairbound/timer.h"

/* Open (which computes and writes the protocol) and commit, its phases timed (/timings/protocol). */
static int pb_protocol__stage_run(const struct pb_stage_call *call, const void *opts)
{
  (void)opts;
  struct pb_stage st;
  struct pb_timer tm;
  pb_timer_start(&tm, "protocol");
  if (pb_stage_open_timed(call->store, call->outdir, call->comm, call->protocol, call->provenance, &st, &tm) != PB_OK)
    return PB_FAIL;
  pb_timer_reduce(&tm, call->comm);
  pb_timer_message(&tm);
  return pb_stage_close(&st, pb_timer_write(&tm, st.results));
}

const struct pb_stage_desc pb_protocol_stage = {
  .name = "protocol",
  .store = {.reads = 1},
  .run = pb_protocol__stage_run,
  .help = "Compute thresholds, tiers and the frozen panel; write OUTDIR/results.h5 and OUTDIR/report/protocol_*.tsv.\n",
};
