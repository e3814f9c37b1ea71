/* INI parsing shared by every configuration (libinih, with line numbers). */
#ifndef PAIRBOUND_INI_H
#define PAIRBOUND_INI_H

#define PB_INI_REASON (-2)  /* entry verdict: failed, reason already set with pb_error_set() */
/* Entry function: value is trimmed; returns PB_OK, PB_FAIL (reported as an
 * invalid value) or PB_INI_REASON. */
typedef int (*pb_ini_fn)(void *user, const char *section, const char *key, const char *value);
/** Parse INI text; the first error reads "NAME:LINE: reason". */
int pb_ini_parse(const char *text, const char *name, pb_ini_fn fn, void *user);
/** The message of an entry that returns PB_FAIL, "LABEL: invalid value 'VALUE'" with LABEL "[section] key",
 * set for an entry that reports through an option table (which returns PB_INI_REASON); returns PB_FAIL. */
int pb_ini_invalid(const char *label, const char *value);
/** White space off both ends of @p s, in place; returns the first character kept (values, names, list items). */
char *pb_ini_trim(char *s);

#endif /* PAIRBOUND_INI_H */
