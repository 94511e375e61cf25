"""The packages the examples use beyond soagen, checked before an example starts any work,
and the ``--plot [PATH]`` option of the plotting examples."""
from __future__ import annotations

import argparse
import importlib.util
import sys

#: the command that installs what every example needs (from the soagen checkout)
INSTALL = "pip install '.[examples]'"


def _has_matplotlib():
    return importlib.util.find_spec("matplotlib") is not None


def _has_robot_data():
    from soagen.model import robots

    return robots.erd_root() is not None


def _has_casadi():
    try:
        import casadi  # noqa: F401
    except ImportError:
        return False
    return True


def _has_crocoddyl():
    try:
        import crocoddyl  # noqa: F401
    except ImportError:
        return False
    return True


#: package -> whether it is installed
CHECKS = {"matplotlib": _has_matplotlib, "example-robot-data": _has_robot_data, "casadi": _has_casadi,
          "crocoddyl": _has_crocoddyl}
#: the packages another extra than ``examples`` installs, and its command (the releases soagen.crocoddyl is built for)
OWN_EXTRA = {"crocoddyl": "pip install '.[crocoddyl]'"}


def install(package):
    """The command that installs ``package`` (a key of :data:`CHECKS`) from the soagen checkout."""
    return OWN_EXTRA.get(package, INSTALL)


def missing(packages):
    """The packages of ``packages`` (keys of :data:`CHECKS`) that are not installed.

    Parameters
    ----------
    packages : iterable of str
        Package names, as pip spells them.

    Returns
    -------
    list of str
    """
    return [p for p in packages if not CHECKS[p]()]


def require(who, packages):
    """Exit with one line on stderr naming the install command where a package is missing.

    Parameters
    ----------
    who : str
        What needs them, for the message (``"quadruped_balance.py"``, ``"--plot"``).
    packages : iterable of str
        Package names, keys of :data:`CHECKS`.
    """
    absent = missing(packages)
    if absent:
        commands = " and ".join(dict.fromkeys(install(p) for p in absent))
        sys.exit(f"{who} needs {' and '.join(absent)}; install it with {commands} in the soagen checkout")


def add_plot_option(parser, name):
    """Add ``--plot [PATH]`` to ``parser``: draw the figure into PATH, ``name`` in the current
    directory when no path is given.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    name : str
        The default file name.
    """
    parser.add_argument("--plot", nargs="?", const=name, default=None, metavar="PATH",
                        help=f"draw the figure into PATH (default {name} in the current directory; needs matplotlib)")


def needed(args, always=()):
    """The packages a run with ``args`` needs: ``always``, and matplotlib where it plots.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed options, with a ``plot`` attribute.
    always : tuple of str
        What the example needs on every run.

    Returns
    -------
    list of str
    """
    return [*always, *(["matplotlib"] if args.plot else [])]


def plot_arguments(argv, script, doc, always=(), options=None):
    """The command line of a plotting example, parsed, and what the run needs checked (:func:`require`).

    Parameters
    ----------
    argv : list of str or None
        The arguments (None: ``sys.argv[1:]``).
    script : str
        The example's file name (``"osc_panda.py"``); ``--plot``'s default is its stem with ``.png``.
    doc : str
        The example's docstring: its first line is the description.
    always : tuple of str
        What the example needs on every run (:func:`needed`).
    options : callable, optional
        ``options(parser)`` adds the example's own options.

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if options is not None:
        options(parser)
    add_plot_option(parser, script.replace(".py", ".png"))
    args = parser.parse_args(argv)
    require(script + (" --plot" if args.plot else ""), needed(args, always))
    return args


def draw(args, plot, *data):
    """``plot(*data, args.plot)`` and a line saying where, when ``--plot`` was given."""
    if args.plot:
        plot(*data, args.plot)
        print(f"wrote {args.plot}")
