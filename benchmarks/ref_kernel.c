/* Benchmark-only reference: one Dykstra triangle pass in plain C (no intrinsics), the same
 * algorithm, visiting order and pair layout as the numba kernels in
 * src/metricopt/solvers/_triangle_sparse.py.
 * Modes "diagonal" (the earlier sparse kernel of triangle_pass_diagonal: diagonal order on
 * the diagonal layout) and "lexicographic" (triangle_pass_lexicographic: i < j < k on the
 * packed row-major layout): a row of triplets is split at the next stored dual; triplets
 * before it only need the violation test; new duals are written unconditionally and the
 * count advances when they are positive; the dual buffer is grown between rows, never
 * inside one.
 * Mode "sparse-scratch": the current triangle_pass_diagonal, each row through a dense
 * scratch (see pass_scratch).
 * Mode "dense" is the dense-dual kernel (triangle_rows_dense): every dual stored, row by
 * row as three contiguous runs z0, z1, z2, and a branch-free loop over each row.
 * Compiled by bench_dykstra.py with gcc -O3 -march=native (plus numba's fast-math set with
 * --c-fastmath); prints the mean ns per triplet over passes 2..npass (wall clock and thread
 * CPU time) and the fraction of nonzero duals after the last pass, and to stderr the sums
 * of the passes' violation and dual-change figures (so that they are computed, as in numba).
 * presize > 0: both dual lists are allocated and touched for that fraction of the
 * 3 C(n,3) constraints before the first pass.
 * usage: ref_kernel n npass [diagonal|sparse-scratch|lexicographic|dense] [seed] [presize] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
static double cpu(void) {
    struct timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
static uint64_t rng = 88172645463325252ull;
static double unif(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (rng >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct { int64_t *pos; double *val; int64_t n, cap; } list_t;
static void reserve(list_t *l, int64_t need) {
    if (l->n + need <= l->cap) return;
    int64_t cap = 2 * l->cap > l->n + need ? 2 * l->cap : l->n + need + 1024;
    l->pos = realloc(l->pos, cap * sizeof(int64_t));
    l->val = realloc(l->val, cap * sizeof(double));
    l->cap = cap;
}

typedef struct { int64_t cursor, nextp, count; double vmax, smax; } cur_t;
/* the passes' violation and dual-change figures end here and are printed (to stderr), so that
 * the compiler cannot drop their computation */
static double sink[2];
#define BIG INT64_MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline void step3(double *pa, double *pb, double *pc, double wa, double wb, double wc,
                         double *z, double *vmax, double *smax) {
    double xa = *pa, xb = *pb, xc = *pc, q = 1.0 / (wa + wb + wc), v, zn, d0, d1, d2;
    v = xa - xb - xc; *vmax = MAX(*vmax, v); zn = MAX(z[0] + v * q, 0.0); d0 = zn - z[0];
    xa -= d0 * wa; xb += d0 * wb; xc += d0 * wc; z[0] = zn;
    v = xb - xa - xc; *vmax = MAX(*vmax, v); zn = MAX(z[1] + v * q, 0.0); d1 = zn - z[1];
    xb -= d1 * wb; xa += d1 * wa; xc += d1 * wc; z[1] = zn;
    v = xc - xa - xb; *vmax = MAX(*vmax, v); zn = MAX(z[2] + v * q, 0.0); d2 = zn - z[2];
    xc -= d2 * wc; xa += d2 * wa; xb += d2 * wb; z[2] = zn;
    /* the triplet's dual change, as in the numba kernels: sum of the three |dz| */
    *smax = MAX(*smax, (d0 < 0 ? -d0 : d0) + (d1 < 0 ? -d1 : d1) + (d2 < 0 ? -d2 : d2));
    *pa = xa; *pb = xb; *pc = xc;
}

/* triplets q = 0..len-1 with pairs a0 + da*q, b0 + q, c0 + q; positions trow + 3q + c */
static inline void row(double *x, const double *winv, int64_t a0, int64_t da, int64_t b0,
                       int64_t c0, int64_t len, int64_t trow, const list_t *cur, list_t *nxt,
                       cur_t *s) {
    int64_t cursor = s->cursor, nextp = s->nextp, count = s->count;
    double vmax = s->vmax, smax = s->smax;
    int64_t *np_ = nxt->pos; double *nv = nxt->val;
    int64_t q = 0;
    while (q < len) {
        int64_t stop = nextp < trow + 3 * len ? (nextp - trow) / 3 : len;
        for (int64_t p = q; p < stop; p++) {
            int64_t ia = a0 + da * p, ib = b0 + p, ic = c0 + p;
            double xa = x[ia], xb = x[ib], xc = x[ic];
            if (xa - xb - xc > 0.0 || xb - xa - xc > 0.0 || xc - xa - xb > 0.0) {
                double z[3] = {0.0, 0.0, 0.0};
                step3(x + ia, x + ib, x + ic, winv[ia], winv[ib], winv[ic], z, &vmax, &smax);
                int64_t t = trow + 3 * p;
                for (int c = 0; c < 3; c++) { np_[count] = t + c; nv[count] = z[c]; count += z[c] > 0.0; }
            }
        }
        if (stop >= len) break;
        int64_t p = stop, t = trow + 3 * p;
        double z[3] = {0.0, 0.0, 0.0};
        for (int c = 0; c < 3; c++)
            if (nextp == t + c) { z[c] = cur->val[cursor++]; nextp = cursor < cur->n ? cur->pos[cursor] : BIG; }
        int64_t ia = a0 + da * p, ib = b0 + p, ic = c0 + p;
        step3(x + ia, x + ib, x + ic, winv[ia], winv[ib], winv[ic], z, &vmax, &smax);
        for (int c = 0; c < 3; c++) { np_[count] = t + c; nv[count] = z[c]; count += z[c] > 0.0; }
        q = stop + 1;
    }
    s->cursor = cursor; s->nextp = nextp; s->count = count; s->vmax = vmax; s->smax = smax;
}

static void pass_diagonal(double *x, const double *winv, const int64_t *off, int64_t n,
                          int64_t block, const list_t *cur, list_t *nxt) {
    cur_t s = {0, cur->n ? cur->pos[0] : BIG, 0, 0.0, 0.0};
    int64_t t3 = 0;
    nxt->n = 0;
    for (int64_t sb = 1; sb < n - 1; sb += block)
        for (int64_t s2 = 1; s2 < n - 1; s2++) {
            int64_t top = sb + block < n - s2 ? sb + block : n - s2;
            for (int64_t s1 = sb; s1 < top; s1++) {
                int64_t len = n - s1 - s2;
                nxt->n = s.count; reserve(nxt, 3 * len);
                row(x, winv, off[s1], 1, off[s1 + s2], off[s2] + s1, len, t3, cur, nxt, &s);
                t3 += 3 * len;
            }
        }
    nxt->n = s.count;
    sink[0] += s.vmax; sink[1] += s.smax;
}

static void pass_lexicographic(double *x, const double *winv, const int64_t *r, int64_t n,
                               const list_t *cur, list_t *nxt) {
    cur_t s = {0, cur->n ? cur->pos[0] : BIG, 0, 0.0, 0.0};
    int64_t t3 = 0;
    nxt->n = 0;
    for (int64_t i = 0; i < n - 2; i++)
        for (int64_t j = i + 1; j < n - 1; j++) {
            int64_t len = n - 1 - j;
            nxt->n = s.count; reserve(nxt, 3 * len);
            row(x, winv, r[i] + j, 0, r[i] + j + 1, r[j] + j + 1, len, t3, cur, nxt, &s);
            t3 += 3 * len;
        }
    nxt->n = s.count;
    sink[0] += s.vmax; sink[1] += s.smax;
}

/* one row of the dense-dual kernel: three contiguous pair streams and dual runs */
static inline void row_dense(double *xa_, double *xb_, double *xc_, const double *wa_,
                             const double *wb_, const double *wc_, double *z0_, double *z1_,
                             double *z2_, int64_t len, double *vsum, double *dsum) {
    double vs = 0.0, ds = 0.0;
    for (int64_t g = 0; g < len; g++) {
        double xa = xa_[g], xb = xb_[g], xc = xc_[g], wa = wa_[g], wb = wb_[g], wc = wc_[g];
        double q = 1.0 / (wa + wb + wc), v0, v1, v2, zn, d0, d1, d2;
        v0 = xa - xb - xc; zn = MAX(z0_[g] + v0 * q, 0.0); d0 = zn - z0_[g]; z0_[g] = zn;
        xa -= d0 * wa; xb += d0 * wb; xc += d0 * wc;
        v1 = xb - xa - xc; zn = MAX(z1_[g] + v1 * q, 0.0); d1 = zn - z1_[g]; z1_[g] = zn;
        xb -= d1 * wb; xa += d1 * wa; xc += d1 * wc;
        v2 = xc - xa - xb; zn = MAX(z2_[g] + v2 * q, 0.0); d2 = zn - z2_[g]; z2_[g] = zn;
        xc -= d2 * wc; xa += d2 * wa; xb += d2 * wb;
        xa_[g] = xa; xb_[g] = xb; xc_[g] = xc;
        vs += MAX(v0, 0.0) + MAX(v1, 0.0) + MAX(v2, 0.0);
        ds += (d0 < 0 ? -d0 : d0) + (d1 < 0 ? -d1 : d1) + (d2 < 0 ? -d2 : d2);
    }
    *vsum += vs; *dsum += ds;
}

static void pass_dense(double *x, const double *winv, const int64_t *off, int64_t n,
                       int64_t block, double *z) {
    int64_t t3 = 0;
    double vs = 0.0, ds = 0.0;
    for (int64_t sb = 1; sb < n - 1; sb += block)
        for (int64_t s2 = 1; s2 < n - 1; s2++) {
            int64_t top = sb + block < n - s2 ? sb + block : n - s2;
            for (int64_t s1 = sb; s1 < top; s1++) {
                int64_t m = n - s1 - s2, a0 = off[s1], b0 = off[s1 + s2], c0 = off[s2] + s1;
                row_dense(x + a0, x + b0, x + c0, winv + a0, winv + b0, winv + c0, z + t3,
                          z + t3 + m, z + t3 + 2 * m, m, &vs, &ds);
                t3 += 3 * m;
            }
        }
    sink[0] += vs; sink[1] += ds;
}

/* mode "sparse-scratch" (triangle_rows_diagonal): sparse duals, each row through a dense
 * scratch. The row's stored duals are scattered into zs (z0, z1, z2 runs, zero elsewhere),
 * the row runs branch-free as in the dense kernel (violations to vs, reduced afterwards with
 * eight max chains; sums of |dz| and of nonzero duals), then the nonzero duals are appended
 * in position order by a two-level branch-free compaction: the triplets holding a dual are
 * listed in busy, then each listed triplet stores its three duals unconditionally (the count
 * advances when positive) and is zeroed, so zs is all zeros between rows. */
static inline void row_scratch_dense(double *xa_, double *xb_, double *xc_, const double *wa_,
                                     const double *wb_, const double *wc_, double *z0_,
                                     double *z1_, double *z2_, int64_t len, double *vs,
                                     double *dsum, double *nzs) {
    double ds = 0.0, nz = 0.0;
    for (int64_t g = 0; g < len; g++) {
        double xa = xa_[g], xb = xb_[g], xc = xc_[g], wa = wa_[g], wb = wb_[g], wc = wc_[g];
        double q = 1.0 / (wa + wb + wc), v0, v1, v2, zn, d0, d1, d2, v;
        v0 = xa - xb - xc; zn = MAX(z0_[g] + v0 * q, 0.0); d0 = zn - z0_[g]; z0_[g] = zn;
        xa -= d0 * wa; xb += d0 * wb; xc += d0 * wc;
        v1 = xb - xa - xc; zn = MAX(z1_[g] + v1 * q, 0.0); d1 = zn - z1_[g]; z1_[g] = zn;
        xb -= d1 * wb; xa += d1 * wa; xc += d1 * wc;
        v2 = xc - xa - xb; zn = MAX(z2_[g] + v2 * q, 0.0); d2 = zn - z2_[g]; z2_[g] = zn;
        xc -= d2 * wc; xa += d2 * wa; xb += d2 * wb;
        xa_[g] = xa; xb_[g] = xb; xc_[g] = xc;
        v = MAX(v0, v1); vs[g] = MAX(v, v2);
        ds += (d0 < 0 ? -d0 : d0) + (d1 < 0 ? -d1 : d1) + (d2 < 0 ? -d2 : d2);
        nz += (z0_[g] > 0.0 ? 1.0 : 0.0) + (z1_[g] > 0.0 ? 1.0 : 0.0) + (z2_[g] > 0.0 ? 1.0 : 0.0);
    }
    *dsum += ds; *nzs = nz;
}

static inline double lane_max(const double *s, int64_t len) {
    double m[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    int64_t g = 0;
    for (; g + 8 <= len; g += 8)
        for (int k = 0; k < 8; k++) m[k] = s[g + k] > m[k] ? s[g + k] : m[k];
    for (; g < len; g++) m[0] = s[g] > m[0] ? s[g] : m[0];
    for (int k = 1; k < 8; k++) m[0] = MAX(m[0], m[k]);
    return m[0];
}

static void pass_scratch(double *x, const double *winv, const int64_t *off, int64_t n,
                         int64_t block, const list_t *cur, list_t *nxt, double *zs, double *vs,
                         uint64_t *busy) {
    int64_t cursor = 0, nextp = cur->n ? cur->pos[0] : BIG, t3 = 0;
    uint64_t count = 0;
    double vmax = 0.0, dsum = 0.0;
    nxt->n = 0;
    for (int64_t sb = 1; sb < n - 1; sb += block)
        for (int64_t s2 = 1; s2 < n - 1; s2++) {
            int64_t top = sb + block < n - s2 ? sb + block : n - s2;
            for (int64_t s1 = sb; s1 < top; s1++) {
                int64_t m = n - s1 - s2, a0 = off[s1], b0 = off[s1 + s2], c0 = off[s2] + s1;
                int64_t end = t3 + 3 * m;
                nxt->n = count; reserve(nxt, 3 * m);
                while (nextp < end) {
                    int64_t r = nextp - t3, g = r / 3;
                    zs[(r - 3 * g) * m + g] = cur->val[cursor++];
                    nextp = cursor < cur->n ? cur->pos[cursor] : BIG;
                }
                double *z0_ = zs, *z1_ = zs + m, *z2_ = zs + 2 * m, nzs;
                row_scratch_dense(x + a0, x + b0, x + c0, winv + a0, winv + b0, winv + c0, z0_,
                                  z1_, z2_, m, vs, &dsum, &nzs);
                vmax = MAX(vmax, lane_max(vs, m));
                if (nzs > 0.0) {
                    uint64_t nb = 0;
                    for (int64_t g = 0; g < m; g++) {
                        busy[nb] = g;
                        nb += z0_[g] + z1_[g] + z2_[g] > 0.0; /* duals are >= 0 */
                    }
                    int64_t *np_ = nxt->pos; double *nv = nxt->val;
                    for (uint64_t i = 0; i < nb; i++) {
                        uint64_t g = busy[i];
                        int64_t p = t3 + 3 * g;
                        double z;
                        z = z0_[g]; np_[count] = p; nv[count] = z; count += z > 0.0;
                        z = z1_[g]; np_[count] = p + 1; nv[count] = z; count += z > 0.0;
                        z = z2_[g]; np_[count] = p + 2; nv[count] = z; count += z > 0.0;
                        z0_[g] = 0.0; z1_[g] = 0.0; z2_[g] = 0.0;
                    }
                }
                t3 = end;
            }
        }
    nxt->n = count;
    sink[0] += vmax; sink[1] += dsum;
}

int main(int argc, char **argv) {
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000;
    int npass = argc > 2 ? atoi(argv[2]) : 5;
    int lex = argc > 3 && strcmp(argv[3], "lexicographic") == 0;
    int dense = argc > 3 && strcmp(argv[3], "dense") == 0;
    int scratch = argc > 3 && strcmp(argv[3], "sparse-scratch") == 0;
    rng += argc > 4 ? (uint64_t)atoll(argv[4]) : 0;
    int64_t N = n * (n - 1) / 2;
    double *x = malloc(N * sizeof(double)), *winv = malloc(N * sizeof(double));
    int64_t *off = calloc(n, sizeof(int64_t));
    if (lex)
        for (int64_t i = 0; i < n; i++) off[i] = i * n - i * (i + 1) / 2 - i - 1;
    else
        for (int64_t s = 1, acc = 0; s < n; s++) { off[s] = acc; acc += n - s; }
    for (int64_t p = 0; p < N; p++) { x[p] = unif() < 0.1 ? 1.0 : 0.0; winv[p] = 1.0 / (0.5 + 1.5 * unif()); }
    double *z = NULL;
    if (dense) z = calloc((size_t)(n * (n - 1) * (n - 2) / 2), sizeof(double));
    double *zs = calloc(3 * n, sizeof(double)), *vs = malloc(n * sizeof(double));
    uint64_t *busy = malloc(n * sizeof(uint64_t));
    list_t a = {0}, b = {0};
    /* optional: both dual lists sized (and touched) up front for this fraction of the
     * 3 C(n,3) constraints, so that no timed pass grows them (fresh pages fault) */
    double presize = argc > 5 ? atof(argv[5]) : 0.0;
    if (presize > 0.0) {
        int64_t cap = (int64_t)(presize * (double)n * (n - 1) * (n - 2) / 2.0) + 3 * n;
        reserve(&a, cap); reserve(&b, cap);
        memset(a.pos, 0, cap * sizeof(int64_t)); memset(a.val, 0, cap * sizeof(double));
        memset(b.pos, 0, cap * sizeof(int64_t)); memset(b.val, 0, cap * sizeof(double));
    }
    list_t *cur = &a, *nxt = &b;
    double trip = (double)n * (n - 1) * (n - 2) / 6.0, total = 0.0, total_cpu = 0.0;
    for (int k = 1; k <= npass; k++) {
        double t0 = now(), c0 = cpu();
        if (lex) pass_lexicographic(x, winv, off, n, cur, nxt);
        else if (dense) pass_dense(x, winv, off, n, 16, z);
        else if (scratch) pass_scratch(x, winv, off, n, 16, cur, nxt, zs, vs, busy);
        else pass_diagonal(x, winv, off, n, 16, cur, nxt);
        double dt = now() - t0, dc = cpu() - c0;
        if (k >= 2) { total += dt; total_cpu += dc; }
        list_t *t = cur; cur = nxt; nxt = t;
    }
    /* wall ns/triplet, thread CPU ns/triplet, nonzero dual fraction */
    double nz = cur->n;
    if (dense) {
        nz = 0;
        for (int64_t i = 0; i < n * (n - 1) * (n - 2) / 2; i++) nz += z[i] > 0.0;
    }
    printf("%.4f %.4f %.5f\n", 1e9 * total / (trip * (npass - 1)), 1e9 * total_cpu / (trip * (npass - 1)),
           nz / (3.0 * trip));
    fprintf(stderr, "sum over passes of vmax (vsum for dense) and of the dual change: %g %g\n",
            sink[0], sink[1]);
    return 0;
}
