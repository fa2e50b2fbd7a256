// The chunked kernel's chunked-bf16 instances (bf16 tensor-core products).
#include "chunked_dispatch.cuh"

VLA_CHUNKED_INSTANCES(vla::gpu::PrecBf16)
