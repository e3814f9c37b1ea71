/* libFuzzer harness: the CSV reader and validator (pb_ingest_parse).  Any
 * input must end in PB_OK or a FILE:LINE message -- never a crash, a leak, an
 * out-of-bounds access or undefined behaviour. */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "pairbound/ingest.h"
#include "pairbound/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/pbfuzz_csv.%d", (int)getpid());
  FILE *fp = fopen(path, "wb");
  if (!fp) abort();
  fwrite(data, 1, size, fp);
  fclose(fp);
  pb_error_clear();
  struct pb_meta meta = {0};
  struct pb_rows *rows = NULL;
  if (pb_ingest_parse(path, NULL, &meta, &rows) == PB_OK) {
    for (int32_t s = 0; s < meta.n_sources; s++) pb_store_rows_free(&rows[s]);
    free(rows);
    pb_meta_free(&meta);
  } else if (!pb_error_message()[0]) {
    abort(); /* a refusal must say why */
  }
  return 0;
}
