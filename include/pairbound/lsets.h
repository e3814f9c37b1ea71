/* Label sets: per image, a set of acceptable labels (seed 000 Section 7 and
 * Appendix J.1, "ReaL"), and correctness attached to each record under its
 * own image's set.  Pure: no MPI, no I/O (the store's datasets are
 * src/store/store_lsets.c; docs/csv.md, docs/store.md, docs/protocol.md). */
#ifndef PAIRBOUND_LSETS_H
#define PAIRBOUND_LSETS_H

#include <stddef.h>
#include <stdint.h>

#include "pairbound/meta.h"

/* Which correctness the stages use (the protocol option --labels). */
enum pb_labels {
  PB_LABELS_AUTO = 0, /* set when the store has label sets, single otherwise */
  PB_LABELS_SINGLE,   /* a record is correct iff pred == label */
  PB_LABELS_SET       /* a record is correct iff pred is in its image's set */
};

/* The CSV column of the sets (docs/csv.md), and the separator of a set's ids in the CSV column `labels`. */
#define PB_LSETS_COLUMN "labels"
#define PB_LSETS_SEP ';'

/**
 * A `labels` field: ";"-separated decimal class ids in [0, PB_MAX_CLASSES), no
 * id twice, in any order (empty: no set).  The ids, sorted ascending, into
 * @p ids (room for @p cap; more is an error), their number into *@p n.
 * PB_FAIL with the reason (no file or line) in pb_error_message().
 */
int pb_lsets_parse(const char *text, int32_t *ids, int32_t cap, int32_t *n);
/** The canonical text of a set ("3;17;250", "" when @p n is 0) into @p buf; its length (as snprintf). */
size_t pb_lsets_text(const int32_t *ids, int32_t n, char *buf, size_t cap);
/** Whether class @p c is in the ascending set ids[0..n).  Inline, and a small set scanned whole rather than
 *  searched: a store's loads ask it of every record, and a search's branches on the data were most of that
 *  map's time (mispredicted; a set holds a few classes). */
static inline int pb_lsets_has(const int32_t *ids, int32_t n, int32_t c)
{
  if (n <= 8) {
    int in = 0;
    for (int32_t j = 0; j < n; j++) in |= ids[j] == c;
    return in;
  }
  int32_t lo = 0, hi = n;
  while (lo < hi) {
    const int32_t mid = lo + (hi - lo) / 2;
    if (ids[mid] < c) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && ids[lo] == c;
}

/**
 * The prediction every kernel's `pred == label` test reads so that it gives
 * set correctness (docs/protocol.md, "Label sets"): @p label when @p pred is
 * in the nonempty ascending set ids[0..n); @p n_classes when @p pred is the label and the label is not in the set (still
 * wrong); else @p pred.  The map is injective on the predictions outside the
 * set and does not depend on the image beyond its label, so two wrong
 * records of a class (of one image or of two, as the within-class
 * reassignment pairs them) share the mapped prediction iff they share the
 * original one.  The value n_classes is no class: a mapped prediction may be
 * compared, never used as an index.
 */
static inline int32_t pb_lsets_pred(const int32_t *ids, int32_t n, int32_t label, int32_t pred, int32_t n_classes)
{
  /* the label is not in the set: one value for the whole class, that no stored prediction takes, since the
   * analyses compare wrong predictions of different images of the class (selects, not branches) */
  const int32_t out = pred == label ? n_classes : pred;
  return pb_lsets_has(ids, n, pred) ? label : out;
}

/** Whether a source holds label sets (its lset_off is not NULL). */
int pb_lsets_source_has(const struct pb_source *src);

/** Whether @p src's sets are well formed: offsets from 0, not decreasing; ids ascending in [0, n_classes).
 *  PB_FAIL with "source S image I: ..." otherwise (pb_meta_validate). */
int pb_lsets_validate(const struct pb_source *src);
/** The set of image @p i of @p src: its ids and their number (inline: a store's loads ask it of every record). */
static inline const int32_t *pb_lsets_of(const struct pb_source *src, int32_t i, int32_t *n)
{
  *n = (int32_t)(src->lset_off[i + 1] - src->lset_off[i]);
  /* ingest fills the sets image by image: before its first id, lset_ids is NULL (no offset may be added to it) */
  return src->lset_ids ? src->lset_ids + src->lset_off[i] : NULL;
}

/**
 * The sets of @p src's evaluation images (split PB_SPLIT_EVAL), in that order
 * (the order of a cell's records), as CSR: *@p off [n_eval + 1] offsets into
 * *@p ids (both allocated here, free them).  @p src must hold sets.
 */
void pb_lsets_eval(const struct pb_source *src, int64_t **off, int32_t **ids);

#endif /* PAIRBOUND_LSETS_H */
