/* CSV ingest and export: every validation rule with its exact message, and
 * byte-identical round trips through the store. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/probsum.h"
#include "pairbound/store.h"
#include "pairbound/text.h"
#include "testlib.h"

#define HDR "model,group,source,condition,image,label,split,pred,smax,ptrue\n"
#define HDR2 "model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob,top2_class,top2_prob\n"

/* ------------------------------------------------------------------ helpers */

static char *read_all(const char *path, size_t *len)
{
  FILE *fp = fopen(path, "rb");
  ck_assert_msg(fp != NULL, "cannot open %s", path);
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  ck_assert(fread(buf, 1, (size_t)n, fp) == (size_t)n);
  buf[n] = '\0';
  fclose(fp);
  if (len) *len = (size_t)n;
  return buf;
}

static void write_all(const char *path, const char *text)
{
  FILE *fp = fopen(path, "wb");
  ck_assert_msg(fp != NULL, "cannot create %s", path);
  ck_assert(fwrite(text, 1, strlen(text), fp) == strlen(text));
  fclose(fp);
}

/* Unique file names within the scratch directory. */
static void scratch(char *buf, size_t n, const char *ext)
{
  static int counter;
  snprintf(buf, n, "%s", pb_test_path(""));
  size_t l = strlen(buf);
  snprintf(buf + l, n - l, "f%03d%s", counter++, ext);
}

/* Ingest csv (with options opt) and expect failure with message
 * "<csv path><suffix>", leaving neither the store nor its temporary behind. */
static void reject_opt(const char *csv, const struct pb_ingest_options *opt, const char *suffix)
{
  char path[512], store[512], want[2048];
  scratch(path, sizeof path, ".csv");
  scratch(store, sizeof store, ".h5");
  write_all(path, csv);
  pb_error_clear();
  ck_assert_int_eq(pb_ingest_csv(path, opt, store), PB_FAIL);
  snprintf(want, sizeof want, "%s%s", path, suffix);
  ck_assert_str_eq(pb_error_message(), want);
  ck_assert_msg(!pb_test_exists(store), "store left behind");
  ck_assert_msg(pb_test_temps(store) == 0, "a temporary of the store left behind");
}

static void reject(const char *csv, const char *suffix) { reject_opt(csv, NULL, suffix); }

/* Ingest then export; returns the exported text (caller frees). */
static char *round_trip(const char *csv, const struct pb_ingest_options *opt, char *store_out)
{
  char path[512], store[512], out[512];
  scratch(path, sizeof path, ".csv");
  scratch(store, sizeof store, ".h5");
  scratch(out, sizeof out, ".csv");
  write_all(path, csv);
  ck_assert_msg(pb_ingest_csv(path, opt, store) == PB_OK, "ingest: %s", pb_error_message());
  ck_assert(pb_test_exists(store));
  ck_assert_msg(pb_export_csv(store, out, MPI_COMM_SELF) == PB_OK, "export: %s", pb_error_message());
  if (store_out) strcpy(store_out, store);
  ck_assert(pb_test_temps(out) == 0);
  return read_all(out, NULL);
}

/* ------------------------------------------- a generated canonical data set */

struct gen {
  char *csv;
  size_t len, cap;
  /* expected values per source, [model][condition][image] */
  int32_t *pred[2];
  float *smax[2], *ptrue[2];
};

static const char *gen_models[2] = {"m1", "m2"};
static const char *gen_groups[2] = {"gA", "gB"};
static const char *gen_sources[2] = {"Syn", "ES"};
static const char *gen_conds[2][3] = {{"clean", "fog-1", "fog-2"}, {"blur", "clean", NULL}};
static const int gen_nc[2] = {3, 2};
static const int gen_ni[2] = {5, 4};
static const int gen_classes = 4;

static void gen_append(struct gen *g, const char *s)
{
  size_t n = strlen(s);
  if (g->len + n + 1 > g->cap) {
    g->cap = 2 * (g->len + n + 1);
    g->csv = realloc(g->csv, g->cap);
  }
  memcpy(g->csv + g->len, s, n + 1);
  g->len += n;
}

static uint32_t lcg(uint64_t *x)
{
  *x = *x * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(*x >> 33);
}

/* Canonical order: sources, models, conditions, images, as pb_export_csv writes. */
static void gen_make(struct gen *g)
{
  uint64_t x = test_seed();
  memset(g, 0, sizeof *g);
  gen_append(g, HDR);
  for (int s = 0; s < 2; s++) {
    size_t n = (size_t)2 * gen_nc[s] * gen_ni[s];
    g->pred[s] = malloc(n * sizeof(int32_t));
    g->smax[s] = malloc(n * sizeof(float));
    g->ptrue[s] = malloc(n * sizeof(float));
    for (int m = 0; m < 2; m++)
      for (int c = 0; c < gen_nc[s]; c++)
        for (int i = 0; i < gen_ni[s]; i++) {
          size_t at = ((size_t)m * gen_nc[s] + c) * gen_ni[s] + i;
          int label = (i * 3 + s) % gen_classes;
          int pred = (int)(lcg(&x) % gen_classes);
          float smax = (float)(0.3 + 0.7 * (lcg(&x) / 4294967296.0));
          float ptrue = pred == label ? smax : (float)(smax * (lcg(&x) / 4294967296.0));
          if (m == 1 && c == 0 && i == 0) smax = ptrue = 1.0f; /* the ends of [0, 1] */
          if (m == 1 && c == 0 && i == 1 && pred != label) ptrue = 0.0f;
          g->pred[s][at] = pred;
          g->smax[s][at] = smax;
          g->ptrue[s][at] = ptrue;
          char a[32], b[32], line[256];
          pb_text_format_float(smax, a);
          pb_text_format_float(ptrue, b);
          snprintf(line, sizeof line, "%s,%s,%s,%s,%s%d,%d,%s,%d,%s,%s\n", gen_models[m], gen_groups[m],
                   gen_sources[s], gen_conds[s][c], s == 0 ? "syn-img" : "es-img", i, label,
                   i % 2 ? "eval" : "dev", pred, a, b);
          gen_append(g, line);
        }
  }
}

static void gen_free(struct gen *g)
{
  free(g->csv);
  for (int s = 0; s < 2; s++) {
    free(g->pred[s]);
    free(g->smax[s]);
    free(g->ptrue[s]);
  }
}

/* Rewrite a simple (unquoted) CSV with its columns in the order perm. */
static char *permute_columns(const char *csv, const int *perm, int n)
{
  size_t cap = strlen(csv) * 2 + 16, len = 0;
  char *out = malloc(cap);
  char *copy = strdup(csv), *save = NULL;
  for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char *f[32], *s2 = NULL;
    int k = 0;
    for (char *t = strtok_r(line, ",", &s2); t && k < 32; t = strtok_r(NULL, ",", &s2)) f[k++] = t;
    ck_assert_int_eq(k, n);
    for (int j = 0; j < n; j++) len += (size_t)sprintf(out + len, "%s%s", j ? "," : "", f[perm[j]]);
    out[len++] = '\n';
  }
  out[len] = '\0';
  free(copy);
  return out;
}

/* ------------------------------------------------------------ round trips */

START_TEST(test_round_trip_canonical)
{
  struct gen g;
  gen_make(&g);
  char *out = round_trip(g.csv, NULL, NULL);
  ck_assert_str_eq(out, g.csv);
  free(out);
  gen_free(&g);
}
END_TEST

START_TEST(test_round_trip_topk)
{
  /* hand-written canonical file with top-2 lists; the label is in the top 2 in
   * some rows (then its probability equals ptrue) and not in others */
  const char *csv =
      HDR2
      "ma,g1,S,clean,i1,2,dev,2,0.7,0.7,2,0.7,0,0.2\n"
      "ma,g1,S,clean,i2,0,eval,1,0.5,0.25,1,0.5,0,0.25\n"
      "ma,g1,S,clean,i3,1,dev,0,0.6,0.125,0,0.6,2,0.25\n"
      "ma,g1,S,snow,i1,2,dev,0,0.4,0.35,0,0.4,2,0.35\n"
      "ma,g1,S,snow,i2,0,eval,0,1,1,0,1,1,0\n"
      "ma,g1,S,snow,i3,1,dev,1,0.33333334,0.33333334,1,0.33333334,0,0.33333334\n"
      "mb,g2,S,clean,i1,2,dev,2,0.9,0.9,2,0.9,1,0.05\n"
      "mb,g2,S,clean,i2,0,eval,0,0.55,0.55,0,0.55,1,0.45\n"
      "mb,g2,S,clean,i3,1,dev,2,0.5,0,2,0.5,0,0.5\n"
      "mb,g2,S,snow,i1,2,dev,1,0.8,0.1,1,0.8,2,0.1\n"
      "mb,g2,S,snow,i2,0,eval,0,0.6,0.6,0,0.6,2,0.3\n"
      "mb,g2,S,snow,i3,1,dev,0,0.3,0.3,0,0.3,1,0.3\n";
  char store[512];
  char *out = round_trip(csv, NULL, store);
  ck_assert_str_eq(out, csv);
  free(out);

  /* the store holds exactly the values written */
  struct pb_store *st;
  ck_assert_msg(pb_store_open(store, MPI_COMM_SELF, &st) == PB_OK, "%s", pb_error_message());
  const struct pb_meta *meta = pb_store_meta(st);
  ck_assert_int_eq(meta->topk, 2);
  ck_assert_int_eq(meta->n_models, 2);
  ck_assert_str_eq(meta->model_groups[1], "g2");
  ck_assert_int_eq(meta->sources[0].n_classes, 3);
  ck_assert_int_eq(meta->sources[0].clean, 0);
  struct pb_rows r;
  int32_t rows[1] = {3}; /* model mb, condition snow */
  ck_assert(pb_store_read_rows(st, 0, 1, rows, &r) == PB_OK);
  ck_assert_int_eq(r.pred[0], 1);
  ck_assert(r.smax[0] == 0.8f && r.ptrue[0] == 0.1f);
  ck_assert_int_eq(r.topk_class[0 * 2 + 1], 2);
  ck_assert(r.topk_prob[0 * 2 + 1] == 0.1f);
  ck_assert(r.topk_prob[2 * 2 + 1] == 0.3f);
  pb_store_rows_free(&r);
  pb_store_close(st);
}
END_TEST

/* Per-record summaries (docs/csv.md).  Vectors worked by hand: (0.5, 0.25,
 * 0.25) has entropy 1.5 ln 2 = 1.0397208 (float32, shortest text) and
 * collision 0.375; (0.2, 0.2, 0.6) has -(0.4 ln 0.2 + 0.6 ln 0.6) =
 * 0.95027053 and 0.44; a one-hot vector 0 and 1.  Columns in another order
 * come back in export's order, byte for byte on a second round. */
#define HDR_SUM "model,group,source,condition,image,label,split,pred,smax,ptrue,entropy,collision\n"
START_TEST(test_summaries_round_trip)
{
  const char *csv = HDR_SUM
      "ma,g1,S,clean,i1,0,dev,0,0.5,0.5,1.0397208,0.375\n"
      "ma,g1,S,clean,i2,1,eval,0,0.5,0.25,1.0397208,0.375\n"
      "ma,g1,S,snow,i1,0,dev,2,0.6,0.2,0.95027053,0.44\n"
      "ma,g1,S,snow,i2,1,eval,1,1,1,0,1\n";
  char store[512];
  char *out = round_trip(csv, NULL, store);
  ck_assert_str_eq(out, csv);
  free(out);
  struct pb_store *st;
  ck_assert_msg(pb_store_open(store, MPI_COMM_SELF, &st) == PB_OK, "%s", pb_error_message());
  ck_assert_int_eq(pb_store_meta(st)->summaries, PB_SUMMARY_ENTROPY | PB_SUMMARY_COLLISION);
  struct pb_rows r;
  int32_t rows[1] = {1}; /* condition snow */
  ck_assert(pb_store_read_fields(st, 0, 1, rows, PB_FIELD_COLLISION, &r) == PB_OK);
  ck_assert(r.entropy == NULL && r.collision != NULL);
  ck_assert(r.collision[0] == 0.44f && r.collision[1] == 1.0f);
  pb_store_rows_free(&r);
  pb_store_close(st);
  /* collision alone, its column first: export writes it last */
  const char *one = "collision,model,group,source,condition,image,label,split,pred,smax,ptrue\n"
                    "0.375,ma,g1,S,clean,i1,2,dev,2,0.5,0.5\n";
  out = round_trip(one, NULL, NULL);
  ck_assert_str_eq(out, "model,group,source,condition,image,label,split,pred,smax,ptrue,collision\n"
                        "ma,g1,S,clean,i1,2,dev,2,0.5,0.5,0.375\n");
  free(out);
}
END_TEST

/* The entropy's ceiling log(n_classes) with its tolerance, at class counts
 * whose log2 is whole or not, up to 2^31 - 1: an entropy 10^-5 beyond it is
 * refused and one 10^-5 within it passes (the check skips the logarithm
 * below floor(log2 n) x 0.6931, which must stay under log n). */
START_TEST(test_entropy_ceiling)
{
  const int64_t counts[] = {2, 3, 4, 5, 1000, 1024, 1025, 1 << 20, (int64_t)1 << 31};
  char why[128];
  for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++) {
    const int32_t n = counts[j] > INT32_MAX ? INT32_MAX : (int32_t)counts[j];
    const double ceiling = log((double)n) + PB_PROBSUM_TOL_ENTROPY;
    const float above = (float)(ceiling + 1e-5 * (1 + ceiling)), within = (float)(ceiling - 1e-5 * (1 + ceiling));
    const float c = 1.0f;
    ck_assert_msg(pb_probsum_problem(&above, &c, 0.0f, 0.0f, NULL, 0, n, why, sizeof why) == PB_SUMMARY_ENTROPY,
                  "%d classes: entropy %.9g passed", (int)n, above);
    ck_assert_msg(pb_probsum_problem(&within, &c, 0.0f, 0.0f, NULL, 0, n, why, sizeof why) == 0,
                  "%d classes: entropy %.9g refused: %s", (int)n, within, why);
  }
}
END_TEST

/* Each rule at its line (the class count is 3: labels and predictions up to 2). */
START_TEST(test_summaries_reject)
{
  const char *ok = "ma,g1,S,clean,i1,2,dev,0,0.5,0.5,1.0397208,0.375\n";
  char csv[1024];
  snprintf(csv, sizeof csv, HDR_SUM "%sma,g1,S,clean,i2,1,dev,0,0.5,0.25,1.2,0.375\n", ok);
  reject(csv, ":3: column 'entropy': 1.2 outside [0, log(3) = 1.09861229] (docs/csv.md, \"Per-record summaries\")");
  snprintf(csv, sizeof csv, HDR_SUM "%sma,g1,S,clean,i2,1,dev,0,0.5,0.25,1,0.2\n", ok);
  reject(csv, ":3: column 'collision': 0.2 outside [max(smax^2, ptrue^2) = 0.25, 1] (docs/csv.md, \"Per-record "
              "summaries\")");
  snprintf(csv, sizeof csv, HDR_SUM "%sma,g1,S,clean,i2,1,dev,0,0.5,0.25,1,1.5\n", ok);
  reject(csv, ":3: column 'collision': 1.5 outside [max(smax^2, ptrue^2) = 0.25, 1] (docs/csv.md, \"Per-record "
              "summaries\")");
  snprintf(csv, sizeof csv, HDR_SUM "%sma,g1,S,clean,i2,1,dev,0,0.5,0.25,-0.5,0.375\n", ok);
  reject(csv, ":3: column 'entropy': -0.5 outside [0, log(3) = 1.09861229] (docs/csv.md, \"Per-record summaries\")");
  snprintf(csv, sizeof csv, HDR_SUM "%sma,g1,S,clean,i2,1,dev,0,0.5,0.25,abc,0.375\n", ok);
  reject(csv, ":3: column 'entropy': not a number: 'abc'");
  /* top-2 list (0.5, 0.3) of 3 classes: the third holds at most r = 0.2 (<= 0.3), so collision lies in
   * [0.25 + 0.09, 0.34 + 0.2^2] = [0.34, 0.38] and entropy in [-(0.5 ln 0.5 + 0.3 ln 0.3), + 0.2 ln(1/0.2)]
   * = [0.707765, 1.029653] (the float32 values of 0.3 and 0.2 give the printed digits) */
  const char *hk = "model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob,top2_class,"
                   "top2_prob,entropy,collision\n";
  snprintf(csv, sizeof csv, "%sma,g1,S,clean,i1,2,dev,0,0.5,0.2,0,0.5,1,0.3,0.9,0.39\n", hk);
  reject(csv, ":2: column 'collision': 0.39 outside [0.340000007, 0.380000002], what the top-2 list allows "
              "(docs/csv.md, \"Per-record summaries\")");
  snprintf(csv, sizeof csv, "%sma,g1,S,clean,i1,2,dev,0,0.5,0.2,0,0.5,1,0.3,0.6,0.38\n", hk);
  reject(csv, ":2: column 'entropy': 0.6 outside [0.707765434, 1.02965301], what the top-2 list allows "
              "(docs/csv.md, \"Per-record summaries\")");
  /* the exact vector (0.5, 0.3, 0.2) passes: entropy 1.0296530, collision 0.38 */
  snprintf(csv, sizeof csv, "%sma,g1,S,clean,i1,2,dev,0,0.5,0.2,0,0.5,1,0.3,1.029653,0.38\n", hk);
  char *out = round_trip(csv, NULL, NULL);
  free(out);
}
END_TEST

START_TEST(test_store_values)
{
  struct gen g;
  char store[512];
  gen_make(&g);
  struct pb_ingest_options opt = {.provenance = "pairbound test ingest"};
  ck_assert(pb_ingest_add_classes(&opt, "ES=7") == PB_OK);
  char *out = round_trip(g.csv, &opt, store);
  ck_assert_str_eq(out, g.csv);
  free(out);
  pb_ingest_options_free(&opt);

  struct pb_store *st;
  ck_assert_msg(pb_store_open(store, MPI_COMM_SELF, &st) == PB_OK, "%s", pb_error_message());
  const struct pb_meta *meta = pb_store_meta(st);
  ck_assert_str_eq(meta->provenance, "pairbound test ingest");
  ck_assert_int_eq(meta->n_models, 2);
  ck_assert_int_eq(meta->n_sources, 2);
  ck_assert_int_eq(meta->topk, 0);
  for (int m = 0; m < 2; m++) {
    ck_assert_str_eq(meta->model_ids[m], gen_models[m]);
    ck_assert_str_eq(meta->model_groups[m], gen_groups[m]);
  }
  for (int s = 0; s < 2; s++) {
    const struct pb_source *src = &meta->sources[s];
    ck_assert_str_eq(src->name, gen_sources[s]);
    ck_assert_int_eq(src->n_conditions, gen_nc[s]);
    ck_assert_int_eq(src->n_images, gen_ni[s]);
    ck_assert_int_eq(src->clean, s == 0 ? 0 : 1);
    ck_assert_int_eq(src->n_classes, s == 0 ? gen_classes : 7); /* inferred / given */
    for (int c = 0; c < gen_nc[s]; c++) ck_assert_str_eq(src->conditions[c], gen_conds[s][c]);
    for (int i = 0; i < gen_ni[s]; i++) {
      ck_assert_int_eq(src->labels[i], (i * 3 + s) % gen_classes);
      ck_assert_int_eq(src->split[i], i % 2 ? PB_SPLIT_EVAL : PB_SPLIT_DEV);
    }
    int32_t n = 2 * gen_nc[s], idx[8];
    for (int32_t r = 0; r < n; r++) idx[r] = r;
    struct pb_rows r;
    ck_assert(pb_store_read_rows(st, s, n, idx, &r) == PB_OK);
    size_t cnt = (size_t)n * gen_ni[s];
    ck_assert(memcmp(r.pred, g.pred[s], cnt * sizeof(int32_t)) == 0);
    ck_assert(memcmp(r.smax, g.smax[s], cnt * sizeof(float)) == 0);
    ck_assert(memcmp(r.ptrue, g.ptrue[s], cnt * sizeof(float)) == 0);
    pb_store_rows_free(&r);
  }
  pb_store_close(st);
  gen_free(&g);
}
END_TEST

START_TEST(test_column_order)
{
  struct gen g;
  gen_make(&g);
  const int perm[10] = {9, 4, 2, 7, 0, 8, 6, 3, 5, 1};
  char *csv = permute_columns(g.csv, perm, 10);
  ck_assert(strncmp(csv, "ptrue,image,source,pred,model,smax,split,condition,label,group\n", 63) == 0);
  char *out = round_trip(csv, NULL, NULL);
  ck_assert_str_eq(out, g.csv);
  free(out);
  free(csv);
  gen_free(&g);
}
END_TEST

/* Quoted fields, CRLF line ends, blank lines and a missing final line end are
 * all accepted; the export is canonical again. */
START_TEST(test_quotes_crlf_blank_lines)
{
  const char *canon = HDR "m1,g1,S,clean,i1,0,dev,0,0.9,0.9\n"
                          "m1,g1,S,clean,i2,1,eval,0,0.75,0.125\n";
  const char *quoted = "\"model\",group,source,condition,image,label,split,pred,smax,ptrue\r\n"
                       "\"m1\",g1,\"S\",clean,\"i1\",0,dev,0,\"0.9\",0.9\r\n"
                       "\r\n"
                       "m1,\"g1\",S,\"clean\",i2,1,\"eval\",0,0.75,0.125\r\n"
                       "\r\n\r\n";
  char *out = round_trip(quoted, NULL, NULL);
  ck_assert_str_eq(out, canon);
  free(out);
  /* no line end after the last record; blanks around unquoted fields are trimmed */
  const char *loose = HDR "m1,g1,S,clean,i1,0,dev,0,0.9,0.9\n\n"
                          "m1, g1 ,S,clean,i2,1,eval,0,0.75,0.125";
  out = round_trip(loose, NULL, NULL);
  ck_assert_str_eq(out, canon);
  free(out);
  /* a UTF-8 byte-order mark before the header is skipped */
  char bom[256];
  snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", canon);
  out = round_trip(bom, NULL, NULL);
  ck_assert_str_eq(out, canon);
  free(out);
  /* a name with blanks at its ends survives the round trip quoted */
  const char *spaced = HDR "\" m1\",g1,S,clean,i1,0,dev,0,0.9,0.9\n";
  out = round_trip(spaced, NULL, NULL);
  ck_assert_str_eq(out, spaced);
  free(out);
}
END_TEST

START_TEST(test_same_key_in_two_sources)
{
  const char *csv = HDR "m1,g1,A,clean,i1,0,dev,0,0.9,0.9\n"
                        "m1,g1,B,clean,i1,0,dev,0,0.8,0.8\n";
  char *out = round_trip(csv, NULL, NULL);
  ck_assert_str_eq(out, csv);
  free(out);
}
END_TEST

START_TEST(test_tolerance)
{
  /* ptrue may exceed smax by up to 1e-6 (both as float32) */
  const char *csv = HDR "m1,g1,S,clean,i1,0,dev,1,0.5,0.5000005\n";
  char *out = round_trip(csv, NULL, NULL);
  ck_assert_str_eq(out, csv);
  free(out);
}
END_TEST

START_TEST(test_parse_classes)
{
  struct pb_meta meta;
  struct pb_rows *rows;
  char path[512];
  scratch(path, sizeof path, ".csv");
  write_all(path, HDR "m1,g1,S,clean,i1,2,dev,5,0.9,0.05\n"
                      "m1,g1,T,clean,i1,1,dev,1,0.9,0.9\n");
  ck_assert(pb_ingest_parse(path, NULL, &meta, &rows) == PB_OK);
  ck_assert_int_eq(meta.sources[0].n_classes, 6);
  ck_assert_int_eq(meta.sources[1].n_classes, 2);
  ck_assert_int_eq(rows[0].n_rows, 1);
  ck_assert_int_eq(rows[0].pred[0], 5);
  for (int s = 0; s < meta.n_sources; s++) pb_store_rows_free(&rows[s]);
  free(rows);
  pb_meta_free(&meta);

  struct pb_ingest_options opt = {0};
  ck_assert(pb_ingest_add_classes(&opt, "10") == PB_OK);
  ck_assert(pb_ingest_add_classes(&opt, "T=3") == PB_OK);
  ck_assert(pb_ingest_add_classes(&opt, "T=4") == PB_OK);   /* replaces T=3 */
  ck_assert_int_eq(opt.n_source_classes, 1);
  ck_assert(pb_ingest_parse(path, &opt, &meta, &rows) == PB_OK);
  ck_assert_int_eq(meta.sources[0].n_classes, 10);
  ck_assert_int_eq(meta.sources[1].n_classes, 4);
  for (int s = 0; s < meta.n_sources; s++) pb_store_rows_free(&rows[s]);
  free(rows);
  pb_meta_free(&meta);
  pb_ingest_options_free(&opt);

  ck_assert(pb_ingest_add_classes(&opt, "0") == PB_FAIL);
  ck_assert_str_eq(pb_error_message(), "--classes: expected N or SOURCE=N with 1 <= N <= 1048576 (the limit of classes per source), found '0'");
  ck_assert(pb_ingest_add_classes(&opt, "1048577") == PB_FAIL);
  ck_assert(pb_ingest_add_classes(&opt, "1048576") == PB_OK && opt.default_classes == 1048576);
  ck_assert(pb_ingest_add_classes(&opt, "S=x") == PB_FAIL);
  ck_assert(pb_ingest_add_classes(&opt, "=3") == PB_FAIL);
  ck_assert(pb_ingest_add_classes(&opt, "") == PB_FAIL);
  ck_assert(pb_ingest_add_classes(&opt, "a=b=2") == PB_OK);
  ck_assert_str_eq(opt.class_source[0], "a=b");
  pb_ingest_options_free(&opt);
}
END_TEST

/* ------------------------------------------------------------- rejections */

#define OK1 "m1,g1,S,clean,i1,0,dev,0,0.9,0.9\n"

START_TEST(test_reject_header)
{
  reject("", ": empty file (no header line)");
  reject("\n\n", ": empty file (no header line)");
  reject(HDR, ": no records");
  reject("model,group,source,condition,image,label,split,pred,smax,ptrue,foo\n", ":1: unknown column 'foo'");
  reject("\nmodel,group,source,condition,image,label,split,pred,smax,top0_class\n", ":2: unknown column 'top0_class'");
  reject("model,group,source,condition,image,label,split,pred,smax\n" "m1,g1,S,clean,i1,0,dev,0,0.9\n",
         ":1: missing column 'ptrue'");
  reject("model,source,condition,image,label,split,pred,smax,ptrue\n", ":1: missing column 'group'");
  reject("model,group,source,condition,image,label,split,pred,smax,ptrue,smax\n", ":1: duplicate column 'smax'");
  reject("model,group,source,condition,image,label,split,pred,smax,ptrue,top1_class,top1_prob,top2_class\n",
         ":1: missing column 'top2_prob'");
  reject("model,group,source,condition,image,label,split,pred,smax,ptrue,top2_class,top2_prob\n",
         ":1: missing column 'top1_class'");
  reject("model,group,source,condition,image,label,split,pred,smax,ptrue,top1_prob,top1_class,top1_prob\n",
         ":1: duplicate column 'top1_prob'");
}
END_TEST

START_TEST(test_reject_fields)
{
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9\n", ":2: expected 10 fields, found 9");
  reject(HDR OK1 "m1,g1,S,clean,i2,0,dev,0,0.9,0.9,1\n", ":3: expected 10 fields, found 11");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,abc,0.9\n", ":2: column 'smax': not a number: 'abc'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9,\n", ":2: column 'ptrue': not a number: ''");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9x,0.9\n", ":2: column 'smax': not a number: '0.9x'");
  reject(HDR "m1,g1,S,clean,i1,3x,dev,0,0.9,0.9\n", ":2: column 'label': not an integer: '3x'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,1.0,0.9,0.9\n", ":2: column 'pred': not an integer: '1.0'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,99999999999,0.9,0.9\n",
         ":2: column 'pred': integer out of range: '99999999999'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9,nan\n", ":2: column 'ptrue': not finite: 'nan'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,inf,0.9\n", ":2: column 'smax': not finite: 'inf'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,1e39,0.9\n", ":2: column 'smax': not finite: '1e39'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,1.5,0.9\n", ":2: column 'smax': 1.5 outside [0, 1]");
  reject(HDR "m1,g1,S,clean,i1,0,dev,1,0.9,-0.1\n", ":2: column 'ptrue': -0.1 outside [0, 1]");
  reject(HDR "m1,g1,S,clean,i1,0,test,0,0.9,0.9\n", ":2: column 'split': expected 'dev' or 'eval', found 'test'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,1,0.8,0.9\n", ":2: ptrue 0.9 exceeds smax 0.8");
  reject(HDR OK1 "m1,g1,S,clean,i2,0,dev,1,0.5,0.500002\n", ":3: ptrue 0.500002 exceeds smax 0.5");
  reject(HDR "m1,g1,S,clean,i1,2,dev,2,0.9,0.8\n", ":2: pred equals label 2 but ptrue 0.8 differs from smax 0.9");
  reject(HDR "m1,g1,S,clean,i1,-1,dev,0,0.9,0.5\n", ":2: column 'label': negative class -1");
  reject(HDR "m1,g1,S,clean,i1,0,dev,-2,0.9,0.5\n", ":2: column 'pred': negative class -2");
}
END_TEST

START_TEST(test_reject_names)
{
  reject(HDR "m1,g1,S,clean,,0,dev,0,0.9,0.9\n", ":2: column 'image': empty name");
  reject(HDR ",g1,S,clean,i1,0,dev,0,0.9,0.9\n", ":2: column 'model': empty name");
  reject(HDR "m1,,S,clean,i1,0,dev,0,0.9,0.9\n", ":2: column 'group': empty name");
  reject(HDR "m1,g1,S,fog/2,i1,0,dev,0,0.9,0.9\n",
         ":2: column 'condition': name 'fog/2' contains '/', which is not allowed");
  reject(HDR "m1,g1,\"S,T\",clean,i1,0,dev,0,0.9,0.9\n",
         ":2: column 'source': name 'S,T' contains ',', which is not allowed");
  reject(HDR "m1,g1,S,clean,\"i\"\"1\",0,dev,0,0.9,0.9\n",
         ":2: column 'image': name 'i\"1' contains '\"', which is not allowed");
  reject(HDR "m1,g1,S,clean,\"i\n1\",0,dev,0,0.9,0.9\n",
         ":2: column 'image': name 'i\n1' contains a newline, which is not allowed");
  reject(HDR "m1,g1,.,clean,i1,0,dev,0,0.9,0.9\n", ":2: column 'source': name '.' is not allowed");
}
END_TEST

/* Line numbers are physical lines: blank lines, CRLF and quoted line breaks count. */
START_TEST(test_reject_line_numbers)
{
  reject(HDR "\n" OK1 "\n\n" "m1,g1,S,clean,i2,0,dev,0,abc,0.9\n", ":6: column 'smax': not a number: 'abc'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9,0.9\r\n\r\nm1,g1,S,clean,i2,0,dev,0,2,0.9\r\n",
         ":4: column 'smax': 2 outside [0, 1]");
  /* the row with a quoted line break starts on line 2, the next row on line 4 */
  reject(HDR "m1,\"g\n1\",S,clean,i1,0,dev,0,0.9,0.9\n" "m1,g1,S,clean,i2,0,dev,0,abc,0.9\n",
         ":2: column 'group': name 'g\n1' contains a newline, which is not allowed");
  reject("model,\"gr\noup\",source,condition,image,label,split,pred,smax,ptrue\n",
         ":1: unknown column 'gr\noup'");
  reject(HDR "m1,g1,S,clean,i1,0,dev,0,0.9,0.9,\"x\ny\"\n" "m1,g1,S,clean,i2,0,dev,0,0.9,0.9,1\n",
         ":2: expected 10 fields, found 11");
}
END_TEST

START_TEST(test_reject_malformed)
{
  reject(HDR "m1,g1,S,clean,i\"1,0,dev,0,0.9,0.9\n", ":2: malformed CSV: misplaced quote");
  reject(HDR "m1,g1,S,clean,\"i1\"x,0,dev,0,0.9,0.9\n", ":2: malformed CSV: misplaced quote");
  reject(HDR OK1 "m1,g1,S,clean,\"i2,0,dev,0,0.9,0.9\n\n",
         ":3: malformed CSV: quoted field not closed at end of file");
}
END_TEST

START_TEST(test_reject_classes)
{
  struct pb_ingest_options opt = {0};
  ck_assert(pb_ingest_add_classes(&opt, "3") == PB_OK);
  reject_opt(HDR OK1 "m1,g1,S,clean,i2,3,dev,0,0.9,0.05\n", &opt,
             ":3: column 'label': class 3 outside [0, 3) of source S");
  ck_assert(pb_ingest_add_classes(&opt, "S=2") == PB_OK);   /* overrides the default for S */
  reject_opt(HDR OK1 "m1,g1,S,clean,i2,1,dev,2,0.9,0.05\n", &opt,
             ":3: column 'pred': class 2 outside [0, 2) of source S");
  ck_assert(pb_ingest_add_classes(&opt, "Nope=2") == PB_OK);
  reject_opt(HDR OK1, &opt, ": classes given for source Nope, which has no records");
  pb_ingest_options_free(&opt);
}
END_TEST

START_TEST(test_reject_set)
{
  /* duplicate (model, condition, image) within a source */
  reject(HDR OK1 "m1,g1,S,clean,i2,0,dev,0,0.9,0.9\n" "m1,g1,S,clean,i1,0,dev,0,0.8,0.8\n",
         ":4: duplicate record for source S, model m1, condition clean, image i1 (first at line 2)");
  /* an image missing from one cell */
  reject(HDR OK1 "m1,g1,S,clean,i2,1,eval,0,0.9,0.1\n" "m1,g1,S,fog,i1,0,dev,0,0.9,0.9\n",
         ": source S, model m1, condition fog: missing record for image i2");
  /* a model missing from a whole source */
  reject(HDR OK1 "m2,g2,S,clean,i1,0,dev,0,0.7,0.7\n" "m1,g1,T,clean,j1,0,dev,0,0.9,0.9\n",
         ": source T, model m2, condition clean: missing record for image j1");
  /* a condition missing for one model */
  reject(HDR OK1 "m1,g1,S,fog,i1,0,dev,0,0.9,0.9\n" "m2,g1,S,clean,i1,0,dev,0,0.7,0.7\n",
         ": source S, model m2, condition fog: missing record for image i1");
  /* an image's label or split differs between rows */
  reject(HDR OK1 "m1,g1,S,fog,i1,1,dev,0,0.9,0.1\n", ":3: image i1 of source S has label 1 here but 0 at line 2");
  reject(HDR OK1 "m1,g1,S,fog,i1,0,eval,0,0.9,0.9\n",
         ":3: image i1 of source S has split eval here but dev at line 2");
  /* a model in two groups */
  reject(HDR OK1 "m1,g2,S,fog,i1,0,dev,0,0.9,0.9\n", ":3: model m1 has group g2 here but g1 at line 2");
  /* a source without a clean condition */
  reject(HDR OK1 "m1,g1,T,fog,i1,0,dev,0,0.9,0.9\n", ": source T has no 'clean' condition");
  reject(HDR "m1,g1,S,Clean,i1,0,dev,0,0.9,0.9\n", ": source S has no 'clean' condition");
  /* row errors come first, even after a duplicate */
  reject(HDR OK1 OK1 "m1,g1,S,clean,i2,0,dev,0,0.9,x\n", ":4: column 'ptrue': not a number: 'x'");
}
END_TEST

START_TEST(test_reject_topk)
{
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,0,0.9,0.9,1,0.9,0,0.1\n", ":2: top1_class 1 differs from pred 0");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,0,0.9,0.9,0,0.8,1,0.1\n", ":2: top1_prob 0.8 differs from smax 0.9");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.4,1,0.5,2,0.6\n",
         ":2: top2_prob 0.6 exceeds top1_prob 0.5 (top-k probabilities must not increase)");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.4,1,0.5,1,0.4\n", ":2: top2_class 1 repeats top1_class");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.4,1,0.5,0,0.3\n",
         ":2: top2_class is the label 0 but top2_prob 0.3 differs from ptrue 0.4");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.4,1,0.5,2,0.3\n",
         ":2: ptrue 0.4 exceeds top2_prob 0.3 but the label 0 is not in the top 2");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.1,1,0.5,-2,0.3\n", ":2: column 'top2_class': negative class -2");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.1,1,0.5,2,1.3\n", ":2: column 'top2_prob': 1.3 outside [0, 1]");
  reject(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.1,1,0.5,2,x\n", ":2: column 'top2_prob': not a number: 'x'");
  struct pb_ingest_options opt = {.default_classes = 3};
  reject_opt(HDR2 "m1,g1,S,clean,i1,0,dev,1,0.5,0.1,1,0.5,3,0.3\n", &opt,
             ":2: column 'top2_class': class 3 outside [0, 3) of source S");
}
END_TEST

START_TEST(test_no_partial_store)
{
  char path[512], store[512];
  scratch(path, sizeof path, ".csv");
  scratch(store, sizeof store, ".h5");
  ck_assert(pb_ingest_csv(path, NULL, store) == PB_FAIL);   /* no such CSV */
  ck_assert(strstr(pb_error_message(), ": cannot open: ") != NULL);
  ck_assert(!pb_test_exists(store) && pb_test_temps(store) == 0);
  /* export of a missing store fails without output */
  char out[512];
  scratch(out, sizeof out, ".csv");
  ck_assert(pb_export_csv(store, out, MPI_COMM_SELF) == PB_FAIL);
  ck_assert(!pb_test_exists(out));
}
END_TEST

static Suite *suite(void)
{
  Suite *s = suite_create("ingest");
  TCase *tc = tcase_create("roundtrip");
  tcase_add_test(tc, test_round_trip_canonical);
  tcase_add_test(tc, test_round_trip_topk);
  tcase_add_test(tc, test_summaries_round_trip);
  tcase_add_test(tc, test_summaries_reject);
  tcase_add_test(tc, test_entropy_ceiling);
  tcase_add_test(tc, test_store_values);
  tcase_add_test(tc, test_column_order);
  tcase_add_test(tc, test_quotes_crlf_blank_lines);
  tcase_add_test(tc, test_same_key_in_two_sources);
  tcase_add_test(tc, test_tolerance);
  tcase_add_test(tc, test_parse_classes);
  suite_add_tcase(s, tc);
  tc = tcase_create("reject");
  tcase_add_test(tc, test_reject_header);
  tcase_add_test(tc, test_reject_fields);
  tcase_add_test(tc, test_reject_names);
  tcase_add_test(tc, test_reject_line_numbers);
  tcase_add_test(tc, test_reject_malformed);
  tcase_add_test(tc, test_reject_classes);
  tcase_add_test(tc, test_reject_set);
  tcase_add_test(tc, test_reject_topk);
  tcase_add_test(tc, test_no_partial_store);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) { return pb_test_run(suite()); }
