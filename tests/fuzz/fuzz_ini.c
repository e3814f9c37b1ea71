/* libFuzzer harness: the INI configurations (synth and run).  Any text must
 * parse or be refused with a NAME:LINE message -- never crash or leak. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/error.h"
#include "pairbound/run.h"
#include "pairbound/synth_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  char *text = malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  pb_error_clear();
  struct pb_synth_config cfg;
  memset(&cfg, 0, sizeof cfg);
  if (pb_synth_config_parse(text, "fuzz.ini", &cfg) == PB_OK) pb_synth_config_free(&cfg);
  else if (!pb_error_message()[0]) abort();
  pb_error_clear();
  struct pb_run_config run;
  memset(&run, 0, sizeof run);
  if (pb_run_config_parse(text, "fuzz.ini", &run) == PB_OK) pb_run_config_free(&run);
  else if (!pb_error_message()[0]) abort();
  free(text);
  return 0;
}
