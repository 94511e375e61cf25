// Pinocchio timing driver for benchmarks/run.py (benchmark tooling, not part of soagen).
//
//   pinocchio_bench MODEL.txt TIP_FRAME STATES.bin ROW REPS CHECK OUT.bin
//
// MODEL.txt  a Pinocchio model as a Boost text archive (run.py parses the URDF
//            and reduces it with Pinocchio's Python bindings, then saveToText)
// TIP_FRAME  name of the operational frame (Jacobian, kinematics, Lambda)
// STATES.bin float64 little-endian rows of ROW doubles: q, qd, qdd, tau, ...
// REPS       timed passes over all states; the median pass is reported
// CHECK      number of leading states whose results are written to OUT.bin
//
// stdout: one line per algorithm, "name median_ns_per_call min_ns_per_call size";
// OUT.bin: for each algorithm in that order, CHECK x size doubles, row-major,
// exactly as Pinocchio leaves them (crba / computeMinverse: upper triangle only;
// spatial quantities [linear; angular]); run.py reorders before comparing.
//
// Compiled header-only (no PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION), so every
// algorithm is inlined and optimised here with -O3 -march=native.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/cholesky.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <time.h>
#include <vector>

namespace
{
  using pinocchio::Data;
  using pinocchio::Model;
  typedef Eigen::Map<const Eigen::VectorXd> CVec;
  typedef Eigen::Matrix<double, 6, 6> Mat6;

  volatile double sink; // keeps every result observable

  double now_ns()
  {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return 1e9 * t.tv_sec + t.tv_nsec;
  }

  /// Everything a timing loop needs: the model, its data, the states and the output file.
  struct Context
  {
    const Model & model;
    Data & data;
    const std::vector<double> & states;
    long rows, row, reps, check;
    std::FILE * out;

    CVec q(long i) const { return CVec(&states[i * row], model.nv); }
    CVec qd(long i) const { return CVec(&states[i * row + model.nv], model.nv); }
    CVec qdd(long i) const { return CVec(&states[i * row + 2 * model.nv], model.nv); }
    CVec tau(long i) const { return CVec(&states[i * row + 3 * model.nv], model.nv); }
  };

  /// Time `run(i)` (which returns one double of its result) over all states,
  /// REPS times; print the median and minimum ns per call; then write the result
  /// `result()` of `run(i)` for the first CHECK states.
  template<class Run, class Result>
  void bench(const char * name, const Context & c, Run run, Result result)
  {
    double acc = 0.0;
    for (long i = 0; i < c.rows; ++i) // warm-up pass
      acc += run(i);
    std::vector<double> per_call;
    for (long r = 0; r < c.reps; ++r)
    {
      const double t0 = now_ns();
      for (long i = 0; i < c.rows; ++i)
        acc += run(i);
      per_call.push_back((now_ns() - t0) / c.rows);
    }
    sink = acc;
    std::sort(per_call.begin(), per_call.end());
    std::vector<double> values;
    for (long i = 0; i < c.check; ++i)
    {
      run(i);
      const std::vector<double> v = result();
      values.insert(values.end(), v.begin(), v.end());
    }
    const long size = c.check ? long(values.size() / c.check) : 0;
    std::fwrite(values.data(), sizeof(double), values.size(), c.out);
    std::printf("%s %.3f %.3f %ld\n", name, per_call[per_call.size() / 2], per_call[0], size);
  }

  template<class M>
  std::vector<double> row_major(const M & m)
  {
    std::vector<double> v;
    for (Eigen::Index i = 0; i < m.rows(); ++i)
      for (Eigen::Index j = 0; j < m.cols(); ++j)
        v.push_back(m(i, j));
    return v;
  }

  std::vector<double> read_states(const char * path)
  {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f)
      throw std::runtime_error(std::string("cannot read ") + path);
    std::vector<double> s(f.tellg() / sizeof(double));
    f.seekg(0);
    f.read(reinterpret_cast<char *>(s.data()), s.size() * sizeof(double));
    return s;
  }

  /// Lambda = Omega^-1 for a symmetric positive definite 6x6 Omega, by Eigen's LLT.
  Mat6 spd_inverse(const Mat6 & omega)
  {
    Mat6 lambda = Mat6::Identity();
    omega.llt().solveInPlace(lambda);
    return lambda;
  }
} // namespace

int main(int argc, char ** argv)
{
  if (argc != 8)
  {
    std::fprintf(stderr, "usage: %s MODEL.txt TIP_FRAME STATES.bin ROW REPS CHECK OUT.bin\n", argv[0]);
    return 2;
  }
  Model model;
  model.loadFromText(argv[1]);
  if (model.nq != model.nv)
  {
    std::fprintf(stderr, "model has nq=%d != nv=%d (continuous joints?)\n", int(model.nq), int(model.nv));
    return 2;
  }
  if (!model.existFrame(argv[2]))
  {
    std::fprintf(stderr, "no frame named %s in the model\n", argv[2]);
    return 2;
  }
  const pinocchio::FrameIndex tip = model.getFrameId(argv[2]);
  Data data(model);
  const std::vector<double> states = read_states(argv[3]);
  const long row = std::atol(argv[4]);
  std::FILE * out = std::fopen(argv[7], "wb");
  if (!out || row < 4 * model.nv)
  {
    std::fprintf(stderr, "cannot write %s, or ROW < 4 nv\n", argv[7]);
    return 2;
  }
  const Context c{model, data, states, long(states.size()) / row, row, std::atol(argv[5]), std::atol(argv[6]), out};
  const auto LWA = pinocchio::LOCAL_WORLD_ALIGNED;
  Data::Matrix6x J = Data::Matrix6x::Zero(6, model.nv); // computeFrameJacobian wants it zeroed once
  Eigen::MatrixXd MinvJt(model.nv, 6);
  Mat6 omega, lambda;

  bench(
    "rnea", c, [&](long i) { return pinocchio::rnea(model, data, c.q(i), c.qd(i), c.qdd(i))[0]; },
    [&] { return row_major(data.tau); });
  bench(
    "crba", c, [&](long i) { return pinocchio::crba(model, data, c.q(i))(0, 0); },
    [&] { return row_major(data.M); });
  bench(
    "aba", c, [&](long i) { return pinocchio::aba(model, data, c.q(i), c.qd(i), c.tau(i))[0]; },
    [&] { return row_major(data.ddq); });
  bench(
    "computeMinverse", c, [&](long i) { return pinocchio::computeMinverse(model, data, c.q(i))(0, 0); },
    [&] { return row_major(data.Minv); });
  bench(
    "computeGeneralizedGravity", c,
    [&](long i) { return pinocchio::computeGeneralizedGravity(model, data, c.q(i))[0]; },
    [&] { return row_major(data.g); });
  bench(
    "nonLinearEffects", c, [&](long i) { return pinocchio::nonLinearEffects(model, data, c.q(i), c.qd(i))[0]; },
    [&] { return row_major(data.nle); });
  bench(
    "computeFrameJacobian", c,
    [&](long i) {
      pinocchio::computeFrameJacobian(model, data, c.q(i), tip, LWA, J);
      return J(0, 0);
    },
    [&] { return row_major(J); });
  bench(
    "forwardKinematics+updateFramePlacement", c,
    [&](long i) {
      pinocchio::forwardKinematics(model, data, c.q(i));
      return pinocchio::updateFramePlacement(model, data, tip).translation()[0];
    },
    [&] { return row_major(data.oMf[tip].toHomogeneousMatrix()); });

  // Operational space inertia "the usual way": Minv by ABA, J, Omega = J Minv J^T, Lambda = Omega^-1.
  auto omega_minv = [&](long i) {
    pinocchio::computeMinverse(model, data, c.q(i));
    data.Minv.triangularView<Eigen::StrictlyLower>() =
      data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
    pinocchio::computeFrameJacobian(model, data, c.q(i), tip, LWA, J);
    MinvJt.noalias() = data.Minv * J.transpose();
    omega.noalias() = J * MinvJt;
  };
  bench(
    "J*Minv*J^T", c,
    [&](long i) {
      omega_minv(i);
      return omega(0, 0);
    },
    [&] { return row_major(omega); });
  bench(
    "(J*Minv*J^T)^-1", c,
    [&](long i) {
      omega_minv(i);
      lambda = spd_inverse(omega);
      return lambda(0, 0);
    },
    [&] { return row_major(lambda); });
  // Cheaper variant: reuse the kinematics computeMinverse already did (data.oMi, data.J).
  bench(
    "(J*Minv*J^T)^-1 reusing kinematics", c,
    [&](long i) {
      pinocchio::computeMinverse(model, data, c.q(i));
      data.Minv.triangularView<Eigen::StrictlyLower>() =
        data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
      pinocchio::getFrameJacobian(model, data, tip, LWA, J);
      MinvJt.noalias() = data.Minv * J.transpose();
      omega.noalias() = J * MinvJt;
      lambda = spd_inverse(omega);
      return lambda(0, 0);
    },
    [&] { return row_major(lambda); });
  // Variant: crba (WORLD convention also fills data.J) + sparse Cholesky of M, Minv J^T by solves.
  bench(
    "(J*M^-1*J^T)^-1 by crba+cholesky", c,
    [&](long i) {
      pinocchio::crba(model, data, c.q(i), pinocchio::Convention::WORLD);
      pinocchio::cholesky::decompose(model, data);
      pinocchio::getFrameJacobian(model, data, tip, LWA, J);
      MinvJt = J.transpose();
      pinocchio::cholesky::solve(model, data, MinvJt);
      omega.noalias() = J * MinvJt;
      lambda = spd_inverse(omega);
      return lambda(0, 0);
    },
    [&] { return row_major(lambda); });
  std::fclose(out);
  return 0;
}
