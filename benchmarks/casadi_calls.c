/*
 * Times functions of a CasADi external library (soagen's casadi target) as CasADi calls them:
 * the external API `int f(const double **arg, double **res, casadi_int *iw, double *w, int mem)`,
 * its work sizes from `f_work`, one state per call.  Benchmark tooling, not part of soagen
 * (benchmarks/casadi_hessians.py writes the states, runs it and reports).
 *
 *   casadi_calls LIB.so STATES.bin ROWS ROW ROUNDS OUT.bin F1 F2 ...
 *
 * STATES.bin: ROWS rows of ROW doubles, every function's inputs in order (each function reads a
 * prefix of the row: its own inputs, dense).  Every round times each function over all rows
 * (ns per call of the median chunk, bench.h), the functions' order rotated round by round;
 * stdout: one line per round, the functions' ns tab-separated.  OUT.bin: each function's outputs
 * on the first row, dense, in order, for the checks.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

typedef long long casadi_int;
typedef int (*eval_t)(const double **, double **, casadi_int *, double *, int);
typedef int (*work_t)(casadi_int *, casadi_int *, casadi_int *, casadi_int *);
typedef casadi_int (*count_t)(void);
typedef const casadi_int *(*sparsity_t)(casadi_int);

typedef struct
{
    eval_t eval;
    casadi_int n_in, n_out, sz_arg, sz_res, sz_iw, sz_w;
    casadi_int out_nnz[64], in_nnz[64];
} function;

static void *must(void *lib, const char *name, const char *suffix)
{
    char sym[512];
    snprintf(sym, sizeof sym, "%s%s", name, suffix);
    void *p = dlsym(lib, sym);
    if (!p)
    {
        fprintf(stderr, "no %s in the library\n", sym);
        exit(2);
    }
    return p;
}

/* arg[i]: f's input i in a state's row (the inputs dense, in order); res[i]: its output i in out */
static void point(const function *f, const double *row, const double **arg, double **res, double *out)
{
    for (casadi_int i = 0, at = 0; i < f->n_in; at += f->in_nnz[i++])
        arg[i] = row + at;
    for (casadi_int i = 0, at = 0; i < f->n_out; at += f->out_nnz[i++])
        res[i] = out + at;
}

static casadi_int nnz(const casadi_int *sp)
{ /* CasADi's compressed column storage: nrow, ncol, colind[ncol + 1], row[nnz]; dense if sp[2] flags it */
    casadi_int ncol = sp[1];
    return sp[2] == 1 && ncol > 0 ? sp[0] * ncol : sp[2 + ncol];
}

int main(int argc, char **argv)
{
    if (argc < 8)
    {
        fprintf(stderr, "usage: casadi_calls LIB.so STATES.bin ROWS ROW ROUNDS OUT.bin F1 [F2 ...]\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW);
    if (!lib)
    {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    const long rows = atol(argv[3]), row = atol(argv[4]), rounds = atol(argv[5]);
    const int nf = argc - 7;
    double *states = malloc(sizeof(double) * rows * row);
    FILE *fs = fopen(argv[2], "rb");
    if (!fs || fread(states, sizeof(double), rows * row, fs) != (size_t)(rows * row))
    {
        fprintf(stderr, "cannot read %s\n", argv[2]);
        return 2;
    }
    fclose(fs);
    function *fn = calloc(nf, sizeof(function));
    casadi_int most_arg = 0, most_res = 0, most_iw = 0, most_w = 0, most_out = 0;
    for (int k = 0; k < nf; k++)
    {
        const char *name = argv[7 + k];
        function *f = &fn[k];
        f->eval = (eval_t)must(lib, name, "");
        f->n_in = ((count_t)must(lib, name, "_n_in"))();
        f->n_out = ((count_t)must(lib, name, "_n_out"))();
        ((work_t)must(lib, name, "_work"))(&f->sz_arg, &f->sz_res, &f->sz_iw, &f->sz_w);
        casadi_int width = 0, outs = 0;
        for (casadi_int i = 0; i < f->n_in; i++)
            width += f->in_nnz[i] = nnz(((sparsity_t)must(lib, name, "_sparsity_in"))(i));
        for (casadi_int i = 0; i < f->n_out; i++)
            outs += f->out_nnz[i] = nnz(((sparsity_t)must(lib, name, "_sparsity_out"))(i));
        if (width > row || f->n_in > 64 || f->n_out > 64)
        {
            fprintf(stderr, "%s reads %lld doubles, a row has %ld\n", name, (long long)width, row);
            return 2;
        }
        most_arg = f->sz_arg > most_arg ? f->sz_arg : most_arg;
        most_res = f->sz_res > most_res ? f->sz_res : most_res;
        most_iw = f->sz_iw > most_iw ? f->sz_iw : most_iw;
        most_w = f->sz_w > most_w ? f->sz_w : most_w;
        most_out = outs > most_out ? outs : most_out;
    }
    const double **arg = calloc(most_arg + 1, sizeof(double *));
    double **res = calloc(most_res + 1, sizeof(double *));
    casadi_int *iw = calloc(most_iw + 1, sizeof(casadi_int));
    double *w = calloc(most_w + 1, sizeof(double));
    double *out = calloc(most_out + 1, sizeof(double));
    double *chunks = malloc(sizeof(double) * (rows / BENCH_CHUNK + 1));
    double *ns = malloc(sizeof(double) * nf);
    FILE *fo = fopen(argv[6], "wb");
    for (int k = 0; k < nf; k++)
    { /* the outputs on the first row, for the checks; also the untimed first call */
        function *f = &fn[k];
        casadi_int outs = 0;
        for (casadi_int i = 0; i < f->n_out; i++)
            outs += f->out_nnz[i];
        point(f, states, arg, res, out);
        if (f->eval(arg, res, iw, w, 0))
        {
            fprintf(stderr, "%s failed on the first row\n", argv[7 + k]);
            return 1;
        }
        fwrite(out, sizeof(double), outs, fo);
    }
    fclose(fo);
    volatile double sink = 0;
    for (long r = 0; r < rounds; r++)
    {
        for (int j = 0; j < nf; j++)
        {
            const int k = (int)((j + r) % nf);
            function *f = &fn[k];
            long c = 0;
            for (long i0 = 0; i0 < rows; i0 += BENCH_CHUNK, c++)
            {
                const long i1 = i0 + BENCH_CHUNK < rows ? i0 + BENCH_CHUNK : rows;
                const double t0 = bench_now_ns();
                for (long s = i0; s < i1; s++)
                {
                    point(f, states + s * row, arg, res, out);
                    f->eval(arg, res, iw, w, 0);
                    sink += out[0];
                }
                chunks[c] = (bench_now_ns() - t0) / (double)(i1 - i0);
            }
            ns[k] = bench_median(chunks, c);
        }
        for (int k = 0; k < nf; k++)
            printf(k ? "\t%.1f" : "%.1f", ns[k]);
        printf("\n");
    }
    return 0;
}
