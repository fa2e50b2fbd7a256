#include "vla/claims/recall.hpp"

#include <cmath>
#include <cstdio>
#include <random>
#include <stdexcept>
#include <vector>

#include "vla/properties/generators.hpp"
#include "vla/reference/models.hpp"
#include "vla/reference/policy.hpp"
#include "vla/reference/run.hpp"

namespace vla::claims {

std::string to_string(KeyDist k) { return k == KeyDist::gaussian_elu1 ? "gaussian keys, elu1" : "gaussian keys, identity"; }
std::string to_string(Filler f) { return f == Filler::pad ? "pad (fixed key, v = 0)" : "random key, v = 0"; }

Stream recall_stream(const RecallTask& task, int r) {
  if (task.d < 1 || task.n < 1 || task.T < task.n) throw std::invalid_argument("recall task: need d >= 1, n >= 1, T >= n");
  const int d = task.d;
  // The pairs and the fillers' keys: i.i.d. N(0, 1) entries (the properties' gaussian family).
  const Dims dims{1, task.T + 1, 1, d, d};
  Stream g = props::make_stream(props::Family::gaussian, dims, task.seed + std::uint64_t(r));
  Stream s;
  s.dims = Dims{1, task.T, 1, d, d};
  s.q.assign(s.dims.qk_size(), 0);
  s.k.assign(s.dims.qk_size(), 0);
  s.v.assign(s.dims.v_size(), 0);
  for (int t = 0; t < task.T; ++t) {
    // Pad fillers all reuse the key drawn at position T (never used otherwise).
    const int src = (t >= task.n && task.filler == Filler::pad) ? task.T : t;
    for (int j = 0; j < d; ++j) s.k[std::size_t(t) * d + j] = g.k[std::size_t(src) * d + j];
    if (t < task.n)
      for (int i = 0; i < d; ++i) s.v[std::size_t(t) * d + i] = g.v[std::size_t(t) * d + i];
  }
  s.q = s.k;
  return s;
}

namespace {

double cosine(const std::vector<double>& a, const double* b, int d) {
  double ab = 0, aa = 0, bb = 0;
  for (int i = 0; i < d; ++i) {
    ab += a[i] * b[i];
    aa += a[i] * a[i];
    bb += b[i] * b[i];
  }
  return (aa > 0 && bb > 0) ? ab / std::sqrt(aa * bb) : -2;
}

// Index of the stored value nearest in angle to y.
int decode(const std::vector<double>& y, const Stream& s, int n) {
  const int d = s.dims.Dv;
  int best = -1;
  double bc = -3;
  for (int j = 0; j < n; ++j) {
    const double c = cosine(y, s.v.data() + std::size_t(j) * d, d);
    if (c > bc) bc = c, best = j;
  }
  return best;
}

struct FinalState {
  core::HeadState<double>* out;
  int last;
  void operator()(int, int t, int, const core::HeadState<double>& st, const core::Workspace<double>&,
                  const core::StepInfo<double>&) const {
    if (t == last) *out = st;
  }
};

long correct_recurrent(const Stream& s, const Options& opt, int n) {
  core::HeadState<double> fin;
  ref::run_recurrent<double, ref::RefPolicy<double>>(s, opt, FinalState{&fin, s.dims.T - 1});
  Options raw = opt;
  raw.readout = Readout::raw;
  core::Workspace<double> ws;
  ws.resize(fin.dk, fin.dv);
  core::StepInfo<double> info;
  std::vector<double> y(fin.dv);
  long ok = 0;
  for (int i = 0; i < n; ++i) {
    core::readout<ref::RefPolicy<double>>(fin, ws, s.k.data() + std::size_t(i) * fin.dk, raw, y.data(), info);
    ok += decode(y, s, n) == i;
  }
  return ok;
}

long correct_softmax(const Stream& s, const Options& opt, int n) {
  // Batch entry b asks with key b at the last position.
  const int d = s.dims.Dk, T = s.dims.T;
  Stream sb;
  sb.dims = Dims{n, T, 1, d, d};
  for (int b = 0; b < n; ++b) {
    std::vector<double> q = s.q;
    for (int j = 0; j < d; ++j) q[std::size_t(T - 1) * d + j] = s.k[std::size_t(b) * d + j];
    sb.q.insert(sb.q.end(), q.begin(), q.end());
    sb.k.insert(sb.k.end(), s.k.begin(), s.k.end());
    sb.v.insert(sb.v.end(), s.v.begin(), s.v.end());
  }
  const auto r = ref::run_model<double>(sb, opt);
  long ok = 0;
  std::vector<double> y(d);
  for (int b = 0; b < n; ++b) {
    const std::size_t off = sb.dims.off(b, T - 1, 0, d);
    for (int i = 0; i < d; ++i) y[i] = r.o[off + i];
    ok += decode(y, s, n) == b;
  }
  return ok;
}

}  // namespace

RecallScore recall_accuracy(const RecallTask& task, const Options& model) {
  Options opt = model;
  opt.feature_map = task.keys == KeyDist::gaussian_elu1 ? FeatureMap::elu1 : FeatureMap::identity;
  RecallScore sc;
  for (int r = 0; r < task.reps; ++r) {
    const Stream s = recall_stream(task, r);
    validate_stream(s, opt);
    sc.correct += opt.model == Model::softmax ? correct_softmax(s, opt, task.n) : correct_recurrent(s, opt, task.n);
    sc.total += task.n;
  }
  sc.accuracy = sc.total ? double(sc.correct) / double(sc.total) : 0;
  return sc;
}

std::vector<ModelSetting> recall_models(const std::vector<double>& lambdas, const std::vector<double>& betas,
                                        const std::vector<double>& decays) {
  auto g = [](double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return std::string(b);
  };
  std::vector<ModelSetting> m;
  for (double l : lambdas) {
    Options o;
    o.lambda0 = l;
    m.push_back({"VLA", "VLA lambda0=" + g(l), o});
  }
  for (double b : betas)
    for (double d : decays) {
      Options o;
      o.model = Model::deltanet;
      o.deltanet_beta = b;
      o.deltanet_decay = d;
      m.push_back({"DeltaNet", "DeltaNet beta=" + g(b) + " decay=" + g(d), o});
    }
  Options lin, sm;
  lin.model = Model::linear;
  sm.model = Model::softmax;
  m.push_back({"linear", "linear attention", lin});
  m.push_back({"softmax", "softmax attention", sm});
  return m;
}

}  // namespace vla::claims
