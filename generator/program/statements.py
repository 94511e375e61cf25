"""Straight-line programs: SSA statements recorded while the symbolic
recursions run, then cleaned (CSE, dead-code removal, renumbering) and
counted.

A :class:`Program` is what the C emitter reads: ordered ``(symbol, expr)``
statements, typed inputs and outputs, and per-link banners.  Expressions are
sympy objects kept deliberately short: every spatial operation records one
statement per component, so no expression tree grows across links.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from soagen.options import Options
from soagen.program.demand import by_demand
from soagen.program.float_facts import direct_float_facts

# a constant within this many ulps of a non-zero integer is that integer (1 - 2⁻⁵³ → 1);
# nothing non-zero becomes 0 here: the builder has made the model's round-off exact
# (cos(π/2) = 6e-17 → 0), and a small constant such as 4.9e-12 · 0.01 is part of the model
SNAP_ULPS = 4

#: the most loops :meth:`Program.sparse_column_loops` cuts one loop's columns into: each is
#: a body of its own to compile
MOST_LOOPS = 8
#: the fewest columns such a loop runs on: four doubles, one AVX2 register
LOOP_LANES = 4


def const(x):
    """A robot constant as an exact sympy number: integers snapped, else a Float."""
    x = float(x)
    r = round(x)
    if x == r or (r != 0 and abs(x - r) <= SNAP_ULPS * 2.0 ** -52 * abs(x)):
        return sp.Integer(int(r))
    return sp.Float(x, 17)


def _snap(expr):
    """Replace Floats that are integers up to noise by exact integers."""
    floats = [f for f in expr.atoms(sp.Float) if isinstance(const(f), sp.Integer)]
    if not floats:
        return expr
    return expr.xreplace({f: const(f) for f in floats})


@dataclass
class Argument:
    """A C array argument: ``name`` with ``size`` doubles; ``symbols`` its entries."""

    name: str
    size: int
    symbols: list = field(default_factory=list)
    doc: str = ""


@dataclass
class Banner:
    """A comment placed before the statements that follow it: ``level`` 0 a
    section (a column, a block), 1 a pass, 2 a body inside a pass.  A banner is
    kept when a statement follows it before the next banner of its level or above."""

    text: str
    level: int = 1


@dataclass
class Guard:
    """Stop with a non-zero status unless ``value > bound`` (NaN fails too).

    The C function then returns ``status`` before writing any output.
    """

    value: object
    bound: object
    status: int = 1
    text: str = ""


@dataclass
class ColumnLoop:
    """``for (j = start; j < stop; ++j)``: one straight-line ``body`` run on every column j of
    some of the function's output arrays, in place, after the outputs are written.

    Many right-hand sides solved by the same factors (∂θ̈/∂x = −M⁻¹ ∂τ/∂x, one column per
    direction) are one short body in a loop the C compiler vectorizes across columns,
    where unrolled they would be a copy of the body per column, each in scalar code.

    Attributes
    ----------
    columns : int        the arrays' columns; each array is row-major (rows × columns)
    arrays : list of int indices into the program's outputs; array k's column j is the
                         body's input ``col{k}`` and is overwritten by its output ``col{k}``
    body : Program       finished, its statements named ``v…``; reads its inputs and the
                         outer program's statement symbols (loop invariants)
    start, stop : int    the columns the loop runs on, start to stop − 1 (stop None: to the
                         last); the others are final as the outputs write them, or another
                         loop's
    """

    columns: int
    arrays: list
    body: "Program"
    start: int = 0
    stop: int | None = None

    @property
    def end(self):
        """One past the last column the loop runs on."""
        return self.columns if self.stop is None else self.stop

    @property
    def columns_run(self):
        """The columns the loop runs on: ``range(start, end)``."""
        return range(self.start, self.end)

    def outer_reads(self):
        """The outer program's symbols the body reads."""
        own = {s for a in self.body.inputs for s in a.symbols} | {sym for sym, _ in self.body.statements()}
        read = set()
        for _, expr in self.body.statements():
            read |= expr.free_symbols
        for arg in self.body.outputs:
            for e in arg.symbols:
                read |= e.free_symbols
        return read - own


def loop_cost(columns, read, written):
    """The model :meth:`Program.sparse_column_loops` cuts by: a loop over ``columns`` columns
    whose body reads ``read`` and writes ``written`` entries of a column costs
    (read + written) × (columns // LOOP_LANES + columns % LOOP_LANES + 1): a vector
    iteration per LOOP_LANES columns, a scalar one per column left over (the same
    operations, one lane), and one more for the loop itself (its setup, and a body more to
    compile)."""
    return (read + written) * (columns // LOOP_LANES + columns % LOOP_LANES + 1)


def cheapest_cut(runs, written, most):
    """The consecutive runs of columns ``runs`` ([first, stop, per array the frozenset of rows
    read]) joined into at most ``most`` loops of least total :func:`loop_cost` (``written``:
    the entries a body writes per column, every row of every array), of equal costs the
    fewest loops, by dynamic programming over the edges between runs; a list of
    [first, stop, per array the rows read] per loop."""
    n = len(runs)
    if n == 0:
        return []
    joined = {}                                   # (a, b): runs a to b − 1 as one loop
    for a in range(n):
        read = [frozenset()] * len(runs[a][2])
        for b in range(a + 1, n + 1):
            read = [x | y for x, y in zip(read, runs[b - 1][2])]
            joined[a, b] = ([runs[a][0], runs[b - 1][1], read],
                            loop_cost(runs[b - 1][1] - runs[a][0], sum(len(x) for x in read), written))
    best = {0: (0, [])}                           # after m rounds, runs[:b] in m loops → (cost, loops)
    answer = None
    for _ in range(min(most, n)):
        step = {}
        for a, (cost, loops) in best.items():
            for b in range(a + 1, n + 1):
                loop, extra = joined[a, b]
                if b not in step or cost + extra < step[b][0]:
                    step[b] = (cost + extra, loops + [loop])
        best = step
        if n in best and (answer is None or best[n][0] < answer[0]):
            answer = best[n]
    return answer[1]


class Program:
    """A straight-line function being recorded.

    Parameters
    ----------
    name : str
        Function name (without the robot prefix).
    doc : str
        One-line description printed above the C function.
    options : Options
        What the makers read while recording (precision, trig inputs).
    prefix : str
        Name stem of the statement symbols (an inner program replayed into
        another one, :mod:`soagen.passes.tangent`, gets its own).
    """

    def __init__(self, name, doc="", options=Options(), prefix="t"):
        self.name = name
        self.doc = doc
        self.options = options
        self.prefix = prefix
        self.inputs: list[Argument] = []
        self.outputs: list[Argument] = []
        self.body: list = []          # Banner or (Symbol, expr)
        self._table: dict = {}        # expr -> Symbol, hash-consing
        self._count = 0
        self.ops: dict | None = None
        self.names: dict = {}         # Symbol -> printed name, set by finish()
        self.seconds: float | None = None   # record + finish, set by codegen
        self.stage_seconds: dict = {}       # {"record": s, "cse": s} (finish), set by codegen
        self.algorithm: str | None = None   # label of the algorithm a family function uses (soagen.functions)
        self.calls: str | None = None       # a family function that only calls this generated variant
        self.parameters: list | None = None  # the input π when the parameters are inputs (soagen.passes.identification)
        self.loops: list[ColumnLoop] = []    # run in order after the outputs are written
        self.output_order = None  # (output name, index) -> sort key: statements by demand (program.demand)

    # -------------------------------------------------------------- recording
    def input(self, name, size, doc=""):
        """Declare an input array; returns its entries as sympy symbols."""
        syms = [sp.Symbol(f"{name}[{i}]") for i in range(size)]
        self.inputs.append(Argument(name, size, syms, doc))
        return syms

    def output(self, name, exprs, doc=""):
        """Declare an output array filled with ``exprs`` (numbers or symbols)."""
        self.outputs.append(Argument(name, len(exprs), [self.let(e) for e in exprs], doc))

    def trig(self, q):
        """(cos q, sin q) of a joint coordinate symbol ``q[k]``: computed once, or,
        with ``options.trig_inputs``, read from the inputs ``cq[k]``, ``sq[k]``
        (declared on first use, after the other inputs) for targets with their own trig."""
        if not self.options.trig_inputs:
            return self.let(sp.cos(q)), self.let(sp.sin(q))
        base, index = q.name.split("[")
        size = next(a.size for a in self.inputs if a.name == base)
        names = {a.name: a for a in self.inputs}
        if "c" + base not in names:
            self.input("c" + base, size, f"cos of {base}, used for revolute joints")
            self.input("s" + base, size, f"sin of {base}, used for revolute joints")
            names = {a.name: a for a in self.inputs}
        k = int(index[:-1])
        return names["c" + base].symbols[k], names["s" + base].symbols[k]

    def column_loop(self, columns, arrays, kernel, start=0, stop=None, zeros=None):
        """Record a :class:`ColumnLoop` over columns ``start`` to ``stop`` − 1 (``stop`` None: to
        ``columns`` − 1) of the outputs ``arrays`` (their indices in the order the maker returns
        them, with ``rows`` rows each): ``kernel(body, cols) -> new cols``, ``cols`` a list (per
        array) of the column's entries (``rows[k]`` symbols; 0 for the rows in ``zeros[k]``, a set
        per array of rows zero on every column the loop runs on), recorded into ``body`` like any
        program."""
        arrays, rows = [a for a, _ in arrays], [r for _, r in arrays]
        body = Program(f"{self.name}__loop{len(self.loops)}", "", self.options, prefix="v")
        cols = [body.input(f"col{k}", r) for k, r in enumerate(rows)]
        read = [[sp.Integer(0) if zeros and i in zeros[k] else x for i, x in enumerate(col)]
                for k, col in enumerate(cols)]
        for k, values in enumerate(kernel(body, read)):
            body.output(f"col{k}", values)
        self.loops.append(ColumnLoop(columns, arrays, body.finish(), start, stop))

    def sparse_column_loops(self, columns, arrays, kernel, written, start=0, most=MOST_LOOPS):
        """:meth:`column_loop` over columns ``start`` to ``columns`` − 1, cut into at most
        ``most`` loops over consecutive columns, each body skipping the rows that are zero on
        all of its columns as ``written`` (per array its row-major entries as the outputs write
        them) has them.  On a tree, column j of ∂τ/∂x is zero on the rows of joints neither
        ancestors nor descendants of j; a solve's body that reads them as 0 does less.  The
        cut is the cheapest by :func:`loop_cost` (:func:`cheapest_cut`), made at the edges of
        the runs of columns that read the same rows."""
        rows = [r for _, r in arrays]
        runs = []                                     # [first, stop, per array the rows read]
        for j in range(start, columns):
            read = [frozenset(i for i in range(r) if written[k][i * columns + j] != 0) for k, r in enumerate(rows)]
            if runs and runs[-1][2] == read:
                runs[-1][1] = j + 1
            else:
                runs.append([j, j + 1, read])
        for first, stop, read in cheapest_cut(runs, sum(rows), most):
            zeros = [set(range(r)) - x for r, x in zip(rows, read)]
            self.column_loop(columns, arrays, kernel, first, stop, zeros)

    def looped_outputs(self):
        """Names of the outputs a column loop works on in place."""
        return {self.outputs[i].name for loop in self.loops for i in loop.arrays}

    def unused_inputs(self):
        """Inputs no statement, guard, output or loop reads (the C marks them ``(void)``)."""
        used = set()
        for loop in self.loops:
            used |= loop.outer_reads()
        for item in self.body:
            if isinstance(item, tuple):
                used |= item[1].free_symbols
            elif isinstance(item, Guard):
                used |= item.value.free_symbols | item.bound.free_symbols
        for arg in self.outputs:
            for e in arg.symbols:
                used |= e.free_symbols
        return [a.name for a in self.inputs if not used & set(a.symbols)]

    def banner(self, text, level=1):
        self.body.append(Banner(text, level))

    def guard(self, value, bound, text=""):
        """Record a check ``value > bound`` (see :class:`Guard`)."""
        self.body.append(Guard(self.let(value), self.let(bound), 1, text))

    @property
    def returns_status(self):
        """True when the C function returns an int status (it has guards)."""
        return any(isinstance(s, Guard) for s in self.body)

    def let(self, expr):
        """Record ``expr`` as a statement unless it is a number, a symbol or
        a negated symbol; reuse the symbol of an identical earlier statement.
        (Looking up ``-expr`` too found almost nothing for a third of the time.)"""
        expr = sp.sympify(expr)
        if expr.is_Number:
            return const(expr)
        if expr.is_Symbol or (expr.is_Mul and len(expr.args) == 2 and expr.args[0] == -1
                              and expr.args[1].is_Symbol):
            return expr
        expr = _snap(expr)
        if expr.is_Number or expr.is_Symbol:
            return expr
        hit = self._table.get(expr)
        if hit is not None:
            return hit
        sym = sp.Symbol(f"{self.prefix}{self._count}")
        self._count += 1
        self._table[expr] = sym
        self.body.append((sym, expr))
        return sym

    # -------------------------------------------------------------- finishing
    def finish(self, cse=True):
        """CSE over the statement list (:func:`_cse`), dead-code removal,
        renumbering, op counts (sympy's Floats answering directly:
        :func:`~soagen.program.float_facts.direct_float_facts`)."""
        if self.ops is not None:      # finished already (a family's chosen algorithm)
            return self
        with direct_float_facts():
            return self._finish(cse)

    def _finish(self, cse):
        statements = self.statements()
        if cse and statements:
            self.body = _cse(self.body, statements, "vc" if self.prefix == "v" else "c")   # a loop body's own names
        self._eliminate_dead()
        if self.output_order is not None and not (self.loops or self.guards()):    # else as recorded
            self.body = [Banner("statements in the order the outputs need them", 0), *by_demand(self)]
        self._renumber()
        self.ops = count_program(self)
        self._table = {}
        return self

    def statements(self):
        """The ``(symbol, expr)`` statements, without banners and guards."""
        return [s for s in self.body if isinstance(s, tuple)]

    def guards(self):
        return [s for s in self.body if isinstance(s, Guard)]

    def _eliminate_dead(self):
        live = set()
        for loop in self.loops:
            live |= loop.outer_reads()
        for arg in self.outputs:
            for e in arg.symbols:
                live |= e.free_symbols
        kept = []
        # walking backwards: a banner is kept when its level is below ``open``, the
        # level of the last banner kept since the last statement (3: none yet)
        open_ = 0            # no statement after the end
        for item in reversed(self.body):
            if isinstance(item, Banner):
                if item.level < open_:
                    kept.append(item)
                    open_ = item.level
                continue
            if isinstance(item, Guard):
                live |= item.value.free_symbols | item.bound.free_symbols
                kept.append(item)
                open_ = 3
                continue
            sym, expr = item
            if sym in live:
                live |= expr.free_symbols
                kept.append(item)
                open_ = 3
        kept.reverse()
        self.body = kept

    def _renumber(self):
        """Printed names ``t0, t1, …`` in statement order (applied by the printer:
        rebuilding every expression with new symbols cost more than all the rest)."""
        self.names = {}
        for item in self.statements():
            self.names[item[0]] = f"{self.prefix}{len(self.names)}"


def _product_key(term):
    """The product a term shares with others: ``(key, rest)`` with
    ``term == rest * key``, or None.  Keys are two-symbol products ``a*b`` (any
    coefficient stays outside) and positive ``c*a`` of a constant and one symbol."""
    if not term.is_Mul:
        return None
    coeff, factors = coeff_mul(term)
    if len(factors) == 2 and all(f.is_Symbol for f in factors):
        return sp.Mul._from_args(factors), coeff       # two symbols of a product: already canonical
    if len(factors) == 1 and factors[0].is_Symbol and abs(coeff) != 1:
        return abs(coeff) * factors[0], sp.sign(coeff)
    return None


def _cse(body, statements, prefix="c"):
    """Common-subexpression elimination over the statement list.

    Hash-consing while recording already shares every repeated statement; what
    is left are products repeated as terms of different statements (``t3*t8`` in
    three sums, ``0.27*t5`` in two).  Each product found in two or more
    statements gets its own statement, placed before its first use.  (This is
    what ``sympy.cse`` finds here — all its replacements are two-factor
    products — at a small fraction of its cost.)
    """
    counts = {}
    for _, expr in statements:
        for term in (expr.args if expr.is_Add else (expr,)):
            hit = _product_key(term)
            if hit is not None:
                counts[hit[0]] = counts.get(hit[0], 0) + 1
    shared = {key for key, c in counts.items() if c > 1}
    if not shared:
        return body
    names = {}
    out = []
    for item in body:
        if not isinstance(item, tuple):   # banners and guards (their operands are atoms)
            out.append(item)
            continue
        sym, expr = item
        if expr in shared and expr not in names:   # the product is this statement: reuse its symbol
            names[expr] = sym
            out.append(item)
            continue
        terms = expr.args if expr.is_Add else (expr,)
        new_terms, changed = [], False
        for term in terms:
            hit = _product_key(term)
            if hit is not None and hit[0] in shared:
                key, rest = hit
                if key not in names:
                    names[key] = sp.Symbol(f"{prefix}{len(names)}")
                    out.append((names[key], key))
                new_terms.append(rest * names[key])
                changed = True
            else:
                new_terms.append(term)
        out.append((sym, sp.Add(*new_terms) if changed else expr))
    return out


# ------------------------------------------------------------------ op counts
OP_KINDS = ("mul", "add", "div", "sqrt", "trig", "neg")


def count_ops(expr, counts=None):
    """Floating-point operations of ``expr`` as the C printer writes it.

    Returns a dict with keys :data:`OP_KINDS`.  A subtraction counts as an
    add, a coefficient of -1 as nothing (it becomes a subtraction) unless it
    leads an expression (then ``neg``), ``x**2`` as one mul, ``1/x`` as a div.
    """
    if counts is None:
        counts = dict.fromkeys(OP_KINDS, 0)
    if expr.is_Atom:
        return counts
    if expr.is_Add:
        counts["add"] += len(expr.args) - 1
        if all(negative_term(a) for a in expr.args) and not any(_leads_with_literal(-a) for a in expr.args):
            counts["neg"] += 1
        for a in expr.args:
            count_ops(-a if negative_term(a) else a, counts)
    elif expr.is_Mul:
        coeff, factors = coeff_mul(expr)
        num = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
        den = [f for f in factors if f.is_Pow and f.exp.is_negative]
        if coeff == -1 and not any(f.is_Number for f in factors):
            counts["neg"] += 1   # -x*y; a minus on a literal (-0.5*x) costs nothing
        n_num = len(num) + (0 if abs(coeff) == 1 else 1)
        counts["mul"] += max(n_num - 1, 0)
        counts["div"] += len(den)
        for f in num:
            count_ops(f, counts)
        for f in den:
            count_ops(1 / f, counts)
    elif expr.is_Pow:
        if expr.exp == 2:
            counts["mul"] += 1
        elif expr.exp == -1:
            counts["div"] += 1
        elif expr.exp == sp.Rational(1, 2):
            counts["sqrt"] += 1
        else:
            raise ValueError(f"unsupported power {expr}")
        count_ops(expr.base, counts)
    elif isinstance(expr, (sp.sin, sp.cos)):
        counts["trig"] += 1
        count_ops(expr.args[0], counts)
    else:
        raise ValueError(f"cannot count operations of {expr!r}")
    return counts


def _is_product(term):
    """True when ``term`` (its sign stripped) is a product that costs a multiplication at its top:
    what an addition can take as one operand of a fused multiply-add."""
    if negative_term(term):
        term = -term
    if term.is_Pow:
        return term.exp == 2
    if not term.is_Mul:
        return False
    coeff, factors = coeff_mul(term)
    num = [f for f in factors if not (f.is_Pow and f.exp.is_negative)]
    return len(num) + (0 if abs(coeff) == 1 else 1) >= 2 and len(num) == len(factors)


def count_fma(expr):
    """Multiply-adds of ``expr`` that fuse into one FMA, as a compiler that contracts within an
    expression does (``-ffp-contract=fast``): each addition of a sum takes at most one product
    operand, so a sum of k terms of which p are products fuses min(k - 1, p).  The fused count of
    ``expr`` is then (mul - fma) multiplications, (add - fma) additions and fma FMAs.  Products held in
    a temporary and added in a later statement are not counted (a lower bound of what gcc fuses)."""
    if expr.is_Atom:
        return 0
    fused = 0
    if expr.is_Add:
        fused = min(len(expr.args) - 1, sum(_is_product(a) for a in expr.args))
    return fused + sum(count_fma(a) for a in expr.args)


def fma_program(prog):
    """:func:`count_fma` over a program as :func:`count_program` counts it (a loop's body once per
    column)."""
    fused = sum(fma_program(loop.body) * len(loop.columns_run) for loop in prog.loops)
    fused += sum(count_fma(expr) for _, expr in prog.statements())
    fused += sum(count_fma(e) for arg in prog.outputs for e in arg.symbols)
    return fused + sum(count_fma(g.bound) for g in prog.guards())


def with_fma(prog):
    """``prog.ops`` with ``fma``: the multiply-adds that fuse within an expression
    (:func:`count_fma`, docs/guide/opcounts.md)."""
    return {**prog.ops, "fma": fma_program(prog)}


def coeff_mul(term):
    """``term.as_coeff_mul()``: a product's rational coefficient and other factors, or -1 and the
    factors with a negative float coefficient made positive, or 1 and every factor.  The same answer
    without sympy's assumption query on the float (a fresh deduction of its facts each time)."""
    if not term.is_Mul:
        return term.as_coeff_mul()
    args = term.args
    c = args[0]
    if c.is_Number:
        if c.is_Rational:
            return c, args[1:]
        if c._mpf_[0]:                  # the sign bit of a negative Float
            return sp.S.NegativeOne, (-c,) + args[1:]
    return sp.S.One, args


def negative_term(term):
    """``term.could_extract_minus_sign()``; for a product, sympy's own test builds ``-term``
    first (to rule out ``zoo``, which programs never hold): here only its leading coefficient is read."""
    if term.is_Mul:
        c = term.args[0]
        if c.is_Float:
            return bool(c._mpf_[0])     # its sign bit: sympy would deduce every fact of the float first
        return bool(c.is_Number and c.is_extended_negative)
    if term.is_Symbol:
        return False
    return term.could_extract_minus_sign()


def _leads_with_literal(term):
    """True when the printed term starts with a number (``0.5*x``)."""
    return term.is_Number or (term.is_Mul and any(f.is_Number for f in coeff_mul(term)[1])) or (
        term.is_Mul and abs(coeff_mul(term)[0]) != 1)


def count_program(prog):
    """Sum :func:`count_ops` over a program's statements, a loop's body once per column;
    adds ``statements`` (as printed: a loop's body once)."""
    counts = dict.fromkeys(OP_KINDS, 0)
    statements = len(prog.statements())
    for loop in prog.loops:
        inner = count_program(loop.body)
        statements += inner.pop("statements")
        for kind, c in inner.items():
            counts[kind] += c * len(loop.columns_run)
    for _, expr in prog.statements():
        count_ops(expr, counts)
    for arg in prog.outputs:
        for e in arg.symbols:
            count_ops(e, counts)
    for g in prog.guards():
        count_ops(g.bound, counts)
    counts["statements"] = statements
    return counts
