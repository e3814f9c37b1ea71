/* Stage checkpoints (include/pairbound/checkpoint.h).  OUTDIR/checkpoint.txt:
 *
 *   pairbound-checkpoint 2
 *   stage NAME
 *   build TEXT
 *   store_xxh128 HEX             (XXH3-128 of the store, 32 hex digits)
 *   setting KEY = VALUE          (one per line, in the caller's order)
 *   output PATH HEX              (XXH3-128; results.h5 first, then the listed files)
 *   end HEX                      (SHA-256 of every line above, newlines included)
 *
 * The closing self-checksum makes a truncated or edited checkpoint
 * detectable; the output checksums make a truncated or replaced output
 * detectable.  Either way the stage is recomputed, never trusted.  Format 1
 * (SHA-256 of the store and outputs, before stop 30) reads as another
 * format: recomputed too.  The file checksums are XXH3-128, not SHA-256:
 * they detect changed or damaged files, not forgery, and hash the 1.07 GB
 * paper store in about 0.2 s (mostly its page-cache reads) instead of
 * 1.1-2.1 s. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pairbound/checkpoint.h"
#include "pairbound/checksum.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/results.h"

#define PB_CKPT_NAME "checkpoint.txt"
#define PB_CKPT_MAGIC "pairbound-checkpoint 2\n"

static int pb_ckpt__cmp_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* results.h5, then the regular files of report/ in name order (NULL-terminated; caller frees). */
static char **pb_ckpt__outputs(const char *outdir)
{
  int n = 1, cap = 16;
  char **names = pb_malloc((size_t)cap * sizeof *names);
  names[0] = pb_strdup("results.h5");
  char *rep = pb_output_path_join(outdir, "report");
  DIR *d = opendir(rep);
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || (len > 4 && !strcmp(e->d_name + len - 4, ".tmp"))) continue;
    if (n + 2 > cap) names = pb_realloc(names, (size_t)(cap *= 2) * sizeof *names);
    names[n] = pb_malloc(len + 8);
    snprintf(names[n++], len + 8, "report/%s", e->d_name);
  }
  if (d) closedir(d);
  free(rep);
  qsort(names + 1, (size_t)(n - 1), sizeof *names, pb_ckpt__cmp_name);
  names[n] = NULL;
  return names;
}

void pb_checkpoint_remove(const char *outdir)
{
  char *path = pb_output_path_join(outdir, PB_CKPT_NAME);
  unlink(path);
  free(path);
}

char *pb_checkpoint_key_text(const struct pb_checkpoint_key *key)
{
  struct pb_text t = {0};
  pb_text_printf(&t, "stage %s\nbuild %s\nstore_xxh128 %s\n", key->stage, key->build, key->store_digest);
  for (const char *s = key->settings; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n) pb_text_printf(&t, "setting %.*s\n", (int)n, s);
    s += n + (nl != NULL);
  }
  return t.buf;
}

/* The checkpoint body without its end line. */
static int pb_ckpt__body(const char *outdir, const struct pb_checkpoint_key *key, struct pb_text *t)
{
  char *kt = pb_checkpoint_key_text(key);
  pb_text_printf(t, PB_CKPT_MAGIC "%s", kt);
  free(kt);
  char **names = pb_ckpt__outputs(outdir);
  int status = PB_OK;
  for (int i = 0; names[i]; i++) {
    char *path = pb_output_path_join(outdir, names[i]), hex[65];
    if (status == PB_OK) status = pb_checksum_xxh128_file(path, hex);
    if (status == PB_OK) pb_text_printf(t, "output %s %s\n", names[i], hex);
    free(path);
    free(names[i]);
  }
  free(names);
  return status;
}

int pb_checkpoint_commit(const char *outdir, const struct pb_checkpoint_key *key)
{
  struct pb_text t = {0};
  int status = pb_ckpt__body(outdir, key, &t);
  if (status == PB_OK) {
    char hex[65];
    pb_checksum_sha256_hex(t.buf, t.len, hex);
    pb_text_printf(&t, "end %s\n", hex);
    char *path = pb_output_path_join(outdir, PB_CKPT_NAME);
    struct pb_outfile f;
    status = pb_output_file_open(&f, path);
    free(path);
    if (status == PB_OK) {
      fwrite(t.buf, 1, t.len, f.fp);
      status = pb_output_file_commit(&f);
    }
  }
  pb_text_free(&t);
  return status;
}

/* The value of the line starting with PREFIX (up to its newline), or NULL. */
static const char *pb_ckpt__line(const char *text, const char *prefix, size_t *len)
{
  size_t n = strlen(prefix);
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
    if (strncmp(s, prefix, n) == 0) {
      const char *nl = strchr(s + n, '\n');
      *len = nl ? (size_t)(nl - s - n) : strlen(s + n);
      return s + n;
    }
  return NULL;
}

/* Compare one recorded field with the current value; PB_FAIL names both. */
static int pb_ckpt__same(const char *outdir, const char *done, const char *text, const char *prefix, const char *what,
                         const char *now)
{
  size_t n = 0;
  const char *was = pb_ckpt__line(text, prefix, &n);
  if (was && n == strlen(now) && strncmp(was, now, n) == 0) return PB_OK;
  pb_error_set("%s: cannot resume: %s made with %s '%.*s', this run has '%s' "
               "(remove %s or run without --resume)",
               outdir, done, what, (int)(was ? n : 4), was ? was : "none", now, outdir);
  return PB_FAIL;
}

/* Every setting line recorded equals the current settings, in order. */
static int pb_ckpt__settings(const char *outdir, const char *done, const char *text, const char *settings)
{
  struct pb_text was = {0}, now = {0};
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL)
    if (strncmp(s, "setting ", 8) == 0) {
      const char *nl = strchr(s, '\n');
      pb_text_printf(&was, "%.*s\n", (int)(nl ? nl - s - 8 : (long)strlen(s + 8)), s + 8);
    }
  for (const char *s = settings; s && *s;) {
    const char *nl = strchr(s, '\n');
    size_t n = nl ? (size_t)(nl - s) : strlen(s);
    if (n) pb_text_printf(&now, "%.*s\n", (int)n, s);
    s += n + (nl != NULL);
  }
  int status = PB_OK;
  if (was.len != now.len || memcmp(was.buf ? was.buf : "", now.buf ? now.buf : "", was.len) != 0) {
    /* name the first differing line of each */
    const char *a = was.buf ? was.buf : "", *b = now.buf ? now.buf : "";
    while (*a && *b) {
      const char *na = strchr(a, '\n'), *nb = strchr(b, '\n');
      if (na - a != nb - b || strncmp(a, b, (size_t)(na - a)) != 0) break;
      a = na + 1, b = nb + 1;
    }
    int la = *a ? (int)(strchr(a, '\n') - a) : 4, lb = *b ? (int)(strchr(b, '\n') - b) : 4;
    pb_error_set("%s: cannot resume: %s made with setting '%.*s', this run has '%.*s' "
                 "(remove %s or run without --resume)",
                 outdir, done, la, *a ? a : "none", lb, *b ? b : "none", outdir);
    status = PB_FAIL;
  }
  pb_text_free(&was);
  pb_text_free(&now);
  return status;
}

/* Recorded output checksums against the files now in OUTDIR. */
static int pb_ckpt__outputs_intact(const char *outdir, const char *text, char *why, size_t why_len)
{
  for (const char *s = text; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : NULL) {
    if (strncmp(s, "output ", 7) != 0) continue;
    char name[512], want[65], hex[65];
    if (sscanf(s + 7, "%511s %64s", name, want) != 2) return 0;
    char *path = pb_output_path_join(outdir, name);
    int ok = pb_checksum_xxh128_file(path, hex) == PB_OK && strcmp(hex, want) == 0;
    free(path);
    if (!ok) {
      snprintf(why, why_len, "%s is missing or differs from the checkpoint", name);
      return 0;
    }
  }
  return 1;
}

int pb_checkpoint_key_same(const char *where, const char *done, const char *text, const struct pb_checkpoint_key *key)
{
  int status = pb_ckpt__same(where, done, text, "stage ", "stage", key->stage);
  if (status == PB_OK) status = pb_ckpt__same(where, done, text, "build ", "program build", key->build);
  if (status == PB_OK) status = pb_ckpt__same(where, done, text, "store_xxh128 ", "store checksum", key->store_digest);
  if (status == PB_OK) status = pb_ckpt__settings(where, done, text, key->settings);
  return status;
}

int pb_checkpoint_check(const char *outdir, const struct pb_checkpoint_key *key, enum pb_checkpoint_state *state,
                        char *why, size_t why_len)
{
  char *path = pb_output_path_join(outdir, PB_CKPT_NAME);
  char *text = pb_output_text_load(path);
  free(path);
  *state = PB_CHECKPOINT_NONE;
  snprintf(why, why_len, "no checkpoint");
  if (!text) {
    pb_error_clear();
    return PB_OK;
  }
  /* the self-checksum: everything before the end line */
  char *end = strstr(text, "\nend ");
  char hex[65];
  *state = PB_CHECKPOINT_DAMAGED;
  snprintf(why, why_len, "checkpoint truncated or corrupt");
  if (strncmp(text, PB_CKPT_MAGIC, strlen(PB_CKPT_MAGIC)) != 0 && strncmp(text, "pairbound-checkpoint ", 21) == 0)
    snprintf(why, why_len, "checkpoint of another format (%.*s; this pairbound writes %.*s)", (int)strcspn(text, "\n"),
             text, (int)strlen(PB_CKPT_MAGIC) - 1, PB_CKPT_MAGIC);
  if (strncmp(text, PB_CKPT_MAGIC, strlen(PB_CKPT_MAGIC)) != 0 || !end) goto done;
  pb_checksum_sha256_hex(text, (size_t)(end + 1 - text), hex);
  if (strncmp(end + 5, hex, 64) != 0 || end[69] != '\n' || end[70] != '\0') goto done;
  end[1] = '\0';
  if (pb_checkpoint_key_same(outdir, "the completed output was", text, key) != PB_OK) {
    free(text);
    return PB_FAIL;
  }
  if (pb_ckpt__outputs_intact(outdir, text, why, why_len)) {
    *state = PB_CHECKPOINT_COMPLETE;
    snprintf(why, why_len, "complete");
  }
done:
  free(text);
  return PB_OK;
}

int pb_checkpoint_resumable(const char *outdir, const struct pb_checkpoint_key *key, MPI_Comm comm)
{
  int rank, v[2] = {PB_OK, 0};
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) {
    enum pb_checkpoint_state state = PB_CHECKPOINT_NONE;
    char why[256];
    v[0] = pb_checkpoint_check(outdir, key, &state, why, sizeof why);
    v[1] = state == PB_CHECKPOINT_COMPLETE;
    if (v[0] == PB_OK && state == PB_CHECKPOINT_DAMAGED) pb_message("%s: %s (in %s): recomputing it", key->stage, why, outdir);
    if (v[0] == PB_OK && !v[1]) pb_checkpoint_remove(outdir);
  }
  MPI_Bcast(v, 2, MPI_INT, 0, comm);
  if (v[0] != PB_OK && rank != 0) pb_error_set("%s: resume refused (rank 0 says why)", outdir);
  return v[0] != PB_OK ? PB_FAIL : v[1];
}

int pb_checkpoint_commit_all(const char *outdir, const struct pb_checkpoint_key *key, MPI_Comm comm)
{
  int rank, status = PB_OK;
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) status = pb_checkpoint_commit(outdir, key);
  MPI_Bcast(&status, 1, MPI_INT, 0, comm);
  if (status != PB_OK && rank != 0) pb_error_set("%s: checkpoint not written (rank 0 says why)", outdir);
  return status;
}

char *pb_checkpoint_args(int argc, char **argv)
{
  struct pb_text t = {0};
  pb_text_printf(&t, "%s", "");
  for (int i = 0; i < argc; i++)
    if (strcmp(argv[i], "--resume") != 0) pb_text_printf(&t, "argument = %s\n", argv[i]);
  return t.buf;
}
