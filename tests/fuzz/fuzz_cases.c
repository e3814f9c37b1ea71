/* libFuzzer harness: the files `pairbound exact score` reads, a CASES file
 * (pb_world_cases_read) and a PREDICTIONS file (pb_exact_predictions_read).
 * The input is the CASES text, then optionally a line `%%` and the PREDICTIONS
 * text.  Accepted cases are as many as `# cases` says, with distinct indices,
 * labels 0/1 and p* in [0, 1]; accepted predictions are one per case, each in
 * [0, 1] or unknown (NaN); anything else is refused with a FILE:LINE or FILE
 * message -- never a crash, a leak or undefined behaviour. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "exact/exact_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(const char *path, const uint8_t *data, size_t size)
{
  FILE *fp = fopen(path, "wb");
  if (!fp) abort();
  fwrite(data, 1, size, fp);
  fclose(fp);
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* A refusal says why, naming the file. */
static void refused(const char *path)
{
  if (strncmp(pb_error_message(), path, strlen(path)) != 0) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char cases[64], preds[64];
  if (!cases[0]) {
    snprintf(cases, sizeof cases, "/tmp/pbfuzz_cases.%d", (int)getpid());
    snprintf(preds, sizeof preds, "/tmp/pbfuzz_preds.%d", (int)getpid());
  }
  size_t split = size;
  for (size_t i = 0; i + 4 <= size; i++)
    if (!memcmp(data + i, "\n%%\n", 4)) {
      split = i + 1;
      break;
    }
  put(cases, data, split);
  put(preds, data + (split < size ? split + 3 : size), split < size ? size - split - 3 : 0);
  pb_error_clear();
  struct pb_world_cases c;
  if (pb_world_cases_read(cases, &c) != PB_OK) {
    refused(cases);
    pb_world_cases_free(&c);
    return 0;
  }
  if (c.n <= 0 || !c.world) abort();
  uint64_t *idx = malloc((size_t)c.n * sizeof *idx);
  memcpy(idx, c.index, (size_t)c.n * sizeof *idx);
  qsort(idx, (size_t)c.n, sizeof *idx, cmp_u64);
  for (int64_t i = 0; i < c.n; i++) {
    if (i > 0 && idx[i] == idx[i - 1]) abort(); /* an index twice */
    if (i > 0 && idx[i] != idx[i - 1] + 1) abort(); /* N rows in a range of N: consecutive */
    if ((c.y[i] != 0 && c.y[i] != 1) || !(c.pstar[i] >= 0 && c.pstar[i] <= 1)) abort();
  }
  free(idx);
  double *q = malloc((size_t)c.n * sizeof *q);
  pb_error_clear();
  if (pb_exact_predictions_read(preds, c.n, q) == PB_OK) {
    for (int64_t i = 0; i < c.n; i++)
      if (!isnan(q[i]) && !(q[i] >= 0 && q[i] <= 1)) abort();
  } else {
    refused(preds);
  }
  free(q);
  pb_world_cases_free(&c);
  return 0;
}
