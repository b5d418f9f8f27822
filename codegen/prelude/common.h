//! codegen/prelude/common.h: Helpers shared by both targets, written once over
//! DLC_FN (the function qualifier) and the math functions each target names.
//! Embedded verbatim in kernel sources without these //! lines
//! (codegen/prelude/embed.cmake).

template <typename T> DLC_FN T dlc_neg(T x) { return (T)(0 - x); }
template <typename T> DLC_FN T dlc_abs(T x) { return x < (T)0 ? (T)(0 - x) : x; }
template <typename T> DLC_FN T dlc_sign(T x) {
  return x != x ? x : (x > (T)0 ? (T)1 : (x < (T)0 ? (T)-1 : (T)0));
}
template <typename T> DLC_FN T dlc_max(T a, T b) {
  return a != a ? a : (b != b ? b : (a < b ? b : a));
}
template <typename T> DLC_FN T dlc_min(T a, T b) {
  return a != a ? a : (b != b ? b : (b < a ? b : a));
}
template <typename T> DLC_FN T dlc_div(T a, T b) {
  if constexpr ((T)0.5 != (T)0) {
    return a / b;
  } else {
    // Integer division by zero is 0 and signed INT_MIN / -1 wraps, as the
    // evaluator.
    if constexpr ((T)-1 < (T)0)
      return b == 0 ? (T)0 : (b == (T)-1 ? (T)(0 - a) : a / b);
    else
      return b == 0 ? (T)0 : a / b;
  }
}
template <typename T> DLC_FN T dlc_rem(T a, T b) {
  if constexpr ((T)0.5 != (T)0) {
    return dlc_fmod(a, b);
  } else {
    if constexpr ((T)-1 < (T)0)
      return b == 0 || b == (T)-1 ? (T)0 : a % b;
    else
      return b == 0 ? (T)0 : a % b;
  }
}
template <typename T> DLC_FN T dlc_reciprocal(T x) { return (T)1 / x; }
template <typename T> DLC_FN T dlc_rsqrt(T x) { return (T)1 / dlc_sqrt(x); }
template <typename T> DLC_FN T dlc_sigmoid(T x) {
  return (T)1 / ((T)1 + dlc_exp(-x));
}
DLC_FN int64_t dlc_min_index(int64_t a, int64_t b) { return a < b ? a : b; }
DLC_FN int64_t dlc_wrap_index(int64_t i, int64_t n) { return i < 0 ? i + n : i; }
// Philox4x32-10, as runtime/support/Philox.h: element `index` of stream
// `stream` under `seed`, in [0, 1).
DLC_FN double dlc_philox_uniform(uint64_t seed, uint64_t stream,
                                 uint64_t index) {
  uint32_t c0 = (uint32_t)index, c1 = (uint32_t)(index >> 32);
  uint32_t c2 = (uint32_t)stream, c3 = 0;
  uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = (uint64_t)0xD2511F53u * c0;
    uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;
    uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n1 = (uint32_t)p1;
    uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1, n3 = (uint32_t)p0;
    c0 = n0, c1 = n1, c2 = n2, c3 = n3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (double)c0 * 0x1.0p-32;
}
// Whether dropout `stream` keeps element `index` under `seed`.
DLC_FN bool dlc_dropout_keeps(uint64_t seed, uint64_t stream, uint64_t index,
                              double ratio) {
  return dlc_philox_uniform(seed, stream, index) >= ratio;
}
// top_k's strict order (the evaluator's): NaN before every number for the
// largest, after for the smallest; equal values by position.
template <typename T>
DLC_FN bool dlc_topk_before(T a, int64_t ia, T b, int64_t ib, bool largest) {
  bool nanA = a != a, nanB = b != b;
  if (nanA != nanB)
    return largest ? nanA : nanB;
  if (!nanA && a != b)
    return largest ? a > b : a < b;
  return ia < ib;
}
DLC_FN int64_t dlc_clamp_index(int64_t i, int64_t n) {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}
DLC_FN int64_t dlc_reflect_index(int64_t i, int64_t n) {
  if (n == 1)
    return 0;
  int64_t period = 2 * (n - 1);
  i = i % period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}
