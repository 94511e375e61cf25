// Pinocchio loops for benchmarks/simd.py (benchmark tooling, not part of soagen): rnea and aba
// over a batch of states, header-only Pinocchio compiled here with -O3 -march=native -ffp-contract=fast -DNDEBUG
// (the best settings of a C++ baseline; the wheel's own build is generic x86-64).
//
//   int  pin_load(const char *model_txt)       a Model saved by Pinocchio's saveToText
//   void pin_rnea_batch(long n, const double *q, const double *v, const double *a, double *tau)
//   void pin_aba_batch(long n, const double *q, const double *v, const double *tau, double *a, int world)
//        (world: Pinocchio's Convention::WORLD, else LOCAL, its default)
//   void pin_rnea_second_batch(long n, const double *q, const double *v, const double *a, double *out, int copy)
//        ComputeRNEASecondOrderDerivatives on each state; with copy, each state's four tensors d2tau_dqdq,
//        d2tau_dvdv, d2tau_dqdv, d2tau_dadq, [i][j][k] row-major (4 nv^3 doubles a state), to out; without,
//        they stay in Data (overwritten by the next state), as a caller that uses them in place has them
//
// Arrays are states in columns (column-major nq x n, nv x n), as Pinocchio's *InParallel.
#include <pinocchio/multibody.hpp>
#include <pinocchio/serialization.hpp>
#include <pinocchio/algorithm/aba.hpp>
#include <pinocchio/algorithm/rnea.hpp>
#include <pinocchio/algorithm/rnea-second-order-derivatives.hpp>

namespace
{
  // never destroyed: a static Model's destructor ran after the Python bindings' libraries were
  // unloaded at exit and crashed the interpreter
  pinocchio::Model & model = *new pinocchio::Model;
  pinocchio::Data * data = nullptr;
  typedef Eigen::Map<const Eigen::VectorXd> CVec;
  typedef Eigen::Map<Eigen::VectorXd> Vec;
} // namespace

extern "C" int pin_load(const char * model_txt)
{
  model.loadFromText(model_txt);
  delete data;
  data = new pinocchio::Data(model);
  return model.nv;
}

extern "C" void pin_rnea_batch(long n, const double * q, const double * v, const double * a, double * tau)
{
  const long nq = model.nq, nv = model.nv;
  for (long i = 0; i < n; ++i)
    Vec(tau + nv * i, nv) = pinocchio::rnea(model, *data, CVec(q + nq * i, nq), CVec(v + nv * i, nv),
                                            CVec(a + nv * i, nv));
}

extern "C" void pin_aba_batch(long n, const double * q, const double * v, const double * tau, double * a, int world)
{
  const long nq = model.nq, nv = model.nv;
  const pinocchio::Convention convention = world ? pinocchio::Convention::WORLD : pinocchio::Convention::LOCAL;
  for (long i = 0; i < n; ++i)
    Vec(a + nv * i, nv) = pinocchio::aba(model, *data, CVec(q + nq * i, nq), CVec(v + nv * i, nv),
                                         CVec(tau + nv * i, nv), convention);
}

extern "C" void pin_rnea_second_batch(long n, const double * q, const double * v, const double * a, double * out, int copy)
{
  const long nq = model.nq, nv = model.nv;
  for (long s = 0; s < n; ++s)
  {
    pinocchio::ComputeRNEASecondOrderDerivatives(model, *data, CVec(q + nq * s, nq), CVec(v + nv * s, nv),
                                                 CVec(a + nv * s, nv));
    if (!copy)
      continue;
    double * o = out + 4 * nv * nv * nv * s;
    for (const auto * t : {&data->d2tau_dqdq, &data->d2tau_dvdv, &data->d2tau_dqdv, &data->d2tau_dadq})
      for (long i = 0; i < nv; ++i)
        for (long j = 0; j < nv; ++j)
          for (long k = 0; k < nv; ++k)
            *o++ = (*t)(i, j, k);
  }
}
