/* Benchmark-only reference: one Dykstra triangle pass in "diagonal" order with sparse
 * duals, plain scalar C, the same algorithm as triangle_pass_diagonal in
 * src/metricopt/solvers/_dykstra_kernels.py. Compiled by bench_dykstra.py with
 * gcc -O3 -march=native; prints the mean ns per triplet over passes 2..npass.
 * usage: ref_kernel n npass seed */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec;
}
static uint64_t rng = 88172645463325252ull;
static double unif(void) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return (rng >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct { int64_t *pos; double *val; int64_t n, cap; } list_t;
static void push(list_t *l, int64_t p, double v) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->pos = realloc(l->pos, l->cap * sizeof(int64_t));
        l->val = realloc(l->val, l->cap * sizeof(double));
    }
    l->pos[l->n] = p; l->val[l->n] = v; l->n++;
}

#define STEP(T, SA, SB, SC)                                                   \
    {                                                                         \
        double z = 0.0;                                                       \
        if (nextp == t3 + T) { z = cur->val[cur_i++]; nextp = cur_i < cur->n ? cur->pos[cur_i] : INT64_MAX; } \
        double v = SA * xa + SB * xb + SC * xc;                               \
        double zn = z + v * qinv; if (zn < 0.0) zn = 0.0;                     \
        double dz = zn - z;                                                   \
        xa -= dz * SA * wa; xb -= dz * SB * wb; xc -= dz * SC * wc;           \
        if (zn > 0.0) push(nxt, t3 + T, zn);                                  \
    }

static void pass(double *x, const double *winv, const int64_t *off, int n, int block,
                 const list_t *cur, list_t *nxt) {
    int64_t cur_i = 0, t3 = 0;
    int64_t nextp = cur->n ? cur->pos[0] : INT64_MAX;
    nxt->n = 0;
    for (int sb = 1; sb < n - 1; sb += block)
        for (int s2 = 1; s2 < n - 1; s2++) {
            int top = sb + block < n - s2 ? sb + block : n - s2;
            for (int s1 = sb; s1 < top; s1++) {
                int64_t ba = off[s1], bb = off[s1 + s2], bc = off[s2] + s1;
                for (int i = 0; i < n - s1 - s2; i++, t3 += 3) {
                    int64_t ia = ba + i, ib = bb + i, ic = bc + i;
                    double xa = x[ia], xb = x[ib], xc = x[ic];
                    if (nextp >= t3 + 3 && xa - xb - xc <= 0 && xb - xa - xc <= 0 && xc - xa - xb <= 0)
                        continue;
                    double wa = winv[ia], wb = winv[ib], wc = winv[ic];
                    double qinv = 1.0 / (wa + wb + wc);
                    STEP(0, 1.0, -1.0, -1.0)
                    STEP(1, -1.0, 1.0, -1.0)
                    STEP(2, -1.0, -1.0, 1.0)
                    x[ia] = xa; x[ib] = xb; x[ic] = xc;
                }
            }
        }
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000, npass = argc > 2 ? atoi(argv[2]) : 5;
    rng += argc > 3 ? (uint64_t)atoll(argv[3]) : 0;
    int64_t N = (int64_t)n * (n - 1) / 2;
    double *x = malloc(N * sizeof(double)), *winv = malloc(N * sizeof(double));
    int64_t *off = calloc(n, sizeof(int64_t));
    for (int s = 1, acc = 0; s < n; s++) { off[s] = acc; acc += n - s; }
    for (int64_t p = 0; p < N; p++) { x[p] = unif() < 0.1 ? 1.0 : 0.0; winv[p] = 1.0 / (0.5 + 1.5 * unif()); }
    list_t a = {0}, b = {0};
    list_t *cur = &a, *nxt = &b;
    double trip = (double)n * (n - 1) * (n - 2) / 6.0, total = 0.0;
    for (int k = 1; k <= npass; k++) {
        double t0 = now();
        pass(x, winv, off, n, 16, cur, nxt);
        double dt = now() - t0;
        if (k >= 2) total += dt;
        list_t *t = cur; cur = nxt; nxt = t;
    }
    printf("%.4f\n", 1e9 * total / (trip * (npass - 1)));
    return 0;
}
