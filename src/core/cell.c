/* Naming a cell in kernel error messages. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "pairbound/cell.h"
#include "pairbound/error.h"

const char *pb_cell_view_name(const struct pb_cell_view *v, char *buf, size_t len)
{
  if (v && v->model && v->source && v->condition)
    snprintf(buf, len, "model %s, source %s, condition %s", v->model, v->source, v->condition);
  else if (v && v->index >= 0)
    snprintf(buf, len, "cell %lld", (long long)v->index);
  else
    snprintf(buf, len, "cell");
  return buf;
}

int pb_cell_error(const struct pb_cell_view *v, int32_t y, const char *fmt, ...)
{
  char name[512], msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  pb_cell_view_name(v, name, sizeof name);
  if (y >= 0) pb_error_set("%s, class %d: %s", name, (int)y, msg);
  else pb_error_set("%s: %s", name, msg);
  return -1;
}
