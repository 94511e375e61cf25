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
    functions: tuple = None         # exactly these soagen functions (None: the defaults, variants, derivatives)
    tips_at_rest: bool = False      # states with J qd = 0 (soagen_side.tips_at_rest)
    reference_states: int = None    # check the first states against soagen.reference, the others against
                                    # Pinocchio (itself checked on those first states); None: all vs reference
    casadi: bool = True             # casadi_kin_dyn has a counterpart (1-dof joints, rnea/crba/aba)
    left_out: tuple = ()            # lines for the report: functions not benchmarked here, and why
    states: int = 1000              # random states when --n is not given

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


CONTACT_FUNCTIONS = ("contact_dynamics", "centroidal_momentum_matrix", "contact_dynamics_derivatives",
                     "centroidal_dynamics_derivatives")

SPECS = {
    "panda": Spec("panda", ["panda_hand"], {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": Spec("ur5", ["tool0"]),
    # the humanoid of the multi-dof issue: free-flyer root (nq = 39, nv = 38), both hands (Λ is 12 x 12);
    # the default functions and Λ's two algorithms (every variant would multiply the ~1 min generation);
    # no derivatives here: this run takes ~19 min without them; they have their own section (talos_derivatives)
    "talos": Spec("talos", ["gripper_left_base_link", "gripper_right_base_link"],
                  erd="talos_data/robots/talos_reduced.urdf", floating_base=True, variants=("os_inertia",),
                  derivatives=False),
    # the contact and centroidal rows (issue item 7), each robot with its feet as tips and only these
    # functions, timed against Pinocchio's constraintDynamics (CONTACT_3D point feet, CONTACT_6D flat
    # feet), its derivatives and ccrba / computeCentroidalMap; the references of the contact derivatives
    # take ~0.5 s (solo12) and ~2 s (TALOS) a state in numpy, hence reference_states
    "solo12": Spec("solo12", [sg.point_tip(f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")],
                   erd="solo_description/robots/solo12.urdf", floating_base=True,
                   functions=CONTACT_FUNCTIONS, reference_states=100, casadi=False),
    # two flat feet: Pinocchio's CONTACT_6D in LOCAL_WORLD_ALIGNED holds the feet's spatial acceleration
    # at zero, soagen's J qdd + Jdot qd = 0 their classical one; the two agree when the feet are at rest,
    # as they are in a rigid contact: the states' qd are projected onto J qd = 0
    # the TALOS's derivatives on their own (the "talos" section leaves them out to keep its run short):
    # Pinocchio's computeRNEADerivatives / computeABADerivatives; the numpy reference's derivatives take
    # about a second a state at nv = 38, hence reference_states
    "talos_derivatives": Spec("talos_derivatives", ["gripper_left_base_link", "gripper_right_base_link"],
                              erd="talos_data/robots/talos_reduced.urdf", floating_base=True,
                              functions=("inverse_dynamics_derivatives", "forward_dynamics_derivatives"),
                              reference_states=20, casadi=False),
    # the second derivatives (issue #57 item 5), each beside the first derivative it is compared with:
    # inverse_dynamics_second_derivatives against Pinocchio's C++ ComputeRNEASecondOrderDerivatives (checked
    # against soagen.reference on every state), the contracted Hessians as multiples of one first-derivative call
    "panda_second": Spec("panda", ["panda_hand"], {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0},
                         functions=("inverse_dynamics_derivatives", "inverse_dynamics_second_derivatives",
                                    "inverse_dynamics_hessian", "forward_dynamics_derivatives",
                                    "forward_dynamics_hessian"), casadi=False),
    # (solo12: the contact Hessian has no Pinocchio counterpart, so every state is checked against its numpy
    # reference, ~1.7 s a state: 100 states)
    "solo12_second": Spec("solo12", [sg.point_tip(f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")],
                          erd="solo_description/robots/solo12.urdf", floating_base=True,
                          functions=("inverse_dynamics_derivatives", "inverse_dynamics_second_derivatives",
                                     "contact_dynamics_derivatives", "contact_dynamics_hessian"),
                          reference_states=20, casadi=False, states=100),
    # the humanoid's ∂²ID (issue #57 item 5, "TALOS reported"): its tensors are 4 x 38³ entries (1.75 MB a
    # state, every state's outputs kept for the checks, hence 100 states), the program ~250k operations
    # (records in ~1 min, compiles in ~10); the numpy reference of the tensors takes seconds a state at
    # nv = 38, hence reference_states
    "talos_second": Spec("talos_second", ["gripper_left_base_link", "gripper_right_base_link"],
                         erd="talos_data/robots/talos_reduced.urdf", floating_base=True,
                         functions=("inverse_dynamics_derivatives", "inverse_dynamics_second_derivatives"),
                         reference_states=3, casadi=False, states=100),
    "talos_feet": Spec("talos_feet", ["left_sole_link", "right_sole_link"],
                       erd="talos_data/robots/talos_reduced.urdf", floating_base=True,
                       functions=CONTACT_FUNCTIONS, tips_at_rest=True, reference_states=100, casadi=False),
}
