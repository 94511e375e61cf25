"""What the model stage raises and warns."""


class RobotError(ValueError):
    """A robot description soagen cannot turn into dynamics, with the reason."""


class ModelWarning(UserWarning):
    """A robot description whose dynamics is defined but that is not physical
    (an inertia violating the triangle inequality, ...) or whose mass matrix is
    singular; ``strict=True`` (``--strict``) makes each one a :class:`RobotError`."""


class SingularError(ArithmeticError):
    """Ω(0) is not positive definite enough to invert (singular configuration)."""
