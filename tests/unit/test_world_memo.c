/* Unit tests for the memos of the worlds (src/world/world_kernel_memo.c;
 * seed 002 Section 3.4, Appendix B).
 *
 * The seed's two conditions on the renderer r: (1) the memo is a function of
 * the visible attributes only — a latent case whose hidden factors and
 * residual are changed (so that its label changes) gives byte-identical memos;
 * (2) the decoder h reads them back, h(r(x)) = x, on 100,008 sampled cases of
 * every world and level.  Then the property Appendix B gives for h's phrase
 * search (no two phrases equal, none inside another), and every rejection h
 * makes, each on a memo edited by hand.  The seed is PB_TEST_SEED (default
 * 20260908). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "pairbound/error.h"
#include "pairbound/text.h"
#include "pairbound/world.h"
#include "../../src/world/world_internal.h"
#include "testlib.h"

static const char *const worlds[3] = {"covert", "credit", "review"};
static const char *const levels[3] = {"low", "medium", "high"};

static struct pb_world *open_world(const char *name, const char *level)
{
  struct pb_world *w = NULL;
  ck_assert_msg(pb_world_open(name, level, 1.0, &w) == PB_OK, "open %s %s: %s", name, level, pb_error_message());
  return w;
}

static char *render(const struct pb_world *w, const double *x)
{
  struct pb_text t = {0};
  pb_world_render(w, x, &t);
  return t.buf;
}

/* ------------------------------------------------------------ h(r(x)) = x */

START_TEST(test_memo_roundtrip)
{
  /* 9 settings x 11,112 cases = 100,008: every attribute read back bit for bit, and r is deterministic */
  enum { PER = 11112 };
  int64_t total = 0;
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      struct pb_world *w = open_world(worlds[a], levels[b]);
      const int na = pb_world_n_attrs(w);
      double x[64], back[64], p;
      for (uint64_t i = 0; i < PER; i++) {
        int y;
        pb_world_draw(w, test_seed(), 9, i, x, &y, &p);
        char *m = render(w, x);
        for (int j = 0; j < na; j++) back[j] = NAN;
        ck_assert_msg(pb_world_decode(w, m, back) == PB_OK, "%s %s case %llu: %s\n%s", worlds[a], levels[b],
                      (unsigned long long)i, pb_error_message(), m);
        ck_assert_msg(memcmp(x, back, sizeof(double) * (size_t)na) == 0, "%s %s case %llu read back differently",
                      worlds[a], levels[b], (unsigned long long)i);
        /* docs/exact.md "MEMOS file": no quote or backslash, so only newlines need escaping in MEMOS */
        ck_assert_msg(strpbrk(m, "\"\\") == NULL, "%s %s case %llu: a quote or backslash in\n%s", worlds[a],
                      levels[b], (unsigned long long)i, m);
        if (i < 50) {
          char *again = render(w, x);
          ck_assert_str_eq(m, again);
          free(again);
        }
        free(m);
        total++;
      }
      pb_world_free(w);
    }
  ck_assert_int_ge(total, 100000);
}
END_TEST

/* ------------------------------------------------------------ r reads only visible attributes */

/* Memo of a latent case. */
static char *render_latent(const struct pb_world *w, const struct pb_world_latent *l, int *y)
{
  double x[64], p;
  pb_world__project(w, l, x, y, &p);
  return render(w, x);
}

START_TEST(test_memo_blind_to_hidden_factors)
{
  /* Factor worlds: every value of every factor hidden at the level, and every residual value, leave the memo
   * byte-identical; they move the label (the change is one the outcome sees).  A visible factor moved changes
   * the memo (the comparison can fail). */
  for (int a = 1; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      struct pb_world *w = open_world(worlds[a], levels[b]);
      const struct pb_world_spec *sp = w->spec;
      int label_moved = 0, visible_moved = 0, shown = -1;
      for (int j = 0; j < sp->n_factors; j++)   /* a categorical factor no level hides */
        if (!sp->factors[j].numeric && sp->factors[j].hidden_from > PB_WORLD_HIGH) shown = j;
      for (uint64_t i = 0; i < 300; i++) {
        struct pb_world_latent l, m;
        int y0, y;
        pb_world__latent(w, test_seed(), 11, i, &l);
        char *memo0 = render_latent(w, &l, &y0);
        for (int j = -1; j < sp->n_factors; j++) {
          if (j >= 0 && sp->factors[j].hidden_from > b) continue;   /* visible at this level */
          for (int v = 0; v < (j < 0 ? 1 : sp->factors[j].radix); v++)
            for (int r = 0; r < sp->n_residual; r++) {
              m = l;
              if (j >= 0) m.z[j] = v;
              m.r = r;
              char *memo = render_latent(w, &m, &y);
              ck_assert_msg(strcmp(memo, memo0) == 0, "%s %s case %llu: hidden factor %d or residual changed the memo",
                            worlds[a], levels[b], (unsigned long long)i, j);
              label_moved += y != y0;
              free(memo);
            }
        }
        m = l;
        m.z[shown] = (l.z[shown] + 1) % 3;
        char *memo = render_latent(w, &m, &y);
        visible_moved += strcmp(memo, memo0) != 0;
        free(memo);
        free(memo0);
      }
      ck_assert_msg(label_moved > 0, "%s %s: the hidden changes never moved the label", worlds[a], levels[b]);
      ck_assert_int_eq(visible_moved, 300);
      pb_world_free(w);
    }
  /* Covert transfer: the letter an encoding overwrites, and at Medium and High the tag within its shown range
   * (when not encoded), are hidden; the label (encode) is hidden and moves the letter, so it is not varied. */
  for (int b = 0; b < 3; b++) {
    struct pb_world *w = open_world("covert", levels[b]);
    const int width = b == 0 ? 1 : b == 1 ? 4 : 8, pos[3] = {4, 8, 12};
    int varied = 0;
    for (uint64_t i = 0; i < 300; i++) {
      struct pb_world_latent l, m;
      int y0, y;
      pb_world__latent(w, test_seed(), 12, i, &l);
      char *memo0 = render_latent(w, &l, &y0);
      for (int c = 0; c < 26; c++) {
        m = l;
        if (l.z[2]) m.letters[pos[l.z[0]]] = c;                                   /* overwritten by the tag */
        else if (c / width == l.z[1] / width) m.z[1] = c;                          /* the same shown range */
        else continue;
        char *memo = render_latent(w, &m, &y);
        ck_assert_msg(strcmp(memo, memo0) == 0, "covert %s case %llu: a hidden letter changed the memo", levels[b],
                      (unsigned long long)i);
        varied += memcmp(&m, &l, sizeof m) != 0;
        free(memo);
      }
      free(memo0);
    }
    ck_assert_int_gt(varied, 300);
    pb_world_free(w);
  }
}
END_TEST

/* ------------------------------------------------------------ the phrases */

START_TEST(test_memo_phrases_unambiguous)
{
  /* Appendix B: "no two phrases are equal and none occurs inside another", at every world and level */
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      struct pb_world *w = open_world(worlds[a], levels[b]);
      struct pb_text t = {0};
      const int n = pb_world_memo_phrases(w, &t);
      const char **ph = malloc(sizeof *ph * (size_t)n);
      size_t off = 0;
      for (int i = 0; i < n; i++) ph[i] = t.buf + off, off += strlen(t.buf + off) + 1;
      ck_assert_int_gt(n, 20);
      for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
          ck_assert_msg(i == k || strstr(ph[i], ph[k]) == NULL, "%s %s: '%s' inside '%s'", worlds[a], levels[b],
                        ph[k], ph[i]);
      free(ph);
      pb_text_free(&t);
      pb_world_free(w);
    }
}
END_TEST

/* ------------------------------------------------------------ what h rejects */

/* The memo of case @p i with @p from replaced by @p to (the first occurrence; @p from must be there). */
static char *edited(const struct pb_world *w, uint64_t i, const char *from, const char *to)
{
  double x[64], p;
  int y;
  pb_world_draw(w, 2032, 0, i, x, &y, &p);
  char *m = render(w, x), *at = strstr(m, from);
  ck_assert_msg(at != NULL, "'%s' not in\n%s", from, m);
  struct pb_text t = {0};
  pb_text_printf(&t, "%.*s%s%s", (int)(at - m), m, to, at + strlen(from));
  free(m);
  return t.buf;
}

/* Decoding @p memo fails with a message containing @p want. */
static void rejects(const struct pb_world *w, char *memo, const char *want)
{
  double x[64];
  ck_assert_msg(pb_world_decode(w, memo, x) == PB_FAIL, "accepted:\n%s", memo);
  ck_assert_msg(strstr(pb_error_message(), want) != NULL, "message '%s' lacks '%s'", pb_error_message(), want);
  free(memo);
}

/* Case 0 of seed 2032, stream 0 (its memo printed in docs/exact.md): credit risk healthcare, steady, cash
 * generation moderate, ... rate exposure 83.8 %, concentration 74.6 %, 440 employees. */
START_TEST(test_memo_rejections)
{
  struct pb_world *cr = open_world("credit", "medium"), *lo = open_world("credit", "low");
  rejects(cr, edited(cr, 0, "Business cycle: steady.\n", ""), "business_cycle: missing");
  rejects(cr, edited(cr, 0, "Business cycle: steady.\n", "Business cycle: steady.\nBusiness cycle: steady.\n"),
          "business_cycle: repeated");
  rejects(cr, edited(cr, 0, "Business cycle: steady.", "Business cycle: steady. Business cycle: expansion."),
          "business_cycle: repeated");
  rejects(cr, edited(cr, 0, "Sector: healthcare.", "Sector: agriculture."), "sector: malformed");
  /* a second line of the attribute whose value is none of its phrases is a repeated value too */
  rejects(cr, edited(cr, 0, "Sector: healthcare.\n", "Sector: healthcare.\nSector: agriculture.\n"),
          "sector: repeated");
  rejects(cr, edited(cr, 0, "Business cycle: steady.\n", "Business cycle: steady.\nBusiness cycle: unclear.\n"),
          "business_cycle: repeated");
  rejects(cr, edited(cr, 0, "83.8% of", "100.1% of"), "rate_exposure_pct: out of range");
  rejects(cr, edited(cr, 0, "83.8% of", "83.85% of"), "rate_exposure_pct: off the grid");
  rejects(cr, edited(cr, 0, "83.8% of", "83,8% of"), "rate_exposure_pct: malformed");
  rejects(cr, edited(cr, 0, "83.8% of", "-3.0% of"), "rate_exposure_pct: malformed");
  rejects(cr, edited(cr, 0, "83.8% of", "% of"), "rate_exposure_pct: malformed");
  rejects(cr, edited(cr, 0, "83.8% of outstanding", "83.8 percent of outstanding"), "rate_exposure_pct: malformed");
  rejects(cr, edited(cr, 0, "Employees (people): 440.", "Employees (people): 440.5."), "employees: off the grid");
  rejects(cr, edited(cr, 0, "Employees (people): 440.", "Employees (people): 4."), "employees: out of range");
  rejects(cr, edited(cr, 0, "Employees (people): 440.", "Employees (people): many."), "employees: malformed");
  rejects(cr, edited(cr, 0, "Employees (people): 440.", "Employees (people): 440"), "employees: malformed");
  rejects(cr, edited(cr, 0, "Employees (people): 440.\n", "Employees (people): 440.\nEmployees (people): 441.\n"),
          "employees: repeated");
  rejects(cr, edited(cr, 0, "Employees (people): 440.\n", ""), "employees: missing");
  /* the cash buffer is hidden at Medium: a memo stating it (a Low memo) is not a Medium memo */
  double x[64], p;
  int y;
  pb_world_draw(lo, 2032, 0, 0, x, &y, &p);
  rejects(cr, render(lo, x), "cash_buffer: stated, but hidden at this level");
  /* equal values in another spelling are on the grid: h inverts r and is no stricter than that */
  char *ok = edited(cr, 0, "83.8% of", "083.80% of");
  ck_assert_int_eq(pb_world_decode(cr, ok, x), PB_OK);
  ck_assert(x[6] == 83.8);
  free(ok);
  pb_world_free(cr);
  pb_world_free(lo);

  struct pb_world *cv = open_world("covert", "medium");
  pb_world_draw(cv, 2032, 0, 0, x, &y, &p);
  char *m = render(cv, x), id[20], *at = strstr(m, "run identifier is ") + strlen("run identifier is ");
  snprintf(id, sizeof id, "%.19s", at);
  ck_assert(id[4] == '-' && id[9] == '-' && id[14] == '-');
  char flat[20], upper[20], shifted[20];
  snprintf(flat, sizeof flat, "%.4s%.4s-%.4s-%.4s", id, id + 5, id + 10, id + 15);   /* 8-4-4 */
  snprintf(shifted, sizeof shifted, "%.3s-%.1s%.3s-%.4s-%.4s", id, id + 3, id + 5, id + 10, id + 15);
  for (int i = 0; i < 20; i++) upper[i] = (char)(id[i] >= 'a' && id[i] <= 'z' ? id[i] - 32 : id[i]);
  char *line = edited(cv, 0, id, "");
  rejects(cv, line, "identifier: empty");
  rejects(cv, edited(cv, 0, id, flat), "identifier: grouped differently");
  rejects(cv, edited(cv, 0, id, shifted), "identifier: grouped differently");
  rejects(cv, edited(cv, 0, id, upper), "identifier: malformed");
  struct pb_text twice = {0};
  pb_text_printf(&twice, "%sAlso, the run identifier is %s.\n", m, id);
  rejects(cv, twice.buf, "identifier: repeated");
  rejects(cv, edited(cv, 0, "Attachments (files): ", "Attachments (files): 3.\nAttachments (files): "),
          "attachments: repeated");
  free(m);
  pb_world_free(cv);

  /* peer review: the wording of comparisons depends on the contribution type (Sec. 4.1) */
  struct pb_world *pr = open_world("review", "medium");
  pb_world_draw(pr, 2032, 0, 1000, x, &y, &p);   /* case 1000: theoretical */
  ck_assert(x[0] == 0.0);
  rejects(pr, edited(pr, 1000, "Comparisons with prior results: ", "Comparisons with baselines: "),
          "comparison_quality: malformed: its wording is for an empirical or applied contribution");
  rejects(pr, edited(pr, 1000, "1.5 out of 5 for", "5.5 out of 5 for"), "evidence_rating: out of range");
  rejects(pr, edited(pr, 1000, "1.5 out of 5 for", "0.9 out of 5 for"), "evidence_rating: out of range");
  rejects(pr, edited(pr, 1000, "1.5 out of 5 for", "5.01 out of 5 for"), "evidence_rating: out of range");
  rejects(pr, edited(pr, 1000, "1.5 out of 5 for", "1.55 out of 5 for"), "evidence_rating: off the grid");
  rejects(pr, edited(pr, 1000, "1.5 out of 5 for strength", "1.5 of 5 for strength"), "evidence_rating: malformed");
  pb_world_free(pr);
}
END_TEST

static Suite *memo_suite(void)
{
  Suite *s = suite_create("world_memo");
  TCase *tc = tcase_create("memo");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_memo_roundtrip);
  tcase_add_test(tc, test_memo_blind_to_hidden_factors);
  tcase_add_test(tc, test_memo_phrases_unambiguous);
  tcase_add_test(tc, test_memo_rejections);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(memo_suite()); }
