// The tool's version, stamped into every file it writes.
#pragma once

#include <string>

namespace vla::io {
std::string tool_version();  // "vla-verify <project version>"
}
