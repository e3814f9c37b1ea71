/* `pairbound export`: write a record store as CSV in canonical order, so that
 * ingest -> export reproduces a canonical CSV byte for byte (docs/csv.md). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/output.h"
#include "pairbound/store.h"
#include "pairbound/text.h"

/* Names never hold ',', '"' or line ends (pb_meta_validate), but the CSV
 * reader trims blanks around unquoted fields, so such names are quoted. */
static void pb_export__name(FILE *fp, const char *s)
{
  size_t n = strlen(s);
  int quote = n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t');
  if (quote) fputc('"', fp);
  fputs(s, fp);
  if (quote) fputc('"', fp);
}

/* One CSV line per record of one model's rows (all conditions of source src). */
static void pb_export__model(FILE *fp, const struct pb_meta *meta, int32_t s, int32_t m, const struct pb_rows *r)
{
  const struct pb_source *src = &meta->sources[s];
  char a[32], b[32];
  for (int32_t c = 0; c < src->n_conditions; c++)
    for (int32_t i = 0; i < src->n_images; i++) {
      size_t at = (size_t)c * (size_t)src->n_images + (size_t)i;
      pb_export__name(fp, meta->model_ids[m]);
      fputc(',', fp);
      pb_export__name(fp, meta->model_groups[m]);
      fputc(',', fp);
      pb_export__name(fp, src->name);
      fputc(',', fp);
      pb_export__name(fp, src->conditions[c]);
      fputc(',', fp);
      pb_export__name(fp, src->image_ids[i]);
      pb_text_format_float(r->smax[at], a);
      pb_text_format_float(r->ptrue[at], b);
      fprintf(fp, ",%d,%s,%d,%s,%s", src->labels[i], src->split[i] == PB_SPLIT_EVAL ? "eval" : "dev",
              r->pred[at], a, b);
      for (int32_t k = 0; k < r->topk; k++) {
        pb_text_format_float(r->topk_prob[at * (size_t)r->topk + (size_t)k], a);
        fprintf(fp, ",%d,%s", r->topk_class[at * (size_t)r->topk + (size_t)k], a);
      }
      fputc('\n', fp);
    }
}

int pb_export_csv(const char *store_path, const char *csv_path)
{
  int status = PB_FAIL, open = 0;
  struct pb_store *st = NULL;
  struct pb_outfile out;
  struct pb_rows block;
  int32_t *index = NULL;
  memset(&block, 0, sizeof block);
  struct pb_output_lock lock = {.fd = -1};
  if (pb_output_file_ok(csv_path, PB_OUTPUT_CSV, &store_path, 1, pb_output_force())) return PB_FAIL;
  if (pb_store_open(store_path, MPI_COMM_SELF, &st)) return PB_FAIL;
  const struct pb_meta *meta = pb_store_meta(st);
  char *lockfile = pb_malloc(strlen(csv_path) + 8);
  sprintf(lockfile, "%s.lock", csv_path);
  int locked = pb_output_lock_take(&lock, lockfile, csv_path);
  free(lockfile);
  if (locked != PB_OK || pb_output_file_open(&out, csv_path)) goto done;
  open = 1;
  fputs("model,group,source,condition,image,label,split,pred,smax,ptrue", out.fp);
  for (int32_t k = 1; k <= meta->topk; k++) fprintf(out.fp, ",top%d_class,top%d_prob", k, k);
  fputc('\n', out.fp);
  for (int32_t s = 0; s < meta->n_sources; s++) {
    int32_t nc = meta->sources[s].n_conditions;
    index = pb_realloc(index, (size_t)nc * sizeof *index);
    /* one model at a time keeps memory at one model's share of a source */
    for (int32_t m = 0; m < meta->n_models; m++) {
      for (int32_t c = 0; c < nc; c++) index[c] = m * nc + c;
      if (pb_store_read_rows(st, s, nc, index, &block)) goto done;
      pb_export__model(out.fp, meta, s, m, &block);
      pb_store_rows_free(&block);
      /* stop at the first failed write (a full disk), not after the store */
      if (fflush(out.fp) != 0 || ferror(out.fp)) {
        pb_error_set("%s: cannot write file: %s", csv_path, strerror(errno));
        goto done;
      }
    }
  }
  open = 0;
  status = pb_output_file_commit(&out);
done:
  if (open) pb_output_file_abort(&out);
  pb_output_lock_release(&lock);
  pb_store_rows_free(&block);
  free(index);
  pb_store_close(st);
  return status;
}
