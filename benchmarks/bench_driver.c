/*
 * C timing driver for benchmarks/run.py (benchmark tooling, not part of soagen).
 *
 *   bench STATES.bin REPS CHECK OUT.bin
 *
 * The functions to time come from "bench_calls.h", which run.py writes for
 * each backend (soagen's generated C, CasADi's generated C).  It defines
 *
 *   NQ, NV, NTIP      configuration size, velocity size and tips: a state row is
 *                     q (NQ), qd, qdd, tau (NV each), then f and u (6 NTIP each),
 *                     float64 little-endian (NV defaults to NQ)
 *   MAX_OUT           the largest output of any call, in doubles
 *   BENCH_LIST(X)     X(name, out_size, call) for each function; `call` is an
 *                     expression using Q, QD, QDD, TAU, F, U (inputs of the current
 *                     state) and OUT (the output buffer)
 *
 * stdout: one line per function, "name median_ns_per_call min_ns_per_call size".
 * OUT.bin: for each function in BENCH_LIST order, CHECK x size doubles: its
 * outputs on the first CHECK states (NaN where a call left them untouched).
 */
#define _POSIX_C_SOURCE 199309L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_calls.h"

#ifndef NV
#define NV NQ
#endif
#define ROW (NQ + 3 * NV + 12 * NTIP)
#define Q (s)
#define QD (s + NQ)
#define QDD (s + NQ + NV)
#define TAU (s + NQ + 2 * NV)
#define F (s + NQ + 3 * NV)
#define U (s + NQ + 3 * NV + 6 * NTIP)
#define OUT (out)

static volatile double sink; /* keeps every result observable */
static double out[MAX_OUT];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One function per BENCH_LIST entry: all states once, returns ns per call. */
#define X(name, size, call)                                  \
    static double pass_##name(const double *states, long rows) \
    {                                                        \
        double acc = 0.0, t0 = now_ns();                     \
        for (long i = 0; i < rows; i++) {                    \
            const double *s = states + i * ROW;              \
            (void)s;                                         \
            call;                                            \
            acc += out[0];                                   \
        }                                                    \
        sink = acc;                                          \
        return (now_ns() - t0) / (double)rows;               \
    }                                                        \
    static void check_##name(const double *states, long count, FILE *fh) \
    {                                                        \
        for (long i = 0; i < count; i++) {                   \
            const double *s = states + i * ROW;              \
            (void)s;                                         \
            for (int k = 0; k < (size); k++) out[k] = NAN;   \
            call;                                            \
            fwrite(out, sizeof(double), (size), fh);         \
        }                                                    \
    }
BENCH_LIST(X)
#undef X

/* Warm-up pass, `reps` timed passes, print median and minimum. */
static void report(const char *name, int size, double (*pass)(const double *, long),
                   const double *states, long rows, int reps)
{
    double *t = malloc(sizeof(double) * (size_t)reps);
    pass(states, rows);
    for (int r = 0; r < reps; r++) t[r] = pass(states, rows);
    qsort(t, (size_t)reps, sizeof(double), by_value);
    printf("%s %.3f %.3f %d\n", name, t[reps / 2], t[0], size);
    free(t);
}

static double *read_states(const char *path, long *rows)
{
    FILE *fh = fopen(path, "rb");
    if (!fh) return NULL;
    fseek(fh, 0, SEEK_END);
    long bytes = ftell(fh);
    fseek(fh, 0, SEEK_SET);
    *rows = bytes / (long)(sizeof(double) * ROW);
    double *s = malloc((size_t)bytes);
    if (s && fread(s, 1, (size_t)bytes, fh) != (size_t)bytes) { free(s); s = NULL; }
    fclose(fh);
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s STATES.bin REPS CHECK OUT.bin\n", argv[0]);
        return 2;
    }
    long rows = 0;
    double *states = read_states(argv[1], &rows);
    int reps = atoi(argv[2]);
    long check = atol(argv[3]);
    FILE *fh = fopen(argv[4], "wb");
    if (!states || rows < 1 || reps < 1 || check > rows || !fh) {
        fprintf(stderr, "bad arguments or unreadable %s / unwritable %s\n", argv[1], argv[4]);
        return 2;
    }
#define X(name, size, call) report(#name, (size), pass_##name, states, rows, reps);
    BENCH_LIST(X)
#undef X
#define X(name, size, call) check_##name(states, check, fh);
    BENCH_LIST(X)
#undef X
    fclose(fh);
    free(states);
    return 0;
}
