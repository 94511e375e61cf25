/*
 * Interleaved timing driver for benchmarks/run.py (benchmark tooling, not part of soagen).
 *
 *   bench ROUNDS CHECK ROW OUT.bin STATES_1 ARG_1 [STATES_2 ARG_2 ...]
 *
 * The backends linked in are listed by "bench_backends.h" (BENCH_BACKENDS(X):
 * X(symbol) per backend, see bench.h); each gets one STATES/ARG pair, in that
 * order: a file of float64 little-endian rows of ROW doubles (q, qd, qdd, tau,
 * f, u in the backend's conventions) and a backend-specific argument.
 *
 * One warm-up round, then ROUNDS timed rounds.  In round r the backends run in
 * rotated order (r, r+1, ... modulo their number), each making one pass over all
 * states for every one of its functions, so slow periods of a shared machine
 * fall on every backend alike and ratios can be taken round by round.  A pass
 * starts with one untimed call (the other backends' passes have evicted its code
 * from cache), then times the states in chunks and reports the median chunk's
 * ns per call (bench.h).
 *
 * stdout, tab-separated:
 *   chunk BENCH_CHUNK
 *   backend NAME SETUP_SECONDS
 *   entry BACKEND FUNCTION SIZE CALLS           (one per timed function, in order)
 *   round R MILLISECONDS NS_1 NS_2 ...          (ns per call of every entry, entry order)
 * OUT.bin: for each entry in order, CHECK x SIZE doubles: its outputs on the
 * first CHECK states (NaN where a call left them untouched).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "bench_backends.h"

#define X(sym) extern const bench_backend sym;
BENCH_BACKENDS(X)
#undef X

static const bench_backend *backends[] = {
#define X(sym) &sym,
    BENCH_BACKENDS(X)
#undef X
};
#define NB ((int)(sizeof backends / sizeof backends[0]))

static double now_s(void) { return 1e-9 * bench_now_ns(); }

static double *read_states(const char *path, long row, long *rows)
{
    FILE *fh = fopen(path, "rb");
    if (!fh) return NULL;
    fseek(fh, 0, SEEK_END);
    long bytes = ftell(fh);
    fseek(fh, 0, SEEK_SET);
    *rows = bytes / (long)(sizeof(double) * (size_t)row);
    double *s = malloc((size_t)bytes);
    if (s && fread(s, 1, (size_t)bytes, fh) != (size_t)bytes) {
        free(s);
        s = NULL;
    }
    fclose(fh);
    return s;
}

/* One pass of every function of backend b; ns per call into t (entry order). */
static void run_backend(int b, double *t)
{
    for (int i = 0; i < backends[b]->count(); i++) t[i] = backends[b]->pass(i);
}

int main(int argc, char **argv)
{
    if (argc != 5 + 2 * NB) {
        fprintf(stderr, "usage: %s ROUNDS CHECK ROW OUT.bin then STATES ARG for each of %d backends\n", argv[0], NB);
        return 2;
    }
    int rounds = atoi(argv[1]);
    long check = atol(argv[2]), row = atol(argv[3]), rows = -1;
    FILE *fh = fopen(argv[4], "wb");
    if (rounds < 1 || row < 1 || !fh) {
        fprintf(stderr, "bad ROUNDS/ROW or unwritable %s\n", argv[4]);
        return 2;
    }
    printf("chunk\t%d\n", BENCH_CHUNK);
    int first[NB + 1]; /* index of each backend's first entry in the row of all entries */
    first[0] = 0;
    for (int b = 0; b < NB; b++) {
        long n = 0;
        double *states = read_states(argv[5 + 2 * b], row, &n);
        if (!states || n < 1 || n < check || (rows >= 0 && n != rows)) {
            fprintf(stderr, "%s: unreadable, or not %ld rows of %ld doubles\n", argv[5 + 2 * b], rows, row);
            return 2;
        }
        rows = n;
        double t0 = now_s();
        if (backends[b]->init(states, rows, row, argv[6 + 2 * b])) {
            fprintf(stderr, "backend %s: init failed\n", backends[b]->name);
            return 2;
        }
        printf("backend\t%s\t%.6f\n", backends[b]->name, now_s() - t0);
        first[b + 1] = first[b] + backends[b]->count();
    }
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < backends[b]->count(); i++)
            printf("entry\t%s\t%s\t%d\t%s\n", backends[b]->name, backends[b]->entry_name(i),
                   backends[b]->entry_size(i), backends[b]->entry_calls(i));
    double *t = malloc(sizeof(double) * (size_t)(first[NB] > 0 ? first[NB] : 1));
    for (int b = 0; b < NB; b++) run_backend(b, t + first[b]); /* warm-up round */
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        for (int k = 0; k < NB; k++) {
            int b = (r + k) % NB;
            run_backend(b, t + first[b]);
        }
        printf("round\t%d\t%.3f", r, 1e3 * (now_s() - t0));
        for (int i = 0; i < first[NB]; i++) printf("\t%.3f", t[i]);
        printf("\n");
    }
    for (int b = 0; b < NB; b++)
        for (int i = 0; i < backends[b]->count(); i++) {
            size_t n = (size_t)check * (size_t)backends[b]->entry_size(i);
            double *o = malloc(sizeof(double) * (n ? n : 1));
            backends[b]->outputs(i, check, o);
            fwrite(o, sizeof(double), n, fh);
            free(o);
        }
    fclose(fh);
    free(t);
    return 0;
}
