// The reference at MPFR precision, compiled once (the heavy instantiation):
// the plain run and the traced run share this file's one copy of the MPFR step.
#include "run_model.ipp"
#include "trace.ipp"

namespace vla::ref {
template Result<Mpfr> run_model<Mpfr>(const Stream&, const Options&);
template std::vector<TraceStep<Mpfr>> trace_head<Mpfr>(const Stream&, const Options&, const TraceOptions&);

Result<Mpfr> run_mpfr(const Stream& s, const Options& opt, long bits) {
  MpfrPrecision scope(bits);
  return run_model<Mpfr>(s, opt);
}

std::vector<TraceStep<Mpfr>> trace_head_mpfr(const Stream& s, const Options& opt, const TraceOptions& topt, long bits) {
  MpfrPrecision scope(bits);
  return trace_head<Mpfr>(s, opt, topt);
}
}  // namespace vla::ref
