/* INI parsing shared by every configuration: libinih over a string, with
 * line numbers in every message. */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ini.h>

#include "pairbound/error.h"
#include "pairbound/ini.h"

/* State of one pb_ini_parse() call. */
struct pb_ini__state {
  const char *name, *text;
  const char *cursor;       /* reader position in the text */
  int line;                 /* line number of the last line handed to libinih */
  int failed;
  pb_ini_fn fn;
  void *user;
};

char *pb_ini_trim(char *s)
{
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

/* A malformed line stops the parse here, with its own line number: libinih
 * would go on and blame a later line ("unknown section []"). */
static int pb_ini__syntax(struct pb_ini__state *p, const char *line)
{
  const char *t = line;
  while (isspace((unsigned char)*t)) t++;
  const char *why = NULL;
  if (*t == '[' && !strchr(t, ']')) why = "section header without a closing ']'";
  else if (*t == '[' && strchr(t, ']') == t + 1) why = "empty section name '[]'";
  if (!why) return 0;
  if (!p->failed) pb_error_set("%s:%d: syntax error: %s", p->name, p->line, why);
  p->failed = 1;
  return 1;
}

/* libinih reader over a string that counts lines (Debian's libinih passes no
 * line numbers to handlers). */
static char *pb_ini__reader(char *str, int num, void *stream)
{
  struct pb_ini__state *p = stream;
  if (!*p->cursor) return NULL;
  int n = 0;
  while (n < num - 1 && p->cursor[n] && p->cursor[n] != '\n') n++;
  if (n == num - 1 && p->cursor[n]) {
    /* libinih would split the line and count the rest as a new line */
    if (!p->failed) pb_error_set("%s:%d: line longer than %d characters", p->name, p->line + 1, num - 2);
    p->failed = 1;
    return NULL;
  }
  if (p->cursor[n] == '\n' && n < num - 1) n++;
  if (p->cursor == p->text || p->cursor[-1] == '\n') p->line++;
  memcpy(str, p->cursor, (size_t)n);
  str[n] = '\0';
  p->cursor += n;
  if (pb_ini__syntax(p, str)) return NULL;
  return str;
}

/* libinih handler: trims the value, calls the entry function and turns its
 * verdict into "NAME:LINE: reason"; returns 0 on error as libinih expects. */
static int pb_ini__handler(void *user, const char *section, const char *key, const char *value)
{
  struct pb_ini__state *p = user;
  if (p->failed) return 1;
  char *mem = pb_strdup(value), *v = pb_ini_trim(mem);
  pb_error_clear();
  int bad = p->fn(p->user, section, key, v);
  if (bad) {
    char why[512];
    if (bad != PB_INI_REASON) {
      char label[512];
      snprintf(label, sizeof label, "[%s] %s", section, key);
      pb_ini_invalid(label, v);
    }
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s:%d: %s", p->name, p->line, why);
    p->failed = 1;
  }
  free(mem);
  return bad ? 0 : 1;
}

int pb_ini_invalid(const char *label, const char *value)
{
  pb_error_set("%s: invalid value '%s'", label, value);
  return PB_FAIL;
}

int pb_ini_parse(const char *text, const char *name, pb_ini_fn fn, void *user)
{
  struct pb_ini__state p = {.name = name, .text = text, .cursor = text, .fn = fn, .user = user};
  int line = ini_parse_stream(pb_ini__reader, &p, pb_ini__handler, &p);
  if (line != 0 && !p.failed) pb_error_set("%s:%d: syntax error", name, line);
  return line != 0 || p.failed ? PB_FAIL : PB_OK;
}
