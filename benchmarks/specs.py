"""The benchmarked robots: a bundled URDF or one of example-robot-data, locks and tips."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import soagen_side as sg


def erd_robots_dir():
    """The ``robots`` folder of the installed example-robot-data (:func:`soagen.robots.erd_root`)."""
    from soagen.model import robots

    root = robots.erd_root()
    if root is None:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)")
    return root



@dataclass
class Spec:
    """A benchmarked robot: a bundled URDF (checked against ``soagen.robots.example``) or
    one of example-robot-data (``erd``: path under its robots folder), locked joints, tips."""

    name: str
    tips: list
    lock: dict = field(default_factory=dict)
    erd: str = None                 # example-robot-data URDF, relative to its robots folder
    floating_base: bool = False     # a free-flyer root joint (soagen's root_joint)
    variants: tuple = None          # families whose algorithm variants are benchmarked too (None: all)
    derivatives: bool = True        # time the dynamics' derivatives too (soagen_side.DERIVATIVES)

    @property
    def urdf(self):
        return erd_robots_dir() / self.erd if self.erd else sg.bundled_urdf(self.name)

    def robot(self):
        """The soagen Robot; a bundled one is checked to be the example (same numbers, same code)."""
        if self.erd and not Path(self.urdf).is_file():
            raise SystemExit(f"{self.name}: no {self.urdf}")
        robot = sg.load_robot(self.urdf, self.tips, self.lock, self.floating_base)
        if not self.erd and not sg.is_bundled_example(self.name, robot):
            raise SystemExit(f"{self.name}: locks/tip here differ from soagen.robots.example({self.name!r})")
        return robot


SPECS = {
    "panda": Spec("panda", ["panda_hand"], {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": Spec("ur5", ["tool0"]),
    # the humanoid of the multi-dof issue: free-flyer root (nq = 39, nv = 38), both hands (Λ is 12 x 12);
    # the default functions and Λ's two algorithms (every variant would multiply the ~1 min generation);
    # no derivatives yet: the run takes ~19 min without them, and they would be generated twice (both
    # forms) and compiled at -O3 on top (derivatives=True times them; Pinocchio's are converted)
    "talos": Spec("talos", ["gripper_left_base_link", "gripper_right_base_link"],
                  erd="talos_data/robots/talos_reduced.urdf", floating_base=True, variants=("os_inertia",),
                  derivatives=False),
}
