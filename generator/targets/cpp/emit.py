"""The Eigen face of the C functions: ``<name>.hpp`` and the build files around them.

Each C function ``<name>_<f>`` becomes, in ``namespace <name>``,

* ``f(inputs..., outputs...)``: ``Eigen::Ref`` in and out, no heap, no copy: the C writes straight
  into the caller's storage.  A matrix output is declared in the C's layout (row-major, Eigen's
  ``RowMajor``), so a default (column-major) matrix does not bind to it: a layout mismatch is a
  compile error, never a silent transpose.  Returns the C's status where the C has one.
* ``f(inputs...)``: returns the outputs by value (one matrix, or a ``f_result`` struct of them),
  fixed-size, on the stack; assigning it to a default ``Eigen::Matrix`` converts the layout right
  (``Eigen::Matrix<double, 6, 7> J = panda::jacobian(q);``).  Where the C has a status, the value
  form throws ``std::domain_error`` on a non-zero one (and is absent when exceptions are off).

Inputs of one entry (``dt``, ``e``) are plain scalars.  The templates only lay out what this
module hands them.
"""
from __future__ import annotations

from soagen import functions as F
from soagen.targets.common.c_text import environment

#: C++ keywords and the namespaces a robot's namespace must not be (``std``, ``Eigen``)
RESERVED_NAMESPACES = frozenset("""
alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t class compl
concept const consteval constexpr constinit const_cast continue co_await co_return co_yield decltype default delete do
double dynamic_cast else enum explicit export extern false float for friend goto if inline int long mutable namespace
new noexcept not not_eq nullptr operator or or_eq private protected public register reinterpret_cast requires return
short signed sizeof static static_assert static_cast struct switch template this thread_local throw true try typedef
typeid typename union unsigned using virtual void volatile wchar_t while xor xor_eq std Eigen posix
""".split())


def namespace(name):
    """The C++ namespace of the robot whose C prefix is ``name`` (a safe C identifier): ``name``, or
    ``name + "_robot"`` where ``name`` is a C++ keyword or ``std``/``Eigen``/``posix``."""
    return f"{name}_robot" if name in RESERVED_NAMESPACES else name


def eigen_type(shape, scalar):
    """The fixed-size Eigen type of an output of ``shape`` (integers) in the C's row-major layout:
    a column vector for one dimension or one column, a ``RowMajor`` matrix otherwise; several
    4 x 4 poses (m, 4, 4) as the (4m x 4) matrix of the same memory, tip k in rows 4k..4k+3."""
    if len(shape) == 3:
        shape = (shape[0] * shape[1], shape[2])
    if len(shape) == 1 or shape[1] == 1:
        return f"Eigen::Matrix<{scalar}, {shape[0]}, 1>"
    return f"Eigen::Matrix<{scalar}, {shape[0]}, {shape[1]}, Eigen::RowMajor>"


def _function(prog, spec, sizes, scalar):
    """What the templates show of one function: its inputs (scalar or vector type) and outputs."""
    inputs = [dict(name=a.name, size=a.size, scalar=a.size == 1,
                   type=scalar if a.size == 1 else f"Eigen::Matrix<{scalar}, {a.size}, 1>") for a in prog.inputs]
    outputs = []
    for a, o in zip(prog.outputs, spec.outputs):
        shape = tuple(sizes[d] if isinstance(d, str) else d for d in o.shape)
        outputs.append(dict(name=a.name, size=a.size, type=eigen_type(shape, scalar),
                            doc=f"{a.name} {' x '.join(map(str, shape))}: {o.doc}"))
    params = [f"{a['type']} {a['name']}" if a["scalar"] else f"const Eigen::Ref<const {a['type']}>& {a['name']}"
              for a in inputs]
    c_args = [f"&{a['name']}" if a["scalar"] else f"{a['name']}.data()" for a in inputs]
    c_args += [f"{o['name']}.data()" for o in outputs]
    single = len(outputs) == 1
    return dict(name=prog.name, doc=prog.doc, inputs=inputs, outputs=outputs, status=prog.returns_status,
                params=params, c_args=", ".join(c_args), result=outputs[0]["type"] if single else f"{prog.name}_result",
                call_args=", ".join([a["name"] for a in inputs] + (["out"] if single else
                                                                       [f"out.{o['name']}" for o in outputs])))


def emit_cpp(target, programs, name, precision="double"):
    """``[(file name, text)]`` of the C++ face of ``programs`` (C prefix ``name``)."""
    from soagen._version import __version__

    by_name = {s.name: s for s in F.specs(target)}
    sizes = F.sizes(target)
    scalar = "float" if precision == "float" else "double"
    context = dict(version=__version__, name=name, namespace=namespace(name), guard=f"SOAGEN_{name.upper()}_HPP",
                   scalar=scalar, functions=[_function(p, by_name[p.name], sizes, scalar) for p in programs],
                   nq=target.nq, nv=target.nv)
    env = environment()
    return [(f"{name}.hpp", env.get_template("robot.hpp.j2").render(**context)),
            ("CMakeLists.txt", env.get_template("cmake_lists.txt.j2").render(**context)),
            (f"{name}Config.cmake.in", env.get_template("cmake_config.cmake.j2").render(**context)),
            (f"{name}.pc", env.get_template("pkgconfig.pc.j2").render(**context))]
