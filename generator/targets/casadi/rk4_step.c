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

typedef int (*soagen_fd_hessian_t)(const casadi_real *q, const casadi_real *qd, const casadi_real *tau,
                                   const casadi_real *lam, casadi_real *H);

/* The Hessian H ((3n+1) x (3n+1), row-major, symmetric) of mu' x+ along z = (x, tau, dt), and J = d x+/dz
 * (2n x (3n+1), column-major), by the second-order adjoint through the four stages: with the stages'
 * adjoints kbar_s = dt/6 b_s mu + c_(s+1) dt xbar_(s+1) (of k_s) and xbar_s = dF/dx(x_s)' kbar_s (of x_s),
 *     H = sum_s W_s' HF(x_s, tau; kbar_s) W_s                        (the stages' dynamics)
 *       + sum_s c_s (e_dt v_s' + v_s e_dt'), v_s = d k_(s-1)/dz' xbar_s     (the products dt k_(s-1))
 *       + 1/6 (e_dt u' + u e_dt'), u = (sum_s b_s d k_s/dz)' mu               (the product dt sum_s b_s k_s),
 * W_s = d(q_s, qd_s, tau)/dz (3n x (3n+1)) and HF(.; lam) the Hessian of lam' FD (forward_dynamics_hessian,
 * order (q, qd, tau)) at the qdd half of kbar_s (the qd half of F is linear).
 * w: 8 (2n) (3n+2) + 18n^2 + 6n (3n+1) + 5n + 3n+1 entries (hessian_work) */
static int soagen_rk4_step_hessian(int n, soagen_fd_derivatives_t fdd, soagen_fd_hessian_t fdh,
                                   const casadi_real *x, const casadi_real *tau, casadi_real dt,
                                   const casadi_real *mu, casadi_real *J, casadi_real *H, casadi_real *w)
{
    const int m = 2*n, nz = 3*n + 1, dt_column = 3*n, nw = 3*n;
    casadi_real *xs = w;                      /* x_s, 4 x 2n */
    casadi_real *ks = xs + 4*m;               /* k_s, 4 x 2n */
    casadi_real *dxs = ks + 4*m;              /* d x_s/dz, 4 x (2n x nz), column-major */
    casadi_real *dks = dxs + 4*m*nz;          /* d k_s/dz, 4 x (2n x nz), column-major */
    casadi_real *Fq = dks + 4*m*nz;           /* dqdd/dq at x_s, 4 x (n x n), row-major */
    casadi_real *Fv = Fq + 4*n*n;             /* dqdd/dqd at x_s, 4 x (n x n), row-major */
    casadi_real *Minv = Fv + 4*n*n;           /* M^-1 at x_s (n x n), scratch */
    casadi_real *HF = Minv + n*n;             /* HF (3n x 3n), row-major */
    casadi_real *Ws = HF + 9*n*n;             /* W_s (3n x nz), row-major */
    casadi_real *T = Ws + nw*nz;              /* HF W_s (3n x nz), row-major */
    casadi_real *kbar = T + nw*nz;            /* kbar_s (2n) */
    casadi_real *xbar = kbar + m;             /* xbar_s (2n) */
    casadi_real *lam = xbar + m;              /* the qdd half of kbar_s (n) */
    casadi_real *v = lam + n;                 /* v_s, u (nz) */
    for (int i = 0; i < m*nz; ++i) J[i] = 0.0;
    for (int i = 0; i < nz*nz; ++i) H[i] = 0.0;
    for (int s = 0; s < 4; ++s) {             /* forward: the stages and their derivatives along z */
        const casadi_real c = soagen_rk4_c[s];
        const casadi_real *kp = s ? ks + (s - 1)*m : 0, *dkp = s ? dks + (s - 1)*m*nz : 0;
        casadi_real *x_s = xs + s*m, *k = ks + s*m, *dx = dxs + s*m*nz, *dk = dks + s*m*nz;
        casadi_real *fq = Fq + s*n*n, *fv = Fv + s*n*n;
        for (int i = 0; i < m; ++i) x_s[i] = x[i] + (s ? c*dt*kp[i] : 0.0);
        for (int j = 0; j < nz; ++j)
            for (int i = 0; i < m; ++i)
                dx[j*m + i] = (i == j ? 1.0 : 0.0) + (s ? c*dt*dkp[j*m + i] + (j == dt_column ? c*kp[i] : 0.0) : 0.0);
        for (int i = 0; i < n; ++i) k[i] = x_s[n + i];
        if (fdd(x_s, x_s + n, tau, k + n, fq, fv, Minv)) return 1;
        for (int j = 0; j < nz; ++j)
            for (int i = 0; i < n; ++i) {
                casadi_real a = (j >= m && j < dt_column) ? Minv[i*n + j - m] : 0.0;
                for (int l = 0; l < n; ++l) a += fq[i*n + l]*dx[j*m + l] + fv[i*n + l]*dx[j*m + n + l];
                dk[j*m + i] = dx[j*m + n + i];
                dk[j*m + n + i] = a;
            }
        for (int i = 0; i < m*nz; ++i) J[i] += soagen_rk4_b[s]*dk[i];
    }
    for (int j = 0; j < nz; ++j) {            /* u = (sum_s b_s d k_s/dz)' mu: the dt row and column */
        casadi_real a = 0.0;
        for (int i = 0; i < m; ++i) a += J[j*m + i]*mu[i];
        v[j] = a/6.0;
    }
    for (int j = 0; j < nz; ++j) {
        H[dt_column*nz + j] += v[j];
        H[j*nz + dt_column] += v[j];
    }
    for (int i = 0; i < m*nz; ++i) J[i] *= dt/6.0;
    for (int i = 0; i < m; ++i) {
        casadi_real a = 0.0;
        for (int s = 0; s < 4; ++s) a += soagen_rk4_b[s]*ks[s*m + i];
        J[i*m + i] += 1.0;
        J[dt_column*m + i] += a/6.0;
    }
    for (int i = 0; i < m; ++i) xbar[i] = 0.0;
    for (int s = 3; s >= 0; --s) {            /* reverse: the stages' adjoints and their Hessians */
        const casadi_real c_next = s < 3 ? soagen_rk4_c[s + 1] : 0.0;
        const casadi_real *dx = dxs + s*m*nz, *fq = Fq + s*n*n, *fv = Fv + s*n*n, *x_s = xs + s*m;
        for (int i = 0; i < m; ++i) kbar[i] = dt/6.0*soagen_rk4_b[s]*mu[i] + c_next*dt*xbar[i];
        for (int i = 0; i < n; ++i) lam[i] = kbar[n + i];
        for (int i = 0; i < n; ++i) {         /* xbar_s = [[0 I], [Fq Fv]]' kbar_s */
            casadi_real a = 0.0, b = kbar[i];
            for (int l = 0; l < n; ++l) {
                a += fq[l*n + i]*lam[l];
                b += fv[l*n + i]*lam[l];
            }
            xbar[i] = a;
            xbar[n + i] = b;
        }
        if (fdh(x_s, x_s + n, tau, lam, HF)) return 1;
        for (int i = 0; i < nw; ++i)          /* W_s = [d x_s/dz; [0 I 0]] */
            for (int j = 0; j < nz; ++j)
                Ws[i*nz + j] = i < m ? dx[j*m + i] : (j == i ? 1.0 : 0.0);
        for (int i = 0; i < nw; ++i)
            for (int j = 0; j < nz; ++j) {
                casadi_real a = 0.0;
                for (int l = 0; l < nw; ++l) a += HF[i*nw + l]*Ws[l*nz + j];
                T[i*nz + j] = a;
            }
        for (int i = 0; i < nz; ++i)
            for (int j = 0; j < nz; ++j) {
                casadi_real a = 0.0;
                for (int l = 0; l < nw; ++l) a += Ws[l*nz + i]*T[l*nz + j];
                H[i*nz + j] += a;
            }
        if (s) {                              /* the product c_s dt k_(s-1), weighted by xbar_s */
            const casadi_real *dkp = dks + (s - 1)*m*nz, c = soagen_rk4_c[s];
            for (int j = 0; j < nz; ++j) {
                casadi_real a = 0.0;
                for (int i = 0; i < m; ++i) a += dkp[j*m + i]*xbar[i];
                H[dt_column*nz + j] += c*a;
                H[j*nz + dt_column] += c*a;
            }
        }
    }
    return 0;
}
