#include "hp_impl.ipp"

namespace vla::claims::hp {
VLA_CLAIMS_HP_TEMPLATES(, double)
}
