//===- DirectConv.h - Convolutions as plain loops ---------------*- C++ -*-===//
//
// The N-d grouped convolution and its two gradients computed by definition,
// accumulating in double: the CPU's float64 convolution (oneDNN has none)
// and its fallback for float32 shapes oneDNN does not take (more than three
// spatial dimensions). Each output channel plane (forward), input channel
// plane (backward data) or filter (backward filter) is one unit of work for
// the thread pool.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_RUNTIME_CPU_DIRECTCONV_H
#define DLC_RUNTIME_CPU_DIRECTCONV_H

#include "runtime/cpu/ConvGeometry.h"
#include "runtime/cpu/ThreadPool.h"

namespace dlc::cpu {

/// y = conv(x, w).
template <typename T>
void directConvForward(const ConvGeometry &g, const T *x, const T *w, T *y,
                       ThreadPool &pool);
/// dx = the gradient of conv(x, w) with respect to x, given dy.
template <typename T>
void directConvBackwardData(const ConvGeometry &g, const T *dy, const T *w,
                            T *dx, ThreadPool &pool);
/// dw = the gradient of conv(x, w) with respect to w, given dy.
template <typename T>
void directConvBackwardFilter(const ConvGeometry &g, const T *x, const T *dy,
                              T *dw, ThreadPool &pool);

} // namespace dlc::cpu

#endif // DLC_RUNTIME_CPU_DIRECTCONV_H
