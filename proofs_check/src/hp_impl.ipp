// Definitions of hp.hpp's templates; included only by hp_double.cpp and
// hp_mpfr.cpp, each of which instantiates them for one scalar.
#include <stdexcept>

#include "vla/claims/hp.hpp"
#include "vla/reference/policy.hpp"

namespace vla::claims::hp {

template <class T>
Token<T> token_at(const Stream& s, int t, int b, int h) {
  const Dims& d = s.dims;
  Token<T> tok;
  const std::size_t ok = d.off(b, t, h, d.Dk), ov = d.off(b, t, h, d.Dv);
  tok.q.resize(d.Dk);
  tok.k.resize(d.Dk);
  tok.v.resize(d.Dv);
  for (int j = 0; j < d.Dk; ++j) {
    tok.q[j] = T(s.q[ok + j]);
    tok.k[j] = T(s.k[ok + j]);
  }
  for (int i = 0; i < d.Dv; ++i) tok.v[i] = T(s.v[ov + i]);
  tok.has_u = s.has_u();
  if (tok.has_u) {
    tok.u.resize(d.Dk);
    for (int j = 0; j < d.Dk; ++j) tok.u[j] = T(s.u[ok + j]);
  }
  return tok;
}

template <class T>
void step(core::HeadState<T>& st, const Token<T>& tok, const Options& opt, core::StepInfo<T>& info) {
  using P = ref::RefPolicy<T>;
  core::Workspace<T> ws;
  ws.resize(st.dk, st.dv);
  std::vector<T> o(st.dv), v(st.dv, T(0));
  for (int i = 0; i < st.dv && i < int(tok.v.size()); ++i) v[i] = tok.v[i];
  switch (opt.model) {
    case Model::vla:
      core::vla_step<P>(st, ws, tok.q.data(), tok.k.data(), v.data(), tok.has_u ? tok.u.data() : nullptr, opt, o.data(), info);
      break;
    case Model::linear: core::linear_step<P>(st, ws, tok.q.data(), tok.k.data(), v.data(), opt, o.data(), info); break;
    case Model::deltanet: core::deltanet_step<P>(st, ws, tok.q.data(), tok.k.data(), v.data(), opt, o.data(), info); break;
    case Model::softmax: throw std::invalid_argument("hp::step: softmax attention has no recurrence");
  }
}

template <class T>
Mat<T> right_factor_product(const core::HeadState<T>& first, const std::vector<Token<T>>& toks, const Options& opt,
                            std::vector<Mat<T>>* each) {
  const int dk = first.dk;
  auto from_identity = [dk](core::HeadState<T> st) {
    st.dv = dk;
    st.S.assign(std::size_t(dk) * dk, T(0));
    for (int i = 0; i < dk; ++i) st.S[std::size_t(i) * dk + i] = T(1);
    return st;
  };
  auto as_mat = [dk](const core::HeadState<T>& st) {
    Mat<T> P(dk, dk);
    for (int i = 0; i < dk; ++i)
      for (int j = 0; j < dk; ++j) P(i, j) = st.S[std::size_t(i) * dk + j];
    return P;
  };
  core::HeadState<T> st = from_identity(first);
  core::StepInfo<T> info;
  for (const auto& tok : toks) {
    Token<T> t0 = tok;
    t0.v.assign(std::size_t(dk), T(0));
    if (each) {
      core::HeadState<T> one = from_identity(st);
      step(one, t0, opt, info);
      each->push_back(as_mat(one));
    }
    step(st, t0, opt, info);
  }
  return as_mat(st);
}

}  // namespace vla::claims::hp
