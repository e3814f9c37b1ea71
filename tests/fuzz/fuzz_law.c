/* libFuzzer harness: law files (pairbound fragility --law; pb_fragility_read_law)
 * and the exact profile of what they accept.  Any text must be a law whose
 * values lie in [0, 1] and whose masses are finite, non-negative and sum to 1
 * within 1e-12 (checked here in long double, independently of the reader's
 * exact sum), with a finite profile; or be refused with a FILE:LINE message --
 * never a crash, a leak or undefined behaviour. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pairbound/error.h"
#include "pairbound/fragility.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char path[64];
  if (!path[0]) snprintf(path, sizeof path, "/tmp/pbfuzz_law.%d", (int)getpid());
  FILE *fp = fopen(path, "wb");
  if (!fp) abort();
  fwrite(data, 1, size, fp);
  fclose(fp);
  pb_error_clear();
  double *v = NULL, *m = NULL;
  int32_t n = 0;
  if (pb_fragility_read_law(path, &v, &m, &n) != PB_OK) {
    if (strncmp(pb_error_message(), path, strlen(path)) != 0) abort(); /* a refusal names the file */
    return 0;
  }
  long double total = 0;
  for (int32_t i = 0; i < n; i++) {
    if (!(v[i] >= 0 && v[i] <= 1) || !(m[i] >= 0) || !isfinite(m[i])) abort();
    total += m[i];
  }
  /* long double's own rounding over at most 4096 / 4 atoms stays far below the tolerance */
  if (n <= 0 || !(fabsl(total - 1) <= 1e-12L + 1e-15L)) abort();
  struct pb_fragility_law law;
  pb_fragility_law_init(&law);
  if (pb_fragility_law_set(&law, v, m, n) != PB_OK) abort(); /* what the reader accepts is a law */
  if (!(law.G >= 0) || !isfinite(law.G)) abort();
  static const double rho[] = {0, 0.25, 1, 3, 1e6};
  for (size_t i = 0; i < sizeof rho / sizeof *rho; i++)
    if (!isfinite(pb_fragility_profile(&law, PB_FRAGILITY_UP, rho[i])) ||
        !isfinite(pb_fragility_profile(&law, PB_FRAGILITY_DOWN, rho[i])))
      abort();
  pb_fragility_law_free(&law);
  free(v);
  free(m);
  return 0;
}
