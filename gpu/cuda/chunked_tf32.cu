// The chunked kernel's chunked-tf32 instances (tf32 tensor-core products).
#include "chunked_dispatch.cuh"

VLA_CHUNKED_INSTANCES(vla::gpu::chunked::PrecTf32)
