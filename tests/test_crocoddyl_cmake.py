"""soagen.crocoddyl from C++: a tiny CMake project adds the folder soagen.crocoddyl.write wrote, links its target
``<name>::crocoddyl`` and compiles with ``-Wall -Wextra -Werror``; its program builds the Pinocchio model of a seeded
random floating tree with two point feet (joint by joint), their contacts with Baumgarte gains, and the contact
model's calc and calcDiff equal Crocoddyl's own DifferentialActionModelContactFwdDynamics to 1e-10 relative (xout,
Fx, Fu, cost, Lx, Lu, Lxx, Luu, the forces and df_dx). One CMake build, -O0.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import soagen.crocoddyl as sc
from soagen.model.robot import FLOATING, PRISMATIC, REVOLUTE
from tests.support.robots import random_robot, with_point_tips

CHECK = """#include <cmath>
#include <iostream>
#include <memory>
#include <crocoddyl/core/costs/cost-sum.hpp>
#include <crocoddyl/core/costs/residual.hpp>
#include <crocoddyl/multibody/actuations/floating-base.hpp>
#include "tree_crocoddyl_contact.hpp"

static double worst = 0.0;

/* the largest difference relative to Crocoddyl's largest entry; an all-zero output fails */
static void compare(const char* what, const Eigen::MatrixXd& ours, const Eigen::MatrixXd& theirs)
{
    const double scale = theirs.cwiseAbs().maxCoeff();
    const double rel = scale > 0 ? (ours - theirs).cwiseAbs().maxCoeff() / scale : 1.0;
    std::cout << what << " " << rel << " of " << scale << "\\n";
    worst = rel > worst ? rel : worst;
}

static Eigen::Matrix3d rotation(double a, double b, double c, double d, double e, double f, double g, double h,
                                double i)
{
    return (Eigen::Matrix3d() << a, b, c, d, e, f, g, h, i).finished();
}

int main()
{
    pinocchio::Model model;
    std::vector<pinocchio::JointIndex> ids;
@MODEL@
    auto state = std::make_shared<crocoddyl::StateMultibody>(std::make_shared<pinocchio::Model>(model));
    auto actuation = std::make_shared<crocoddyl::ActuationModelFloatingBase>(state);
    const std::size_t nu = actuation->get_nu();
    auto contacts = std::make_shared<crocoddyl::ContactModelMultiple>(state, nu);
    for (std::size_t k = 0; k < frames.size(); ++k)
        contacts->addContact("foot" + std::to_string(k), std::make_shared<crocoddyl::ContactModel3D>(
            state, frames[k], Eigen::Vector3d(0.1, -0.2, 0.05 * k), k % 2 ? pinocchio::LOCAL
                                                                           : pinocchio::LOCAL_WORLD_ALIGNED,
            nu, k % 2 ? Eigen::Vector2d(0., 40.) : Eigen::Vector2d(20., 5.)));     // Baumgarte gains
    auto costs = std::make_shared<crocoddyl::CostModelSum>(state, nu);
    costs->addCost("x", std::make_shared<crocoddyl::CostModelResidual>(
        state, std::make_shared<crocoddyl::ResidualModelState>(state, nu)), 1.0);
    costs->addCost("u", std::make_shared<crocoddyl::CostModelResidual>(
        state, std::make_shared<crocoddyl::ResidualModelControl>(state, nu)), 1e-2);
    costs->addCost("force", std::make_shared<crocoddyl::CostModelResidual>(
        state, std::make_shared<crocoddyl::ResidualModelContactForce>(state, frames[1], pinocchio::Force::Zero(), 3,
                                                                      nu)), 1e-1);
    auto ours = std::make_shared<tree::DifferentialActionModelContactFwdDynamics>(state, actuation, contacts, costs,
                                                                                  0., true);
    auto theirs = std::make_shared<crocoddyl::DifferentialActionModelContactFwdDynamics>(state, actuation, contacts,
                                                                                        costs, 0., true);
    Eigen::VectorXd dq(model.nv), x(model.nq + model.nv), u(nu);
    for (int i = 0; i < model.nv; ++i) {
        dq[i] = 0.6 * std::sin(1.1 * i + 0.3);
        x[model.nq + i] = 0.4 * std::cos(0.7 * i);
    }
    for (std::size_t i = 0; i < nu; ++i)
        u[i] = std::sin(1.7 * i + 0.5);
    x.head(model.nq) = pinocchio::integrate(model, pinocchio::neutral(model), dq);
    auto d_ours = ours->createData();
    auto d_theirs = theirs->createData();
    ours->calc(d_ours, x, u);
    ours->calcDiff(d_ours, x, u);
    theirs->calc(d_theirs, x, u);
    theirs->calcDiff(d_theirs, x, u);
    typedef crocoddyl::DifferentialActionDataContactFwdDynamics Data;
    const Data& a = *std::static_pointer_cast<Data>(d_ours);
    const Data& b = *std::static_pointer_cast<Data>(d_theirs);
    compare("xout", a.xout, b.xout);
    compare("Fx", a.Fx, b.Fx);
    compare("Fu", a.Fu, b.Fu);
    compare("cost", Eigen::VectorXd::Constant(1, a.cost), Eigen::VectorXd::Constant(1, b.cost));
    compare("Lx", a.Lx, b.Lx);
    compare("Lu", a.Lu, b.Lu);
    compare("Lxx", a.Lxx, b.Lxx);
    compare("Luu", a.Luu, b.Luu);
    compare("lambda_c", a.pinocchio.lambda_c, b.pinocchio.lambda_c);
    compare("df_dx", a.df_dx, b.df_dx);
    std::cout << "worst " << worst << "\\n";
    return worst <= 1e-10 ? 0 : 1;
}
"""


def _numbers(values):
    return ", ".join(repr(float(v)) for v in np.ravel(values))


def _model_lines(robot):
    """C++ building ``robot``'s Pinocchio model joint by joint (as tests/support/oracle.py does in Python), its
    gravity and ``frames``, one OP_FRAME per tip."""
    lines = []
    for k, b in enumerate(robot.bodies):
        joint = {FLOATING: "pinocchio::JointModelFreeFlyer()",
                 REVOLUTE: f"pinocchio::JointModelRevoluteUnaligned({_numbers(b.axis)})",
                 PRISMATIC: f"pinocchio::JointModelPrismaticUnaligned({_numbers(b.axis)})"}[b.joint_type]
        parent = "0" if b.parent < 0 else f"ids[{b.parent}]"
        lines += [(f"    ids.push_back(model.addJoint({parent}, {joint}, pinocchio::SE3(rotation("
                   f"{_numbers(b.rotation)}), Eigen::Vector3d({_numbers(b.translation)})), \"j{k}\"));"),
                  (f"    model.appendBodyToJoint(ids[{k}], pinocchio::Inertia({float(b.mass)!r}, Eigen::Vector3d("
                   f"{_numbers(b.com)}), rotation({_numbers(b.inertia)})), pinocchio::SE3::Identity());")]
    lines.append(f"    model.gravity.linear(Eigen::Vector3d({_numbers(robot.gravity)}));")
    lines.append("    std::vector<pinocchio::FrameIndex> frames;")
    lines += [f"    frames.push_back(model.addFrame(pinocchio::Frame(\"tip{i}\", ids[{t.body}], pinocchio::SE3(rotation("
              f"{_numbers(t.rotation)}), Eigen::Vector3d({_numbers(t.offset)})), pinocchio::OP_FRAME)));"
              for i, t in enumerate(robot.tips)]
    return "\n".join(lines)


def _run(*cmd):
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


def test_the_contact_class_through_cmake_equals_crocoddyls(tmp_path):
    robot = with_point_tips(random_robot(59, 3, tree=True, tips=2, floating_base=True))
    assert robot.bodies[0].joint_type == FLOATING and {b.joint_type for b in robot.bodies[1:]} <= {REVOLUTE, PRISMATIC}
    sc.write(robot, tmp_path / "tree", name="tree", kind="contact", optimize="O0")
    (tmp_path / "check.cpp").write_text(CHECK.replace("@MODEL@", _model_lines(robot)))
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.16)\nproject(consumer LANGUAGES C CXX)\n"
        "add_subdirectory(tree)\nadd_executable(check check.cpp)\n"
        "target_compile_options(check PRIVATE -Wall -Wextra -Werror)\n"
        "target_link_libraries(check PRIVATE tree::crocoddyl)\n")
    cmake = shutil.which("cmake", path=str(Path(sys.executable).parent)) or shutil.which("cmake")
    _run(cmake, "-S", tmp_path, "-B", tmp_path / "build", f"-DSOAGEN_CROCODDYL_PREFIX={sc.prefix()}",
         "-DCMAKE_CXX_FLAGS=-O0", "-DCMAKE_C_FLAGS=-O0")
    _run(cmake, "--build", tmp_path / "build")
    out = _run(tmp_path / "build" / "check")
    rows = dict(line.split(" ", 1) for line in out.splitlines())
    assert {"xout", "Fx", "Fu", "cost", "Lx", "Lu", "Lxx", "Luu", "lambda_c", "df_dx"} < set(rows)
    assert float(rows["worst"]) <= 1e-10
