// Chapter 01: the naive SGEMM, and the one decision that makes it an order of magnitude faster
// or slower: which element of C each thread of a warp computes.
#pragma once

#include "common/check.h"

// Both kernels use 32 x 32 blocks; a warp is 32 threads with consecutive threadIdx.x.
constexpr int kNaiveBlock = 32;

struct RowCol {
  int row, col;
};

// The element of C computed by thread (tx, ty) of block (bx, by), for the two mappings.
// __host__ __device__ so the host tests check the very functions the kernels use.

// Uncoalesced: threadIdx.x walks DOWN a column of C. The 32 threads of a warp take 32
// consecutive rows, so their loads of A (A[row * K + k]) and stores of C are K and N floats
// apart: one 32-byte transaction per thread.
__host__ __device__ inline RowCol naive_uncoalesced_element(int bx, int by, int tx, int ty) {
  return {bx * kNaiveBlock + tx, by * kNaiveBlock + ty};
}

// Coalesced: threadIdx.x walks ALONG a row of C. A warp takes 32 consecutive columns: it
// reads one element of A (a broadcast), 32 consecutive floats of B, and stores 32
// consecutive floats of C: 4 sectors of 32 bytes each.
__host__ __device__ inline RowCol naive_coalesced_element(int bx, int by, int tx, int ty) {
  return {by * kNaiveBlock + ty, bx * kNaiveBlock + tx};
}

void launch_naive_uncoalesced(int M, int N, int K, const float* A, const float* B, float* C);
void launch_naive_coalesced(int M, int N, int K, const float* A, const float* B, float* C);
// The exercise (exercises/coalesced_mapping.cuh): the coalesced mapping, written by the reader.
void launch_ex_coalesced_mapping(int M, int N, int K, const float* A, const float* B, float* C);
