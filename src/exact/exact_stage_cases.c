/* The forecasts that `pairbound exact score` scores: a PREDICTIONS file
 * (docs/exact.md, "Inputs"); the cases come from src/world/world_stage_cases.c. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "pairbound/parse.h"
#include "pairbound/output.h"
#include "exact_internal.h"

struct pb_exact__pred_ctx {
  int64_t n, got;
  double *q;
};

static int pb_exact__predictions_line(void *ctx, const char *path, int64_t line, char *buf)
{
  struct pb_exact__pred_ctx *x = ctx;
  if (buf[0] == '#' || (line == 1 && !strncmp(buf, "q", 1) && strspn(buf + 1, " \t\r\n") == strlen(buf + 1)))
    return PB_OK;
  double v = NAN;
  char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
  /* a model's reply as the prompts ask for it (world prompts): "probability_positive: <number>" */
  static const char reply[] = "probability_positive:";
  if (tok && !strncmp(tok, reply, sizeof reply - 1))
    tok = tok[sizeof reply - 1] ? tok + sizeof reply - 1 : strtok_r(NULL, " \t\r\n", &save);
  int unknown = tok && (!strcmp(tok, "unknown") || !strcasecmp(tok, "nan"));
  if (!tok || strtok_r(NULL, " \t\r\n", &save) || (!unknown && pb_parse_double(tok, 0.0, 1.0, 0, &v) != PB_OK)) {
    pb_error_set("%s:%lld: expected one probability in [0, 1] (or unknown / nan), alone or after probability_positive:",
                 path, (long long)line);
    return PB_FAIL;
  }
  if (x->got == x->n) {
    pb_error_set("%s:%lld: more predictions than the %lld cases", path, (long long)line, (long long)x->n);
    return PB_FAIL;
  }
  x->q[x->got++] = v;
  return PB_OK;
}

/* One probability per case in [0, 1], or `unknown` / `nan` for a forecast that was not given, each alone or
 * after "probability_positive:" (the reply the prompts ask for); '#' lines and a `q` header are skipped. */
int pb_exact_predictions_read(const char *path, int64_t n, double *q)
{
  struct pb_exact__pred_ctx x = {.n = n, .q = q};
  if (access(path, R_OK) != 0) { /* the one place a built-in predictor name may have been meant */
    pb_error_set("%s: cannot open as the PREDICTIONS file: %s (nor is it pstar, prior or logistic:n=N)", path,
                 strerror(errno));
    return PB_FAIL;
  }
  if (pb_output_lines_each(path, "PREDICTIONS file", pb_exact__predictions_line, &x)) return PB_FAIL;
  if (x.got != n) {
    pb_error_set("%s: %lld predictions for %lld cases", path, (long long)x.got, (long long)n);
    return PB_FAIL;
  }
  return PB_OK;
}
