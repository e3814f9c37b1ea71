/* Stage options declared once, as a table: the command line (`--name value`,
 * `--name=value`), every command's --help text and the [stage] sections of a
 * `pairbound run` configuration are all read from it, through one number
 * parser (pairbound/parse.h).
 *
 * Adding an option to a stage: one row in the stage's table (next to its
 * descriptor, e.g. pb_bounds_option_table in src/bounds/bounds_stage.c):
 *
 *   {.name = "perm-replicates", .type = PB_OPTION_INT,
 *    PB_OPTION_FIELD(struct pb_bounds_options, perm_replicates),
 *    .metavar = "R", .def = "0", .imax = 10000000, .help = "within-class permutation replicates"},
 *
 * and nothing else: the stage's options start from the table's .def values
 * (pb_options_defaults); `pairbound bounds --perm-replicates 5`,
 * `--perm-replicates=5` and `perm_replicates = 5` in the [bounds] section of
 * a `pairbound run` configuration all reach the field; `--help` prints
 * "--perm-replicates R" with .help and "(default 0)".
 *
 * A new stage names its table in its descriptor (.options = {.table, .size};
 * pairbound/stage.h) and is listed once in src/run/registry.c
 * (docs/architecture.md, "Adding a stage"); a key it takes from [run] (a
 * seed, the draws) is one row of its descriptor's .pipeline.inherits.
 *
 * Values that are not one number, word or list (a repeatable SRC=N, a list of
 * names) are PB_OPTION_CUSTOM rows whose .parse stores them and sets the
 * message "LABEL ...", where LABEL is "--name" or "[section] key". */
#ifndef PAIRBOUND_OPTIONS_H
#define PAIRBOUND_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pairbound/parse.h"

enum pb_option_type {
  PB_OPTION_FLAG,   /* CLI: no value, stores .flag into an int field; INI (.ini key): 0 or 1, stored as given */
  PB_OPTION_INT,    /* integer in [.imin, .imax] (.imax 0: the field's largest) into int32_t, int64_t or uint64_t */
  PB_OPTION_DOUBLE, /* real in [.min, .max] ((.min, .max] with .open_min) into a double or float */
  PB_OPTION_CHOICE, /* one word of .choices ("a|b|c"), stored as its index into an int */
  PB_OPTION_STRING, /* text, stored as a copy (char *; pb_options_free releases it) */
  PB_OPTION_LIST,   /* 1 to .max_n comma-separated reals in [.min, .max] into a float or double array;
                       the count goes to the int32_t at .count (PB_OPTION_AT), .distinct forbids repeats */
  PB_OPTION_CUSTOM  /* .parse stores the value (and sets the message when it fails) */
};

/* Field of an options struct: offset and size. */
#define PB_OPTION_FIELD(type, member) .offset = offsetof(type, member), .size = sizeof(((type *)0)->member)
/* Offset of another int member plus one (0 = none), for .count, .mark. */
#define PB_OPTION_AT(type, member) (offsetof(type, member) + 1)

struct pb_option {
  const char *name;     /* long option: --name; NULL ends a table */
  int type;             /* enum pb_option_type */
  size_t offset, size;  /* the field (PB_OPTION_FIELD) */
  char short_name;      /* single-letter form (-o), or 0 */
  const char *metavar;  /* the value in --help and the synopsis: X, N, "panel|all|none" */
  const char *def;      /* default, written as on the command line; applied by pb_options_defaults() and
                           shown as "(default DEF)" unless .help already states the default */
  const char *help;     /* one paragraph; '\n' starts an indented continuation line */
  const char *ini;      /* key in a run configuration: NULL = name with '-' as '_', "" = command line only */
  int64_t imin;         /* INT: range */
  uint64_t imax;
  double min, max;      /* DOUBLE, LIST: range */
  int open_min;         /* DOUBLE: the range excludes min */
  int flag;             /* FLAG: value stored by the command-line form */
  const char *choices;  /* CHOICE: "a|b|c" */
  int max_n;            /* LIST: capacity */
  size_t count;         /* LIST: PB_OPTION_AT of the int32_t count */
  int distinct;         /* LIST: no value twice */
  size_t mark;          /* PB_OPTION_AT of an int set to 1 whenever the option is given (have_tau, implied modes) */
  int repeatable;       /* may be given more than once (each use adds); also as a repeated INI key */
  int help_default;     /* .help states the default itself */
  int (*parse)(void *opts, const char *label, const char *value); /* CUSTOM */
};

/** Apply every row's .def to @p opts (rows without one keep what is there). */
void pb_options_defaults(const struct pb_option *table, void *opts);

/**
 * Store @p value for option @p o into @p opts.  @p label names the option in
 * the message ("--tau" or "[bounds] tau"); on failure the message reads
 * "LABEL must be in [0, 1], got 'x'".  @p value is NULL for a command-line FLAG.
 */
int pb_options_set(const struct pb_option *o, void *opts, const char *label, const char *value);

/** Row of @p table whose INI key is @p key, or NULL. */
const struct pb_option *pb_options_find_ini(const struct pb_option *table, const char *key);

/** INI key of @p o into @p buf (empty when the option is command-line only). */
const char *pb_options_ini_key(const struct pb_option *o, char buf[64]);

/** Release the STRING fields of @p opts. */
void pb_options_free(const struct pb_option *table, void *opts);

/** Write the --help lines of @p table ("  --name X            help"). */
void pb_options_help(FILE *fp, const struct pb_option *table);

/** Write the run-configuration lines of @p table ("  key = X            help"). */
void pb_options_help_ini(FILE *fp, const struct pb_option *table);

/** Append the synopsis words of @p table ("[--name X] ...") to @p buf (size @p cap). */
void pb_options_synopsis(char *buf, size_t cap, const struct pb_option *table);

#endif /* PAIRBOUND_OPTIONS_H */
