/*
 * The interface between the interleaved timing driver (bench_driver.c) and one
 * timed backend (benchmark tooling, not part of soagen).
 *
 * A backend is a table of entries (one per timed function).  The driver calls
 * init once with the states in the backend's conventions, then, round after
 * round, `pass` of every entry; at the end `outputs` of every entry on the
 * first states, for the checks against soagen.reference.
 *
 * Backends: c_backend.c compiled once per generated C (soagen, soagen with
 * libm trig, CasADi) and pinocchio_bench.cpp.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdlib.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A pass times its states in chunks of BENCH_CHUNK consecutive calls and reports the
   median chunk's ns per call: a chunk the scheduler interrupted (this machine is shared)
   does not move it, where it would move the mean of the whole pass. */
#define BENCH_CHUNK 50

static inline double bench_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * (double)t.tv_sec + (double)t.tv_nsec;
}

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of t[0..n-1] (sorts t). */
static inline double bench_median(double *t, long n)
{
    qsort(t, (size_t)n, sizeof(double), bench_by_value);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

typedef struct
{
    const char *name; /* backend name, e.g. "soagen" */
    /* states: `rows` rows of `row` doubles (q, qd, qdd, tau, f, u) in this backend's
       conventions; arg: backend-specific text (Pinocchio: "MODEL.txt TIP,TIP"); 0 on success */
    int (*init)(const double *states, long rows, long row, const char *arg);
    int (*count)(void);                  /* number of entries */
    const char *(*entry_name)(int i);    /* the function's name */
    const char *(*entry_calls)(int i);   /* what one timed call runs, for the report */
    int (*entry_size)(int i);            /* doubles of output per call */
    double (*pass)(int i);               /* one pass over all states; ns per call (median chunk) */
    void (*outputs)(int i, long count, double *out); /* first `count` states: count x size */
} bench_backend;

#ifdef __cplusplus
}
#endif
#endif
