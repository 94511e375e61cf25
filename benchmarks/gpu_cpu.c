/*
 * CPU side of benchmarks/gpu.py (benchmark tooling, not part of soagen): the generated C
 * functions of the GPU benchmark's robot, called through their batch functions on all cores.
 *
 *   double gpu_cpu_time(int which, int simd, long count, const double *a, const double *b,
 *                       const double *c, double *out, int threads, int reps)
 *
 * `which` indexes BENCH_FUNCTIONS (gpu_cpu_calls.h, written by gpu.py); a, b, c are the
 * inputs (row-major, unused ones ignored), `out` the first output. `threads` OpenMP threads
 * each run the batch function (scalar loop, or SIMD with `simd`) on a contiguous share of the
 * rows; returns the best of `reps` wall-clock seconds for all `count` rows.
 */
#define _POSIX_C_SOURCE 199309L
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#else
#define omp_get_thread_num() 0
#define omp_get_num_threads() 1
#endif

#include "gpu_cpu_calls.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9*(double)t.tv_nsec;
}

double gpu_cpu_time(int which, int simd, long count, const double *a, const double *b, const double *c,
                    double *out, int threads, int reps)
{
    double best = 1e300;
    for (int rep = 0; rep < reps; ++rep) {
        const double t0 = now();
#pragma omp parallel num_threads(threads)
        {
            const int id = omp_get_thread_num(), nt = omp_get_num_threads();
            const long lo = count*id/nt, hi = count*(id + 1)/nt;
            BENCH_CALL(which, simd, hi - lo, lo, a, b, c, out);
        }
        const double t = now() - t0;
        if (t < best) best = t;
    }
    return best;
}

long gpu_cpu_run(int which, int simd, long count, const double *a, const double *b, const double *c, double *out)
{
    BENCH_CALL(which, simd, count, 0, a, b, c, out);
    return 0;
}
