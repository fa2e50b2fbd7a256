// Definition of run_model (models.hpp), included by the two instantiation files.
#include "vla/reference/models.hpp"
#include "vla/reference/softmax.hpp"

namespace vla::ref {

template <class Scalar>
Result<Scalar> run_model(const Stream& s, const Options& opt) {
  if (opt.model == Model::softmax) return run_softmax<Scalar>(s, opt);
  return run_recurrent<Scalar>(s, opt);
}

}  // namespace vla::ref
