"""The exact Hessians in the CasADi library: what ``casadi.external`` loads when an optimizer asks
for second derivatives of ``f`` (IPOPT's exact Hessian of the Lagrangian).

CasADi forms the Hessian of a scalar φ(x) = λᵀ f(x) + ... by reverse mode, then the Jacobian of
that gradient (casadi/core/external.cpp, function_internal.cpp, factory.hpp): the gradient of a
call of ``f`` is a call of ``adj1_f`` where the library has it (``External::has_reverse``), and the
Jacobian of that call is ``jac_adj1_f`` (the external ``adj1_f`` has no directional derivatives
of its own, so CasADi asks for its Jacobian).  So the library exports, for each function with a
Hessian (:data:`HESSIANS`), the contracted form:

- ``adj1_f(x..., out_y..., adj_y...) -> adj_x...``: Σ_k (∂y_k/∂x_i)ᵀ adj_y_k, from the first
  derivatives (the same calls as ``jac_f``);
- ``jac_adj1_f(x..., out_y..., adj_y..., out_adj_x...) -> jac_adj_<x_i>_<input>``: along x_j the
  block (i, j) of the Hessian of Σ_k adj_y_kᵀ y_k (soagen's contracted Hessian; a structural zero
  where the Hessian's program has only zeros: along the input f is linear in, twice), along out_y a structural zero,
  along adj_y_k the transposed Jacobian block (∂y_k/∂x_i)ᵀ.

``jac_jac_f`` (the full tensor of second derivatives, what CasADi would ask for when
differentiating ``jac_f`` itself) is not exported: it stops in one line.

Along q the Hessian is in q's nq coordinates: soagen's is along the tangent space (q ⊕ δq,
:meth:`soagen.model.robot.Robot.integrate`), so with ξ(q) the chart of q ⊕ · around the point
and E = ∂ξ/∂q (:func:`soagen.targets.casadi.emit.tangent_map_lines`),
H_q = Eᵀ H_ξ E + Σ_i g_i ∇²ξ_i, g = ∂φ/∂ξ the tangent gradient (:func:`chart_hessian_lines`).
"""
from __future__ import annotations

from soagen.targets.casadi.guards import failure
from soagen.targets.common.inert import Code

#: f -> the soagen function of its contracted Hessian (inputs f's, then one weight per output of f)
HESSIANS = {"inverse_dynamics": "inverse_dynamics_hessian",
            "forward_dynamics": "forward_dynamics_hessian",
            "contact_dynamics": "contact_dynamics_hessian"}


def chart_hessian_lines(robot, q="q", g="g", H="H", stride=None):
    """C lines that add Σ_i g_i ∇²ξ_i(q) to ``H`` (row-major, ``stride`` columns, rows and columns
    0..nq-1 the q block), ξ(q) the chart of q ⊕ · at q, g (nv) the tangent gradient.

    A quaternion q of norm s, q̂ = q/s = (v, w): ξ_ω = log(R(q̂₀)ᵀ R(q̂)) ≈ 2 vec(q̂₀* ⊗ q/|q|) to second
    order, and with c = (w g_ω + v × g_ω, −v·g_ω) the Hessian of g_ωᵀ ξ_ω is −(2/s²)(c q̂ᵀ + q̂ cᵀ)
    (the second derivative of q/|q|; c·q̂ = 0).  A floating base's position adds nothing: its chart
    (SE(3)'s logarithm, ξ_v = R₀ᵀ(p − p₀) − ½ ω × R₀ᵀ(p − p₀) + ...) has a second derivative, but
    its weight g_v is zero for the functions of :data:`HESSIANS` (the dynamics do not depend on
    where the base is)."""
    nq = robot.nq
    stride = stride or nq
    lines = []
    for _, part in robot.parts:
        for k, body in enumerate(part.bodies):
            if body.nq == 1:
                continue
            qs, vs = part.qslice(k), part.vslice(k)
            h, r = qs.stop - 4, vs.start                  # the quaternion's first entry in q; ω's first row
            lines += ["{",
                      f"    const casadi_real s = sqrt({q}[{h}]*{q}[{h}] + {q}[{h + 1}]*{q}[{h + 1}] + "
                      f"{q}[{h + 2}]*{q}[{h + 2}] + {q}[{h + 3}]*{q}[{h + 3}]);",
                      f"    const casadi_real u[4] = {{{q}[{h}]/s, {q}[{h + 1}]/s, {q}[{h + 2}]/s, {q}[{h + 3}]/s}};",
                      f"    const casadi_real gx = {g}[{r}], gy = {g}[{r + 1}], gz = {g}[{r + 2}];",
                      "    const casadi_real c[4] = {u[3]*gx + u[1]*gz - u[2]*gy, u[3]*gy + u[2]*gx - u[0]*gz,",
                      "                              u[3]*gz + u[0]*gy - u[1]*gx, -(u[0]*gx + u[1]*gy + u[2]*gz)};",
                      "    for (int a = 0; a < 4; ++a)",
                      "        for (int b = 0; b < 4; ++b)",
                      f"            {H}[({h} + a)*{stride} + {h} + b] -= 2.0/(s*s)*(c[a]*u[b] + u[a]*c[b]);"]
            lines.append("}")
    return lines


def adjoint(robot, name, prog, ins, outs, jac, hessian, sparsity):
    """What templates/casadi_adjoint.j2 lays out for ``adj1_`` and ``jac_adj1_`` of ``prog`` (inputs
    ``ins``, outputs ``outs``): the first-derivative calls of its Jacobian ``jac`` (the dict of
    :func:`soagen.targets.casadi.emit._jacobian`), the call of ``hessian`` (its contracted Hessian,
    a program), the work vector's layout and the blocks."""
    p, m = len(ins), len(outs)
    wanted = [a["name"] for a in ins] + [("lam" if k == 0 else f"lam_{o['name']}") for k, o in enumerate(outs)]
    if [a.name for a in hessian.inputs] != wanted or [a.name for a in hessian.outputs] != ["H"]:
        raise AssertionError(f"{hessian.name} reads {[a.name for a in hessian.inputs]}, not {wanted}")
    along_q = jac["K"] is not None
    tangent = [robot.nv if (along_q and a["name"] == "q") else a["size"] for a in ins]
    t_at = [sum(tangent[:i]) for i in range(p)]                     # each input's rows in H (tangent space)
    c_at = [sum(a["size"] for a in ins[:i]) for i in range(p)]      # and in q's coordinates
    nt, nc = sum(tangent), sum(a["size"] for a in ins)
    blocks = {b["name"]: b for b in jac["blocks"]}
    H = hessian.outputs[0].symbols                                  # (nt, nt) row-major, tangent space

    def zero_block(i, j):
        """Whether the Hessian's block (i, j) is structurally 0 in the program (f linear in an input), and so
        in q's coordinates (the chart's second derivative adds to the q-q block only)."""
        rows, cols = range(t_at[i], t_at[i] + tangent[i]), range(t_at[j], t_at[j] + tangent[j])
        return not (along_q and ins[i]["name"] == ins[j]["name"] == "q") and all(
            H[r * nt + c] == 0 for r in rows for c in cols)

    terms = [dict(g_at=t_at[i], at=blocks[f"jac_{o['name']}_{a['name']}"]["at"], seed=p + m + k,
                  rows=o["size"], cols=tangent[i]) for i, a in enumerate(ins) for k, o in enumerate(outs)]
    inputs = ins + [dict(o, name=f"out_{o['name']}") for o in outs] + [dict(o, name=f"adj_{o['name']}") for o in outs]
    outputs = [dict(name=f"adj_{a['name']}", size=a["size"], sparsity=sparsity(a["size"], 1), g_at=t_at[i],
                    tangent=along_q and a["name"] == "q") for i, a in enumerate(ins)]
    jblocks = []
    for i, a in enumerate(ins):
        for j, b in enumerate(inputs):
            block = dict(name=f"jac_adj_{a['name']}_{b['name']}", rows=a["size"], cols=b["size"])
            # the program's diagonal block is 0: declared so.  Its zero (q̇, τ) blocks stay dense: declared
            # zero too, solo12's exact solve in benchmarks/trajopt.py stopped at IPOPT's acceptable level
            if j < p and i == j and zero_block(i, j):
                block.update(kind="zero", sparsity=sparsity(a["size"], b["size"], zero=True))
            elif j < p:
                block.update(kind="hessian", r0=c_at[i], c0=c_at[j], sparsity=sparsity(a["size"], b["size"]))
            elif j < p + m:                                 # along the outputs' values: nothing
                block.update(kind="zero", sparsity=sparsity(a["size"], b["size"], zero=True))
            else:                                           # along the weights: the Jacobian's block, transposed
                o = outs[j - p - m]
                block.update(kind="jacobian", at=blocks[f"jac_{o['name']}_{a['name']}"]["at"],
                             tangent=along_q and a["name"] == "q", sparsity=sparsity(a["size"], b["size"]))
            jblocks.append(block)
    zeros = max(a["size"] for a in inputs)
    zeros_at = jac["zeros_at"]                              # after the first derivatives and K
    g_at = zeros_at + zeros
    H_at = g_at + nt
    Hc_at = H_at + nt * nt
    T_at = Hc_at + nc * nc
    fname = f"soagen_{name}_{prog.name}"
    call = dict(call=f"{name}_{hessian.name}", status=hessian.returns_status,
                failure=failure(hessian, f"the Hessian of {prog.name} ({hessian.name})") if hessian.returns_status
                else None, args=[f"x[{i}]" for i in range(p)] + [f"x[{p + m + k}]" for k in range(m)])
    return dict(name=f"adj1_{fname}", jac=f"jac_adj1_{fname}", program=prog.name, inputs=inputs, outputs=outputs,
                jac_inputs=inputs + [dict(a, name=f"out_adj_{a['name']}") for a in ins], blocks=jblocks,
                calls=jac["calls"], K=jac["K"], K_lines=jac["K_lines"], terms=terms, nt=nt, nc=nc,
                zeros_at=zeros_at, zeros=zeros, g_at=g_at, work=H_at, H_at=H_at, Hc_at=Hc_at, T_at=T_at,
                jac_work=T_at + nt * nc, hessian=call,
                chart_lines=[Code(line) for line in chart_hessian_lines(robot, q="x[0]", g="g", H="Hc", stride=nc)])


def step_adjoint(step, sparsity):
    """What templates/casadi.c.j2 lays out for ``adj1_`` and ``jac_adj1_`` of a step of
    :data:`soagen.targets.casadi.emit.STEPS` (``step``: the dict of
    :func:`soagen.targets.casadi.emit._step`; the C in ``rk4_step.c``)."""
    n, m = step["n"], step["m"]
    nz = 3 * n + 1
    ins, outs = step["inputs"], step["outputs"]
    at = [0, m, m + n]                                              # x, tau, dt along z: 0, 2n, 3n
    inputs = ins + [dict(o, name=f"out_{o['name']}") for o in outs] + [dict(o, name=f"adj_{o['name']}") for o in outs]
    outputs = [dict(a, name=f"adj_{a['name']}", at=at[i]) for i, a in enumerate(ins)]
    blocks = []
    for i, a in enumerate(ins):
        for j, b in enumerate(inputs):
            block = dict(name=f"jac_adj_{a['name']}_{b['name']}", rows=a["rows"], cols=b["rows"], r0=at[i])
            if j < 3:
                block.update(kind="hessian", c0=at[j], sparsity=sparsity(a["rows"], b["rows"]))
            elif j == 3:
                block.update(kind="zero", sparsity=sparsity(a["rows"], b["rows"], zero=True))
            else:
                block.update(kind="jacobian", sparsity=sparsity(a["rows"], b["rows"]))
            blocks.append(block)
    hessian_work = 8 * m * (3 * n + 2) + 18 * n * n + 6 * n * nz + 5 * n + nz
    J_at = hessian_work
    H_at = J_at + m * nz
    zeros_at = H_at + nz * nz
    zeros = max(a["rows"] for a in inputs)
    fname = step["name"]
    return dict(name=f"adj1_{fname}", jac=f"jac_adj1_{fname}", inputs=inputs, outputs=outputs, nz=nz,
                jac_inputs=inputs + [dict(a, name=f"out_adj_{a['name']}") for a in ins], blocks=blocks,
                J_at=J_at, H_at=H_at, zeros_at=zeros_at, zeros=zeros, work=zeros_at + zeros)
