/* The rows memo of `pairbound run` (pb_store_rows_memo): consecutive
 * instances of one stage (screen, screen.dev, screen.dev_tiers) read the
 * same rows of the same store, whatever their split or tiers, so the rows
 * the first reads are handed to the next instead of being read, checked and
 * page-faulted again.  Rows handed out are read-only by contract (every
 * reader of pb_store_read_fields only reads them); pb_store_rows_free returns
 * them here.  Entries nobody holds are dropped on a miss and between stages
 * of different kinds, so a stage never holds more than it would without the
 * memo. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pairbound/error.h"
#include "store_internal.h"

#define PB_MEMO_MAX 64

struct pb_memo__entry {
  int32_t src, fields, n_rows, users;
  int32_t *rows;
  struct pb_rows d;
};

static struct {
  int on;
  char *path;
  struct stat id; /* device, inode, size and modification time of the store file */
  MPI_Comm comm;
  int n;
  struct pb_memo__entry e[PB_MEMO_MAX];
} pb_memo;
static pthread_mutex_t pb_memo__lock = PTHREAD_MUTEX_INITIALIZER;

void pb_store_rows_free_owned(struct pb_rows *rows)
{
  free(rows->pred);
  free(rows->smax);
  free(rows->ptrue);
  free(rows->topk_class);
  free(rows->topk_prob);
  free(rows->entropy);
  free(rows->collision);
  free(rows->pred_orig);
  memset(rows, 0, sizeof *rows);
}

static void pb_memo__free_entry(struct pb_memo__entry *e)
{
  pb_store_rows_free_owned(&e->d);
  free(e->rows);
}

/* Drops the entries nobody holds (the lock held). */
static void pb_memo__evict_idle(void)
{
  int k = 0;
  for (int i = 0; i < pb_memo.n; i++) {
    if (pb_memo.e[i].users == 0) pb_memo__free_entry(&pb_memo.e[i]);
    else pb_memo.e[k++] = pb_memo.e[i];
  }
  pb_memo.n = k;
}

void pb_store_rows_memo(int on)
{
  pthread_mutex_lock(&pb_memo__lock);
  pb_memo__evict_idle();
  pb_memo.on = on;
  if (pb_memo.n == 0) {
    free(pb_memo.path);
    pb_memo.path = NULL;
  }
  pthread_mutex_unlock(&pb_memo__lock);
}

int pb_store_file_unchanged(const char *path, MPI_Comm comm, const char *known_path, MPI_Comm known_comm,
                            const struct stat *id)
{
  struct stat sb;
  int cmp = MPI_UNEQUAL;
  if (!known_path || strcmp(path, known_path) != 0 || stat(path, &sb) != 0) return 0;
  MPI_Comm_compare(comm, known_comm, &cmp);
  return (cmp == MPI_IDENT || cmp == MPI_CONGRUENT) && sb.st_dev == id->st_dev && sb.st_ino == id->st_ino &&
         sb.st_size == id->st_size && sb.st_mtim.tv_sec == id->st_mtim.tv_sec &&
         sb.st_mtim.tv_nsec == id->st_mtim.tv_nsec;
}

/* Whether @p path (opened on @p comm) is the file the entries came from. */
static int pb_memo__same_store(const char *path, MPI_Comm comm)
{
  return pb_store_file_unchanged(path, comm, pb_memo.path, pb_memo.comm, &pb_memo.id);
}

int pb_store_memo_on(void)
{
  pthread_mutex_lock(&pb_memo__lock);
  const int on = pb_memo.on;
  pthread_mutex_unlock(&pb_memo__lock);
  return on;
}

int pb_store_memo_find(const char *path, MPI_Comm comm, int32_t src, int fields, int32_t n_rows, const int32_t *rows)
{
  int found = -1;
  pthread_mutex_lock(&pb_memo__lock);
  if (pb_memo.on && pb_memo__same_store(path, comm))
    for (int i = 0; i < pb_memo.n && found < 0; i++) {
      const struct pb_memo__entry *e = &pb_memo.e[i];
      if (e->src == src && e->fields == fields && e->n_rows == n_rows &&
          memcmp(e->rows, rows, (size_t)n_rows * sizeof *rows) == 0)
        found = i;
    }
  pthread_mutex_unlock(&pb_memo__lock);
  return found;
}

void pb_store_memo_take(int i, struct pb_rows *out)
{
  pthread_mutex_lock(&pb_memo__lock);
  pb_memo.e[i].users++;
  *out = pb_memo.e[i].d;
  pthread_mutex_unlock(&pb_memo__lock);
}

void pb_store_memo_miss(void)
{
  pthread_mutex_lock(&pb_memo__lock);
  if (pb_memo.on) pb_memo__evict_idle();
  pthread_mutex_unlock(&pb_memo__lock);
}

void pb_store_memo_put(const char *path, MPI_Comm comm, int32_t src, int fields, int32_t n_rows, const int32_t *rows,
                       const struct pb_rows *d)
{
  pthread_mutex_lock(&pb_memo__lock);
  if (pb_memo.on && pb_memo.n < PB_MEMO_MAX) {
    if (!pb_memo__same_store(path, comm)) {
      pb_memo__evict_idle();
      if (pb_memo.n > 0) goto done; /* rows of another store are still held: keep to one store */
      free(pb_memo.path);
      pb_memo.path = NULL;
      if (stat(path, &pb_memo.id) != 0) goto done;
      pb_memo.path = pb_strdup(path);
      pb_memo.comm = comm;
    }
    struct pb_memo__entry *e = &pb_memo.e[pb_memo.n++];
    e->src = src, e->fields = fields, e->n_rows = n_rows, e->users = 1, e->d = *d;
    e->rows = pb_malloc((size_t)(n_rows > 0 ? n_rows : 1) * sizeof *rows);
    memcpy(e->rows, rows, (size_t)n_rows * sizeof *rows);
  }
done:
  pthread_mutex_unlock(&pb_memo__lock);
}

int pb_store_memo_release(struct pb_rows *r)
{
  int mine = 0;
  if (!r->pred && !r->smax && !r->ptrue && !r->topk_class && !r->topk_prob && !r->entropy && !r->collision) return 0;
  pthread_mutex_lock(&pb_memo__lock);
  for (int i = 0; i < pb_memo.n && !mine; i++) {
    struct pb_memo__entry *e = &pb_memo.e[i];
    if (e->d.pred == r->pred && e->d.smax == r->smax && e->d.ptrue == r->ptrue && e->d.topk_class == r->topk_class &&
        e->d.topk_prob == r->topk_prob && e->d.entropy == r->entropy && e->d.collision == r->collision) {
      mine = 1;
      if (--e->users == 0 && !pb_memo.on) pb_memo__evict_idle();
    }
  }
  pthread_mutex_unlock(&pb_memo__lock);
  if (mine) memset(r, 0, sizeof *r);
  return mine;
}
