/* The number parser, option tables and run configurations: hand-worked
 * values, the messages a user reads, and that every option of every stage
 * can be set from a [stage] section. */
#include "config.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "pairbound/options.h"
#include "pairbound/parse.h"
#include "pairbound/fragility.h"
#include "pairbound/bounds_stage.h"
#include "pairbound/exact.h"
#include "pairbound/policy.h"
#include "pairbound/predict.h"
#include "pairbound/registry.h"
#include "pairbound/run.h"
#include "pairbound/screen.h"
#include "pairbound/verify.h"
#include "testlib.h"

/* The options of stage NAME in a parsed run configuration (pairbound/registry.h). */
#define STAGE_OPTS(c, name, type) ((type *)(c).opts[pb_registry_index(pb_registry_find(#name))])
#define BOUNDS(c) STAGE_OPTS(c, bounds, struct pb_bounds_options)
#define VERIFY(c) STAGE_OPTS(c, verify, struct pb_verify_options)
#define POLICY(c) STAGE_OPTS(c, policy, struct pb_policy_options)
#define SCREEN(c) STAGE_OPTS(c, screen, struct pb_screen_options)
#define PREDICT(c) STAGE_OPTS(c, predict, struct pb_predict_options)
#define FRAGILITY(c) STAGE_OPTS(c, fragility, struct pb_fragility_stage_options)
#define EXACT(c) STAGE_OPTS(c, exact, struct pb_exact_options)

START_TEST(test_parse_int)
{
  int64_t x;
  ck_assert(pb_parse_int("12", 0, 100, &x) == PB_OK && x == 12);
  ck_assert(pb_parse_int(" -7 ", -10, 10, &x) == PB_OK && x == -7);
  ck_assert(pb_parse_int("10", -10, 10, &x) == PB_OK && x == 10); /* bounds are inclusive */
  ck_assert(pb_parse_int("11", -10, 10, &x) == PB_FAIL);
  ck_assert(pb_parse_int("-11", -10, 10, &x) == PB_FAIL);
  ck_assert(pb_parse_int("1x", 0, 100, &x) == PB_FAIL);
  ck_assert(pb_parse_int("1.5", 0, 100, &x) == PB_FAIL);
  ck_assert(pb_parse_int("", 0, 100, &x) == PB_FAIL);
  ck_assert(pb_parse_int("  ", 0, 100, &x) == PB_FAIL);
  ck_assert(pb_parse_int("9223372036854775807", 0, INT64_MAX, &x) == PB_OK && x == INT64_MAX);
  ck_assert(pb_parse_int("9223372036854775808", 0, INT64_MAX, &x) == PB_FAIL); /* overflow */
  uint64_t u;
  ck_assert(pb_parse_uint("18446744073709551615", UINT64_MAX, &u) == PB_OK && u == UINT64_MAX);
  ck_assert(pb_parse_uint("18446744073709551616", UINT64_MAX, &u) == PB_FAIL);
  ck_assert(pb_parse_uint("-3", UINT64_MAX, &u) == PB_FAIL); /* strtoull alone would wrap it */
  ck_assert(pb_parse_uint(" +3", UINT64_MAX, &u) == PB_FAIL);
  ck_assert(pb_parse_uint("1001", 1000, &u) == PB_FAIL);
}
END_TEST

START_TEST(test_parse_double)
{
  double x;
  ck_assert(pb_parse_double("0.25", 0, 1, 0, &x) == PB_OK && x == 0.25);
  ck_assert(pb_parse_double("0", 0, 1, 0, &x) == PB_OK && x == 0);
  ck_assert(pb_parse_double("0", 0, 1, 1, &x) == PB_FAIL); /* (0, 1] */
  ck_assert(pb_parse_double("1e-300", 0, 1, 1, &x) == PB_OK && x == 1e-300);
  ck_assert(pb_parse_double("1.0000001", 0, 1, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("nan", -DBL_MAX, DBL_MAX, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("inf", -DBL_MAX, DBL_MAX, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("1e999", -DBL_MAX, DBL_MAX, 0, &x) == PB_FAIL); /* ERANGE */
  ck_assert(pb_parse_double(".5x", 0, 1, 0, &x) == PB_FAIL);
  /* decimal only (issue 47, item 11): strtod alone reads the hexadecimal float 0x1p-2 as 0.25 */
  ck_assert(pb_parse_double("0x1p-2", 0, 1, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("0X.8", 0, 1, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("0x0", 0, 1, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("infinity", -DBL_MAX, DBL_MAX, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("nan(1)", -DBL_MAX, DBL_MAX, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double(".", 0, 1, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("1e", 0, 10, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("1e+", 0, 10, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("--1", -10, 10, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("1 2", 0, 100, 0, &x) == PB_FAIL);
  ck_assert(pb_parse_double("1e-320", 0, 1, 0, &x) == PB_FAIL); /* subnormal: ERANGE */
  ck_assert(pb_parse_double(" .5 ", 0, 1, 0, &x) == PB_OK && x == 0.5);
  ck_assert(pb_parse_double("5.", 0, 10, 0, &x) == PB_OK && x == 5);
  ck_assert(pb_parse_double("+2.5E-1", 0, 1, 0, &x) == PB_OK && x == 0.25);
  ck_assert(pb_parse_double("-25e-2\n", -1, 1, 0, &x) == PB_OK && x == -0.25);
  double v[4];
  int n;
  ck_assert(pb_parse_list("0.5, 0.25,1", 0, 1, 4, v, &n) == PB_OK && n == 3);
  ck_assert(v[0] == 0.5 && v[1] == 0.25 && v[2] == 1);
  ck_assert(pb_parse_list("0.1,0.2,0.3,0.4,0.5", 0, 1, 4, v, &n) == PB_FAIL); /* more than max */
  ck_assert(pb_parse_list("0.1,2", 0, 1, 4, v, &n) == PB_FAIL);
  ck_assert(pb_parse_list("", 0, 1, 4, v, &n) == PB_FAIL);
  ck_assert(pb_parse_list(",", 0, 1, 4, v, &n) == PB_FAIL);
  ck_assert(pb_parse_list("0.5,0x1p-1", 0, 1, 4, v, &n) == PB_FAIL);
  /* 0.1 * k written out equals k / 10.0 (the policy grid was computed so before it was a table default) */
  ck_assert(pb_parse_list("0.3,0.7", 0, 1, 4, v, &n) == PB_OK && v[0] == 3 / 10.0 && v[1] == 7 / 10.0);
}
END_TEST

struct toy {
  int flag, choice, have;
  int32_t i32, n;
  int64_t i64;
  uint64_t seed;
  double d;
  float f, list[3];
  char *s;
};

#define T(m) PB_OPTION_FIELD(struct toy, m)
static const struct pb_option toy_table[] = {
  {.name = "no-flag", .type = PB_OPTION_FLAG, T(flag), .flag = 0, .ini = "flag", .def = "1", .help = "off"},
  {.name = "mode", .type = PB_OPTION_CHOICE, T(choice), .metavar = "a|b|c", .choices = "a|b|c", .def = "b", .help = "m"},
  {.name = "count", .type = PB_OPTION_INT, T(i32), .metavar = "N", .imin = 1, .imax = 9, .def = "3", .help = "c"},
  {.name = "draws", .type = PB_OPTION_INT, T(i64), .metavar = "N", .imax = 10000000, .help = "d"},
  {.name = "seed", .type = PB_OPTION_INT, T(seed), .metavar = "N", .def = "20260908", .help = "s"},
  {.name = "rate", .type = PB_OPTION_DOUBLE, T(d), .metavar = "X", .max = 1, .open_min = 1, .help = "r"},
  {.name = "tau", .type = PB_OPTION_DOUBLE, T(f), .metavar = "X", .max = 1, .mark = PB_OPTION_AT(struct toy, have),
   .help = "t"},
  {.name = "taus", .type = PB_OPTION_LIST, T(list), .metavar = "a,b", .max = 1, .max_n = 3,
   .count = PB_OPTION_AT(struct toy, n), .distinct = 1, .help = "l"},
  {.name = "name", .type = PB_OPTION_STRING, T(s), .metavar = "S", .ini = "", .help = "a very long help text that "
   "has to be wrapped because it does not fit on one line of the help output at all, so it continues below"},
  {.name = NULL}};
#undef T

START_TEST(test_table)
{
  struct toy t;
  memset(&t, 0, sizeof t);
  pb_options_defaults(toy_table, &t);
  ck_assert(t.flag == 1 && t.choice == 1 && t.i32 == 3 && t.seed == 20260908 && t.have == 0 && t.n == 0);
  const struct pb_option *o = toy_table;
  ck_assert(pb_options_set(&o[0], &t, "--no-flag", NULL) == PB_OK && t.flag == 0);  /* command-line form */
  ck_assert(pb_options_set(&o[0], &t, "[x] flag", "1") == PB_OK && t.flag == 1);   /* INI form: as given */
  ck_assert(pb_options_set(&o[0], &t, "[x] flag", "2") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "[x] flag must be 0 or 1, got '2'");
  ck_assert(pb_options_set(&o[1], &t, "--mode", "c") == PB_OK && t.choice == 2);
  ck_assert(pb_options_set(&o[1], &t, "--mode", "d") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--mode must be 'a', 'b' or 'c', got 'd'");
  ck_assert(pb_options_set(&o[2], &t, "--count", "0") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--count must be an integer in [1, 9], got '0'");
  ck_assert(pb_options_set(&o[3], &t, "--draws", "10000000") == PB_OK && t.i64 == 10000000);
  ck_assert(pb_options_set(&o[4], &t, "--seed", "18446744073709551615") == PB_OK && t.seed == UINT64_MAX);
  ck_assert(pb_options_set(&o[4], &t, "--seed", "-1") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--seed must be a non-negative integer, got '-1'");
  ck_assert(pb_options_set(&o[5], &t, "--rate", "0") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--rate must be in (0, 1], got '0'");
  ck_assert(pb_options_set(&o[6], &t, "--tau", "0.5") == PB_OK && t.f == 0.5f && t.have == 1);
  ck_assert(pb_options_set(&o[7], &t, "--taus", "0.25,0.75") == PB_OK && t.n == 2);
  ck_assert(t.list[0] == 0.25f && t.list[1] == 0.75f);
  ck_assert(pb_options_set(&o[7], &t, "--taus", "0.25,0.25") == PB_FAIL && t.n == 2);
  ck_assert_str_eq(pb_error_message(), "--taus lists a value twice: '0.25,0.25'");
  ck_assert(pb_options_set(&o[7], &t, "--taus", "0.1,0.2,0.3,0.4") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--taus takes 1 to 3 comma-separated values in [0, 1], got '0.1,0.2,0.3,0.4'");
  ck_assert(pb_options_set(&o[8], &t, "--name", "x") == PB_OK && pb_options_set(&o[8], &t, "--name", "yz") == PB_OK);
  ck_assert_str_eq(t.s, "yz");
  ck_assert_ptr_eq(pb_options_find_ini(toy_table, "flag"), &o[0]);
  ck_assert_ptr_null(pb_options_find_ini(toy_table, "no_flag"));
  ck_assert_ptr_null(pb_options_find_ini(toy_table, "name")); /* command line only */
  pb_options_free(toy_table, &t);
  ck_assert_ptr_null(t.s);
}
END_TEST

START_TEST(test_help_text)
{
  char *buf = NULL;
  size_t n = 0;
  FILE *fp = open_memstream(&buf, &n);
  pb_options_help(fp, &toy_table[1]);
  fclose(fp);
  const char *want =
    "  --mode a|b|c         m (default b)\n"
    "  --count N            c (default 3)\n"
    "  --draws N            d\n"
    "  --seed N             s (default 20260908)\n"
    "  --rate X             r\n"
    "  --tau X              t\n"
    "  --taus a,b           l\n"
    "  --name S             a very long help text that has to be wrapped because it does not fit on one line of the help\n"
    "                       output at all, so it continues below\n";
  ck_assert_str_eq(buf, want);
  free(buf);
  char syn[256] = "toy";
  pb_options_synopsis(syn, sizeof syn, &toy_table[6]);
  ck_assert_str_eq(syn, "toy [--tau X] [--taus a,b] [--name S]");
}
END_TEST

static const char *run_head = "[run]\nstore = s.h5\noutput = out\nstages = bounds, screen\n";

static void run_parse_ok(const char *extra, struct pb_run_config *c)
{
  char text[4096];
  snprintf(text, sizeof text, "%s%s", run_head, extra);
  ck_assert_msg(pb_run_config_parse(text, "t.ini", c) == PB_OK, "%s", pb_error_message());
}

static void run_parse_fails(const char *extra, const char *message)
{
  char text[4096];
  struct pb_run_config c;
  snprintf(text, sizeof text, "%s%s", run_head, extra);
  ck_assert(pb_run_config_parse(text, "t.ini", &c) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), message);
}

START_TEST(test_run_seed)
{
  struct pb_run_config c;
  run_parse_ok("", &c); /* default run seed: every stage its standalone default */
  ck_assert(BOUNDS(c)->seed == 20260908 && VERIFY(c)->sample_seed == 20260911 && SCREEN(c)->seed == 20260912);
  ck_assert(PREDICT(c)->seed == 20260913 && FRAGILITY(c)->k.seed == 20260914);
  pb_run_config_free(&c);
  run_parse_ok("seed = 100\ngroup_draws = 7\nclass_draws = 5\n", &c);
  ck_assert(BOUNDS(c)->seed == 100 && VERIFY(c)->sample_seed == 103 && SCREEN(c)->seed == 104 && PREDICT(c)->seed == 105);
  ck_assert(FRAGILITY(c)->k.seed == 106);
  ck_assert(BOUNDS(c)->group_draws == 7 && SCREEN(c)->group_draws == 7 && SCREEN(c)->class_draws == 5);
  ck_assert(PREDICT(c)->group_draws == 7);
  pb_run_config_free(&c);
  /* a stage's own key wins, in whichever order the sections come */
  run_parse_ok("[screen]\nseed = 9\ngroup_draws = 1\n[verify]\nsample_seed = 4\n[run]\nseed = 100\ngroup_draws = 7\n", &c);
  ck_assert(BOUNDS(c)->seed == 100 && VERIFY(c)->sample_seed == 4 && SCREEN(c)->seed == 9);
  ck_assert(BOUNDS(c)->group_draws == 7 && SCREEN(c)->group_draws == 1);
  pb_run_config_free(&c);
  /* [predict]: lists with blanks after the commas, the flag under the name of what it switches */
  run_parse_ok("[predict]\nfeatures = Syn-B, Syn\ntargets = ES\ndeletion = 0\nseed = 3\n[run]\nseed = 100\n", &c);
  ck_assert(PREDICT(c)->n_features == 2 && PREDICT(c)->n_targets == 1 && PREDICT(c)->deletion == 0 && PREDICT(c)->seed == 3);
  ck_assert_str_eq(PREDICT(c)->features[0], "Syn-B");
  ck_assert_str_eq(PREDICT(c)->features[1], "Syn");
  pb_run_config_free(&c);
  run_parse_fails("[predict]\ntargets = ES,,Diverse\n",
                  "t.ini:6: [predict] targets: expected 1 to 4 comma-separated source names, got 'ES,,Diverse'");
  run_parse_ok("[fragility]\nseed = 11\n[run]\nseed = 100\n", &c);
  ck_assert(FRAGILITY(c)->k.seed == 11 && SCREEN(c)->seed == 104);
  pb_run_config_free(&c);
  /* [bounds] tau is every cell's threshold for verify and policy too, unless they set theirs */
  run_parse_ok("[bounds]\ntau = 0.75\n[policy]\ntau = 0.5\n", &c);
  ck_assert(BOUNDS(c)->have_tau && BOUNDS(c)->tau == 0.75f && VERIFY(c)->have_tau && VERIFY(c)->tau == 0.75f);
  ck_assert(POLICY(c)->have_tau && POLICY(c)->tau == 0.5f);
  pb_run_config_free(&c);
}
END_TEST

START_TEST(test_run_sections)
{
  struct pb_run_config c;
  run_parse_ok("[protocol]\ncoverage = 0.7\npanel_cells = ES=3\npanel_cells = Syn=4\n"
               "[screen]\nprobe = Syn-B:fog-2\nprobe = TTA=Syn-B\ntargets = ES\nsplit = dev\nsubset_sizes = none\n"
               "severity_sets = 0\n[verify]\nsources = ES,Syn\npolicy_taus = 0.5,0.6\n[policy]\nall = 1\n", &c);
  ck_assert(c.protocol.coverage == 0.7 && c.protocol.n_quota == 2 && c.protocol.quota[1] == 4);
  ck_assert_str_eq(c.protocol.quota_source[1], "Syn");
  ck_assert(SCREEN(c)->n_probesets == 2 && SCREEN(c)->n_targets == 1 && SCREEN(c)->swapped == 1);
  ck_assert(SCREEN(c)->n_subset_sizes == 0 && SCREEN(c)->severity_sets == 0);
  ck_assert_str_eq(VERIFY(c)->sources, "ES,Syn");
  ck_assert(VERIFY(c)->policies == 1 && VERIFY(c)->n_taus == 2); /* policy_taus implies policies, as on the command line */
  ck_assert(POLICY(c)->all == 1);
  pb_run_config_free(&c);
  run_parse_fails("[screen]\nprobe = Syn-B\nprobe = Syn-B:fog-2\n",
                  "t.ini:7: only one [screen] probe without NAME= (the primary set), got another: 'Syn-B:fog-2'");
  run_parse_fails("[bounds]\nmatched = 0\nmatched = 1\n", "t.ini:7: [bounds] matched given twice");
  run_parse_fails("[bounds]\nno_matched = 0\n", "t.ini:6: unknown key 'no_matched' in [bounds]");
  /* --law and --rho make `fragility` another command: not pipeline keys */
  run_parse_fails("[fragility]\nlaw = b.law\n", "t.ini:6: unknown key 'law' in [fragility]");
  run_parse_fails("[fragility]\nrho = 1\n", "t.ini:6: unknown key 'rho' in [fragility]");
  run_parse_fails("[fragility]\nbins = 0\n", "t.ini:6: [fragility] bins must be an integer in [1, 1000], got '0'");
  run_parse_ok("[fragility]\nbins = 10\nrho_max = 2\nprobe = self\nnull = 0\n", &c);
  ck_assert(FRAGILITY(c)->k.n_bins == 10 && FRAGILITY(c)->k.rho_max == 2 && FRAGILITY(c)->k.n_null == 0);
  ck_assert_str_eq(FRAGILITY(c)->probe, "self");
  pb_run_config_free(&c);
  run_parse_fails("[policy]\nlambdas = 0.5,2\n",
                  "t.ini:6: [policy] lambdas takes 1 to 32 comma-separated values in [0, 1], got '0.5,2'");
  ck_assert(pb_run_config_parse("[run]\nstore = s.h5\nstages = bounds, prediction\n", "t.ini", &c) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "t.ini:3: [run] stages: unknown stage 'prediction'");
  ck_assert(pb_run_config_parse("[run]\nstore = s.h5\noutput = o\n", "t.ini", &c) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "t.ini: [run] needs stages");
  /* store and output may come from --store and -o: the pipeline asks for them, writing nothing */
  ck_assert_msg(pb_run_config_parse("[run]\nstages = bounds\n", "t.ini", &c) == PB_OK, "%s", pb_error_message());
  ck_assert(pb_run_config_check(&c) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "run: no output directory (give -o OUTDIR or output = OUTDIR in [run])");
  c.output = pb_strdup("o");
  ck_assert(pb_run_config_check(&c) == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "run: no store (give --store STORE or store = STORE in [run])");
  c.store = pb_strdup("s.h5");
  ck_assert(pb_run_config_check(&c) == PB_OK);
  pb_run_config_free(&c);
}
END_TEST

/* Every option of every stage that has a default can be written in its
 * [stage] section with that default, and gives the standalone default. */
START_TEST(test_run_every_key)
{
  static const struct {
    const char *section;
    const struct pb_option *table;
  } stages[] = {{"protocol", pb_protocol_option_table}, {"bounds", pb_bounds_option_table},
                {"verify", pb_verify_option_table}, {"policy", pb_policy_option_table},
                {"screen", pb_screen_option_table}, {"predict", pb_predict_option_table},
                {"fragility", pb_fragility_option_table}};
  int keys = 0;
  for (size_t s = 0; s < sizeof stages / sizeof stages[0]; s++)
    for (const struct pb_option *o = stages[s].table; o->name; o++) {
      char key[64], extra[512];
      if (!pb_options_ini_key(o, key)[0]) continue;
      const char *value = o->def ? o->def : o->type == PB_OPTION_DOUBLE ? "0.5" : o->type == PB_OPTION_LIST ? "0.5"
                        : !strcmp(o->name, "probe") ? "Syn-B" : !strcmp(o->name, "panel-cells") ? "ES=3"
                        : !strcmp(o->name, "targets") ? "ES" : "x";
      snprintf(extra, sizeof extra, "[%s]\n%s = %s\n", stages[s].section, key, value);
      struct pb_run_config c;
      run_parse_ok(extra, &c);
      pb_run_config_free(&c);
      keys++;
    }
  ck_assert_int_ge(keys, 30);
}
END_TEST

START_TEST(test_run_embedded)
{
  struct pb_run_config c;
  ck_assert_msg(pb_run_config_parse(pb_embedded_run_ini, "inputs/run.ini", &c) == PB_OK, "%s", pb_error_message());
  ck_assert(c.n_stages == 10 && BOUNDS(c)->perm_replicates == 20 && BOUNDS(c)->group_draws == 2000);
  ck_assert_str_eq(c.stages[8], "fragility");
  /* seed 002's exact references: every world x level with the built-in predictors, at seed 2032 */
  ck_assert_str_eq(c.stages[9], "exact");
  ck_assert_str_eq(EXACT(c)->worlds, "covert,credit,review");
  ck_assert_str_eq(EXACT(c)->levels, "low,medium,high");
  ck_assert_str_eq(EXACT(c)->predictors, "pstar,prior,logistic:n=1000");
  ck_assert(EXACT(c)->seed == 2032 && EXACT(c)->knn_bound == PB_EXACT_KNN_FEEBEE);
  ck_assert(BOUNDS(c)->calibration == 1);
  /* the further instances: their own options, the run's seeds and draws */
  ck_assert_int_eq(c.n_instances, 3);
  ck_assert_str_eq(c.stages[5], "screen.dev");
  const struct pb_screen_options *dev = c.instances[1].opts, *dev_tiers = c.instances[2].opts;
  ck_assert_str_eq(c.instances[1].name, "screen.dev");
  ck_assert(dev->swapped == 1 && dev->eval_tiers == 0 && dev->seed == 20260912);
  ck_assert(dev->group_draws == 2000 && dev->class_draws == 200);
  ck_assert(dev_tiers->swapped == 1 && dev_tiers->eval_tiers == 1);
  /* its own key wins over [run] class_draws: Table 24 has group intervals only */
  ck_assert(dev_tiers->group_draws == 2000 && dev_tiers->class_draws == 0);
  ck_assert(((const struct pb_verify_options *)c.instances[0].opts)->policies == 1 && VERIFY(c)->policies == 0);
  ck_assert(FRAGILITY(c)->k.seed == 20260914 && FRAGILITY(c)->k.n_null == 200);
  ck_assert(SCREEN(c)->group_draws == 2000 && SCREEN(c)->class_draws == 200);
  ck_assert(BOUNDS(c)->seed == 20260908 && SCREEN(c)->seed == 20260912 && VERIFY(c)->sample_seed == 20260911);
  ck_assert(PREDICT(c)->seed == 20260913 && PREDICT(c)->group_draws == 2000 && PREDICT(c)->shuffles == 20);
  /* the feature and target sources come from the store's roles unless given (docs/store.md, "Roles") */
  ck_assert(PREDICT(c)->deletion == 1 && PREDICT(c)->n_features == 0 && PREDICT(c)->n_targets == 0);
  pb_run_config_free(&c);
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("options");
  TCase *tc = tcase_create("parse");
  tcase_add_test(tc, test_parse_int);
  tcase_add_test(tc, test_parse_double);
  suite_add_tcase(s, tc);
  tc = tcase_create("table");
  tcase_add_test(tc, test_table);
  tcase_add_test(tc, test_help_text);
  suite_add_tcase(s, tc);
  tc = tcase_create("run");
  tcase_add_test(tc, test_run_seed);
  tcase_add_test(tc, test_run_sections);
  tcase_add_test(tc, test_run_every_key);
  tcase_add_test(tc, test_run_embedded);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
