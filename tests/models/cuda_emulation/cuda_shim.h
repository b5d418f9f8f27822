//===- cuda_shim.h - CUDA stand-ins for generated kernels on the host -----===//
//
// Lets g++ compile a `dlc-compile --target cuda` module's kernel source
// unchanged, so cuda_emulation_check.py can run the CUDA kernels' arithmetic
// on a machine without a GPU. The source is written for NVRTC, which sees no
// system headers: it defines its own fixed-width integer types (int64_t is
// long long), so this header includes none either (glibc's would define
// int64_t as long) and declares the libm functions the source's DLC_MATH
// macros name itself.
//
// What a kernel uses of CUDA is defined here: the launch geometry
// (threadIdx, blockIdx per host thread; blockDim, gridDim per launch), the
// qualifiers, float4 and __fmaf_rn, the bit casts, __shfl_xor_sync, which exchanges values
// between the 32 host threads that run a warp's lanes (cuda_shim.cpp),
// __syncthreads, a barrier of the host threads that run a block of a
// block-per-iteration step, __shared__ as static storage (blocks run one at
// a time), and __builtin_assume_aligned, which is checked and counted.
// Nothing else is: a kernel that starts to need atomics fails to compile
// here instead of being emulated wrongly.
//
// After the source, the harness appends DLC_EMU_ENTRY(name) per kernel: an
// `extern "C" void dlc_emu_entry_NAME(void *const *, long long)` that copies
// the step's buffer addresses into the kernel's by-value dlc_buffers<N> (as
// cuLaunchKernel copies its kernelParams), which dlc_emu_launch calls from
// every emulated thread.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_TESTS_MODELS_CUDA_EMULATION_CUDA_SHIM_H
#define DLC_TESTS_MODELS_CUDA_EMULATION_CUDA_SHIM_H

extern "C" {
float expf(float);
double exp(double);
float logf(float);
double log(double);
float sqrtf(float);
double sqrt(double);
float ceilf(float);
double ceil(double);
float floorf(float);
double floor(double);
float rintf(float);
double rint(double);
float erff(float);
double erf(double);
float sinf(float);
double sin(double);
float cosf(float);
double cos(double);
float tanhf(float);
double tanh(double);
float tanf(float);
double tan(double);
float asinf(float);
double asin(double);
float acosf(float);
double acos(double);
float atanf(float);
double atan(double);
float sinhf(float);
double sinh(double);
float coshf(float);
double cosh(double);
float asinhf(float);
double asinh(double);
float acoshf(float);
double acosh(double);
float atanhf(float);
double atanh(double);
float powf(float, float);
double pow(double, double);
float fmodf(float, float);
double fmod(double, double);

/// Exchanges `size` bytes (at most 8) with lane `lane ^ laneMask` of the
/// calling thread's warp: every lane of the warp must call it, as a
/// full-mask __shfl_xor_sync requires (cuda_shim.cpp).
void dlc_emu_shuffle_xor(unsigned mask, const void *value, void *result,
                         unsigned size, int laneMask);

/// `pointer`, after checking that it is `alignment`-aligned as the kernel
/// claims, and counting the view (dlc_emu_aligned_views).
void *dlc_emu_assume_aligned(const void *pointer, unsigned long alignment);

/// Waits for every thread of the calling thread's block: only in a step of
/// a block per iteration, whose block's threads all run at once.
void dlc_emu_syncthreads();
}

/// The elementwise groups' aligned views (their 16-byte vector path) are
/// counted and checked: a view the kernel claims aligned that is not would
/// be a misaligned vector access on a GPU, which x86 tolerates.
#define __builtin_assume_aligned(pointer, alignment)                           \
  dlc_emu_assume_aligned(pointer, alignment)

/// CUDA's uint3/dim3 as kernels read them (x only: launches are 1-d).
struct dlc_emu_dim3 {
  unsigned x, y, z;
};
/// Each emulated thread's own index, set by dlc_emu_launch.
extern thread_local dlc_emu_dim3 threadIdx, blockIdx;
/// The launch's geometry, the same for every thread.
extern dlc_emu_dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
/// One block runs at a time (cuda_shim.cpp), so a block's shared memory can
/// be storage shared by every host thread.
#define __shared__ static
#define __align__(bytes) __attribute__((aligned(bytes)))

/// CUDA's 16-byte vector of floats, which kernels load shared memory as.
struct alignas(16) float4 {
  float x, y, z, w;
};
static inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}

/// A fused multiply-add, rounded once as the GPU's FFMA is.
static inline float __fmaf_rn(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}
#define __syncthreads() dlc_emu_syncthreads()

static inline float __int_as_float(int bits) {
  float value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

static inline int __float_as_int(float value) {
  int bits;
  __builtin_memcpy(&bits, &value, sizeof bits);
  return bits;
}

static inline double __longlong_as_double(long long bits) {
  double value;
  __builtin_memcpy(&value, &bits, sizeof value);
  return value;
}

/// CUDA's overloads for 4- and 8-byte values (int, unsigned, long long,
/// float, double, ...): the generated code widens narrower types itself.
template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T value, int laneMask) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8,
                "__shfl_xor_sync takes 4- and 8-byte values");
  T result;
  dlc_emu_shuffle_xor(mask, &value, &result, sizeof(T), laneMask);
  return result;
}

/// Calls `kernel` with its dlc_buffers<N> filled from `addresses` (N of
/// them), as cuLaunchKernel does from kernelParams[0].
template <typename Buffers>
static inline void dlc_emu_call(void (*kernel)(Buffers, long long),
                                void *const *addresses, long long iterations) {
  Buffers buffers;
  __builtin_memcpy(&buffers, addresses, sizeof buffers);
  kernel(buffers, iterations);
}

/// The host entry of generated kernel `kernel`, for dlc_emu_launch.
#define DLC_EMU_ENTRY(kernel)                                                  \
  extern "C" void dlc_emu_entry_##kernel(void *const *addresses,               \
                                         long long iterations) {               \
    dlc_emu_call(kernel, addresses, iterations);                               \
  }

#endif // DLC_TESTS_MODELS_CUDA_EMULATION_CUDA_SHIM_H
