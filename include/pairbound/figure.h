/* Report figures: a PNG rendered by gnuplot from a data TSV written beside it
 * in OUTDIR/report/, linked from the stage's markdown.  When gnuplot is not
 * installed the data TSV is still written and the markdown says the figure
 * was skipped, so a report is complete either way. */
#ifndef PAIRBOUND_FIGURE_H
#define PAIRBOUND_FIGURE_H

#include <stddef.h>
#include <stdio.h>

#include "pairbound/results.h"

struct pb_figure {
  const char *name;    /* report/NAME.png from report/NAME.tsv */
  const char *title;   /* figure title (and markdown caption) */
  const char *xlabel;  /* axis titles, with units */
  const char *ylabel;
  /* gnuplot commands run after the common set-up (terminal, output, titles,
   * tab-separated data, header line skipped via columnheader); the data file
   * is the gnuplot string variable DATA, e.g.
   * "plot DATA using 1:2 with linespoints title 'U - S'" */
  const char *script;
};

/**
 * 1 when figures can be rendered: gnuplot (or $PAIRBOUND_GNUPLOT; "none"
 * disables figures) runs and has the pngcairo terminal.  Checked once per
 * program name.
 */
int pb_figure_available(void);

/**
 * A stage that will have figures, once its results exist: on rank 0, start
 * the check of pb_figure_available and a gnuplot that loads its terminal and
 * font, so that both overlap the stage's work instead of its end (the
 * figures go to that gnuplot).  Elsewhere, or with figures disabled, nothing.
 */
void pb_figure_prepare(struct pb_results *res);

/**
 * End the figures' gnuplot now: the figures sent to it are rendered (their
 * jobs still need pb_figure_finish), and one started by pb_figure_prepare
 * that got none exits.  The commit or close of the results it was started
 * for calls it too (pb_results_defer).
 */
void pb_figure_settle(void);

/**
 * Rank 0 only: write @p data (@p len bytes: a header line, then tab-separated
 * rows) as report/NAME.tsv, start gnuplot rendering report/NAME.png under a
 * temporary name, and append to @p md the image link (or a line saying the
 * figure was skipped and why).  gnuplot runs beside the caller: the results'
 * commit waits for it and renames the PNG into place (pb_results_commit), so
 * a gnuplot failure there is an error naming the figure and gnuplot's
 * message, and fails the commit (the link is then never published).
 */
int pb_figure_write(struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_text *md);

/* A figure whose rendering overlaps the caller's work: pb_figure_start
 * writes the data TSV and starts gnuplot without waiting for it;
 * pb_figure_finish (which every started job needs, also after an error
 * elsewhere) waits, puts the PNG in place and appends the markdown exactly
 * as pb_figure_write does. */
enum { PB_FIGURE__DONE = 0, PB_FIGURE__SKIPPED, PB_FIGURE__EMPTY, PB_FIGURE__RENDERING };
struct pb_figure_job {
  const struct pb_figure *fig; /* read by pb_figure_finish when given markdown */
  char *name;                  /* the figure's name, for messages */
  int state;           /* PB_FIGURE__* */
  int session, seq;    /* the gnuplot process rendering it, and its place there (src/core/figure.c) */
  char *png, *tmp;
};
int pb_figure_start(struct pb_results *res, const struct pb_figure *fig, const char *data, size_t len,
                    struct pb_figure_job *job);
/** Wait for the figure of pb_figure_start; @p md may be NULL (nothing appended). */
int pb_figure_finish(struct pb_figure_job *job, struct pb_text *md);

#endif /* PAIRBOUND_FIGURE_H */
