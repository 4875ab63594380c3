// Rows that are not 16-byte aligned (K % 8 != 0) cannot be copied by 16-byte cp.async or by TMA
// (whose row stride must be a multiple of 16 bytes). pad_rows copies X (rows x K, row-major)
// into a kept buffer of rows x round_up(K, 8) with zeros after K: the zero columns add exact
// zeros to every dot product. `which` (0 or 1) picks one of two buffers, for A and for Bᵀ; a
// buffer grows when needed and is kept, so that a timed call allocates nothing.
#pragma once

#include <cuda_bf16.h>

const __nv_bfloat16* pad_rows(int which, const __nv_bfloat16* X, int rows, int K, int Kp);

// Are the rows of A and Bᵀ (K elements each) 16-byte aligned: K % 8 == 0, both bases aligned?
bool rows_aligned(int K, const __nv_bfloat16* A, const __nv_bfloat16* Bt);
// Where they are not, A and Bt become padded copies (pad_rows, buffers 0 and 1) and K becomes
// round_up(K, 8); otherwise nothing changes. Every launcher of chapters 07 and 08 calls this.
void pad_operands_if_unaligned(int M, int N, int& K, const __nv_bfloat16*& A,
                               const __nv_bfloat16*& Bt);
