/* Partition-free report aggregates (include/pairbound/agg.h): exact
 * fixed-point sums, located maxima, distributed order statistics and the
 * fetch of one record from its owner. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pairbound/agg.h"
#include "pairbound/comm.h"
#include "pairbound/error.h"

#define L PB_AGG_LIMBS
#define CNT L      /* slot index of the count */
#define PINF (L + 1)
#define NINF (L + 2)
#define DIGIT 0xffffffffll
/* Extra zero digits below the window before a mean's long division, so the
 * quotient keeps more than 64 significant bits for any count < 2^63. */
#define PB_AGG__EXTRA 4

static int64_t *pb_agg__slot(const struct pb_agg *a, int64_t i) { return a->v + i * PB_AGG_WIDTH; }

/* Carries up: every limb but the top one into [0, 2^32); the top one keeps the sign. */
static void pb_agg__normalise(int64_t *s)
{
  for (int j = 0; j < L - 1; j++) {
    const int64_t c = s[j] >> 32; /* floor: arithmetic shift */
    s[j] -= c * ((int64_t)1 << 32);
    s[j + 1] += c;
  }
}

void pb_agg_init(struct pb_agg *a, int64_t n)
{
  a->n = n;
  a->v = pb_calloc((size_t)(n > 0 ? n : 1) * PB_AGG_WIDTH, sizeof *a->v);
}

void pb_agg_free(struct pb_agg *a)
{
  free(a->v);
  a->v = NULL;
  a->n = 0;
}

/* Add the magnitude m * 2^p (p: bit position above 2^PB_AGG_LSB_EXP, 0 <= p,
 * p + bits(m) <= 32 L) with sign @p neg, in three carry-free digits. */
static void pb_agg__place(int64_t *s, uint64_t m, int p, int neg)
{
  const unsigned __int128 t = (unsigned __int128)m << (p & 31);
  const int k = p >> 5;
  const int64_t d[3] = {(int64_t)(t & DIGIT), (int64_t)((t >> 32) & DIGIT), (int64_t)(t >> 64)};
  for (int j = 0; j < 3 && k + j < L; j++) s[k + j] += neg ? -d[j] : d[j];
}

/* Count one more value: a limb holds at most 2^31 added digits, so carry every 2^30 values. */
static void pb_agg__count(int64_t *s)
{
  if ((++s[CNT] & ((1ll << 30) - 1)) == 0) pb_agg__normalise(s);
}

void pb_agg_add(struct pb_agg *a, int64_t i, double x)
{
  if (isnan(x)) return;
  int64_t *s = pb_agg__slot(a, i);
  pb_agg__count(s);
  if (fabs(x) >= 0x1p128) {
    s[x > 0 ? PINF : NINF]++;
    return;
  }
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  int e = (int)((u >> 52) & 0x7ff);
  uint64_t m = u & ((1ull << 52) - 1);
  if (e) m |= 1ull << 52;
  else e = 1; /* subnormal */
  /* x = m 2^(e - 1075); its lowest bit sits p bits above the window's */
  int p = e - 1075 - PB_AGG_LSB_EXP;
  if (p < 0) {
    if (p <= -53) m = 0;
    else m >>= -p;
    p = 0;
  }
  if (m) pb_agg__place(s, m, p, (int)(u >> 63));
}

void pb_agg_add_int(struct pb_agg *a, int64_t i, int64_t k)
{
  int64_t *s = pb_agg__slot(a, i);
  pb_agg__count(s);
  const uint64_t m = k < 0 ? -(uint64_t)k : (uint64_t)k;
  /* 2^0 is bit -PB_AGG_LSB_EXP of the window, a digit boundary: two digits */
  const int k0 = -PB_AGG_LSB_EXP / 32;
  s[k0] += k < 0 ? -(int64_t)(m & DIGIT) : (int64_t)(m & DIGIT);
  s[k0 + 1] += k < 0 ? -(int64_t)(m >> 32) : (int64_t)(m >> 32);
}

/* d += s, both normalised first so that no limb can overflow. */
static void pb_agg__add_slot(int64_t *d, const int64_t *s)
{
  int64_t t[PB_AGG_WIDTH];
  memcpy(t, s, sizeof t);
  pb_agg__normalise(t);
  pb_agg__normalise(d);
  for (int j = 0; j < PB_AGG_WIDTH; j++) d[j] += t[j];
  pb_agg__normalise(d);
}

void pb_agg_fold(struct pb_agg *dst, int64_t j, const struct pb_agg *src, int64_t i)
{
  pb_agg__add_slot(pb_agg__slot(dst, j), pb_agg__slot(src, i));
}

void pb_agg_merge(struct pb_agg *dst, const struct pb_agg *src)
{
  for (int64_t i = 0; i < dst->n; i++) pb_agg__add_slot(pb_agg__slot(dst, i), pb_agg__slot(src, i));
}

int pb_agg_reduce(struct pb_agg *a, MPI_Comm comm, int root)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  for (int64_t i = 0; i < a->n; i++) pb_agg__normalise(pb_agg__slot(a, i));
  /* normalised limbs are below 2^32: their sum over any number of ranks fits */
  const int64_t total = a->n * PB_AGG_WIDTH, chunk = (int64_t)1 << 26;
  int rc = MPI_SUCCESS;
  for (int64_t o = 0; o < total && rc == MPI_SUCCESS; o += chunk) {
    const int cnt = (int)(total - o < chunk ? total - o : chunk);
    if (root < 0) rc = pb_comm_allreduce(MPI_IN_PLACE, a->v + o, cnt, MPI_INT64_T, MPI_SUM, comm);
    else if (rank == root) rc = pb_comm_reduce(MPI_IN_PLACE, a->v + o, cnt, MPI_INT64_T, MPI_SUM, root, comm);
    else rc = pb_comm_reduce(a->v + o, NULL, cnt, MPI_INT64_T, MPI_SUM, root, comm);
  }
  if (rc != MPI_SUCCESS) {
    pb_error_set("aggregate reduction failed (MPI error %d)", rc);
    return PB_FAIL;
  }
  return PB_OK;
}

int64_t pb_agg_count(const struct pb_agg *a, int64_t i) { return pb_agg__slot(a, i)[CNT]; }

/* The magnitude of slot @p s as nd = L + 1 + PB_AGG__EXTRA 32-bit digits, the
 * lowest of weight 2^(PB_AGG_LSB_EXP - 32 PB_AGG__EXTRA); returns 1 if negative. */
static int pb_agg__digits(const int64_t *s, uint32_t *d)
{
  int64_t t[L];
  memcpy(t, s, sizeof t);
  pb_agg__normalise(t);
  const int neg = t[L - 1] < 0; /* the lower limbs are in [0, 2^32) */
  if (neg) {
    for (int j = 0; j < L; j++) t[j] = -t[j];
    pb_agg__normalise(t);
  }
  memset(d, 0, PB_AGG__EXTRA * sizeof *d);
  for (int j = 0; j < L - 1; j++) d[PB_AGG__EXTRA + j] = (uint32_t)t[j];
  d[PB_AGG__EXTRA + L - 1] = (uint32_t)(t[L - 1] & DIGIT);
  d[PB_AGG__EXTRA + L] = (uint32_t)((uint64_t)t[L - 1] >> 32);
  return neg;
}

/* The digits d[0..nd) (d[0] of weight 2^e0) rounded to the nearest double,
 * ties to even; @p sticky: a nonzero remainder lies below d[0]. */
static double pb_agg__round(const uint32_t *d, int nd, int e0, int sticky, int neg)
{
  int h = nd - 1;
  while (h >= 0 && d[h] == 0) h--;
  if (h < 0) return 0.0;
  unsigned __int128 t = 0;
  for (int j = h; j >= h - 2; j--) t = t << 32 | (j >= 0 ? d[j] : 0);
  for (int j = h - 3; j >= 0 && !sticky; j--) sticky = d[j] != 0;
  int bits = 64;
  for (uint32_t top = d[h]; top; top >>= 1) bits++;
  const int sh = bits - 53; /* 12 .. 43 */
  uint64_t m = (uint64_t)(t >> sh);
  const unsigned __int128 rem = t & (((unsigned __int128)1 << sh) - 1), half = (unsigned __int128)1 << (sh - 1);
  if (rem > half || (rem == half && (sticky || (m & 1)))) m++;
  const double x = ldexp((double)m, e0 + 32 * (h - 2) + sh);
  return neg ? -x : x;
}

/* +inf, -inf or NaN when the slot counted infinities; 0 (and *fin = 1) otherwise. */
static double pb_agg__inf(const int64_t *s, int *fin)
{
  *fin = s[PINF] == 0 && s[NINF] == 0;
  if (*fin) return 0.0;
  return s[PINF] && s[NINF] ? NAN : s[PINF] ? INFINITY : -INFINITY;
}

double pb_agg_sum(const struct pb_agg *a, int64_t i)
{
  const int64_t *s = pb_agg__slot(a, i);
  int fin;
  const double inf = pb_agg__inf(s, &fin);
  if (!fin) return inf;
  uint32_t d[L + 1 + PB_AGG__EXTRA];
  const int neg = pb_agg__digits(s, d);
  return pb_agg__round(d, L + 1 + PB_AGG__EXTRA, PB_AGG_LSB_EXP - 32 * PB_AGG__EXTRA, 0, neg);
}

double pb_agg_mean(const struct pb_agg *a, int64_t i)
{
  const int64_t *s = pb_agg__slot(a, i);
  if (s[CNT] == 0) return NAN;
  int fin;
  const double inf = pb_agg__inf(s, &fin);
  if (!fin) return inf;
  enum { ND = L + 1 + PB_AGG__EXTRA };
  uint32_t d[ND];
  const int neg = pb_agg__digits(s, d);
  /* long division by the count, top digit first: the quotient's digits and a remainder */
  const uint64_t n = (uint64_t)s[CNT];
  unsigned __int128 rem = 0;
  for (int j = ND - 1; j >= 0; j--) {
    const unsigned __int128 cur = rem << 32 | d[j];
    d[j] = (uint32_t)(cur / n);
    rem = cur % n;
  }
  return pb_agg__round(d, ND, PB_AGG_LSB_EXP - 32 * PB_AGG__EXTRA, rem != 0, neg);
}

double pb_agg_mean_of(const struct pb_agg *a, int64_t first, int64_t stride, int64_t n)
{
  struct pb_agg all;
  pb_agg_init(&all, 1);
  for (int64_t k = 0; k < n; k++) pb_agg_fold(&all, 0, a, first + k * stride);
  const double m = pb_agg_mean(&all, 0);
  pb_agg_free(&all);
  return m;
}

/* ------------------------------------------------------------ locations */

void pb_agg_loc_init(struct pb_loc *l, int n, double start)
{
  for (int j = 0; j < n; j++) l[j] = (struct pb_loc){start, -1, -1};
}

void pb_agg_loc_max(struct pb_loc *l, double v, int64_t cell, int64_t tag)
{
  if (v > l->v) *l = (struct pb_loc){v, cell, tag};
}

void pb_agg_loc_min(struct pb_loc *l, double v, int64_t cell, int64_t tag)
{
  if (v < l->v) *l = (struct pb_loc){v, cell, tag};
}

/* Does @p a beat @p b?  A candidate beats none; else the larger (smaller)
 * value, and of equal values the lower cell: the first in a scan in cell order. */
static int pb_loc__beats(const struct pb_loc *a, const struct pb_loc *b, int is_max)
{
  if (a->cell < 0) return 0;
  if (b->cell < 0) return 1;
  if (a->v != b->v) return is_max ? a->v > b->v : a->v < b->v;
  return a->cell < b->cell;
}

static void pb_loc__op(void *in, void *inout, int *len, int is_max)
{
  const struct pb_loc *a = in;
  struct pb_loc *b = inout;
  for (int j = 0; j < *len; j++)
    if (pb_loc__beats(&a[j], &b[j], is_max)) b[j] = a[j];
}

static void pb_loc__op_max(void *in, void *inout, int *len, MPI_Datatype *type)
{
  (void)type;
  pb_loc__op(in, inout, len, 1);
}

static void pb_loc__op_min(void *in, void *inout, int *len, MPI_Datatype *type)
{
  (void)type;
  pb_loc__op(in, inout, len, 0);
}

int pb_agg_loc_reduce(struct pb_loc *l, int n, int is_max, MPI_Comm comm, int root)
{
  int rank;
  MPI_Comm_rank(comm, &rank);
  MPI_Datatype type;
  MPI_Op op;
  MPI_Type_contiguous((int)sizeof *l, MPI_BYTE, &type);
  MPI_Type_commit(&type);
  MPI_Op_create(is_max ? pb_loc__op_max : pb_loc__op_min, 1, &op);
  int rc;
  if (root < 0) rc = MPI_Allreduce(MPI_IN_PLACE, l, n, type, op, comm);
  else if (rank == root) rc = MPI_Reduce(MPI_IN_PLACE, l, n, type, op, root, comm);
  else rc = MPI_Reduce(l, NULL, n, type, op, root, comm);
  MPI_Op_free(&op);
  MPI_Type_free(&type);
  if (rc != MPI_SUCCESS) {
    pb_error_set("location reduction failed (MPI error %d)", rc);
    return PB_FAIL;
  }
  return PB_OK;
}

/* ------------------------------------------------------ order statistics */

/* Unsigned key in the order of the doubles: negative values reversed below the positive ones. */
static uint64_t pb_select__key(double x)
{
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u >> 63 ? ~u : u | (1ull << 63);
}

static double pb_select__value(uint64_t k)
{
  const uint64_t u = k >> 63 ? k & ~(1ull << 63) : ~k;
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}

int64_t pb_agg_select_count(const double *v, int64_t n_local, MPI_Comm comm)
{
  int64_t n = 0;
  for (int64_t i = 0; i < n_local; i++) n += !isnan(v[i]);
  pb_comm_allreduce(MPI_IN_PLACE, &n, 1, MPI_INT64_T, MPI_SUM, comm);
  return n;
}

void pb_agg_select_kth(const double *v, int64_t n_local, const int64_t *k, int nk, MPI_Comm comm, double *out)
{
  uint64_t *prefix = pb_calloc((size_t)(nk > 0 ? nk : 1), sizeof *prefix);
  int64_t *want = pb_malloc((size_t)(nk > 0 ? nk : 1) * sizeof *want);
  int64_t *hist = pb_malloc((size_t)(nk > 0 ? nk : 1) * 256 * sizeof *hist);
  uint8_t *bad = pb_calloc((size_t)(nk > 0 ? nk : 1), 1);
  for (int j = 0; j < nk; j++) want[j] = k[j];
  /* the key's bytes from the top: each round counts, per bin, the values
   * that share the bytes chosen so far, and keeps the bin holding rank want */
  for (int shift = 56; shift >= 0; shift -= 8) {
    const uint64_t mask = shift == 56 ? 0 : ~0ull << (shift + 8);
    memset(hist, 0, (size_t)nk * 256 * sizeof *hist);
    for (int64_t i = 0; i < n_local; i++) {
      if (isnan(v[i])) continue;
      const uint64_t key = pb_select__key(v[i]);
      for (int j = 0; j < nk; j++)
        if ((key & mask) == prefix[j]) hist[j * 256 + ((key >> shift) & 255)]++;
    }
    pb_comm_allreduce(MPI_IN_PLACE, hist, nk * 256, MPI_INT64_T, MPI_SUM, comm);
    for (int j = 0; j < nk; j++) {
      int b = 0;
      while (b < 256 && want[j] >= hist[j * 256 + b]) want[j] -= hist[j * 256 + b++];
      if (b == 256 || want[j] < 0) bad[j] = 1, b = 0; /* k out of range */
      prefix[j] |= (uint64_t)b << shift;
    }
  }
  for (int j = 0; j < nk; j++) out[j] = bad[j] ? NAN : pb_select__value(prefix[j]);
  free(bad);
  free(hist);
  free(want);
  free(prefix);
}

double pb_agg_select_quantile(const double *v, int64_t n_local, double q, MPI_Comm comm)
{
  const int64_t n = pb_agg_select_count(v, n_local, comm);
  if (n == 0) return NAN;
  /* GSL's gsl_stats_quantile_from_sorted_data, on the two order statistics it reads */
  const double index = q * (double)(n - 1);
  const int64_t lhs = (int64_t)index;
  const double delta = index - (double)lhs;
  const int64_t k[2] = {lhs, lhs + 1 < n ? lhs + 1 : lhs};
  double x[2];
  pb_agg_select_kth(v, n_local, k, 2, comm, x);
  /* equal neighbours: that value exactly, as pb_resample_percentile_sorted */
  return lhs == n - 1 || x[0] == x[1] ? x[0] : (1 - delta) * x[0] + delta * x[1];
}

/* ---------------------------------------------------------------- fetch */

int pb_agg_fetch(MPI_Comm comm, int64_t first, int64_t n_local, int64_t item, const double *recs, int32_t rec_len,
                 const int32_t *fields, int32_t n_fields, double *out, int root)
{
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int32_t nf = fields ? n_fields : rec_len;
  const int mine = item >= first && item < first + n_local;
  int owner = mine ? rank : size;
  pb_comm_allreduce(MPI_IN_PLACE, &owner, 1, MPI_INT, MPI_MIN, comm);
  if (owner == size) {
    for (int32_t f = 0; f < nf; f++) out[f] = NAN;
    pb_error_set("item %lld is on no rank", (long long)item);
    return PB_FAIL;
  }
  if (rank == owner) {
    const double *r = recs + (item - first) * rec_len;
    for (int32_t f = 0; f < nf; f++) out[f] = r[fields ? fields[f] : f];
  }
  if (root < 0) MPI_Bcast(out, nf, MPI_DOUBLE, owner, comm);
  else if (owner != root) {
    if (rank == owner) MPI_Send(out, nf, MPI_DOUBLE, root, 0, comm);
    else if (rank == root) MPI_Recv(out, nf, MPI_DOUBLE, owner, 0, comm, MPI_STATUS_IGNORE);
  }
  return PB_OK;
}
