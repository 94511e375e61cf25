// Pinocchio backend of the interleaved timing driver (benchmark tooling, not part of soagen).
//
// Linked into the driver of benchmarks/backends.py with bench_driver.c; the
// interface is bench.h.  init's arg is "MODEL.txt|TIP,TIP|DIM,DIM|ENTRY,ENTRY":
//
// MODEL.txt  a Pinocchio model as a Boost text archive (backends.py parses the URDF
//            and reduces it with Pinocchio's Python bindings, then saveToText)
// TIP,TIP    operational frames (m of them: Jacobians, kinematics, Lambda, stacked in
//            that order: J is 6m x nv, Omega and Lambda 6m x 6m)
// DIM,DIM    optional: the contact of each tip for the constrained-dynamics entries, 3
//            (CONTACT_3D, a point foot) or 6 (CONTACT_6D, a flat foot); default 6
// ENTRY,...  optional: register (and time) only these entries; default all
//
// States are rows in Pinocchio's conventions: q (nq), qd, qdd, tau (nv each), then
// anything (ignored).  Each entry's `calls` says which Pinocchio calls one timed call
// makes.  Outputs are as Pinocchio leaves them, row-major (crba, computeMinverse and
// computeABADerivatives' M^-1: upper triangle only; spatial quantities [linear; angular],
// velocities in Pinocchio's order);
// backends.py converts before comparing.  The Delassus / constraint-Cholesky routes
// work in each tip's LOCAL frame; their Omega / Lambda are rotated to
// LOCAL_WORLD_ALIGNED (R Omega R^T per tip block) when written, outside the timed loop.
//
// Compiled header-only (no PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION), so every
// algorithm is inlined and optimised here with -O3 -march=native -DNDEBUG.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/aba-derivatives.hpp>
#include <pinocchio/algorithm/centroidal.hpp>
#include <pinocchio/algorithm/centroidal-derivatives.hpp>
#include <pinocchio/algorithm/cholesky.hpp>
#include <pinocchio/algorithm/constrained-dynamics.hpp>
#include <pinocchio/algorithm/constrained-dynamics-derivatives.hpp>
#include <pinocchio/algorithm/constraint-cholesky.hpp>
#include <pinocchio/algorithm/crba.hpp>
#include <pinocchio/algorithm/delassus.hpp>
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/rnea-derivatives.hpp>
#include <pinocchio/algorithm/rnea-second-order-derivatives.hpp>

#include <Eigen/Cholesky>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "bench.h"

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

  /// The model, its data and the states every entry reads.
  struct Context
  {
    Model model;
    std::unique_ptr<Data> data;
    const double * states = nullptr;
    long rows = 0, row = 0;

    CVec q(long i) const { return CVec(states + i * row, model.nq); }
    CVec qd(long i) const { return CVec(states + i * row + model.nq, model.nv); }
    CVec qdd(long i) const { return CVec(states + i * row + model.nq + model.nv, model.nv); }
    CVec tau(long i) const { return CVec(states + i * row + model.nq + 2 * model.nv, model.nv); }
  };

  /// One timed function: `pass` runs it on every state and returns ns per call;
  /// `outputs(count)` its results on the first states, row-major.
  struct Entry
  {
    std::string name, calls;
    int size;
    std::function<double()> pass;
    std::function<std::vector<double>(long)> outputs;
  };

  Context ctx;
  std::vector<Entry> entries;
  std::set<std::string> wanted; // the entries to register (empty: all)

  bool wants(const char * name) { return wanted.empty() || wanted.count(name); }

  /// Register `run(i)` (which returns one double of its result) and `result()` (the
  /// result of the last run, row-major); the timing loop is instantiated per entry and,
  /// like the C backends', starts with one untimed call.
  template<class Run, class Result>
  void add(const char * name, const char * calls, Run run, Result result)
  {
    if (!wants(name))
      return;
    Entry e;
    e.name = name;
    e.calls = calls;
    e.pass = [run]() { // ns per call of the median chunk (bench.h)
      double acc = run(0); // untimed: brings the code and data back into cache
      std::vector<double> chunks;
      for (long i0 = 0; i0 < ctx.rows; i0 += BENCH_CHUNK)
      {
        const long i1 = std::min(i0 + BENCH_CHUNK, ctx.rows);
        const double t0 = bench_now_ns();
        for (long i = i0; i < i1; ++i)
          acc += run(i);
        chunks.push_back((bench_now_ns() - t0) / double(i1 - i0));
      }
      sink = acc;
      return bench_median(chunks.data(), long(chunks.size()));
    };
    e.outputs = [run, result](long count) {
      std::vector<double> values;
      for (long i = 0; i < count; ++i)
      {
        run(i);
        const std::vector<double> v = result();
        values.insert(values.end(), v.begin(), v.end());
      }
      return values;
    };
    e.size = int(e.outputs(1).size());
    entries.push_back(e);
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

  /// Work arrays of the operational-space routes; K = 6 m (a compile-time size for one or
  /// two tips).  Lives as long as the process (the entries refer to it).
  template<int K>
  struct Workspace
  {
    typedef Eigen::Matrix<double, K, Eigen::Dynamic> MatJ;
    typedef Eigen::Matrix<double, K, K> MatK;
    typedef Eigen::Matrix<double, Eigen::Dynamic, K> MatMinvJt;
    std::vector<FrameIndex> tips;
    MatJ J;
    MatMinvJt MinvJt;
    MatK omega, lambda;
    ConstraintModels cms;
    ConstraintDatas cds;
    std::unique_ptr<pinocchio::ConstraintCholeskyDecomposition> chol;

    explicit Workspace(const std::vector<FrameIndex> & tips_)
    : tips(tips_)
    , J(MatJ::Zero(6 * tips_.size(), ctx.model.nv)) // computeFrameJacobian wants it zeroed once
    , MinvJt(ctx.model.nv, 6 * tips_.size())
    , omega(6 * tips_.size(), 6 * tips_.size())
    , lambda(6 * tips_.size(), 6 * tips_.size())
    {
      // One 6D constraint per tip, at the tip frame, LOCAL (Delassus and constraint-Cholesky routes).
      for (const FrameIndex f : tips)
        cms.push_back(ConstraintModel(
          pinocchio::CONTACT_6D, ctx.model, ctx.model.frames[f].parentJoint, ctx.model.frames[f].placement,
          pinocchio::LOCAL));
      for (const ConstraintModel & cm : cms)
        cds.push_back(ConstraintData(cm));
      chol.reset(new pinocchio::ConstraintCholeskyDecomposition(ctx.model, *ctx.data, cms, cds));
    }
  };

  /// The constrained-dynamics entries' contacts: one RigidConstraintModel per tip at the tip
  /// frame, CONTACT_3D (point foot) or CONTACT_6D (flat foot), LOCAL_WORLD_ALIGNED (soagen's
  /// world axes at the tip); initConstraintDynamics once here, outside the timing.  Their own Data:
  /// after computeConstraintDynamicsDerivatives, computeRNEADerivatives on the same Data returns
  /// a different dtau_dq (Pinocchio 4.0.0, solo12: 0.48 apart on entries of 17.7, on every later call
  /// too), so no other entry may run on the Data these leave.
  struct ContactWorkspace
  {
    ConstraintModels cms;
    ConstraintDatas cds;
    pinocchio::ProximalSettings settings; // the default: mu = 0, one iteration (an exact KKT solve)
    std::vector<int> dims;
    Data data;

    ContactWorkspace(const std::vector<FrameIndex> & tips, const std::vector<int> & dims_)
    : dims(dims_)
    , data(ctx.model)
    {
      for (std::size_t k = 0; k < tips.size(); ++k)
        cms.push_back(ConstraintModel(
          dims[k] == 3 ? pinocchio::CONTACT_3D : pinocchio::CONTACT_6D, ctx.model,
          ctx.model.frames[tips[k]].parentJoint, ctx.model.frames[tips[k]].placement,
          pinocchio::LOCAL_WORLD_ALIGNED));
      for (const ConstraintModel & cm : cms)
        cds.push_back(ConstraintData(cm));
      pinocchio::initConstraintDynamics(ctx.model, data, cms, cds);
    }
  };

  /// Register every timed algorithm.
  template<int K>
  void add_all(const std::vector<FrameIndex> & tips, const std::vector<int> & dims)
  {
    // captured by value: the entries outlive this function
    const Model * const mp = &ctx.model;
    Data * const dp = ctx.data.get();
    const Context * const c = &ctx;
    Workspace<K> * const w = new Workspace<K>(tips); // never freed: the entries use it until exit
    const int m = int(tips.size());
    const auto LWA = pinocchio::LOCAL_WORLD_ALIGNED;

    auto frame_jacobians = [=](long i) { // own kinematics pass per tip
      for (int k = 0; k < m; ++k)
        pinocchio::computeFrameJacobian(
          *mp, *dp, c->q(i), w->tips[k], LWA, w->J.template middleRows<6>(6 * k));
    };
    auto get_frame_jacobians = [=] { // from dp->oMi, dp->J of an earlier pass
      for (int k = 0; k < m; ++k)
        pinocchio::getFrameJacobian(*mp, *dp, w->tips[k], LWA, w->J.template middleRows<6>(6 * k));
    };
    auto symmetrise_minv = [=] {
      dp->Minv.template triangularView<Eigen::StrictlyLower>() =
        dp->Minv.transpose().template triangularView<Eigen::StrictlyLower>();
    };

    add(
      "rnea", "rnea", [=](long i) { return pinocchio::rnea(*mp, *dp, c->q(i), c->qd(i), c->qdd(i))[0]; },
      [=] { return row_major(dp->tau); });
    add(
      "crba", "crba (LOCAL convention; fills the upper triangle of M)",
      [=](long i) { return pinocchio::crba(*mp, *dp, c->q(i))(0, 0); }, [=] { return row_major(dp->M); });
    add(
      "aba", "aba", [=](long i) { return pinocchio::aba(*mp, *dp, c->q(i), c->qd(i), c->tau(i))[0]; },
      [=] { return row_major(dp->ddq); });
    add(
      "computeMinverse", "computeMinverse (fills the upper triangle of M⁻¹)",
      [=](long i) { return pinocchio::computeMinverse(*mp, *dp, c->q(i))(0, 0); },
      [=] { return row_major(dp->Minv); });
    // Analytical derivatives (Carpentier & Mansard): dtau/dq, dtau/dv; ddq, dddq/dq, dddq/dv, M^-1.
    add(
      "computeRNEADerivatives", "computeRNEADerivatives (dtau_dq, dtau_dv; also fills M's upper triangle)",
      [=](long i) {
        pinocchio::computeRNEADerivatives(*mp, *dp, c->q(i), c->qd(i), c->qdd(i));
        return dp->dtau_dq(0, 0);
      },
      [=] {
        std::vector<double> v = row_major(dp->dtau_dq);
        const std::vector<double> dv = row_major(dp->dtau_dv);
        v.insert(v.end(), dv.begin(), dv.end());
        return v;
      });
    // Second-order derivatives of the RNEA (Singh, Russell & Wensing's analytical recursion): the four
    // (nv, nv, nv) tensors of Data, which the call zeroes first (the recursion only writes the entries it sets).
    // Written [i][j][k] row-major; meaning (verified against differences of computeRNEADerivatives):
    // d2tau_dqdq(i,j,k) = d/dq_k (dtau_dq(i,j)) (iterated, tangent space), d2tau_dvdv(i,j,k),
    // d2tau_dqdv(i,j,k) = d2tau_i/dq_j dv_k, d2tau_dadq(i,j,k) = dM(i,j)/dq_k.
    add(
      "ComputeRNEASecondOrderDerivatives",
      "ComputeRNEASecondOrderDerivatives (d2tau_dqdq, d2tau_dvdv, d2tau_dqdv, d2tau_dadq of Data, zeroed by the call)",
      [=](long i) {
        pinocchio::ComputeRNEASecondOrderDerivatives(*mp, *dp, c->q(i), c->qd(i), c->qdd(i));
        return dp->d2tau_dqdq(0, 0, 0);
      },
      [=] {
        std::vector<double> v;
        const int n = mp->nv;
        for (const auto * t : {&dp->d2tau_dqdq, &dp->d2tau_dvdv, &dp->d2tau_dqdv, &dp->d2tau_dadq})
          for (int a = 0; a < n; ++a)
            for (int b = 0; b < n; ++b)
              for (int k = 0; k < n; ++k)
                v.push_back((*t)(a, b, k));
        return v;
      });
    add(
      "computeABADerivatives", "computeABADerivatives (ddq, ddq_dq, ddq_dv; fills the upper triangle of M⁻¹)",
      [=](long i) {
        pinocchio::computeABADerivatives(*mp, *dp, c->q(i), c->qd(i), c->tau(i));
        return dp->ddq_dq(0, 0);
      },
      [=] {
        std::vector<double> v = row_major(dp->ddq);
        for (const std::vector<double> & x : {row_major(dp->ddq_dq), row_major(dp->ddq_dv), row_major(dp->Minv)})
          v.insert(v.end(), x.begin(), x.end());
        return v;
      });
    add(
      "computeGeneralizedGravity", "computeGeneralizedGravity",
      [=](long i) { return pinocchio::computeGeneralizedGravity(*mp, *dp, c->q(i))[0]; },
      [=] { return row_major(dp->g); });
    add(
      "nonLinearEffects", "nonLinearEffects",
      [=](long i) { return pinocchio::nonLinearEffects(*mp, *dp, c->q(i), c->qd(i))[0]; },
      [=] { return row_major(dp->nle); });
    add(
      "computeFrameJacobian", "computeFrameJacobian (LOCAL_WORLD_ALIGNED, each with its kinematics pass) per tip",
      [=](long i) {
        frame_jacobians(i);
        return w->J(0, 0);
      },
      [=] { return row_major(w->J); });
    add(
      "framePlacements", "forwardKinematics + updateFramePlacement per tip",
      [=](long i) {
        pinocchio::forwardKinematics(*mp, *dp, c->q(i));
        double x = 0.0;
        for (const FrameIndex f : w->tips)
          x += pinocchio::updateFramePlacement(*mp, *dp, f).translation()[0];
        return x;
      },
      [=] {
        std::vector<double> v;
        for (const FrameIndex f : w->tips)
        {
          const std::vector<double> p = row_major(dp->oMf[f].toHomogeneousMatrix());
          v.insert(v.end(), p.begin(), p.end());
        }
        return v;
      });

    // Operational space inertia "the usual way": Minv by ABA, J, Omega = J Minv J^T, Lambda = Omega^-1.
    auto omega_minv = [=](long i) {
      pinocchio::computeMinverse(*mp, *dp, c->q(i));
      symmetrise_minv();
      frame_jacobians(i);
      w->MinvJt.noalias() = dp->Minv * w->J.transpose();
      w->omega.noalias() = w->J * w->MinvJt;
    };
    add(
      "omega_minv",
      "computeMinverse, lower triangle copied, computeFrameJacobian per tip, Ω = J (M⁻¹ Jᵀ)",
      [=](long i) {
        omega_minv(i);
        return w->omega(0, 0);
      },
      [=] { return row_major(w->omega); });
    add(
      "lambda_minv",
      "computeMinverse, lower triangle copied, computeFrameJacobian per tip, Ω = J (M⁻¹ Jᵀ), Λ = Ω⁻¹ by Eigen LLT",
      [=](long i) {
        omega_minv(i);
        w->lambda = spd_inverse(w->omega);
        return w->lambda(0, 0);
      },
      [=] { return row_major(w->lambda); });
    // Cheaper variant: reuse the kinematics computeMinverse already did (dp->oMi, dp->J).
    add(
      "lambda_minv_reuse",
      "computeMinverse, lower triangle copied, getFrameJacobian per tip (its kinematics reused), "
      "Ω = J (M⁻¹ Jᵀ), Λ = Ω⁻¹ by Eigen LLT",
      [=](long i) {
        pinocchio::computeMinverse(*mp, *dp, c->q(i));
        symmetrise_minv();
        get_frame_jacobians();
        w->MinvJt.noalias() = dp->Minv * w->J.transpose();
        w->omega.noalias() = w->J * w->MinvJt;
        w->lambda = spd_inverse(w->omega);
        return w->lambda(0, 0);
      },
      [=] { return row_major(w->lambda); });
    // Variant: crba (WORLD convention also fills dp->J) + sparse Cholesky of M, Minv J^T by solves.
    add(
      "lambda_crba_cholesky",
      "crba (WORLD), cholesky::decompose, getFrameJacobian per tip, cholesky::solve on Jᵀ, Ω = J (M⁻¹ Jᵀ), "
      "Λ = Ω⁻¹ by Eigen LLT",
      [=](long i) {
        pinocchio::crba(*mp, *dp, c->q(i), pinocchio::Convention::WORLD);
        pinocchio::cholesky::decompose(*mp, *dp);
        get_frame_jacobians();
        w->MinvJt = w->J.transpose();
        pinocchio::cholesky::solve(*mp, *dp, w->MinvJt);
        w->omega.noalias() = w->J * w->MinvJt;
        w->lambda = spd_inverse(w->omega);
        return w->lambda(0, 0);
      },
      [=] { return row_major(w->lambda); });
    // Pinocchio's O(n) Delassus recursion (computeDelassusMatrix, LOCAL tip frames), alone and + LLT.
    // It fills the diagonal blocks and the blocks above them: the lower part is copied, as for Minv.
    auto delassus = [=](long i) {
      pinocchio::computeDelassusMatrix(*mp, *dp, c->q(i), w->cms, w->cds, w->omega, 0.0);
      w->omega.template triangularView<Eigen::StrictlyLower>() =
        w->omega.transpose().template triangularView<Eigen::StrictlyLower>();
    };
    add(
      "delassus", "computeDelassusMatrix (one CONTACT_6D constraint per tip, LOCAL), lower triangle copied",
      [=](long i) {
        delassus(i);
        return w->omega(0, 0);
      },
      [=] { return row_major(local_to_world_aligned(w->omega, w->cds)); });
    add(
      "lambda_delassus",
      "computeDelassusMatrix (one CONTACT_6D constraint per tip, LOCAL), lower triangle copied, "
      "Λ = Ω⁻¹ by Eigen LLT",
      [=](long i) {
        delassus(i);
        w->lambda = spd_inverse(w->omega);
        return w->lambda(0, 0);
      },
      [=] { return row_major(local_to_world_aligned(w->lambda, w->cds)); });
    // Constraint Cholesky of the KKT matrix (as in Pinocchio's constraintDynamics): crba (WORLD),
    // constraint kinematics, sparse factorization, Lambda from its constraint block.
    add(
      "lambda_constraint_cholesky",
      "crba (WORLD), calc of the CONTACT_6D constraints, ConstraintCholeskyDecomposition::compute, "
      "getOperationalSpaceInertiaMatrix",
      [=](long i) {
        pinocchio::crba(*mp, *dp, c->q(i), pinocchio::Convention::WORLD);
        pinocchio::calc(*mp, *dp, w->cms, w->cds);
        w->chol->compute(*mp, *dp, w->cms, w->cds, 0.0);
        w->chol->getOperationalSpaceInertiaMatrix(w->lambda);
        return w->lambda(0, 0);
      },
      [=] { return row_major(local_to_world_aligned(w->lambda, w->cds)); });

    // Centroidal momentum matrix Ag (rows [linear; angular], about the centre of mass, world axes).
    add(
      "ccrba", "ccrba (Ag, and the centroidal momentum and inertia)",
      [=](long i) { return pinocchio::ccrba(*mp, *dp, c->q(i), c->qd(i))(0, 0); },
      [=] { return row_major(dp->Ag); });
    add(
      "computeCentroidalMap", "computeCentroidalMap (Ag alone)",
      [=](long i) { return pinocchio::computeCentroidalMap(*mp, *dp, c->q(i))(0, 0); },
      [=] { return row_major(dp->Ag); });
    // Centroidal dynamics derivatives: h_G and its rate (data.hg, data.dhg, [linear; angular]) and
    // their derivatives along q (tangent space), v and a (6 x nv each, rows [linear; angular]).
    typedef Eigen::Matrix<double, 6, Eigen::Dynamic> Mat6x;
    Mat6x * const cen = new Mat6x[4]; // dh_dq, dhdot_dq, dhdot_dv, dhdot_da; never freed, as w
    for (int k = 0; k < 4; ++k)
      cen[k] = Mat6x::Zero(6, mp->nv);
    add(
      "computeCentroidalDynamicsDerivatives",
      "computeCentroidalDynamicsDerivatives (h_G, its rate and their derivatives along q, v, a)",
      [=](long i) {
        pinocchio::computeCentroidalDynamicsDerivatives(
          *mp, *dp, c->q(i), c->qd(i), c->qdd(i), cen[0], cen[1], cen[2], cen[3]);
        return cen[0](0, 0);
      },
      [=] {
        std::vector<double> v = row_major(dp->hg.toVector());
        for (const std::vector<double> & x :
             {row_major(dp->dhg.toVector()), row_major(cen[0]), row_major(cen[1]), row_major(cen[2]),
              row_major(cen[3])})
          v.insert(v.end(), x.begin(), x.end());
        return v;
      });

    // Rigid contacts at every tip: constraintDynamics (ddq, lambda_c: the forces on the robot,
    // LOCAL_WORLD_ALIGNED, [linear; angular] per 6-D contact), and its analytical derivatives.
    if (!wants("constraintDynamics") && !wants("computeConstraintDynamicsDerivatives"))
      return;
    ContactWorkspace * const cw = new ContactWorkspace(tips, dims); // never freed, as w
    Data * const cdp = &cw->data;
    auto contact_result = [=] {
      std::vector<double> v = row_major(cdp->ddq);
      const std::vector<double> l = row_major(cdp->lambda_c);
      v.insert(v.end(), l.begin(), l.end());
      return v;
    };
    add(
      "constraintDynamics",
      "constraintDynamics (one RigidConstraintModel per tip, CONTACT_3D point or CONTACT_6D flat foot, "
      "LOCAL_WORLD_ALIGNED; initConstraintDynamics untimed; default ProximalSettings: mu = 0, one iteration)",
      [=](long i) {
        return pinocchio::constraintDynamics(
          *mp, *cdp, c->q(i), c->qd(i), c->tau(i), cw->cms, cw->cds, cw->settings)[0];
      },
      contact_result);
    add(
      "computeConstraintDynamicsDerivatives",
      "constraintDynamics, then computeConstraintDynamicsDerivatives (ddq, lambda_c and their derivatives "
      "along q, v, tau; same contacts)",
      [=](long i) {
        pinocchio::constraintDynamics(*mp, *cdp, c->q(i), c->qd(i), c->tau(i), cw->cms, cw->cds, cw->settings);
        pinocchio::computeConstraintDynamicsDerivatives(*mp, *cdp, cw->cms, cw->cds, cw->settings);
        return cdp->ddq_dq(0, 0);
      },
      [=] {
        std::vector<double> v = contact_result();
        for (const std::vector<double> & x :
             {row_major(cdp->ddq_dq), row_major(cdp->ddq_dv), row_major(cdp->ddq_dtau), row_major(cdp->dlambda_dq),
              row_major(cdp->dlambda_dv), row_major(cdp->dlambda_dtau)})
          v.insert(v.end(), x.begin(), x.end());
        return v;
      });
  }

  /// The comma-separated fields of `text`.
  std::vector<std::string> split(const std::string & text)
  {
    std::vector<std::string> out;
    std::stringstream fields(text);
    for (std::string field; std::getline(fields, field, ',');)
      if (!field.empty())
        out.push_back(field);
    return out;
  }

  int init(const double * states, long rows, long row, const char * arg)
  {
    std::vector<std::string> parts;
    {
      std::stringstream fields{std::string(arg)};
      for (std::string field; std::getline(fields, field, '|');)
        parts.push_back(field);
    }
    if (parts.size() < 2 || parts.size() > 4)
    {
      std::fprintf(stderr, "pinocchio: init wants MODEL.txt|TIP,TIP[|DIM,DIM[|ENTRY,ENTRY]], got %s\n", arg);
      return 1;
    }
    ctx.model.loadFromText(parts[0]);
    ctx.data.reset(new Data(ctx.model));
    ctx.states = states;
    ctx.rows = rows;
    ctx.row = row;
    if (row < ctx.model.nq + 3 * ctx.model.nv)
    {
      std::fprintf(stderr, "pinocchio: a state row of %ld doubles < nq + 3 nv\n", row);
      return 1;
    }
    std::vector<FrameIndex> tips;
    for (const std::string & name : split(parts[1]))
    {
      if (!ctx.model.existFrame(name))
      {
        std::fprintf(stderr, "pinocchio: no frame named %s in the model\n", name.c_str());
        return 1;
      }
      tips.push_back(ctx.model.getFrameId(name));
    }
    if (tips.empty())
    {
      std::fprintf(stderr, "pinocchio: no tip frame given\n");
      return 1;
    }
    std::vector<int> dims(tips.size(), 6);
    if (parts.size() > 2 && !parts[2].empty())
    {
      const std::vector<std::string> given = split(parts[2]);
      if (given.size() != tips.size())
      {
        std::fprintf(stderr, "pinocchio: %zu contact dimensions for %zu tips\n", given.size(), tips.size());
        return 1;
      }
      for (std::size_t k = 0; k < tips.size(); ++k)
        dims[k] = given[k] == "3" ? 3 : 6;
    }
    if (parts.size() > 3)
      for (const std::string & name : split(parts[3]))
        wanted.insert(name);
    if (tips.size() == 1)
      add_all<6>(tips, dims);
    else if (tips.size() == 2)
      add_all<12>(tips, dims);
    else
      add_all<Eigen::Dynamic>(tips, dims);
    return 0;
  }

  int count() { return int(entries.size()); }
  const char * entry_name(int i) { return entries[i].name.c_str(); }
  const char * entry_calls(int i) { return entries[i].calls.c_str(); }
  int entry_size(int i) { return entries[i].size; }
  double pass(int i) { return entries[i].pass(); }
  void outputs(int i, long count, double * out)
  {
    const std::vector<double> v = entries[i].outputs(count);
    std::copy(v.begin(), v.end(), out);
  }
} // namespace

extern "C" const bench_backend bench_pinocchio = {
  "pinocchio", init, count, entry_name, entry_calls, entry_size, pass, outputs};
