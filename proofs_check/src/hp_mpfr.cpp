// The MPFR instantiation of hp.hpp's templates: the one translation unit of the
// ledger that instantiates the spec's step at MPFR.
#include "hp_impl.ipp"

namespace vla::claims::hp {
VLA_CLAIMS_HP_TEMPLATES(, ref::Mpfr)
}
