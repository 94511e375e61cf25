// Pinocchio timing driver for benchmarks/run.py (benchmark tooling, not part of soagen).
//
//   pinocchio_bench MODEL.txt TIP_FRAMES STATES.bin ROW REPS CHECK OUT.bin
//
// MODEL.txt  a Pinocchio model as a Boost text archive (run.py parses the URDF
//            and reduces it with Pinocchio's Python bindings, then saveToText)
// TIP_FRAMES operational frames, comma separated (m of them: Jacobians, kinematics,
//            Lambda, stacked in that order: J is 6m x nv, Omega and Lambda 6m x 6m)
// STATES.bin float64 little-endian rows of ROW doubles, in Pinocchio's conventions:
//            q (nq), qd, qdd, tau (nv each), then anything (ignored)
// REPS       timed passes over all states; the median pass is reported
// CHECK      number of leading states whose results are written to OUT.bin
//
// stdout: one line per algorithm, "name median_ns_per_call min_ns_per_call size";
// OUT.bin: for each algorithm in that order, CHECK x size doubles, row-major,
// as Pinocchio leaves them (crba / computeMinverse: upper triangle only;
// spatial quantities [linear; angular], velocities in Pinocchio's order); run.py
// converts before comparing.  The Delassus / constraint-Cholesky routes work in
// each tip's LOCAL frame; their Omega / Lambda are rotated to LOCAL_WORLD_ALIGNED
// (R Omega R^T per tip block) when written, outside the timed loop.
//
// Compiled header-only (no PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION), so every
// algorithm is inlined and optimised here with -O3 -march=native.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/cholesky.hpp>
#include <pinocchio/algorithm/constraint-cholesky.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/rnea.hpp>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <time.h>
#include <vector>

namespace
{
  using pinocchio::Data;
  using pinocchio::FrameIndex;
  using pinocchio::Model;
  typedef Eigen::Map<const Eigen::VectorXd> CVec;
  typedef pinocchio::RigidConstraintModel ConstraintModel;
  typedef pinocchio::RigidConstraintData ConstraintData;
  typedef std::vector<ConstraintModel, Eigen::aligned_allocator<ConstraintModel>> ConstraintModels;
  typedef std::vector<ConstraintData, Eigen::aligned_allocator<ConstraintData>> ConstraintDatas;

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

    CVec q(long i) const { return CVec(&states[i * row], model.nq); }
    CVec qd(long i) const { return CVec(&states[i * row + model.nq], model.nv); }
    CVec qdd(long i) const { return CVec(&states[i * row + model.nq + model.nv], model.nv); }
    CVec tau(long i) const { return CVec(&states[i * row + model.nq + 2 * model.nv], model.nv); }
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

  /// Lambda = Omega^-1 for a symmetric positive definite K x K Omega, by Eigen's LLT.
  template<class Mat>
  Mat spd_inverse(const Mat & omega)
  {
    Mat lambda = Mat::Identity(omega.rows(), omega.cols());
    omega.llt().solveInPlace(lambda);
    return lambda;
  }

  /// A 6m x 6m matrix of the constraint (LOCAL) frames in LOCAL_WORLD_ALIGNED axes: B A B^T,
  /// B = blockdiag(R_1, R_1, ..., R_m, R_m) with R_k the rotation of tip k's frame.
  template<class Mat>
  Mat local_to_world_aligned(const Mat & a, const ConstraintDatas & cds)
  {
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(a.rows(), a.cols());
    for (std::size_t k = 0; k < cds.size(); ++k)
      for (int h = 0; h < 2; ++h)
        B.block<3, 3>(6 * k + 3 * h, 6 * k + 3 * h) = cds[k].oMc1.rotation();
    return B * a * B.transpose();
  }

  /// Every timed algorithm; K = 6 m (a compile-time size for one or two tips).
  template<int K>
  void run_all(const Context & c, const std::vector<FrameIndex> & tips)
  {
    const Model & model = c.model;
    Data & data = c.data;
    const int m = int(tips.size()), k6 = 6 * m;
    typedef Eigen::Matrix<double, K, Eigen::Dynamic> MatJ;
    typedef Eigen::Matrix<double, K, K> MatK;
    typedef Eigen::Matrix<double, Eigen::Dynamic, K> MatMinvJt;
    const auto LWA = pinocchio::LOCAL_WORLD_ALIGNED;
    MatJ J = MatJ::Zero(k6, model.nv); // computeFrameJacobian wants it zeroed once
    MatMinvJt MinvJt(model.nv, k6);
    MatK omega(k6, k6), lambda(k6, k6);

    // One 6D constraint per tip, at the tip frame, LOCAL (Delassus and constraint-Cholesky routes).
    ConstraintModels cms;
    for (const FrameIndex f : tips)
      cms.push_back(ConstraintModel(
        pinocchio::CONTACT_6D, model, model.frames[f].parentJoint, model.frames[f].placement,
        pinocchio::LOCAL));
    ConstraintDatas cds;
    for (const ConstraintModel & cm : cms)
      cds.push_back(ConstraintData(cm));
    pinocchio::ConstraintCholeskyDecomposition chol(model, data, cms, cds);

    auto frame_jacobians = [&](long i) { // computeFrameJacobian (own kinematics pass) per tip
      for (int k = 0; k < m; ++k)
        pinocchio::computeFrameJacobian(
          model, data, c.q(i), tips[k], LWA, J.template middleRows<6>(6 * k));
    };
    auto get_frame_jacobians = [&] { // from data.oMi, data.J of an earlier pass
      for (int k = 0; k < m; ++k)
        pinocchio::getFrameJacobian(model, data, tips[k], LWA, J.template middleRows<6>(6 * k));
    };
    auto poses = [&] {
      std::vector<double> v;
      for (const FrameIndex f : tips)
      {
        const std::vector<double> p = row_major(data.oMf[f].toHomogeneousMatrix());
        v.insert(v.end(), p.begin(), p.end());
      }
      return v;
    };

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
      "computeMinverse", c,
      [&](long i) { return pinocchio::computeMinverse(model, data, c.q(i))(0, 0); },
      [&] { return row_major(data.Minv); });
    bench(
      "computeGeneralizedGravity", c,
      [&](long i) { return pinocchio::computeGeneralizedGravity(model, data, c.q(i))[0]; },
      [&] { return row_major(data.g); });
    bench(
      "nonLinearEffects", c,
      [&](long i) { return pinocchio::nonLinearEffects(model, data, c.q(i), c.qd(i))[0]; },
      [&] { return row_major(data.nle); });
    bench(
      "computeFrameJacobian", c,
      [&](long i) {
        frame_jacobians(i);
        return J(0, 0);
      },
      [&] { return row_major(J); });
    bench(
      "forwardKinematics+updateFramePlacement", c,
      [&](long i) {
        pinocchio::forwardKinematics(model, data, c.q(i));
        double x = 0.0;
        for (const FrameIndex f : tips)
          x += pinocchio::updateFramePlacement(model, data, f).translation()[0];
        return x;
      },
      poses);

    // Operational space inertia "the usual way": Minv by ABA, J, Omega = J Minv J^T, Lambda = Omega^-1.
    auto omega_minv = [&](long i) {
      pinocchio::computeMinverse(model, data, c.q(i));
      data.Minv.triangularView<Eigen::StrictlyLower>() =
        data.Minv.transpose().triangularView<Eigen::StrictlyLower>();
      frame_jacobians(i);
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
        get_frame_jacobians();
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
        get_frame_jacobians();
        MinvJt = J.transpose();
        pinocchio::cholesky::solve(model, data, MinvJt);
        omega.noalias() = J * MinvJt;
        lambda = spd_inverse(omega);
        return lambda(0, 0);
      },
      [&] { return row_major(lambda); });
    // Pinocchio's O(n) Delassus recursion (computeDelassusMatrix, LOCAL tip frames), alone and + LLT.
    // It fills the diagonal blocks and the blocks above them: the lower part is copied, as for Minv.
    auto delassus = [&](long i) {
      pinocchio::computeDelassusMatrix(model, data, c.q(i), cms, cds, omega, 0.0);
      omega.template triangularView<Eigen::StrictlyLower>() =
        omega.transpose().template triangularView<Eigen::StrictlyLower>();
    };
    bench(
      "computeDelassusMatrix", c,
      [&](long i) {
        delassus(i);
        return omega(0, 0);
      },
      [&] { return row_major(local_to_world_aligned(omega, cds)); });
    bench(
      "computeDelassusMatrix + LLT inverse", c,
      [&](long i) {
        delassus(i);
        lambda = spd_inverse(omega);
        return lambda(0, 0);
      },
      [&] { return row_major(local_to_world_aligned(lambda, cds)); });
    // Constraint Cholesky of the KKT matrix (as in Pinocchio's constraintDynamics): crba (WORLD),
    // constraint kinematics, sparse factorization, Lambda from its constraint block.
    bench(
      "crba + ConstraintCholeskyDecomposition", c,
      [&](long i) {
        pinocchio::crba(model, data, c.q(i), pinocchio::Convention::WORLD);
        pinocchio::calc(model, data, cms, cds);
        chol.compute(model, data, cms, cds, 0.0);
        chol.getOperationalSpaceInertiaMatrix(lambda);
        return lambda(0, 0);
      },
      [&] { return row_major(local_to_world_aligned(lambda, cds)); });
  }
} // namespace

int main(int argc, char ** argv)
{
  if (argc != 8)
  {
    std::fprintf(stderr, "usage: %s MODEL.txt TIP_FRAMES STATES.bin ROW REPS CHECK OUT.bin\n", argv[0]);
    return 2;
  }
  Model model;
  model.loadFromText(argv[1]);
  std::vector<FrameIndex> tips;
  std::stringstream names(argv[2]);
  for (std::string name; std::getline(names, name, ',');)
  {
    if (!model.existFrame(name))
    {
      std::fprintf(stderr, "no frame named %s in the model\n", name.c_str());
      return 2;
    }
    tips.push_back(model.getFrameId(name));
  }
  if (tips.empty())
  {
    std::fprintf(stderr, "no tip frame given\n");
    return 2;
  }
  Data data(model);
  const std::vector<double> states = read_states(argv[3]);
  const long row = std::atol(argv[4]);
  std::FILE * out = std::fopen(argv[7], "wb");
  if (!out || row < model.nq + 3 * model.nv)
  {
    std::fprintf(stderr, "cannot write %s, or ROW < nq + 3 nv\n", argv[7]);
    return 2;
  }
  const Context c{model, data, states, long(states.size()) / row, row, std::atol(argv[5]), std::atol(argv[6]), out};
  if (tips.size() == 1)
    run_all<6>(c, tips);
  else if (tips.size() == 2)
    run_all<12>(c, tips);
  else
    run_all<Eigen::Dynamic>(c, tips);
  std::fclose(out);
  return 0;
}
