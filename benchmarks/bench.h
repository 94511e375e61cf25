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

#ifdef __cplusplus
extern "C" {
#endif

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
    double (*pass)(int i);               /* one pass over all states; ns per call */
    void (*outputs)(int i, long count, double *out); /* first `count` states: count x size */
} bench_backend;

#ifdef __cplusplus
}
#endif
#endif
