/*
 * A generated-C backend of the interleaved timing driver (benchmark tooling,
 * not part of soagen): soagen's C, soagen's trig-inputs C with libm sin/cos,
 * CasADi's C.  Compiled once per backend by backends.py with
 *
 *   -DBENCH_CALLS='"soagen_calls.h"' -DBENCH_SYMBOL=bench_soagen -DBENCH_NAME='"soagen"'
 *
 * The calls header defines
 *
 *   NQ, NV, NTIP, NR  configuration size, velocity size, tips and tip rows: a state row is
 *                     q (NQ), qd, qdd, tau (NV each), f and u (6 NTIP each), lam (NV), lam_f (NR)
 *   MAX_OUT           the largest output of any call, in doubles
 *   BENCH_LIST(X)     X(name, out_size, calls, call) for each function; `calls` is a
 *                     string saying what one call runs, `call` an expression using
 *                     Q, QD, QDD, TAU, F, U, LAM, LAM_F (inputs of the current state) and OUT
 *                     (the output buffer)
 *
 * Interface: bench.h.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include BENCH_CALLS

#define ROW (NQ + 4 * NV + 12 * NTIP + NR)
#define Q (s)
#define QD (s + NQ)
#define QDD (s + NQ + NV)
#define TAU (s + NQ + 2 * NV)
#define F (s + NQ + 3 * NV)
#define U (s + NQ + 3 * NV + 6 * NTIP)
#define LAM (s + NQ + 3 * NV + 12 * NTIP)
#define LAM_F (s + NQ + 4 * NV + 12 * NTIP)
#define OUT (out)

static const double *states;
static long rows;
static double *chunks; /* ns per call of each chunk of a pass */
static volatile double sink; /* keeps every result observable */
static double out[MAX_OUT];

/* Per function: one pass over all states, after one untimed call that brings its code and
   data back into cache (ns per call of the median chunk, see bench.h); and its outputs on
   the first states. */
#define X(name, size, calls, call)                                  \
    static double pass_##name(void)                                 \
    {                                                               \
        {                                                           \
            const double *s = states;                               \
            (void)s;                                                \
            call;                                                   \
        }                                                           \
        double acc = out[0];                                        \
        long n = 0;                                                 \
        for (long i0 = 0; i0 < rows; i0 += BENCH_CHUNK, n++) {      \
            long i1 = i0 + BENCH_CHUNK < rows ? i0 + BENCH_CHUNK : rows; \
            double t0 = bench_now_ns();                             \
            for (long i = i0; i < i1; i++) {                        \
                const double *s = states + i * ROW;                 \
                (void)s;                                            \
                call;                                               \
                acc += out[0];                                      \
            }                                                       \
            chunks[n] = (bench_now_ns() - t0) / (double)(i1 - i0);  \
        }                                                           \
        sink = acc;                                                 \
        return bench_median(chunks, n);                             \
    }                                                               \
    static void outputs_##name(long count, double *dst)             \
    {                                                               \
        for (long i = 0; i < count; i++) {                          \
            const double *s = states + i * ROW;                     \
            (void)s;                                                \
            for (int k = 0; k < (size); k++) out[k] = NAN;          \
            call;                                                   \
            memcpy(dst + i * (size), out, sizeof(double) * (size)); \
        }                                                           \
    }
BENCH_LIST(X)
#undef X

static const struct
{
    const char *name, *calls;
    int size;
    double (*pass)(void);
    void (*outputs)(long, double *);
} entries[] = {
#define X(name, size, calls, call) {#name, calls, size, pass_##name, outputs_##name},
    BENCH_LIST(X)
#undef X
};

static int init(const double *s, long n, long row, const char *arg)
{
    (void)arg;
    states = s;
    rows = n;
    chunks = malloc(sizeof(double) * (size_t)(n / BENCH_CHUNK + 1));
    return row == ROW && chunks ? 0 : 1;
}

static int count(void) { return (int)(sizeof entries / sizeof entries[0]); }
static const char *entry_name(int i) { return entries[i].name; }
static const char *entry_calls(int i) { return entries[i].calls; }
static int entry_size(int i) { return entries[i].size; }
static double pass(int i) { return entries[i].pass(); }
static void outputs(int i, long n, double *dst) { entries[i].outputs(n, dst); }

const bench_backend BENCH_SYMBOL = {BENCH_NAME, init, count, entry_name, entry_calls, entry_size, pass, outputs};
