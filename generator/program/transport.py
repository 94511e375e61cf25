"""A finished program sent from a recording worker to the build's process.

Pickled as sympy pickles them, every sum, product and power is rebuilt on arrival by
calling its class on its arguments, which evaluates it again (flattening, sorting, asking
each float coefficient for its sign): on the Panda's default functions that took 0.65 s of
the build's main process, the one process every worker's result goes through.  Here the
arguments, already canonical, are stored and the expression is rebuilt without evaluation
(``_from_args``, ``evaluate=False``): the same objects, equal and with the same hashes.
"""
from __future__ import annotations

import io
import pickle

import sympy as sp
from sympy.core.operations import AssocOp


def _rebuild(cls, args):
    """``cls`` on canonical ``args`` without evaluating."""
    if issubclass(cls, AssocOp):
        return cls._from_args(args)
    return cls(*args, evaluate=False)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, sp.Basic) and (obj.is_Add or obj.is_Mul or obj.is_Pow or obj.is_Function):
            return _rebuild, (type(obj), obj.args)
        return NotImplemented


def dumps(obj):
    """``obj`` (a Program, or anything holding sympy expressions) as bytes for :func:`pickle.loads`."""
    out = io.BytesIO()
    _Pickler(out, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out.getvalue()
