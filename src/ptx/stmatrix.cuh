// stmatrix (PTX ISA, data movement instructions: stmatrix; sm_90): a warp stores four 8x8 b16 matrices from registers in the
// mma accumulator layout (thread t holds row t / 4, elements 2 (t % 4) and 2 (t % 4) + 1 of each
// matrix, packed in one 32-bit register); lanes 8m .. 8m + 7 give the row addresses (16 bytes
// each) of matrix m. One instruction in place of four st.shared.b32 and their addresses.
#pragma once

#include <cstdint>

namespace dash::ptx {

__device__ __forceinline__ void stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

// The same with .trans: matrix m is stored transposed, so lane 8m + r's address receives column r
// of matrix m (the element thread 4j + r / 2 holds at position r % 2 of its register, j = 0..7).
// Planned use: dS^T fragments (rows = keys) stored as dS (rows = queries) for the 80-row Q tile
// (docs/bwd-sm90.md, last section). Test Sm90Primitives.StmatrixX4Trans had not run on a GPU when
// this landed.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n"
               ::"r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
               : "memory");
}

}  // namespace dash::ptx
