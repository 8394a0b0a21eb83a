// Matrix multiplication (tiled, in shared memory) and matrix addition on the GPU, timed with CUDA events and checked against the CPU.
//
//   ./matmul [N]     N x N single-precision matrices (default 1024)
//
// Every CUDA call is checked: a failure prints `CUDA error: NAME: DESCRIPTION` on stderr and
// exits 1 (on a machine without a GPU driver that is cudaErrorInsufficientDriver, at the first call).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define TILE 32

#define CHECK(call)                                                                              \
  do {                                                                                           \
    cudaError_t err_ = (call);                                                                   \
    if (err_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "CUDA error: %s: %s\n", cudaGetErrorName(err_), cudaGetErrorString(err_)); \
      exit(1);                                                                                   \
    }                                                                                            \
  } while (0)

// C = A * B for n x n row-major matrices. A block computes one TILE x TILE tile of C, a thread one
// element. The loop walks the tiles along k: the block's threads load one tile of A and one of B
// into shared memory (one element each, coalesced), wait for each other, then each thread adds up
// TILE products from shared memory. Every element of A and B is thus read from global memory
// n / TILE times instead of n times. Tiles past the edge of the matrix are padded with zeros.
__global__ void matmul_tiled(const float *A, const float *B, float *C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    int a_col = t * TILE + threadIdx.x;
    int b_row = t * TILE + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < n && a_col < n) ? A[row * n + a_col] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (b_row < n && col < n) ? B[b_row * n + col] : 0.0f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}

// C = A + B over `count` elements: one element per thread, in a grid-stride loop so that any
// grid covers any size.
__global__ void matadd(const float *A, const float *B, float *C, int count) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) C[i] = A[i] + B[i];
}

// Small exact values, so that the sums are exact in float and the products close to the CPU's.
static float value(int i, int salt) { return (float)((i * 7 + salt) % 17 - 8) / 8.0f; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1024;
  if (n <= 0) {
    fprintf(stderr, "usage: %s [N] (N > 0)\n", argv[0]);
    return 2;
  }
  size_t count = (size_t)n * n;
  size_t bytes = count * sizeof(float);
  std::vector<float> A(count), B(count), C(count), S(count);
  for (size_t i = 0; i < count; ++i) {
    A[i] = value((int)(i % 100003), 3);
    B[i] = value((int)(i % 100019), 5);
  }

  int device = 0;
  cudaDeviceProp prop;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaGetDeviceProperties(&prop, device));
  printf("device: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount);

  float *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, bytes));
  CHECK(cudaMalloc(&dB, bytes));
  CHECK(cudaMalloc(&dC, bytes));
  CHECK(cudaMemcpy(dA, A.data(), bytes, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B.data(), bytes, cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  const int reps = 10;
  float ms = 0.0f;

  // Addition: warm up once, then time `reps` launches.
  int threads = 256;
  int blocks = (int)((count + threads - 1) / threads);
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  matadd<<<blocks, threads>>>(dA, dB, dC, (int)count);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(start));
  for (int r = 0; r < reps; ++r) matadd<<<blocks, threads>>>(dA, dB, dC, (int)count);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(S.data(), dC, bytes, cudaMemcpyDeviceToHost));
  double add_err = 0.0;
  for (size_t i = 0; i < count; ++i) add_err = fmax(add_err, fabs((double)S[i] - ((double)A[i] + (double)B[i])));
  printf("matrix add: %dx%d, %.3f ms per launch, %.1f GB/s, max error %g\n", n, n, ms / reps, 3.0 * bytes / (ms / reps * 1e-3) / 1e9, add_err);

  // Multiplication, the same way.
  dim3 block(TILE, TILE);
  dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
  matmul_tiled<<<grid, block>>>(dA, dB, dC, n);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(start));
  for (int r = 0; r < reps; ++r) matmul_tiled<<<grid, block>>>(dA, dB, dC, n);
  CHECK(cudaEventRecord(stop));
  CHECK(cudaEventSynchronize(stop));
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaMemcpy(C.data(), dC, bytes, cudaMemcpyDeviceToHost));

  // The CPU checks a sample of rows (all of them for small matrices): n^3 is too slow for big ones.
  int step = n <= 256 ? 1 : n / 64;
  double mul_err = 0.0;
  for (int i = 0; i < n; i += step) {
    for (int j = 0; j < n; ++j) {
      double want = 0.0;
      for (int k = 0; k < n; ++k) want += (double)A[(size_t)i * n + k] * (double)B[(size_t)k * n + j];
      double got = C[(size_t)i * n + j];
      mul_err = fmax(mul_err, fabs(got - want) / fmax(1.0, fabs(want)));
    }
  }
  double seconds = ms / reps * 1e-3;
  printf("matrix multiply (tiled %dx%d, shared memory): %dx%d, %.3f ms per launch, %.1f GFLOP/s, max relative error %.2g\n",
         TILE, TILE, n, n, ms / reps, 2.0 * n * n * (double)n / seconds / 1e9, mul_err);

  CHECK(cudaFree(dA));
  CHECK(cudaFree(dB));
  CHECK(cudaFree(dC));
  if (add_err != 0.0 || mul_err > 1e-3) {
    fprintf(stderr, "wrong result: add error %g, multiply error %g\n", add_err, mul_err);
    return 1;
  }
  printf("results match the CPU\n");
  return 0;
}
