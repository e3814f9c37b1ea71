/* `pairbound roles`: a store's source roles, shown and changed without
 * rewriting a record (docs/store.md, "Roles").  A store of schema 2 holds
 * every role in one root attribute of fixed-length strings, so a change
 * rewrites that attribute in place, under the store's lock; a store of
 * schema 1 (written before roles) is copied, given the attribute and renamed
 * over itself, once. */
#define _GNU_SOURCE 1 /* copy_file_range(2) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/file.h>

#include <hdf5.h>

#include "pairbound/error.h"
#include "pairbound/meta.h"
#include "pairbound/output.h"
#include "pairbound/signals.h"
#include "pairbound/store.h"
#include "core/h5io.h"
#include "store_internal.h"

/* Apply "SRC=ROLE" assignments to @p meta; every source named must be one of the store's. */
static int pb_roles__apply(const char *path, struct pb_meta *meta, int n, char *const *assign)
{
  for (int i = 0; i < n; i++) {
    const char *eq = strchr(assign[i], '=');
    if (!eq || eq == assign[i]) {
      pb_error_set("--set: expected SRC=ROLE (ROLE: synthetic, real, natural[:N] or extra:SRC), found '%s'",
                   assign[i]);
      return PB_FAIL;
    }
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(eq - assign[i]), assign[i]);
    const int32_t s = pb_meta_find_source(meta, name);
    if (s < 0) {
      pb_error_set("%s: --set %s: the store has no source %s", path, assign[i], name);
      return PB_FAIL;
    }
    if (pb_meta_role_parse(&meta->sources[s], eq + 1) != PB_OK) {
      char why[1024];
      snprintf(why, sizeof why, "%s", pb_error_message());
      pb_error_set("%s: %s", path, why);
      return PB_FAIL;
    }
  }
  pb_meta_infer_roles(meta);
  if (pb_meta_validate_roles(meta) != PB_OK) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pb_error_message());
    pb_error_set("%s: %s", path, why);
    return PB_FAIL;
  }
  return PB_OK;
}

/* Copy @p from to @p to byte for byte (copy_file_range: a reflink or an in-kernel copy where the file system
 * can). */
static int pb_roles__copy(const char *from, const char *to)
{
  int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, status = PB_FAIL;
  struct stat sb;
  if (in < 0 || fstat(in, &sb) != 0) goto done;
  if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, sb.st_mode & 0777)) < 0) goto done;
  for (off_t left = sb.st_size; left > 0;) {
    ssize_t n = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
    if (n <= 0) goto done;
    left -= n;
  }
  status = fsync(out) == 0 ? PB_OK : PB_FAIL;
done:
  if (status != PB_OK) pb_error_set("%s: cannot copy to %s: %s", from, to, strerror(errno));
  if (in >= 0) close(in);
  if (out >= 0 && close(out) != 0) status = PB_FAIL;
  return status;
}

/* Write @p meta's roles into the file at @p path: the root attribute `roles`, and for a file of an earlier schema
 * the current schema_version, no more probe_role attributes (schema 1) and the metadata checksums.  @p fresh: a `roles` attribute
 * already there is replaced, not rewritten in place (it is too narrow for the new roles). */
static int pb_roles__write(const char *path, const struct pb_meta *meta, int schema, int fresh)
{
  int status = PB_FAIL;
  hid_t file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT), sources = -1;
  if (file < 0) {
    pb_error_set("%s: cannot open for writing", path);
    return PB_FAIL;
  }
  if (schema < PB_STORE_SCHEMA_VERSION) {
    if ((sources = H5Gopen2(file, "sources", H5P_DEFAULT)) < 0) goto done;
    for (int32_t s = 0; s < meta->n_sources; s++) {
      hid_t grp = H5Gopen2(sources, meta->sources[s].name, H5P_DEFAULT);
      if (grp < 0) goto done;
      if (H5Aexists(grp, "probe_role") > 0) H5Adelete(grp, "probe_role");
      if (H5Aexists(grp, "probe_fixed") > 0) H5Adelete(grp, "probe_fixed");
      H5Gclose(grp);
    }
    hid_t attr = H5Aopen(file, "schema_version", H5P_DEFAULT);
    const int32_t v = PB_STORE_SCHEMA_VERSION;
    herr_t e = attr >= 0 ? H5Awrite(attr, H5T_NATIVE_INT32, &v) : -1;
    if (attr >= 0) H5Aclose(attr);
    /* the current schema's metadata checksums, of the values just read and validated (the copy is renamed only
     * when done) */
    if (e < 0 || pb_store__digests_write(file, meta, PB_STORE_SCHEMA_VERSION) != PB_OK) goto done;
  }
  if (fresh && H5Aexists(file, "roles") > 0 && H5Adelete(file, "roles") < 0) goto done;
  status = pb_store__write_roles(file, meta);
done:
  if (sources >= 0) H5Gclose(sources);
  if (H5Fclose(file) < 0) status = PB_FAIL;
  if (status != PB_OK) pb_error_set("%s: cannot write its roles", path);
  return status;
}

int pb_store_roles_set(const char *path, int n, char *const *assign)
{
  struct pb_output_lock lock = {.fd = -1};
  struct pb_store *st = NULL;
  char *tmp = NULL, lockfile[4096];
  snprintf(lockfile, sizeof lockfile, "%s.lock", path);
  if (pb_output_lock_take(&lock, lockfile, path) != PB_OK) return PB_FAIL;
  const int sig_lock = pb_signal_cleanup_file(lockfile); /* a signal's immediate exit removes it */
  int sig_tmp = 0;
  /* an interrupted append is undone under the lock held here (pb_store_open would take it) */
  int status = pb_store__take_over(path);
  if (status == PB_OK) status = pb_store_open(path, MPI_COMM_SELF, &st);
  if (status != PB_OK) goto done;
  struct pb_meta *meta = &st->meta;
  const int schema = st->schema;
  /* A `roles` attribute narrower than pairbound writes it (another program wrote the store) would truncate the
   * new roles: it is replaced on a copy, as a store of an earlier schema is converted. */
  size_t width = 0;
  if (schema >= 2) {
    int32_t n_old = 0;
    char **old = pb_h5_read_attr_strings(st->file, "roles", &n_old, &width);
    for (int32_t s = 0; old && s < n_old; s++) free(old[s]);
    free(old);
  }
  if ((status = pb_roles__apply(path, meta, n, assign)) != PB_OK) goto done;
  H5Fclose(st->file); /* read-only: the write below opens the file on its own */
  st->file = -1;
  /* and so does its lock, exclusive, which the readers' lock held here would refuse (no append can begin: the
   * store's lock is ours; a reader elsewhere makes the write below fail, as it should) */
  if (st->fd >= 0) flock(st->fd, LOCK_UN);
  if (schema >= PB_STORE_SCHEMA_VERSION && width >= pb_store__roles_width(meta)) {
    status = pb_roles__write(path, meta, schema, 0); /* one attribute of the same size, rewritten in place */
  } else {
    tmp = pb_malloc(strlen(path) + 32);
    sprintf(tmp, "%s.tmp.roles", path);
    unlink(tmp);
    sig_tmp = pb_signal_cleanup_file(tmp);
    status = pb_roles__copy(path, tmp);
    if (status == PB_OK) status = pb_roles__write(tmp, meta, schema, 1);
    if (status == PB_OK && rename(tmp, path) != 0) {
      pb_error_set("%s: cannot rename %s over it: %s", path, tmp, strerror(errno));
      status = PB_FAIL;
    }
    if (status != PB_OK) unlink(tmp);
    pb_signal_forget_file(sig_tmp); /* renamed or removed */
  }
done:
  if (st) pb_store_close(st);
  free(tmp);
  pb_signal_forget_file(sig_lock);
  pb_output_lock_release(&lock);
  return status;
}

void pb_store_roles_print(FILE *fp, const struct pb_meta *meta)
{
  for (int32_t s = 0; s < meta->n_sources; s++) {
    const struct pb_source *src = &meta->sources[s];
    char role[512];
    pb_meta_role_text(src, role, sizeof role);
    fprintf(fp, "%s %s (%s)\n", src->name, role, src->role_declared ? "declared" : "inferred: not declared");
  }
}
