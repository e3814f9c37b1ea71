/* pairbound fragility: the exact profile of a law file (--law) and the
 * store stage (seed 001; docs/fragility.md). */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"
#include "pairbound/util.h"

#define PB_FRAGILITY_MASS_TOL 1e-12

/* One `value mass` line; PB_FAIL with the reason in why. */
static int pb_fragility__parse_line(char *line, double *value, double *mass, char *why, size_t nwhy)
{
  char *end;
  errno = 0;
  *value = strtod(line, &end);
  if (end == line) return snprintf(why, nwhy, "expected 'value mass'"), PB_FAIL;
  char *p = end;
  *mass = strtod(p, &end);
  if (end == p) return snprintf(why, nwhy, "expected 'value mass'"), PB_FAIL;
  while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
  if (*end) return snprintf(why, nwhy, "unexpected text after the mass"), PB_FAIL;
  if (!(*value >= 0 && *value <= 1)) return snprintf(why, nwhy, "value %g is not in [0, 1]", *value), PB_FAIL;
  if (!(*mass >= 0) || !isfinite(*mass)) return snprintf(why, nwhy, "mass %g is not a non-negative number", *mass), PB_FAIL;
  return PB_OK;
}

int pb_fragility_read_law(const char *path, double **value, double **mass, int32_t *n)
{
  int status = PB_FAIL;
  double *v = NULL, *m = NULL, total = 0;
  int32_t cnt = 0, cap = 0;
  long lineno = 0, last = 0;
  char *line = NULL;
  size_t len = 0;
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open: %s", path, strerror(errno));
    return PB_FAIL;
  }
  while (getline(&line, &len, fp) != -1) {
    lineno++;
    char *s = line;
    while (*s == ' ' || *s == '\t') s++;
    if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0') continue;
    char why[128];
    double x, w;
    if (pb_fragility__parse_line(s, &x, &w, why, sizeof why)) {
      pb_error_set("%s:%ld: %s", path, lineno, why);
      goto done;
    }
    if (cnt == cap) {
      cap = cap ? 2 * cap : 16;
      v = pb_realloc(v, (size_t)cap * sizeof *v);
      m = pb_realloc(m, (size_t)cap * sizeof *m);
    }
    v[cnt] = x;
    m[cnt++] = w;
    total += w; /* in file order: the tolerance check is about what the file says */
    last = lineno;
  }
  if (ferror(fp)) {
    pb_error_set("%s: read error", path);
    goto done;
  }
  if (cnt == 0) {
    pb_error_set("%s:%ld: no 'value mass' lines", path, lineno);
    goto done;
  }
  if (!(fabs(total - 1) <= PB_FRAGILITY_MASS_TOL)) {
    char buf[40];
    pb_format_double(total, buf);
    pb_error_set("%s:%ld: masses sum to %s, not 1 (tolerance 1e-12)", path, last, buf);
    goto done;
  }
  *value = v;
  *mass = m;
  *n = cnt;
  v = m = NULL;
  status = PB_OK;
done:
  free(line);
  free(v);
  free(m);
  fclose(fp);
  return status;
}

/* Comma-separated radii, each finite and >= 0. */
static int pb_fragility__parse_rhos(const char *arg, double **rho, int32_t *n)
{
  int32_t cnt = 0;
  double *r = pb_malloc((strlen(arg) / 2 + 1) * sizeof *r);
  const char *s = arg;
  for (;;) {
    char *end;
    double x = strtod(s, &end);
    if (end == s || !(x >= 0) || !isfinite(x) || (*end != ',' && *end != '\0')) {
      free(r);
      return PB_FAIL;
    }
    r[cnt++] = x;
    if (*end == '\0') break;
    s = end + 1;
  }
  *rho = r;
  *n = cnt;
  return PB_OK;
}

#define PB_FRAGILITY_LAW_SYNOPSIS PB_FRAGILITY_SYNOPSIS

int pb_fragility_law_main(int argc, char **argv, int rank)
{
  static const struct option lo[] = {{"law", required_argument, NULL, 'l'}, {"rho", required_argument, NULL, 'r'},
                                     {0, 0, 0, 0}};
  const char *law_path = NULL, *rho_arg = NULL;
  int opt;
  opterr = 0;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    if (opt == 'l') law_path = optarg;
    else if (opt == 'r') rho_arg = optarg;
    else {
      if (rank == 0) {
        fprintf(stderr, "pairbound fragility: ");
        fprintf(stderr, optopt ? "option '%s' needs a value" : "unknown option '%s' with --law", argv[optind - 1]);
        fprintf(stderr, "\nusage: %s\n", PB_FRAGILITY_LAW_SYNOPSIS);
      }
      return 2;
    }
  }
  const char *bad = optind < argc ? "takes no STORE with --law" : !law_path ? "missing --law FILE"
                    : !rho_arg ? "missing --rho r1,r2,..." : NULL;
  double *rho = NULL;
  int32_t n_rho = 0;
  if (!bad && pb_fragility__parse_rhos(rho_arg, &rho, &n_rho)) bad = "--rho takes comma-separated radii >= 0";
  if (bad) {
    if (rank == 0) fprintf(stderr, "pairbound fragility: %s\nusage: %s\n", bad, PB_FRAGILITY_LAW_SYNOPSIS);
    return 2;
  }
  double *v = NULL, *m = NULL;
  int32_t n = 0;
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  int rc = pb_fragility_read_law(law_path, &v, &m, &n) || pb_fragility_law_set(&law, v, m, n) ? 1 : 0;
  if (rc) {
    if (rank == 0) fprintf(stderr, "pairbound fragility: error: %s\n", pb_error_message());
  } else if (rank == 0) {
    char a[40], b[40], c[40];
    pb_format_double(law.G, a);
    printf("G %s\n", a);
    pb_format_double(law.up.rho_plus, a);
    printf("rho_plus %s\n", a);
    pb_format_double(law.up.rho_sat, a);
    printf("rho_sat %s\n", a);
    for (int32_t i = 0; i < n_rho; i++) {
      pb_format_double(rho[i], a);
      pb_format_double(pb_fragility_profile(&law, PB_FRAGILITY_UP, rho[i]), b);
      pb_format_double(pb_fragility_profile(&law, PB_FRAGILITY_DOWN, rho[i]), c);
      printf("%s %s %s\n", a, b, c);
    }
    fflush(stdout);
  }
  pb_fragility_law_free(&law);
  free(v);
  free(m);
  free(rho);
  return rc;
}
