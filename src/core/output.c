/* Output paths that can never destroy data, unique temporaries, advisory locks,
 * stage outputs built in a staging directory and committed at once. */
#define _GNU_SOURCE /* renameat2 (RENAME_EXCHANGE), syscall */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <hdf5.h>

#include "pairbound/blocks.h"
#include "pairbound/error.h"
#include "pairbound/output.h"
#include "pairbound/text.h"

#define PB_CSV_HEADER "model,group,source,condition,image,label,split,pred,smax,ptrue"

static const char *pb_output__what(mode_t m)
{
  if (S_ISREG(m)) return "a regular file";
  if (S_ISDIR(m)) return "a directory";
  if (S_ISLNK(m)) return "a symbolic link";
  if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  return "a special file";
}

int pb_output_name_ok(const char *path)
{
  const unsigned char *c = (const unsigned char *)path;
  while (*c && *c >= 0x20 && *c != 0x7f) c++;
  if (!*c) return PB_OK;
  /* the name as a C string literal would spell it: the message stays on one line */
  struct pb_text t = {0};
  for (c = (const unsigned char *)path; *c; c++)
    if (*c == '"' || *c == '\\') pb_text_printf(&t, "\\%c", *c);
    else if (*c == '\n') pb_text_printf(&t, "\\n");
    else if (*c == '\t') pb_text_printf(&t, "\\t");
    else if (*c < 0x20 || *c == 0x7f) pb_text_printf(&t, "\\x%02x", *c);
    else pb_text_append(&t, (const char *)c, 1);
  pb_error_set("output name \"%s\" holds a control character (a newline, a tab or another byte below 0x20, or "
               "0x7f); refusing it", t.buf);
  pb_text_free(&t);
  return PB_FAIL;
}

int pb_output_open_regular(const char *path, int flags, mode_t mode, const char **what)
{
  *what = NULL;
  int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, mode);
  struct stat sb;
  if (fd < 0) {
    const int err = errno;
    if (err == ELOOP && lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) *what = "a symbolic link";
    errno = err;
    return -1;
  }
  const int got = fstat(fd, &sb) == 0;
  if (!got || !S_ISREG(sb.st_mode)) {
    const int err = got ? EINVAL : errno;
    if (got) *what = pb_output__what(sb.st_mode);
    close(fd);
    errno = err;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* a regular file: reads and writes as usual */
  return fd;
}

/* Is @p path (existing or not) the same file as one of the inputs? */
static const char *pb_output__input(const char *path, const char *const *inputs, int n)
{
  struct stat a, b;
  if (stat(path, &a) != 0) return NULL;
  for (int i = 0; i < n; i++)
    if (inputs[i] && stat(inputs[i], &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) return inputs[i];
  return NULL;
}

static int pb_output__is_store(const char *path)
{
  H5E_auto2_t fn;
  void *data;
  H5Eget_auto2(H5E_DEFAULT, &fn, &data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int ours = 0;
  if (H5Fis_hdf5(path) > 0) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f >= 0) {
      if (H5Aexists(f, "format") > 0) {
        hid_t a = H5Aopen(f, "format", H5P_DEFAULT), t = H5Aget_type(a);
        char buf[32] = "";
        if (H5Tget_class(t) == H5T_STRING && H5Tget_size(t) < sizeof buf && !H5Tis_variable_str(t))
          ours = H5Aread(a, t, buf) >= 0 && strcmp(buf, "pairbound-store") == 0;
        else if (H5Tis_variable_str(t) > 0) {
          char *s = NULL;
          ours = H5Aread(a, t, &s) >= 0 && s && strcmp(s, "pairbound-store") == 0;
          H5free_memory(s);
        }
        H5Tclose(t);
        H5Aclose(a);
      }
      H5Fclose(f);
    }
  }
  H5Eset_auto2(H5E_DEFAULT, fn, data);
  return ours;
}

static int pb_output__is_csv(const char *path)
{
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  char buf[sizeof PB_CSV_HEADER] = "";
  size_t got = fread(buf, 1, sizeof buf - 1, fp);
  fclose(fp);
  return got == sizeof buf - 1 && memcmp(buf, PB_CSV_HEADER, got) == 0;
}

int pb_output_file_ok(const char *path, enum pb_output_kind kind, const char *const *inputs, int n_inputs,
                      int force)
{
  struct stat sb;
  if (!path || !path[0]) {
    pb_error_set("empty output path");
    return PB_FAIL;
  }
  if (pb_output_name_ok(path) != PB_OK) return PB_FAIL;
  const char *in = pb_output__input(path, inputs, n_inputs);
  if (in) {
    pb_error_set("%s: the output is the input %s; refusing to replace it", path, in);
    return PB_FAIL;
  }
  if (lstat(path, &sb) != 0) return PB_OK; /* nothing there yet */
  if (!S_ISREG(sb.st_mode)) {
    pb_error_set("%s: exists and is %s; an output only ever replaces a regular file", path,
                 pb_output__what(sb.st_mode));
    return PB_FAIL;
  }
  int ours = kind == PB_OUTPUT_STORE ? pb_output__is_store(path) : pb_output__is_csv(path);
  if (!ours && !force) {
    pb_error_set("%s: exists and is not a pairbound %s; give --force to replace it", path,
                 kind == PB_OUTPUT_STORE ? "store" : "CSV export");
    return PB_FAIL;
  }
  return PB_OK;
}

/* Does @p dir hold one of the inputs where a stage writes (results.h5, report/)? */
static const char *pb_output__input_inside(const char *dir, const char *const *inputs, int n)
{
  char *res = pb_output_path_join(dir, "results.h5"), *rep = pb_output_path_join(dir, "report");
  const char *hit = pb_output__input(res, inputs, n);
  struct stat r, b;
  if (!hit && stat(rep, &r) == 0)
    for (int i = 0; i < n && !hit; i++) {
      if (!inputs[i] || stat(inputs[i], &b) != 0) continue;
      char *copy = pb_strdup(inputs[i]), *slash = strrchr(copy, '/');
      struct stat parent;
      if (slash) *slash = '\0';
      if (stat(slash ? (copy[0] ? copy : "/") : ".", &parent) == 0 && parent.st_dev == r.st_dev &&
          parent.st_ino == r.st_ino)
        hit = inputs[i];
      free(copy);
    }
  free(res);
  free(rep);
  return hit;
}

int pb_output_dir_ok(const char *dir, const char *const *inputs, int n_inputs, int force)
{
  struct stat sb;
  if (!dir || !dir[0]) {
    pb_error_set("empty output directory");
    return PB_FAIL;
  }
  if (pb_output_name_ok(dir) != PB_OK) return PB_FAIL;
  if (lstat(dir, &sb) != 0) return PB_OK;
  if (S_ISREG(sb.st_mode)) {
    pb_error_set("%s: exists and is a regular file, not an output directory pairbound wrote; an output directory "
                 "must be a directory (pairbound never replaces a file with one, even with --force)", dir);
    return PB_FAIL;
  }
  if (!S_ISDIR(sb.st_mode)) {
    pb_error_set("%s: exists and is %s; an output directory must be a directory", dir, pb_output__what(sb.st_mode));
    return PB_FAIL;
  }
  const char *in = pb_output__input_inside(dir, inputs, n_inputs);
  if (in) {
    pb_error_set("%s: the input %s lies where this stage writes its output; refusing to replace it", dir, in);
    return PB_FAIL;
  }
  char *res = pb_output_path_join(dir, "results.h5"), *rep = pb_output_path_join(dir, "report");
  struct stat r, p;
  int ours = (lstat(res, &r) == 0 && S_ISREG(r.st_mode)) || (lstat(rep, &p) == 0 && S_ISDIR(p.st_mode));
  int bad_res = lstat(res, &r) == 0 && !S_ISREG(r.st_mode), bad_rep = lstat(rep, &p) == 0 && !S_ISDIR(p.st_mode);
  free(res);
  free(rep);
  if (bad_res || bad_rep) { /* the commit replaces OUTDIR/report: a link there would be replaced, not followed */
    pb_error_set("%s/%s: exists and is %s; an output only ever replaces %s", dir, bad_res ? "results.h5" : "report",
                 pb_output__what(bad_res ? r.st_mode : p.st_mode), bad_res ? "a regular file" : "a directory");
    return PB_FAIL;
  }
  if (ours || force) return PB_OK;
  DIR *d = opendir(dir);
  int empty = 1;
  for (struct dirent *e; d && (e = readdir(d));)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, ".pairbound.lock") &&
        strncmp(e->d_name, PB_OUTPUT_STAGING, strlen(PB_OUTPUT_STAGING)) && strcmp(e->d_name, PB_BLOCKS_DIR))
      empty = 0; /* a killed run's staging (swept) and completed blocks are its output too */
  if (d) closedir(d);
  if (!empty) {
    pb_error_set("%s: a non-empty directory that holds no pairbound output; give --force to write into it", dir);
    return PB_FAIL;
  }
  return PB_OK;
}

int pb_output_temp(const char *path, char **tmp)
{
  size_t n = strlen(path) + 16;
  *tmp = pb_malloc(n);
  snprintf(*tmp, n, "%s.tmp.XXXXXX", path);
  int fd = mkstemp(*tmp);
  if (fd < 0) {
    pb_error_set("%s: cannot create file: %s", path, strerror(errno));
    free(*tmp);
    *tmp = NULL;
    return -1;
  }
  /* mkstemp makes 0600; an output gets the usual 0666 less the umask */
  mode_t mask = umask(0);
  umask(mask);
  fchmod(fd, 0666 & ~mask);
  return fd;
}

/* The lock file is removed by the writer that releases it, while still
 * holding it; a writer that opened it just before then locks a removed file,
 * so the lock is ours only when the file locked is still the one at
 * @p lockfile (else we try again, with the new file). */
int pb_output_lock_take(struct pb_output_lock *lk, const char *lockfile, const char *what)
{
  lk->path = pb_strdup(lockfile);
  for (int tries = 0;; tries++) {
    const char *kind;
    lk->fd = pb_output_open_regular(lockfile, O_RDWR | O_CREAT, 0666, &kind);
    if (lk->fd < 0 && kind) {
      pb_error_set("%s: exists and is %s; a lock file must be a regular file, and nothing else there is followed or "
                   "replaced (remove it if no pairbound run is writing %s)", lockfile, kind, what);
      goto fail;
    }
    if (lk->fd < 0) {
      pb_error_set("%s: cannot create lock file: %s", lockfile, strerror(errno));
      goto fail;
    }
    if (flock(lk->fd, LOCK_EX | LOCK_NB) != 0) {
      char pid[32] = "";
      ssize_t got = pread(lk->fd, pid, sizeof pid - 1, 0);
      pid[got > 0 ? got : 0] = '\0';
      pid[strcspn(pid, "\n")] = '\0';
      pb_error_set("%s is in use by pid %s (lock %s); wait for that run to end", what, pid[0] ? pid : "?", lockfile);
      close(lk->fd);
      goto fail;
    }
    struct stat held, now;
    if (fstat(lk->fd, &held) == 0 && lstat(lockfile, &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino)
      break;
    close(lk->fd); /* removed (or replaced) by the writer that just released it */
    if (tries == 100) {
      pb_error_set("%s: cannot lock: the lock file keeps changing", lockfile);
      goto fail;
    }
  }
  char pid[32];
  int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
  if (ftruncate(lk->fd, 0) != 0 || pwrite(lk->fd, pid, (size_t)len, 0) != len) { /* the pid is advisory only */ }
  return PB_OK;
fail:
  free(lk->path);
  lk->path = NULL;
  lk->fd = -1;
  return PB_FAIL;
}

void pb_output_lock_release(struct pb_output_lock *lk)
{
  if (!lk || lk->fd < 0) return;
  unlink(lk->path); /* while still held: a writer that opened it before sees it gone (pb_output_lock_take) */
  close(lk->fd);
  free(lk->path);
  lk->path = NULL;
  lk->fd = -1;
}

/* Rank 0's *@p name (NULL: it failed) on every rank of @p comm; where it
 * failed, PB_FAIL everywhere, the other ranks saying @p what of @p path. */
static int pb_output__share_name(char **name, MPI_Comm comm, const char *path, const char *what)
{
  int rank, len;
  MPI_Comm_rank(comm, &rank);
  len = rank == 0 && *name ? (int)strlen(*name) + 1 : 0;
  MPI_Bcast(&len, 1, MPI_INT, 0, comm);
  if (len == 0) {
    if (rank != 0) pb_error_set("%s: %s", path, what);
    return PB_FAIL;
  }
  if (rank != 0) *name = pb_malloc((size_t)len);
  MPI_Bcast(*name, len, MPI_CHAR, 0, comm);
  return PB_OK;
}

int pb_output_temp_shared(const char *path, MPI_Comm comm, char **tmp)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  *tmp = NULL;
  if (rank == 0) {
    int fd = pb_output_temp(path, tmp); /* *tmp NULL when it fails */
    if (fd >= 0) close(fd);
  }
  return pb_output__share_name(tmp, comm, path, "cannot create a temporary file beside it");
}

static int pb_output__force;
void pb_output_set_force(int force) { pb_output__force = force; }
int pb_output_force(void) { return pb_output__force; }

/* Is @p name "SOMETHING.tmp.XXXXXX" (a pb_output_temp name), and for @p prefix,
 * exactly "PREFIX.tmp.XXXXXX"? */
static int pb_output__is_temp(const char *name, const char *prefix)
{
  size_t n = strlen(name);
  if (n < 12 || strncmp(name + n - 11, ".tmp.", 5) != 0) return 0;
  return !prefix || (strlen(prefix) == n - 11 && strncmp(name, prefix, n - 11) == 0);
}

void pb_output_sweep(const char *dir, const char *prefix)
{
  DIR *d = opendir(dir && dir[0] ? dir : ".");
  if (!d) return;
  for (struct dirent *e; (e = readdir(d));) {
    int staging = !prefix && !strncmp(e->d_name, PB_OUTPUT_STAGING, strlen(PB_OUTPUT_STAGING));
    if (!staging && !pb_output__is_temp(e->d_name, prefix)) continue;
    char *p = pb_output_path_join(dir && dir[0] ? dir : ".", e->d_name);
    struct stat sb;
    if (lstat(p, &sb) == 0 && S_ISREG(sb.st_mode) && !staging) unlink(p);
    else if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode) && staging) pb_output_remove_tree(p);
    free(p);
  }
  closedir(d);
}

/* The kernel's directory record (getdents64), read without libc's DIR,
 * which allocates and so may not run in a signal handler. */
struct pb_output__dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

/* Remove NAME under directory @p dfd and, for a directory, what it holds
 * (at most @p depth levels down; a staging directory has two).  Only system
 * calls: async-signal-safe. */
static void pb_output__remove_at(int dfd, const char *name, int depth)
{
  if (unlinkat(dfd, name, 0) == 0 || errno != EISDIR || depth <= 0) return;
  int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  /* read from the start again after each batch: removing entries while the
   * kernel walks the directory may skip some */
  for (int removed = 1; removed;) {
    _Alignas(8) char buf[2048];
    removed = 0;
    if (lseek(fd, 0, SEEK_SET) != 0) break;
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    for (long at = 0; at < n;) {
      const struct pb_output__dirent64 *e = (const void *)(buf + at);
      at += e->reclen;
      if (!strcmp(e->name, ".") || !strcmp(e->name, "..")) continue;
      pb_output__remove_at(fd, e->name, depth - 1);
      removed = 1;
    }
  }
  close(fd);
  unlinkat(dfd, name, AT_REMOVEDIR);
}

void pb_output_remove_tree(const char *path)
{
  if (path && path[0]) pb_output__remove_at(AT_FDCWD, path, 8);
}

void pb_output_remove_staging_of(const char *path)
{
  char dir[4096];
  if (!path || snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) return;
  for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
    *slash = '\0';
    const char *base = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (strncmp(base, PB_OUTPUT_STAGING, strlen(PB_OUTPUT_STAGING)) == 0) {
      pb_output_remove_tree(dir);
      return;
    }
  }
}

int pb_output_staging_make(const char *outdir, MPI_Comm comm, char **staging)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  *staging = NULL;
  if (rank == 0) {
    char *dir = pb_output_path_join(outdir, PB_OUTPUT_STAGING "XXXXXX"), *rep = NULL;
    if (!mkdtemp(dir)) pb_error_set("%s: cannot create a staging directory: %s", outdir, strerror(errno));
    else if (pb_output_mkdir_p(rep = pb_output_path_join(dir, "report")) != PB_OK) pb_output_remove_tree(dir);
    else *staging = dir;
    free(rep);
    if (!*staging) free(dir);
  }
  return pb_output__share_name(staging, comm, outdir, "cannot create a staging directory (rank 0 says why)");
}

/* Swap directory @p from into @p to: atomically by RENAME_EXCHANGE (@p from
 * then holds what @p to held), or where the file system cannot, by moving
 * @p to aside to @p aside first; a plain rename when @p to is new. */
static int pb_output__swap(const char *from, const char *to, const char *aside)
{
  struct stat sb;
  if (lstat(to, &sb) != 0) return rename(from, to);
  if (syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return -1;
  if (rename(to, aside) != 0) return -1;
  if (rename(from, to) == 0) return 0;
  int keep = errno;
  if (rename(aside, to) != 0) { /* the old output is still complete, under ASIDE (named in the error) */ }
  errno = keep;
  return -1;
}

/* Undo pb_output__swap: the previous content back at @p to, the new at @p from. */
static int pb_output__unswap(const char *from, const char *to, const char *aside)
{
  struct stat sb;
  if (lstat(aside, &sb) == 0) return rename(to, from) == 0 && rename(aside, to) == 0 ? 0 : -1;
  if (lstat(from, &sb) == 0) return (int)syscall(SYS_renameat2, AT_FDCWD, from, AT_FDCWD, to, RENAME_EXCHANGE);
  return rename(to, from);
}

int pb_output_staging_commit(const char *staging, const char *outdir)
{
  char *s_rep = pb_output_path_join(staging, "report"), *s_res = pb_output_path_join(staging, "results.h5");
  char *rep = pb_output_path_join(outdir, "report"), *res = pb_output_path_join(outdir, "results.h5");
  char *aside = pb_output_path_join(staging, "report.old");
  int status = PB_FAIL;
  if (pb_output__swap(s_rep, rep, aside) != 0) {
    pb_error_set("%s: cannot move the new report into place: %s; %s is unchanged", rep, strerror(errno), outdir);
    goto done;
  }
  if (rename(s_res, res) != 0) {
    int err = errno;
    if (pb_output__unswap(s_rep, rep, aside) != 0)
      pb_error_set("%s: cannot rename to %s: %s; and the previous report/ could not be put back: it is in %s", s_res,
                   res, strerror(err), staging);
    else pb_error_set("%s: cannot rename to %s: %s; %s is unchanged", s_res, res, strerror(err), outdir);
    goto done;
  }
  status = PB_OK;
done:
  free(s_rep);
  free(s_res);
  free(rep);
  free(res);
  free(aside);
  return status;
}

/* ------------------------------------------------------------- text files */

/* What is left of @p fp, whole, as a string; closes it. */
static char *pb_output__text_read(FILE *fp)
{
  size_t cap = 4096, n = 0, got;
  char *text = pb_malloc(cap);
  while ((got = fread(text + n, 1, cap - n - 1, fp)) > 0) {
    n += got;
    if (n + 1 == cap) text = pb_realloc(text, cap *= 2);
  }
  text[n] = '\0';
  fclose(fp);
  return text;
}

char *pb_output_text_load(const char *path)
{
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open: %s", path, strerror(errno));
    return NULL;
  }
  return pb_output__text_read(fp);
}

char *pb_output_text_load_regular(const char *path)
{
  const char *what;
  const int fd = pb_output_open_regular(path, O_RDONLY, 0, &what);
  FILE *fp = fd >= 0 ? fdopen(fd, "r") : NULL;
  if (!fp) {
    if (what) pb_error_set("%s: exists and is %s, not a regular file: not read", path, what);
    else pb_error_set("%s: cannot open: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    return NULL;
  }
  return pb_output__text_read(fp);
}

int pb_output_lines_each(const char *path, const char *what, pb_output_line_fn fn, void *ctx)
{
  FILE *fp = fopen(path, "r");
  if (!fp) {
    pb_error_set("%s: cannot open%s%s: %s", path, what ? " as the " : "", what ? what : "", strerror(errno));
    return PB_FAIL;
  }
  char *buf = NULL;
  size_t cap = 0;
  int64_t line = 0;
  int status = PB_OK;
  errno = 0;
  while (status == PB_OK && getline(&buf, &cap, fp) > 0) status = fn(ctx, path, ++line, buf);
  if (status == PB_OK && ferror(fp)) {
    pb_error_set("%s: read error after line %lld: %s", path, (long long)line, strerror(errno ? errno : EIO));
    status = PB_FAIL;
  }
  free(buf);
  fclose(fp);
  return status;
}

/* ------------------------------------------------------------------ paths */

char *pb_output_path_join(const char *dir, const char *name)
{
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = pb_malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

int pb_output_mkdir_p(const char *dir)
{
  char *p = pb_strdup(dir);
  int status = PB_OK;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char c = *s;
      *s = '\0';
      if (mkdir(p, 0777) != 0 && errno != EEXIST) {
        pb_error_set("%s: cannot create directory: %s", p, strerror(errno));
        status = PB_FAIL;
        break;
      }
      *s = c;
      if (c == '\0') break;
    }
  }
  free(p);
  return status;
}

/* ---------------------------------------------- files written under a temporary name */

int pb_output_file_open(struct pb_outfile *f, const char *path)
{
  /* a unique temporary: two writers of one path never share it */
  int fd = pb_output_temp(path, &f->tmp);
  if (fd < 0) return PB_FAIL;
  f->fp = fdopen(fd, "w");
  if (!f->fp) {
    pb_error_set("%s: cannot create file: %s", f->tmp, strerror(errno));
    close(fd);
    unlink(f->tmp);
    free(f->tmp);
    return PB_FAIL;
  }
  f->path = pb_strdup(path);
  return PB_OK;
}

int pb_output_file_commit(struct pb_outfile *f)
{
  int bad = ferror(f->fp);
  bad |= fclose(f->fp) != 0;
  if (!bad && rename(f->tmp, f->path) != 0) bad = 1;
  if (bad) {
    pb_error_set("%s: cannot write file: %s", f->path, strerror(errno));
    unlink(f->tmp);
  }
  free(f->path);
  free(f->tmp);
  return bad ? PB_FAIL : PB_OK;
}

void pb_output_file_abort(struct pb_outfile *f)
{
  fclose(f->fp);
  unlink(f->tmp);
  free(f->path);
  free(f->tmp);
}

int pb_output_iov_all(int fd, struct iovec *iov, int n, off_t off, int write)
{
  for (;;) {
    while (n > 0 && iov->iov_len == 0) iov++, n--; /* nothing to move: not a transfer of 0 bytes */
    if (n == 0) return PB_OK;
    const ssize_t got = write ? pwritev(fd, iov, n, off) : preadv(fd, iov, n, off);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      if (got == 0 && write) errno = ENOSPC;
      return PB_FAIL;
    }
    off += got;
    size_t left = (size_t)got;
    while (n > 0 && left >= iov->iov_len) {
      left -= iov->iov_len;
      iov++;
      n--;
    }
    if (n > 0 && left > 0) {
      iov->iov_base = (char *)iov->iov_base + left;
      iov->iov_len -= left;
    }
  }
}
