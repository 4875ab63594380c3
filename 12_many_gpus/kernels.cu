// Chapter 12's own kernel, compiled once for sm_90a only (12_many_gpus/meson.build, as chapters
// 08 and 09 compile theirs): step 5's GEMM, which waits per tile for its rows of A. Everything
// else the chapter runs is host code, NCCL, copies and small kernels (main.cu), and chapter 09's
// GEMM (launch_hopper).
#include "12_many_gpus/steps/5_tile_wait_kernel.cuh"
