//! codegen/prelude/attention.h: The device code of the fused attention kernels
//! (AttentionKernels.h): tiles of queries against streamed keys and values with
//! an online softmax, forward and backward. Embedded verbatim in kernel sources
//! without these //! lines (codegen/prelude/embed.cmake).

// Fused attention (codegen/AttentionKernels.h). Tiles are row-major in
// shared memory with rows of dlc_attention_stride(K) floats: K rounded up
// to 8 (the tail zero-filled) plus 4, so that rows start 16 bytes apart in
// an odd number of 16-byte steps and a warp's float4 reads of 4 or 8
// consecutive rows hit different banks. Thread t is column t % 8 of thread
// row t / 8 of kRows = R / 4; it owns the block's rows t / 8 + kRows * r
// (r < 4), the score columns t % 8 + 8 * c and the output columns
// 4 * (t % 8 + 8 * c) + 0..3, so that each of its shared-memory reads is
// a float4 that feeds 16 multiply-adds.
struct dlc_attention_no_mask {
  __device__ float score(float s, int64_t, int64_t) const { return s; }
  __device__ int64_t keys_end(int64_t, int64_t tk) const { return tk; }
  __device__ int64_t queries_begin(int64_t) const { return 0; }
};
// Query i sees key j <= i: the keys past a tile's last query and the
// queries before a tile's first key are skipped.
struct dlc_attention_causal {
  __device__ float score(float s, int64_t i, int64_t j) const {
    return j <= i ? s : -dlc_inf_f32();
  }
  __device__ int64_t keys_end(int64_t last_query, int64_t tk) const {
    return last_query + 1 < tk ? last_query + 1 : tk;
  }
  __device__ int64_t queries_begin(int64_t first_key) const {
    return first_key;
  }
};
// An additive bias, read at (i, j) with its broadcast strides from the
// head's first element `p`.
struct dlc_attention_bias {
  const float *p;
  int64_t row_stride, col_stride;
  __device__ float score(float s, int64_t i, int64_t j) const {
    return s + p[i * row_stride + j * col_stride];
  }
  __device__ int64_t keys_end(int64_t, int64_t tk) const { return tk; }
  __device__ int64_t queries_begin(int64_t) const { return 0; }
};

__host__ __device__ constexpr int dlc_attention_stride(int k) {
  return (k + 7) / 8 * 8 + 4;
}

// The sum and the maximum of a thread row's 8 values (consecutive lanes):
// every lane gets the same bits, as a + b == b + a.
DLC_FN float dlc_row8_sum(float v) {
  for (int offset = 1; offset < 8; offset *= 2)
    v += dlc_shfl_xor(v, offset);
  return v;
}
DLC_FN float dlc_row8_max(float v) {
  for (int offset = 1; offset < 8; offset *= 2)
    v = dlc_max(v, dlc_shfl_xor(v, offset));
  return v;
}

DLC_FN float4 dlc_load4(const float *p) {
  return *reinterpret_cast<const float4 *>(p);
}

// a . b + acc in 4 fused multiply-adds: modules compile with --fmad=false
// (elementwise kernels round as the CPU's do), which would otherwise split
// every product of the tiles into a multiply and an add.
DLC_FN float dlc_dot4(float4 a, float4 b, float acc) {
  acc = __fmaf_rn(a.x, b.x, acc);
  acc = __fmaf_rn(a.y, b.y, acc);
  acc = __fmaf_rn(a.z, b.z, acc);
  return __fmaf_rn(a.w, b.w, acc);
}

// Rows [first, first + ROWS) of a row-major [rows, COLS] matrix into a
// tile, zeros past `rows` and in each row's padding.
template <int ROWS, int COLS, int THREADS>
DLC_FN void dlc_attention_load(float *tile, const float *m, int64_t first,
                               int64_t rows) {
  constexpr int kWidth = (COLS + 7) / 8 * 8;
  for (int e = threadIdx.x; e < ROWS * kWidth; e += THREADS) {
    const int r = e / kWidth, c = e % kWidth;
    tile[r * dlc_attention_stride(COLS) + c] =
        first + r < rows && c < COLS ? m[(first + r) * COLS + c] : 0.0f;
  }
}

// acc[r][c] += a[tr + kRows r] . b[tc + 8c] over K columns: the thread's
// rows of tile `a` against its columns' rows of tile `b` (Q K^T from rows
// of both).
template <int K, int COLS, int kRows>
DLC_FN void dlc_attention_abt(float (&acc)[4][COLS], const float *a,
                              const float *b, int tr, int tc) {
  constexpr int kStride = dlc_attention_stride(K);
  for (int k = 0; k < K; k += 4) {
    float4 x[4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
      x[r] = dlc_load4(a + (tr + kRows * r) * kStride + k);
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      const float4 y = dlc_load4(b + (tc + 8 * c) * kStride + k);
#pragma unroll
      for (int r = 0; r < 4; ++r)
        acc[r][c] = dlc_dot4(x[r], y, acc[r][c]);
    }
  }
}

// acc[r][c][e] += sum_j p[tr + kRows r][j] * b[j][4 (tc + 8c) + e] for the
// column groups below N of a [J, N] tile `b`: a probability tile times
// streamed rows.
template <int J, int N, int CHUNKS, int kRows>
DLC_FN void dlc_attention_ab(float (&acc)[4][CHUNKS][4], const float *p,
                             const float *b, int tr, int tc) {
  constexpr int kStride = dlc_attention_stride(J), kB = dlc_attention_stride(N);
  for (int j = 0; j < J; j += 4) {
    float4 x[4];
#pragma unroll
    for (int r = 0; r < 4; ++r)
      x[r] = dlc_load4(p + (tr + kRows * r) * kStride + j);
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c) {
      const int column = 4 * (tc + 8 * c);
      if (column >= N)
        continue;
      const float4 y0 = dlc_load4(b + j * kB + column);
      const float4 y1 = dlc_load4(b + (j + 1) * kB + column);
      const float4 y2 = dlc_load4(b + (j + 2) * kB + column);
      const float4 y3 = dlc_load4(b + (j + 3) * kB + column);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        acc[r][c][0] = dlc_dot4(x[r], make_float4(y0.x, y1.x, y2.x, y3.x), acc[r][c][0]);
        acc[r][c][1] = dlc_dot4(x[r], make_float4(y0.y, y1.y, y2.y, y3.y), acc[r][c][1]);
        acc[r][c][2] = dlc_dot4(x[r], make_float4(y0.z, y1.z, y2.z, y3.z), acc[r][c][2]);
        acc[r][c][3] = dlc_dot4(x[r], make_float4(y0.w, y1.w, y2.w, y3.w), acc[r][c][3]);
      }
    }
  }
}

// Stores a thread's accumulated rows `acc` of a [.., N] result: rows
// first + tr + kRows r below `rows`, column groups below N.
template <int N, int CHUNKS, int kRows>
DLC_FN void dlc_attention_store(float *out, const float (&acc)[4][CHUNKS][4],
                                int64_t first, int64_t rows, int tr, int tc,
                                const float (&scale)[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    const int64_t row = first + tr + kRows * r;
    if (row >= rows)
      continue;
#pragma unroll
    for (int c = 0; c < CHUNKS; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int column = 4 * (tc + 8 * c) + e;
        if (column < N)
          out[row * N + column] = acc[r][c][e] * scale[r];
      }
  }
}

// dlc.attention over n blocks of R queries of one head each: q [heads, tq,
// D], k [heads, tk, D], v [heads, tk, DV] -> out [heads, tq, DV], lse
// [heads, tq]. Key tiles of W stream through shared memory; each row keeps
// its running maximum m and sum l and rescales its output when m grows.
template <int D, int DV, int R, int W, typename MaskOf>
DLC_FN void dlc_attention_forward(const float *q, const float *k,
                                  const float *v, float *out, float *lse,
                                  int64_t tq, int64_t tk, float scale,
                                  int64_t n, MaskOf mask_of) {
  constexpr int kThreads = 2 * R, kRows = R / 4, kCols = W / 8,
                kOut = (DV + 31) / 32, kP = dlc_attention_stride(W);
  __shared__ __align__(16) float qs[R * dlc_attention_stride(D)];
  __shared__ __align__(16) float ks[W * dlc_attention_stride(D)];
  __shared__ __align__(16) float vs[W * dlc_attention_stride(DV)];
  __shared__ __align__(16) float ps[R * kP];
  const int tr = threadIdx.x / 8, tc = threadIdx.x % 8;
  const int64_t tiles = (tq + R - 1) / R;
  for (int64_t it = blockIdx.x; it < n; it += gridDim.x) {
    const int64_t head = it / tiles, q0 = it % tiles * R;
    const auto mask = mask_of(head);
    __syncthreads(); // the last iteration's reads of qs are done
    dlc_attention_load<R, D, kThreads>(qs, q + head * tq * D, q0, tq);
    float m[4], l[4], acc[4][kOut][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      m[r] = -dlc_inf_f32();
      l[r] = 0.0f;
#pragma unroll
      for (int c = 0; c < kOut; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          acc[r][c][e] = 0.0f;
    }
    const int64_t keys = mask.keys_end(dlc_min_index(q0 + R, tq) - 1, tk);
    for (int64_t k0 = 0; k0 < keys; k0 += W) {
      __syncthreads(); // the last tile's reads of ks, vs and ps are done
      dlc_attention_load<W, D, kThreads>(ks, k + head * tk * D, k0, tk);
      dlc_attention_load<W, DV, kThreads>(vs, v + head * tk * DV, k0, tk);
      __syncthreads();
      float s[4][kCols] = {};
      dlc_attention_abt<D, kCols, kRows>(s, qs, ks, tr, tc);
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int64_t i = q0 + tr + kRows * r;
        float top = -dlc_inf_f32();
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          const int64_t j = k0 + tc + 8 * c;
          // Rows past tq (the last tile's) are computed but never stored;
          // they must not read the bias either.
          s[r][c] = i < tq && j < tk ? mask.score(s[r][c] * scale, i, j)
                                     : -dlc_inf_f32();
          top = dlc_max(top, s[r][c]);
        }
        const float next = dlc_max(m[r], dlc_row8_max(top));
        // A row without a finite score yet shifts by 0: exp(-inf - 0) is
        // the 0 it must add, where exp(-inf - -inf) would be NaN.
        const float shift = next == -dlc_inf_f32() ? 0.0f : next;
        const float rescale = dlc_exp(m[r] - shift);
        float sum = 0.0f;
#pragma unroll
        for (int c = 0; c < kCols; ++c) {
          const float p = dlc_exp(s[r][c] - shift);
          ps[(tr + kRows * r) * kP + tc + 8 * c] = p;
          sum += p;
        }
        l[r] = l[r] * rescale + dlc_row8_sum(sum);
#pragma unroll
        for (int c = 0; c < kOut; ++c)
#pragma unroll
          for (int e = 0; e < 4; ++e)
            acc[r][c][e] *= rescale;
        m[r] = next;
      }
      __syncthreads();
      dlc_attention_ab<W, DV, kOut, kRows>(acc, ps, vs, tr, tc);
    }
    // A row whose scores are all -inf has l == 0: NaN, as the softmax's
    // 0 / 0.
    float inverse[4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      inverse[r] = 1.0f / l[r];
      const int64_t i = q0 + tr + kRows * r;
      if (tc == 0 && i < tq)
        lse[head * tq + i] = l[r] > 0.0f ? m[r] + dlc_log(l[r]) : dlc_nan_f32();
    }
    dlc_attention_store<DV, kOut, kRows>(out + head * tq * DV, acc, q0, tq,
                                         tr, tc, inverse);
  }
}

// Writes a thread's 4 x COLS block of scores or probabilities into the
// block's [R, W] tile.
template <int W, int COLS, int kRows>
DLC_FN void dlc_attention_put(float *tile, const float (&block)[4][COLS],
                              int tr, int tc) {
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      tile[(tr + kRows * r) * dlc_attention_stride(W) + tc + 8 * c] =
          block[r][c];
}

// A thread's 4 x COLS block of P = exp(score - lse) (0 outside the
// scores) and dS = P * (dout . v - rowsum(dout * out)) * scale, from the
// owned and streamed tiles of q or k (`*_d`) and of dout or v (`*_dv`);
// `at(r, c, i, j, lse, dot)` says which query i and key j the block's
// element (r, c) is, and that query's lse and rowsum.
template <int D, int DV, int COLS, int kRows, typename Mask, typename At>
DLC_FN void dlc_attention_gradient_tile(
    float (&p)[4][COLS], float (&ds)[4][COLS], const float *own_d,
    const float *str_d, const float *own_dv, const float *str_dv, int tr,
    int tc, float scale, const Mask &mask, At at, int64_t tq, int64_t tk) {
  float s[4][COLS] = {};
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < COLS; ++c)
      ds[r][c] = 0.0f;
  dlc_attention_abt<D, COLS, kRows>(s, own_d, str_d, tr, tc);
  dlc_attention_abt<DV, COLS, kRows>(ds, own_dv, str_dv, tr, tc);
#pragma unroll
  for (int r = 0; r < 4; ++r)
#pragma unroll
    for (int c = 0; c < COLS; ++c) {
      int64_t i, j;
      float lse, dot;
      at(r, c, i, j, lse, dot);
      p[r][c] = i < tq && j < tk
                    ? dlc_exp(mask.score(s[r][c] * scale, i, j) - lse)
                    : 0.0f;
      ds[r][c] = p[r][c] * (ds[r][c] - dot) * scale;
    }
}

// dlc.attention_grad over n blocks: the first heads * ceil(tk / R) own R
// keys each and stream query tiles of W (dK, dV), the rest own R queries
// each and stream key tiles of W (dQ). P = exp(score - lse) and
// dS = P * (dout . v - rowsum(dout * out)) * scale are recomputed in both.
template <int D, int DV, int R, int W, typename MaskOf>
DLC_FN void dlc_attention_backward(const float *q, const float *k,
                                   const float *v, const float *out,
                                   const float *lse, const float *dout,
                                   float *dq, float *dk, float *dv, int64_t tq,
                                   int64_t tk, float scale, int64_t heads,
                                   int64_t n, MaskOf mask_of) {
  constexpr int kThreads = 2 * R, kRows = R / 4, kCols = W / 8,
                kD = (D + 31) / 32, kDv = (DV + 31) / 32,
                kP = dlc_attention_stride(W);
  // Owned rows of a [.., D] and a [.., DV] matrix, streamed rows of two
  // more, the probability (then dS) tile, and the streamed queries' lse and
  // rowsum(dout * out).
  __shared__ __align__(16) float own_d[R * dlc_attention_stride(D)];
  __shared__ __align__(16) float own_dv[R * dlc_attention_stride(DV)];
  __shared__ __align__(16) float str_d[W * dlc_attention_stride(D)];
  __shared__ __align__(16) float str_dv[W * dlc_attention_stride(DV)];
  __shared__ __align__(16) float tile[R * kP];
  __shared__ float row_lse[W], row_dot[W];
  const int tr = threadIdx.x / 8, tc = threadIdx.x % 8;
  const int64_t key_tiles = (tk + R - 1) / R, query_tiles = (tq + R - 1) / R;
  const float ones[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  for (int64_t it = blockIdx.x; it < n; it += gridDim.x) {
    __syncthreads(); // the last iteration's reads of shared memory are done
    if (it < heads * key_tiles) {
      const int64_t head = it / key_tiles, k0 = it % key_tiles * R;
      const auto mask = mask_of(head);
      const float *qh = q + head * tq * D, *oh = out + head * tq * DV,
                  *doh = dout + head * tq * DV, *lh = lse + head * tq;
      dlc_attention_load<R, D, kThreads>(own_d, k + head * tk * D, k0, tk);
      dlc_attention_load<R, DV, kThreads>(own_dv, v + head * tk * DV, k0, tk);
      float gk[4][kD][4] = {}, gv[4][kDv][4] = {};
      for (int64_t q0 = mask.queries_begin(k0) / W * W; q0 < tq; q0 += W) {
        __syncthreads(); // the last tile's reads are done
        dlc_attention_load<W, D, kThreads>(str_d, qh, q0, tq);
        dlc_attention_load<W, DV, kThreads>(str_dv, doh, q0, tq);
        for (int c = threadIdx.x; c < W; c += kThreads) {
          const int64_t i = q0 + c;
          float dot = 0.0f;
          if (i < tq)
            for (int e = 0; e < DV; ++e)
              dot += doh[i * DV + e] * oh[i * DV + e];
          row_dot[c] = dot;
          row_lse[c] = i < tq ? lh[i] : 0.0f;
        }
        __syncthreads();
        // Transposed: rows are keys, columns queries.
        float p[4][kCols], ds[4][kCols];
        dlc_attention_gradient_tile<D, DV, kCols, kRows>(
            p, ds, own_d, str_d, own_dv, str_dv, tr, tc, scale, mask,
            [&](int r, int c, int64_t &i, int64_t &j, float &lse, float &dot) {
              i = q0 + tc + 8 * c;
              j = k0 + tr + kRows * r;
              lse = row_lse[tc + 8 * c];
              dot = row_dot[tc + 8 * c];
            },
            tq, tk);
        dlc_attention_put<W, kCols, kRows>(tile, p, tr, tc);
        __syncthreads();
        dlc_attention_ab<W, DV, kDv, kRows>(gv, tile, str_dv, tr, tc);
        __syncthreads();
        dlc_attention_put<W, kCols, kRows>(tile, ds, tr, tc);
        __syncthreads();
        dlc_attention_ab<W, D, kD, kRows>(gk, tile, str_d, tr, tc);
      }
      dlc_attention_store<D, kD, kRows>(dk + head * tk * D, gk, k0, tk, tr, tc,
                                        ones);
      dlc_attention_store<DV, kDv, kRows>(dv + head * tk * DV, gv, k0, tk, tr,
                                          tc, ones);
    } else {
      const int64_t rest = it - heads * key_tiles;
      const int64_t head = rest / query_tiles, q0 = rest % query_tiles * R;
      const auto mask = mask_of(head);
      const float *oh = out + head * tq * DV, *lh = lse + head * tq;
      dlc_attention_load<R, D, kThreads>(own_d, q + head * tq * D, q0, tq);
      dlc_attention_load<R, DV, kThreads>(own_dv, dout + head * tq * DV, q0,
                                          tq);
      __syncthreads();
      float row_l[4], row_d[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int64_t i = q0 + tr + kRows * r;
        float dot = 0.0f;
        if (i < tq)
          for (int e = tc; e < DV; e += 8)
            dot += own_dv[(tr + kRows * r) * dlc_attention_stride(DV) + e] *
                   oh[i * DV + e];
        row_d[r] = dlc_row8_sum(dot);
        row_l[r] = i < tq ? lh[i] : 0.0f;
      }
      float gq[4][kD][4] = {};
      const int64_t keys = mask.keys_end(dlc_min_index(q0 + R, tq) - 1, tk);
      for (int64_t k0 = 0; k0 < keys; k0 += W) {
        __syncthreads(); // the last tile's reads are done
        dlc_attention_load<W, D, kThreads>(str_d, k + head * tk * D, k0, tk);
        dlc_attention_load<W, DV, kThreads>(str_dv, v + head * tk * DV, k0,
                                            tk);
        __syncthreads();
        float p[4][kCols], ds[4][kCols];
        dlc_attention_gradient_tile<D, DV, kCols, kRows>(
            p, ds, own_d, str_d, own_dv, str_dv, tr, tc, scale, mask,
            [&](int r, int c, int64_t &i, int64_t &j, float &lse, float &dot) {
              i = q0 + tr + kRows * r;
              j = k0 + tc + 8 * c;
              lse = row_l[r];
              dot = row_d[r];
            },
            tq, tk);
        dlc_attention_put<W, kCols, kRows>(tile, ds, tr, tc);
        __syncthreads();
        dlc_attention_ab<W, D, kD, kRows>(gq, tile, str_d, tr, tc);
      }
      dlc_attention_store<D, kD, kRows>(dq + head * tq * D, gq, q0, tq, tr, tc,
                                        ones);
    }
  }
}
