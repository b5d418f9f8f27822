// CUDA kernels for the runtime's GPU tests, in the generated kernels' ABI
// (runtime/module/dlcm.fbs): the buffer pointers by value, then the
// iteration count (a long long, as the generated kernels' int64_t). CMake
// compiles this file to PTX with nvcc, which the tests embed in modules as
// dlc-compile embeds generated PTX, and to host code against the CUDA
// emulation for the fake driver (fake_driver/TestKernelsHost.cpp).

template <int N> struct Buffers {
  void *p[N];
};

/// buffers: a, b, out (float32[n]); out = a + b, grid-stride.
extern "C" __global__ void test_add_f32(const Buffers<3> b, long long n) {
  const float *x = static_cast<const float *>(b.p[0]);
  const float *y = static_cast<const float *>(b.p[1]);
  float *out = static_cast<float *>(b.p[2]);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
       i += (long long)gridDim.x * blockDim.x)
    out[i] = x[i] + y[i];
}
