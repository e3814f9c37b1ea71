/* Output field tables: results.h5 columns, TSV header and rows, and column
 * readers generated from one description per output. */
#include "config.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "pairbound/protocol.h"
#include "core/h5io.h"
#include "pairbound/error.h"
#include "pairbound/fields.h"

struct pb_fields pb_fields_static(const char *group, int32_t n, const struct pb_field *f)
{
  return (struct pb_fields){.group = group, .n = n, .f = f, .own = NULL};
}

void pb_fields_alloc(struct pb_fields *fs, const char *group, int32_t n)
{
  fs->group = group;
  fs->n = n;
  fs->own = pb_calloc((size_t)(n > 0 ? n : 1), sizeof *fs->own);
  fs->f = fs->own;
}

void pb_fields_setf(struct pb_fields *fs, int32_t i, enum pb_field_fmt fmt, const char *name_fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, name_fmt);
  vsnprintf(buf, sizeof buf, name_fmt, ap);
  va_end(ap);
  free((char *)fs->own[i].name);
  fs->own[i] = (struct pb_field){pb_strdup(buf), fmt};
}

void pb_fields_free(struct pb_fields *fs)
{
  if (fs->own)
    for (int32_t i = 0; i < fs->n; i++) free((char *)fs->own[i].name);
  free(fs->own);
  memset(fs, 0, sizeof *fs);
}

int32_t pb_fields_find(const struct pb_fields *fs, const char *name)
{
  for (int32_t i = 0; i < fs->n; i++)
    if (fs->f[i].name && strcmp(fs->f[i].name, name) == 0) return i;
  return -1;
}

int pb_fields_write(const struct pb_fields *fs, struct pb_results *res, int64_t n_total, int64_t first,
                    int64_t n_local, const double *recs)
{
  return pb_fields_write_at(fs, res, n_total, first, n_local, recs, fs->n);
}

int pb_fields_write_at(const struct pb_fields *fs, struct pb_results *res, int64_t n_total, int64_t first,
                       int64_t n_local, const double *recs, int64_t stride)
{
  /* columns a group of G at a time: one pass over the records takes G
   * consecutive fields of each (a few cache lines), where a column at a time
   * touches one line per record and field (screen's 365 columns of cell
   * records 12 kB apart: 0.01 s instead of 0.03 s) */
  enum { G = 32 };
  const int64_t nl = n_local > 0 ? n_local : 1;
  double *cols = pb_malloc((size_t)G * (size_t)nl * sizeof *cols);
  int status = pb_results_group(res, fs->group);
  for (int32_t f0 = 0; f0 < fs->n && status == PB_OK; f0 += G) {
    const int32_t g = fs->n - f0 < G ? fs->n - f0 : G;
    for (int64_t c = 0; c < n_local; c++)
      for (int32_t j = 0; j < g; j++) cols[(size_t)j * (size_t)nl + (size_t)c] = recs[c * stride + f0 + j];
    for (int32_t j = 0; j < g && status == PB_OK; j++) {
      char path[256];
      snprintf(path, sizeof path, "%s/%s", fs->group, fs->f[f0 + j].name);
      status = pb_results_write_f64(res, path, n_total, first, n_local, cols + (size_t)j * (size_t)nl);
    }
  }
  free(cols);
  return status;
}

void pb_fields_tsv_header(const struct pb_fields *fs, const char *keys, int32_t from, struct pb_text *t)
{
  pb_text_printf(t, "%s", keys);
  for (int32_t f = from; f < fs->n; f++) pb_text_printf(t, "%s%s", f == from && !keys[0] ? "" : "\t", fs->f[f].name);
}

void pb_fields_tsv_values(const struct pb_fields *fs, const double *rec, int32_t from, struct pb_text *t)
{
  for (int32_t f = from; f < fs->n; f++) {
    if (fs->f[f].fmt == PB_FMT_TIER) pb_text_printf(t, "\t%s", pb_protocol_tier_name((int)rec[f]));
    else if (fs->f[f].fmt == PB_FMT_INT && !isnan(rec[f])) pb_text_int(t, (long long)rec[f]);
    else pb_text_num(t, rec[f]);
  }
}

int pb_fields_read(const struct pb_fields *fs, const char *path, int64_t n_total, int64_t first, int64_t n,
                   double *recs)
{
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) {
    pb_error_set("%s: cannot open results file", path);
    return PB_FAIL;
  }
  double *col = pb_malloc((size_t)(n > 0 ? n : 1) * sizeof *col);
  int status = PB_OK;
  for (int32_t f = 0; f < fs->n && status == PB_OK; f++) {
    char name[256];
    snprintf(name, sizeof name, "%s/%s", fs->group, fs->f[f].name);
    status = pb_h5_read_slice(file, path, name, H5T_NATIVE_DOUBLE, n_total, first, n, col, NULL);
    for (int64_t c = 0; c < n && status == PB_OK; c++) recs[c * fs->n + f] = col[c];
  }
  free(col);
  H5Fclose(file);
  return status;
}
