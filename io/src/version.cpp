#include "vla/io/version.hpp"

namespace vla::io {
std::string tool_version() { return "vla-verify " VLA_PROJECT_VERSION; }
}  // namespace vla::io
