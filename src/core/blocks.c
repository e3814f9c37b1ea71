/* Block checkpoints inside long stages (include/pairbound/blocks.h).
 *
 * OUTDIR/.pairbound-blocks/LOOP/ holds key.txt (the checkpoint key's lines,
 * then "end SHA256-of-those-lines") and one file per completed block:
 *
 *   pairbound-block 2
 *   key HEX        SHA-256 of the key text: build, store checksum, settings
 *   block ID
 *   bytes N
 *   xxh128 HEX     XXH3-128 (pb_checksum_xxh128_hex) of the N payload bytes that follow
 *
 * (format 1, before stop 30, had the payload's SHA-256: such a block reads as
 * damaged and is recomputed; XXH3 hashes the 100 MB of a run's screen blocks
 * in a few milliseconds instead of 0.1 s)
 *
 * key.txt lets a refused resume name what differs; the per-block key hash,
 * length and checksum make a stale, truncated or edited block detectable,
 * and such a block is recomputed, never trusted. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <omp.h>

#include "pairbound/blocks.h"
#include "pairbound/checkpoint.h"
#include "pairbound/checksum.h"
#include "pairbound/comm.h"
#include "pairbound/dist.h"
#include "pairbound/error.h"
#include "pairbound/error_mpi.h"
#include "pairbound/output.h"
#include "pairbound/parse.h"
#include "pairbound/progress.h"
#include "pairbound/results.h"
#include "pairbound/signals.h"

#define PB_BLOCKS_MAGIC "pairbound-block 2\n"
#define PB_BLOCKS_KEYFILE "key.txt"
#define PB_BLOCKS__NOTICE 1 /* tag of a stop notice (pb_blocks_poll) */

/* What the driver said the next stage's blocks belong to. */
static struct {
  struct pb_checkpoint_key key;
  char *key_text; /* NULL: no blocks are kept */
  int resume;
  char *hint;
} pb_blocks__ctx;

void pb_blocks_context(const struct pb_checkpoint_key *key, int resume, const char *hint)
{
  struct pb_checkpoint_key *k = &pb_blocks__ctx.key;
  free((char *)k->stage);
  free((char *)k->build);
  free((char *)k->store_digest);
  free((char *)k->settings);
  free(pb_blocks__ctx.key_text);
  free(pb_blocks__ctx.hint);
  memset(&pb_blocks__ctx, 0, sizeof pb_blocks__ctx);
  if (!key) return;
  pb_blocks__ctx.hint = pb_strdup(hint ? hint : "");
  k->stage = pb_strdup(key->stage);
  k->build = pb_strdup(key->build);
  k->store_digest = pb_strdup(key->store_digest);
  k->settings = pb_strdup(key->settings ? key->settings : "");
  pb_blocks__ctx.key_text = pb_checkpoint_key_text(k);
  pb_blocks__ctx.resume = resume;
}

char *pb_blocks_resume_hint(const char *provenance)
{
  const char *c = strstr(provenance ? provenance : "", "\ncommand:");
  c = c ? c + 9 : "";
  c += strspn(c, " ");
  size_t n = strcspn(c, "\n");
  struct pb_text t = {0};
  pb_text_printf(&t, "resume with: %.*s", (int)n, c);
  int has = 0;
  for (const char *w = c; w < c + n; w += strcspn(w, " \n"), w += strspn(w, " "))
    has |= strncmp(w, "--resume", 8) == 0 && (w[8] == ' ' || w[8] == '\n' || w[8] == '\0');
  if (!has) pb_text_printf(&t, " --resume");
  return t.buf;
}

/* ------------------------------------------------------------ partition */

/* Items per block so that @p n_items make about @p target blocks (at least 1 item each); *@p n_blocks blocks. */
static int64_t pb_blocks__per(int64_t n_items, int64_t target, int64_t *n_blocks)
{
  int64_t per = (n_items + target - 1) / target;
  *n_blocks = per > 0 ? (n_items + per - 1) / per : 0;
  return per;
}

void pb_blocks_items(int64_t n_items, int64_t per, int64_t k, int64_t *a, int64_t *b)
{
  *a = k * per;
  *b = *a + per < n_items ? *a + per : n_items;
}

/* ------------------------------------------------------------ bytes */

void pb_blocks_put(struct pb_bytes *b, const void *p, size_t n)
{
  if (b->len + n > b->cap) {
    b->cap = 2 * (b->len + n) + 4096;
    b->buf = pb_realloc(b->buf, b->cap);
  }
  if (n) memcpy(b->buf + b->len, p, n);
  b->len += n;
}

int pb_blocks_get(struct pb_bytes *b, void *p, size_t n)
{
  if (n > b->len - b->pos) {
    pb_error_set("block payload ends early (%zu bytes wanted, %zu left)", n, b->len - b->pos);
    return PB_FAIL;
  }
  if (n) memcpy(p, b->buf + b->pos, n);
  b->pos += n;
  return PB_OK;
}

void pb_blocks_bytes_free(struct pb_bytes *b)
{
  free(b->buf);
  memset(b, 0, sizeof *b);
}

/* ------------------------------------------------------------ directory */

/* Remove the files of DIR for which keep() is false (all when keep is NULL). */
static void pb_blocks__sweep(const char *dir, int (*keep)(const char *name))
{
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (keep && keep(e->d_name))) continue;
    char *p = pb_output_path_join(dir, e->d_name);
    unlink(p);
    free(p);
  }
  if (d) closedir(d);
}

/* What a killed writer left is a temporary (NAME.tmp.XXXXXX): never a block. */
static int pb_blocks__not_temporary(const char *name)
{
  return strstr(name, ".tmp.") == NULL;
}

/* Rank 0: with --resume keep blocks made for this key (refuse blocks of
 * another key, naming what differs); otherwise start an empty directory. */
static int pb_blocks__prepare(struct pb_blocks *bl)
{
  if (pb_output_mkdir_p(bl->dir) != PB_OK) return PB_FAIL;
  pb_blocks__sweep(bl->dir, pb_blocks__not_temporary);
  char *kpath = pb_output_path_join(bl->dir, PB_BLOCKS_KEYFILE);
  int status = PB_OK, keep = 0;
  if (bl->resume) {
    char *text = pb_output_text_load_regular(kpath), *end = text ? strstr(text, "\nend ") : NULL, hex[65];
    struct stat sb;
    if (!text && lstat(kpath, &sb) == 0) pb_message("%s: its blocks are recomputed", pb_error_message());
    pb_error_clear();
    if (end) {
      pb_checksum_sha256_hex(text, (size_t)(end + 1 - text), hex);
      keep = strncmp(end + 5, hex, 64) == 0;
    }
    if (keep) {
      end[1] = '\0';
      status = pb_checkpoint_key_same(bl->dir, "the completed blocks were", text, &pb_blocks__ctx.key);
    } else if (text) {
      pb_message("%s: %s is damaged: its blocks are recomputed", bl->dir, PB_BLOCKS_KEYFILE);
    }
    free(text);
  }
  if (status == PB_OK && !keep) {
    pb_blocks__sweep(bl->dir, NULL);
    struct pb_outfile f;
    char hex[65];
    const char *kt = pb_blocks__ctx.key_text;
    pb_checksum_sha256_hex(kt, strlen(kt), hex);
    status = pb_output_file_open(&f, kpath);
    if (status == PB_OK) {
      fprintf(f.fp, "%send %s\n", kt, hex);
      status = pb_output_file_commit(&f);
    }
  }
  free(kpath);
  return status;
}

int pb_blocks_open(struct pb_blocks *bl, const char *outdir, const char *loop, int64_t n_blocks, const int64_t *cost,
                   MPI_Comm comm)
{
  int size;
  memset(bl, 0, sizeof *bl);
  bl->comm = comm;
  MPI_Comm_rank(comm, &bl->rank);
  MPI_Comm_size(comm, &size);
  bl->n_blocks = n_blocks;
  int status = PB_OK;
  if (pb_blocks__ctx.key_text) {
    char *top = pb_output_path_join(outdir, PB_BLOCKS_DIR);
    bl->dir = pb_output_path_join(top, loop);
    free(top);
    bl->resume = pb_blocks__ctx.resume;
    /* the drivers know the store checksum on rank 0 only */
    pb_checksum_sha256_hex(pb_blocks__ctx.key_text, strlen(pb_blocks__ctx.key_text), bl->keyhash);
    MPI_Bcast(bl->keyhash, sizeof bl->keyhash, MPI_CHAR, 0, comm);
    if (bl->rank == 0) status = pb_blocks__prepare(bl);
    status = pb_error_agree(comm, status);
  }
  int64_t *first = pb_malloc((size_t)(size + 1) * sizeof *first);
  pb_dist_partition_bcast(n_blocks, cost, comm, first);
  bl->first = first[bl->rank];
  bl->last = first[bl->rank + 1];
  free(first);
  /* a round gives each thread about PB_BLOCKS_PER_THREAD blocks: enough to
   * even out uneven work before the round's boundary, few enough that a
   * stop request waits for little */
  bl->per_round = (int64_t)PB_BLOCKS_PER_THREAD * omp_get_max_threads();
  int64_t mine = (bl->last - bl->first + bl->per_round - 1) / bl->per_round;
  pb_comm_allreduce(&mine, &bl->rounds, 1, MPI_INT64_T, MPI_MAX, comm);
  /* pb_blocks_poll's notices travel on a communicator of their own, so they
   * can never match another message; the receive waits from the start */
  MPI_Comm_dup(comm, &bl->notice_comm);
  bl->notice_out = pb_malloc((size_t)size * sizeof *bl->notice_out);
  MPI_Irecv(&bl->notice_val, 1, MPI_INT, MPI_ANY_SOURCE, PB_BLOCKS__NOTICE, bl->notice_comm, &bl->notice_in);
  pb_signal_set_deferred(1);
  return status;
}

void pb_blocks_round(const struct pb_blocks *bl, int64_t r, int64_t *b0, int64_t *b1)
{
  *b0 = bl->first + r * bl->per_round;
  if (*b0 > bl->last) *b0 = bl->last;
  *b1 = *b0 + bl->per_round < bl->last ? *b0 + bl->per_round : bl->last;
}

int pb_blocks_open_items(struct pb_blocks *bl, const char *outdir, const char *loop, int64_t n_items, int64_t target,
                         const int64_t *cost, MPI_Comm comm, int64_t *per, int64_t *first, int64_t *last)
{
  int64_t nb;
  *per = pb_blocks__per(n_items, target, &nb);
  int64_t *bcost = pb_calloc((size_t)(nb > 0 ? nb : 1), sizeof *bcost);
  for (int64_t i = 0; i < n_items; i++) bcost[i / *per] += cost[i];
  const int status = pb_blocks_open(bl, outdir, loop, nb, bcost, comm);
  free(bcost);
  *first = bl->first * *per;
  *last = bl->last * *per < n_items ? bl->last * *per : n_items;
  return status;
}

void pb_blocks_resume_round(struct pb_blocks *bl, int64_t r, int64_t n_items, int64_t per, int64_t first,
                            int (*apply)(void *ctx, int64_t a, int64_t b, struct pb_bytes *pay), void *ctx,
                            uint8_t *todo, struct pb_progress *prog, struct pb_blocks_left *left)
{
  int64_t e;
  pb_blocks_round(bl, r, &left->b0, &left->b1);
  pb_blocks_items(n_items, per, left->b0, &left->c0, &e);
  pb_blocks_items(n_items, per, left->b1 - 1, &e, &left->c1);
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t k = left->b0; k < left->b1; k++) {
    int64_t a, b;
    pb_blocks_items(n_items, per, k, &a, &b);
    struct pb_bytes pay = {0};
    const int ok = pb_blocks_load(bl, k, &pay) && apply(ctx, a, b, &pay) == PB_OK;
    for (int64_t c = a; c < b; c++) todo[c - first] = !ok;
    if (ok) pb_progress_step(prog, b - a);
    pb_blocks_bytes_free(&pay);
  }
  left->n = pb_calloc((size_t)(left->b1 - left->b0 > 0 ? left->b1 - left->b0 : 1), sizeof *left->n);
  for (int64_t c = left->c0; c < left->c1; c++) left->n[c / per - left->b0] += todo[c - first];
}

/* ------------------------------------------------------------ block files */

static char *pb_blocks__path(const struct pb_blocks *bl, int64_t id)
{
  char name[40];
  snprintf(name, sizeof name, "%" PRId64 ".blk", id);
  return pb_output_path_join(bl->dir, name);
}

/* The header lines after the magic as pb_blocks_save writes them, "key K",
 * "block B", "bytes N" and "xxh128 S" (K and S at most 64 characters), into
 * @p key, @p blk, @p bytes and @p sum; 0 when one is missing or malformed. */
static int pb_blocks__header(char *text, char key[65], int64_t *blk, uint64_t *bytes, char sum[65])
{
  static const char *const name[4] = {"key ", "block ", "bytes ", "xxh128 "};
  char *value[4], *save = NULL;
  for (int i = 0; i < 4; i++) {
    char *line = strtok_r(i ? NULL : text, "\n", &save);
    if (!line || strncmp(line, name[i], strlen(name[i])) != 0) return 0;
    value[i] = line + strlen(name[i]);
  }
  if (strlen(value[0]) > 64 || strlen(value[3]) > 64 || pb_parse_int(value[1], INT64_MIN, INT64_MAX, blk) != PB_OK ||
      pb_parse_uint(value[2], UINT64_MAX, bytes) != PB_OK)
    return 0;
  strcpy(key, value[0]);
  strcpy(sum, value[3]);
  return 1;
}

/* Why the block file's bytes are not block @p id of this key (NULL: intact); the payload is left in out. */
static const char *pb_blocks__parse(const struct pb_blocks *bl, int64_t id, const uint8_t *buf, size_t n,
                                    struct pb_bytes *out)
{
  size_t h = 0;
  for (int lines = 0; h < n && h < 512 && lines < 5; h++) lines += buf[h] == '\n';
  char head[520], key[65] = "", sum[65] = "", hex[65];
  int64_t blk = -1;
  uint64_t bytes = 0;
  memcpy(head, buf, h < sizeof head - 1 ? h : sizeof head - 1);
  head[h < sizeof head - 1 ? h : sizeof head - 1] = '\0';
  if (strncmp(head, PB_BLOCKS_MAGIC, strlen(PB_BLOCKS_MAGIC)) != 0 ||
      !pb_blocks__header(head + strlen(PB_BLOCKS_MAGIC), key, &blk, &bytes, sum))
    return "header truncated or corrupt";
  if (strcmp(key, bl->keyhash) != 0) return "made for another build, store or setting";
  if (blk != id) return "holds another block";
  if (bytes != n - h) return "truncated (payload length differs)";
  pb_checksum_xxh128_hex(buf + h, n - h, hex);
  if (strcmp(hex, sum) != 0) return "payload checksum differs";
  out->len = out->pos = 0;
  pb_blocks_put(out, buf + h, n - h);
  return NULL;
}

/* Why the block file open at @p fd is not block @p id of this key (NULL: intact, its payload in out); closes fd. */
static const char *pb_blocks__read(const struct pb_blocks *bl, int64_t id, int fd, struct pb_bytes *out)
{
  FILE *fp = fdopen(fd, "rb");
  if (!fp) {
    close(fd);
    return "cannot read";
  }
  struct pb_bytes raw = {0};
  uint8_t chunk[1 << 14];
  size_t got;
  while ((got = fread(chunk, 1, sizeof chunk, fp)) > 0) pb_blocks_put(&raw, chunk, got);
  const char *why = ferror(fp) ? "read error" : pb_blocks__parse(bl, id, raw.buf, raw.len, out);
  fclose(fp);
  pb_blocks_bytes_free(&raw);
  return why;
}

int pb_blocks_load(struct pb_blocks *bl, int64_t id, struct pb_bytes *out)
{
  if (!bl->dir || !bl->resume) return 0;
  char *path = pb_blocks__path(bl, id), buf[96];
  /* only a regular file is read: a link is never followed, a FIFO never waited on */
  const char *what, *why;
  const int fd = pb_output_open_regular(path, O_RDONLY, 0, &what);
  if (fd < 0 && !what && errno == ENOENT) {
    free(path);
#pragma omp atomic
    bl->computed++; /* never completed */
    return 0;
  }
  if (fd >= 0) {
    why = pb_blocks__read(bl, id, fd, out);
  } else {
    if (what) snprintf(buf, sizeof buf, "%s, not a regular file: not read", what);
    else snprintf(buf, sizeof buf, "cannot open: %s", strerror(errno));
    why = buf;
  }
  if (!why) {
#pragma omp atomic
    bl->loaded++;
  } else {
#pragma omp atomic
    bl->damaged++;
#pragma omp atomic
    bl->computed++;
    if (pb_log_verbosity() >= 1) fprintf(stderr, "[%d] %s: %s: recomputing this block\n", bl->rank, path, why);
  }
  free(path);
  return why == NULL;
}

int pb_blocks_save(struct pb_blocks *bl, int64_t id, const struct pb_bytes *payload)
{
  if (!bl->dir) return PB_OK;
  char *path = pb_blocks__path(bl, id), hex[65];
  pb_checksum_xxh128_hex(payload->buf, payload->len, hex);
  struct pb_outfile f;
  int status = pb_output_file_open(&f, path);
  if (status == PB_OK) {
    fprintf(f.fp, PB_BLOCKS_MAGIC "key %s\nblock %" PRId64 "\nbytes %zu\nxxh128 %s\n", bl->keyhash, id, payload->len,
            hex);
    if (payload->len) fwrite(payload->buf, 1, payload->len, f.fp);
    status = pb_output_file_commit(&f);
  }
  free(path);
  return status;
}

/* ------------------------------------------------------------ loop end */

int pb_blocks_boundary(struct pb_blocks *bl, int status)
{
  int failed = status != PB_OK, any = 0;
  pb_comm_allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, bl->comm);
  bl->signal = pb_signal_agree(bl->comm);
  return any || bl->signal;
}

/* Stop notices (pb_blocks_poll): a rank that stops for a reason of its own
 * tells rank 0; rank 0, stopping for its own reason or told, tells every
 * other rank, once.  So a rank receives at most size - 1 notices (rank 0) or
 * one (the others), and pb_blocks__notices_end can count them. */
static void pb_blocks__tell(struct pb_blocks *bl, int sig)
{
  if (bl->notice_told) return;
  bl->notice_told = 1;
  bl->notice_seen = sig; /* the sends' buffer: not written again */
  int size;
  MPI_Comm_size(bl->notice_comm, &size);
  for (int r = bl->rank == 0 ? 1 : 0; r < (bl->rank == 0 ? size : 1); r++)
    MPI_Isend(&bl->notice_seen, 1, MPI_INT, r, PB_BLOCKS__NOTICE, bl->notice_comm, &bl->notice_out[bl->notice_sent++]);
}

int pb_blocks_poll(struct pb_blocks *bl, int status)
{
  if (!bl->notice_heard) MPI_Test(&bl->notice_in, &bl->notice_heard, MPI_STATUS_IGNORE);
  const int mine = pb_signal_pending();
  if (status != PB_OK || mine) pb_blocks__tell(bl, mine);
  else if (bl->notice_heard && bl->rank == 0) pb_blocks__tell(bl, bl->notice_val); /* pass it on */
  return status != PB_OK || mine || bl->notice_heard;
}

/* Collective: complete the sends, receive every notice sent here (their
 * number is known once the ranks add up who told), and agree on the signal
 * any rank stopped for (0 when none). */
static int pb_blocks__notices_end(struct pb_blocks *bl)
{
  MPI_Waitall(bl->notice_sent, bl->notice_out, MPI_STATUSES_IGNORE);
  int told[2] = {bl->rank == 0 && bl->notice_told, bl->rank != 0 && bl->notice_told};
  pb_comm_allreduce(MPI_IN_PLACE, told, 2, MPI_INT, MPI_SUM, bl->comm);
  const int expect = bl->rank == 0 ? told[1] : told[0];
  int seen = bl->notice_seen;
  if (expect > 0) {
    if (!bl->notice_heard) MPI_Wait(&bl->notice_in, MPI_STATUS_IGNORE);
    seen = bl->notice_val > seen ? bl->notice_val : seen;
    for (int i = 1; i < expect; i++) {
      int v;
      MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, PB_BLOCKS__NOTICE, bl->notice_comm, MPI_STATUS_IGNORE);
      seen = v > seen ? v : seen;
    }
  } else {
    MPI_Cancel(&bl->notice_in);
    MPI_Wait(&bl->notice_in, MPI_STATUS_IGNORE);
  }
  MPI_Comm_free(&bl->notice_comm);
  free(bl->notice_out);
  bl->notice_out = NULL;
  /* a lock-step loop's agreed signal (pb_blocks_boundary) counts too */
  return pb_signal_agree_on(bl->comm, seen > bl->signal ? seen : bl->signal);
}

int pb_blocks_close(struct pb_blocks *bl, int status)
{
  bl->signal = pb_blocks__notices_end(bl);
  int64_t v[3] = {bl->loaded, bl->computed, bl->damaged};
  pb_comm_allreduce(MPI_IN_PLACE, v, 3, MPI_INT64_T, MPI_SUM, bl->comm);
  if (bl->dir && bl->resume && status == PB_OK)
    pb_message("%s: %lld of %lld blocks resumed, %lld computed (%lld damaged ones among them)", bl->dir,
               (long long)v[0], (long long)bl->n_blocks, (long long)v[1], (long long)v[2]);
  if (bl->signal) {
    /* the process ends with 128 + signal: stay deferred so that it is not cut short */
    if (bl->dir)
      pb_error_set("stopped by signal %d at a block boundary; %lld of %lld blocks are complete in %s; %s", bl->signal,
                   (long long)(v[0] + v[1]), (long long)bl->n_blocks, bl->dir,
                   pb_blocks__ctx.hint ? pb_blocks__ctx.hint : "");
    else
      pb_error_set("stopped by signal %d at a block boundary; nothing is kept (give --resume to keep completed "
                   "blocks)", bl->signal);
    status = PB_FAIL;
  } else {
    pb_signal_set_deferred(0);
  }
  free(bl->dir);
  bl->dir = NULL;
  return status;
}

void pb_blocks_remove(const char *outdir)
{
  char *top = pb_output_path_join(outdir, PB_BLOCKS_DIR);
  DIR *d = opendir(top);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char *sub = pb_output_path_join(top, e->d_name);
    pb_blocks__sweep(sub, NULL);
    if (rmdir(sub) != 0 && errno != ENOENT) pb_warning("%s: cannot remove: %s", sub, strerror(errno));
    free(sub);
  }
  if (d) closedir(d);
  rmdir(top);
  free(top);
}
