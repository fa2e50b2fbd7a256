// The reference at double and binary128, compiled once.
#include <stdexcept>
#include <string>

#include "run_model.ipp"
#include "trace.ipp"

namespace vla::ref {
template Result<double> run_model<double>(const Stream&, const Options&);
template Result<Float128> run_model<Float128>(const Stream&, const Options&);
template std::vector<TraceStep<double>> trace_head<double>(const Stream&, const Options&, const TraceOptions&);
template std::vector<TraceStep<Float128>> trace_head<Float128>(const Stream&, const Options&, const TraceOptions&);

Stream slice_head(const Stream& s, int b, int h) {
  const Dims& d = s.dims;
  if (b < 0 || b >= d.B || h < 0 || h >= d.H) {
    throw std::invalid_argument("head (b=" + std::to_string(b) + ", h=" + std::to_string(h) + ") is outside B=" + std::to_string(d.B) +
                                ", H=" + std::to_string(d.H));
  }
  Stream one;
  one.dims = {1, d.T, 1, d.Dk, d.Dv};
  auto take = [&](const std::vector<double>& x, std::vector<double>& y, int D) {
    y.resize(std::size_t(d.T) * D);
    for (int t = 0; t < d.T; ++t)
      for (int j = 0; j < D; ++j) y[std::size_t(t) * D + j] = x[d.off(b, t, h, D) + j];
  };
  take(s.q, one.q, d.Dk);
  take(s.k, one.k, d.Dk);
  take(s.v, one.v, d.Dv);
  if (s.has_u()) take(s.u, one.u, d.Dk);
  return one;
}

}  // namespace vla::ref
