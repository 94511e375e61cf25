/* The second-order adjoint of soagen_rk4_step (rk4_step.c): emitted after it, in a library with the Hessians. */

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
    casadi_real *Ws = HF + 9*n*n;             /* d x_s/dz (2n x nz, in 3n x nz), row-major */
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
        /* W_s = [D; E]: D = d x_s/dz (2n x nz), E = [0 I 0] the tau rows (tau is z's own).  Row-major D
         * (in Ws's place) so that every inner loop runs along a contiguous row (a vectorized axpy) */
        casadi_real *D = Ws;
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < nz; ++j) D[i*nz + j] = dx[j*m + i];
        for (int i = 0; i < nw; ++i) {        /* T = HF W_s = HF[:, :2n] D + HF[:, 2n:] E */
            casadi_real *t = T + i*nz;
            const casadi_real *hf = HF + i*nw;
            for (int j = 0; j < nz; ++j) t[j] = 0.0;
            for (int l = 0; l < m; ++l) {
                const casadi_real h = hf[l], *d = D + l*nz;
                for (int j = 0; j < nz; ++j) t[j] += h*d[j];
            }
            for (int l = 0; l < n; ++l) t[m + l] += hf[m + l];
        }
        for (int l = 0; l < m; ++l) {         /* H += W_s' T = D' T[:2n] + E' T[2n:] */
            const casadi_real *d = D + l*nz, *t = T + l*nz;
            for (int a = 0; a < nz; ++a) {
                const casadi_real da = d[a];
                casadi_real *h = H + a*nz;
                for (int b = 0; b < nz; ++b) h[b] += da*t[b];
            }
        }
        for (int l = 0; l < n; ++l) {
            const casadi_real *t = T + (m + l)*nz;
            casadi_real *h = H + (m + l)*nz;
            for (int b = 0; b < nz; ++b) h[b] += t[b];
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
