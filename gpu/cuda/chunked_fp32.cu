// The chunked kernel's chunked-fp32 instances (float SIMT products).
#include "chunked_dispatch.cuh"

VLA_CHUNKED_INSTANCES(vla::gpu::PrecFp32)
