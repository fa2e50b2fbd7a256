// A symmetric n x n matrix stored as its lower triangle packed row by row: entry (r, c), c <= r, at
// r (r + 1) / 2 + c, n (n + 1) / 2 entries. The scan gate's M slots are stored so (scan_gate.cu), the warp
// sweep's lower blocks are numbered so (sweep_layout.hpp), and the tests read them back with the same functions.
#pragma once

#include "vla/core/hd.hpp"

namespace vla::gpu {

VLA_HD constexpr int packed_size(int n) { return n * (n + 1) / 2; }
VLA_HD constexpr int packed_index(int r, int c) { return r * (r + 1) / 2 + c; }  // c <= r

}  // namespace vla::gpu
