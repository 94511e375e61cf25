/* One classical Runge-Kutta step of x' = (qd, FD(q, qd, tau)), x = (q, qd) of n 1-dof joints,
 * tau held over the step:
 *     k_s = f(x + c_s dt k_(s-1)),  c = (0, 1/2, 1/2, 1);   x+ = x + dt/6 (k_1 + 2 k_2 + 2 k_3 + k_4),
 * and its Jacobian along z = (x, tau, dt) by the chain rule through the four stages, each stage's
 * d FD/d(q, qd, tau) soagen's analytical derivatives:
 *     d x_s/dz = [I 0 0] + c_s dt d k_(s-1)/dz + c_s k_(s-1) e_dt',
 *     d k_s/dz = [[0 I], [dqdd/dq  dqdd/dqd]] d x_s/dz + [0; M^-1] [0 I 0],
 *     d x+/dz  = [I 0 0] + dt/6 sum_s b_s d k_s/dz + 1/6 (sum_s b_s k_s) e_dt',  b = (1, 2, 2, 1).
 * Matrices along z are column-major (2n x (3n+1)), as CasADi stores them; the derivatives of FD
 * are row-major (n x n), as soagen writes them. */

typedef int (*soagen_fd_t)(const casadi_real *q, const casadi_real *qd, const casadi_real *tau, casadi_real *qdd);
typedef int (*soagen_fd_derivatives_t)(const casadi_real *q, const casadi_real *qd, const casadi_real *tau,
                                       casadi_real *qdd, casadi_real *dqdd_dq, casadi_real *dqdd_dqd,
                                       casadi_real *Minv);

static const casadi_real soagen_rk4_c[4] = {0.0, 0.5, 0.5, 1.0};
static const casadi_real soagen_rk4_b[4] = {1.0, 2.0, 2.0, 1.0};

/* x+ (2n) of the step; w: 4n entries */
static int soagen_rk4_step(int n, soagen_fd_t fd, const casadi_real *x, const casadi_real *tau, casadi_real dt,
                           casadi_real *x_next, casadi_real *w)
{
    const int m = 2*n;
    casadi_real *xs = w;          /* x_s (2n) */
    casadi_real *k = w + m;       /* k_s (2n): (qd_s, qdd_s) */
    for (int i = 0; i < m; ++i) {
        k[i] = 0.0;
        x_next[i] = 0.0;
    }
    for (int s = 0; s < 4; ++s) {
        for (int i = 0; i < m; ++i) xs[i] = x[i] + soagen_rk4_c[s]*dt*k[i];
        for (int i = 0; i < n; ++i) k[i] = xs[n + i];
        if (fd(xs, xs + n, tau, k + n)) return 1;
        for (int i = 0; i < m; ++i) x_next[i] += soagen_rk4_b[s]*k[i];
    }
    for (int i = 0; i < m; ++i) x_next[i] = x[i] + dt/6.0*x_next[i];
    return 0;
}

/* J = d x+/d(x, tau, dt) (2n x (3n+1), column-major), its first `columns` columns (3n: without
 * the dt column, 3n + 1: with it); w: 2n (3n+1) + 3n^2 + 16n entries */
static int soagen_rk4_step_jacobian(int n, soagen_fd_derivatives_t fdd, const casadi_real *x, const casadi_real *tau,
                                    casadi_real dt, int columns, casadi_real *J, casadi_real *w)
{
    const int m = 2*n, nz = columns, dt_column = 3*n;
    casadi_real *xs = w;                 /* x_s (2n) */
    casadi_real *k = xs + m;             /* k_s (2n) */
    casadi_real *kprev = k + m;          /* k_(s-1) (2n) */
    casadi_real *ksum = kprev + m;       /* sum_s b_s k_s (2n) */
    casadi_real *dk = ksum + m;          /* d k_s/dz (2n x nz) */
    casadi_real *Fq = dk + m*(3*n + 1);  /* dqdd/dq at x_s (n x n, row-major) */
    casadi_real *Fv = Fq + n*n;          /* dqdd/dqd at x_s (n x n, row-major) */
    casadi_real *Minv = Fv + n*n;        /* dqdd/dtau = M^-1 at x_s (n x n, row-major) */
    casadi_real *d = Minv + n*n;         /* d x_s/dz, four columns (2n x 4) */
    for (int i = 0; i < m; ++i) k[i] = ksum[i] = 0.0;
    for (int i = 0; i < m*nz; ++i) J[i] = 0.0;
    for (int s = 0; s < 4; ++s) {
        const casadi_real c = soagen_rk4_c[s], b = soagen_rk4_b[s];
        for (int i = 0; i < m; ++i) {
            xs[i] = x[i] + c*dt*k[i];
            kprev[i] = k[i];
        }
        for (int i = 0; i < n; ++i) k[i] = xs[n + i];
        if (fdd(xs, xs + n, tau, k + n, Fq, Fv, Minv)) return 1;
        if (s == 0) {                    /* d x_1/dz = [I 0 0]: d k_1/dz = [[0 I 0 0], [dqdd/dq dqdd/dqd M^-1 0]] */
            for (int j = 0; j < nz; ++j)
                for (int i = 0; i < n; ++i) {
                    dk[j*m + i] = j == n + i ? 1.0 : 0.0;
                    dk[j*m + n + i] = j < n ? Fq[i*n + j] : j < m ? Fv[i*n + j - n]
                                    : j < dt_column ? Minv[i*n + j - m] : 0.0;
                }
        }
        else for (int j0 = 0; j0 < nz; j0 += 4) {
            const int cols = nz - j0 < 4 ? nz - j0 : 4;
            for (int jj = 0; jj < cols; ++jj) {      /* d x_s/dz = [I 0 0] + c dt d k_(s-1)/dz + c k_(s-1) e_dt' */
                const int j = j0 + jj;
                for (int i = 0; i < m; ++i)
                    d[jj*m + i] = c*dt*dk[j*m + i] + (i == j ? 1.0 : 0.0) + (j == dt_column ? c*kprev[i] : 0.0);
            }
            for (int jj = cols; jj < 4; ++jj)
                for (int i = 0; i < m; ++i) d[jj*m + i] = 0.0;
            for (int i = 0; i < n; ++i) {    /* d qdd_s/dz = [dqdd/dq dqdd/dqd] d x_s/dz + [0 M^-1 0], four columns */
                casadi_real s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
                const casadi_real *fq = Fq + i*n, *fv = Fv + i*n;
                for (int l = 0; l < n; ++l) {
                    s0 += fq[l]*d[l] + fv[l]*d[n + l];
                    s1 += fq[l]*d[m + l] + fv[l]*d[m + n + l];
                    s2 += fq[l]*d[2*m + l] + fv[l]*d[2*m + n + l];
                    s3 += fq[l]*d[3*m + l] + fv[l]*d[3*m + n + l];
                }
                const casadi_real sums[4] = {s0, s1, s2, s3};
                for (int jj = 0; jj < cols; ++jj) {
                    const int j = j0 + jj;
                    dk[j*m + n + i] = sums[jj] + ((j >= m && j < dt_column) ? Minv[i*n + j - m] : 0.0);
                }
            }
            for (int jj = 0; jj < cols; ++jj)        /* d qd_s/dz: rows of d x_s/dz */
                for (int i = 0; i < n; ++i) dk[(j0 + jj)*m + i] = d[jj*m + n + i];
        }
        for (int i = 0; i < m*nz; ++i) J[i] += b*dk[i];
        for (int i = 0; i < m; ++i) ksum[i] += b*k[i];
    }
    for (int i = 0; i < m*nz; ++i) J[i] *= dt/6.0;
    for (int i = 0; i < m; ++i) {
        J[i*m + i] += 1.0;
        if (nz > dt_column) J[dt_column*m + i] += ksum[i]/6.0;
    }
    return 0;
}
