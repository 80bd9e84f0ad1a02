/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: the FFT of TFLM's signal library, bit-exact with KISS FFT
 * built for 16-bit fixed point (FIXED_POINT 16), as SignalFftAutoScale and SignalRfft
 * run it.
 *
 * signal_fft_shift: the left shift that makes the largest magnitude fill int16 (the
 * maximum kept in an int16, so -32768 wraps to itself, as TFLM keeps it).
 * signal_fft_scale: the samples shifted by it.
 * signal_rfft: per frame, the n = fft_length / 2 point complex FFT of the even and odd
 * samples (zero-padded) as real and imaginary parts, decimation in time: the samples
 * loaded in digit-reversed order into the output, then each stage's butterflies in
 * place, innermost stage first, each dividing its inputs by its radix (times
 * 32767 / radix in Q15, rounded); then the split into the n + 1 bins of the real
 * transform, in place, with one more halving. Products of int16 values are rounded back
 * to int16 by adding 2^14 and shifting right by 15; every result is stored as int16,
 * modulo 2^16. Twiddles are Q15 values computed at generation time.
 */
#include "rawint.h"

struct tvmk_cpx {
    int16_t r, i;
};

static inline int16_t tvmk_q15(uint32_t product_sum)
{
    return tvmk_s16(tvmk_s32(product_sum + 16384u) >> 15);
}

static inline int16_t tvmk_fixdiv(int16_t v, int32_t radix)
{
    return tvmk_q15((uint32_t)((int32_t)v * (32767 / radix)));
}

static inline struct tvmk_cpx tvmk_cmul(struct tvmk_cpx a, int16_t br, int16_t bi)
{
    struct tvmk_cpx m;

    m.r = tvmk_q15((uint32_t)((int32_t)a.r * br) - (uint32_t)((int32_t)a.i * bi));
    m.i = tvmk_q15((uint32_t)((int32_t)a.r * bi) + (uint32_t)((int32_t)a.i * br));
    return m;
}

static inline struct tvmk_cpx tvmk_cdiv(struct tvmk_cpx a, int32_t radix)
{
    a.r = tvmk_fixdiv(a.r, radix);
    a.i = tvmk_fixdiv(a.i, radix);
    return a;
}

static inline struct tvmk_cpx tvmk_cpx_of(int32_t r, int32_t i)
{
    struct tvmk_cpx c;

    c.r = tvmk_s16(r);
    c.i = tvmk_s16(i);
    return c;
}

/* Complex value k of interleaved (real, imaginary) int16 pairs, read and written. */
static inline struct tvmk_cpx tvmk_ld(const int16_t *z, int32_t k)
{
    struct tvmk_cpx c;

    c.r = z[2 * k];
    c.i = z[2 * k + 1];
    return c;
}

static inline void tvmk_st(int16_t *z, int32_t k, struct tvmk_cpx c)
{
    z[2 * k] = c.r;
    z[2 * k + 1] = c.i;
}

int32_t tvmk_signal_fft_shift_i16(const int16_t *input, int32_t *output,
                                  const struct tvmk_unary_params *params,
                                  void *resource_handle)
{
    int16_t top = 0;
    int32_t i, bits;

    (void)resource_handle;
    if (input == NULL || output == NULL || params == NULL || params->count < 0) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const int32_t v = input[i];
        if (v > top) {
            top = (int16_t)v;
        } else if (-v > top) {
            top = tvmk_s16(-v);
        }
    }
    /* a magnitude of 0, or -32768 (as uint32, 32 bits), needs no shift */
    bits = top > 0 ? 15 - tvmk_bit_length((uint64_t)top) : 0;
    *output = bits;
    return TVM_DEVICE_OK;
}

int32_t tvmk_signal_fft_scale_i16(const int16_t *input, const int32_t *shift, int16_t *output,
                                  const struct tvmk_unary_params *params,
                                  void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || shift == NULL || output == NULL || params == NULL
        || params->count < 0 || *shift < 0 || *shift > 15) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        output[i] = tvmk_s16((int32_t)((uint32_t)(int32_t)input[i] << *shift));
    }
    return TVM_DEVICE_OK;
}

static void tvmk_bfly2(int16_t *z, int32_t m, int32_t fstride,
                       const struct tvmk_signal_rfft_params *p)
{
    int32_t k;

    for (k = 0; k < m; ++k) {
        const struct tvmk_cpx a = tvmk_cdiv(tvmk_ld(z, k), 2);
        const struct tvmk_cpx t = tvmk_cmul(tvmk_cdiv(tvmk_ld(z, k + m), 2),
                                            p->tw_re[k * fstride], p->tw_im[k * fstride]);
        tvmk_st(z, k + m, tvmk_cpx_of(a.r - t.r, a.i - t.i));
        tvmk_st(z, k, tvmk_cpx_of(a.r + t.r, a.i + t.i));
    }
}

static void tvmk_bfly4(int16_t *z, int32_t m, int32_t fstride,
                       const struct tvmk_signal_rfft_params *p)
{
    int32_t k;

    for (k = 0; k < m; ++k) {
        const int32_t t1 = k * fstride, t2 = 2 * k * fstride, t3 = 3 * k * fstride;
        struct tvmk_cpx a0 = tvmk_cdiv(tvmk_ld(z, k), 4);
        const struct tvmk_cpx s0 = tvmk_cmul(tvmk_cdiv(tvmk_ld(z, k + m), 4), p->tw_re[t1],
                                             p->tw_im[t1]);
        const struct tvmk_cpx s1 = tvmk_cmul(tvmk_cdiv(tvmk_ld(z, k + 2 * m), 4),
                                             p->tw_re[t2], p->tw_im[t2]);
        const struct tvmk_cpx s2 = tvmk_cmul(tvmk_cdiv(tvmk_ld(z, k + 3 * m), 4),
                                             p->tw_re[t3], p->tw_im[t3]);
        const struct tvmk_cpx s5 = tvmk_cpx_of(a0.r - s1.r, a0.i - s1.i);
        const struct tvmk_cpx s3 = tvmk_cpx_of(s0.r + s2.r, s0.i + s2.i);
        const struct tvmk_cpx s4 = tvmk_cpx_of(s0.r - s2.r, s0.i - s2.i);

        a0 = tvmk_cpx_of(a0.r + s1.r, a0.i + s1.i);
        tvmk_st(z, k + 2 * m, tvmk_cpx_of(a0.r - s3.r, a0.i - s3.i));
        tvmk_st(z, k, tvmk_cpx_of(a0.r + s3.r, a0.i + s3.i));
        tvmk_st(z, k + m, tvmk_cpx_of(s5.r + s4.i, s5.i - s4.r));
        tvmk_st(z, k + 3 * m, tvmk_cpx_of(s5.r - s4.i, s5.i + s4.r));
    }
}

/* The frame's samples, as n complex values, in the output in digit-reversed order. */
static void tvmk_rfft_load(const int16_t *x, int16_t *z, int32_t n,
                           const struct tvmk_signal_rfft_params *p)
{
    int32_t i, s;

    for (i = 0; i < n; ++i) {
        int32_t pos = 0, rest = i, span = n;
        for (s = 0; s < p->stages; ++s) {
            span /= p->radices[s];
            pos += (rest % p->radices[s]) * span;
            rest /= p->radices[s];
        }
        z[2 * pos] = 2 * i < p->length ? x[2 * i] : 0;
        z[2 * pos + 1] = 2 * i + 1 < p->length ? x[2 * i + 1] : 0;
    }
}

/* The n complex bins in z (n + 1 slots) made the real transform's n + 1 bins. */
static void tvmk_rfft_split(int16_t *z, int32_t n,
                            const struct tvmk_signal_rfft_params *p)
{
    const struct tvmk_cpx dc = tvmk_cdiv(tvmk_ld(z, 0), 2);
    int32_t k;

    tvmk_st(z, 0, tvmk_cpx_of(dc.r + dc.i, 0));
    tvmk_st(z, n, tvmk_cpx_of(dc.r - dc.i, 0));
    for (k = 1; k <= n / 2; ++k) {
        const struct tvmk_cpx back = tvmk_ld(z, n - k);
        const struct tvmk_cpx fk = tvmk_cdiv(tvmk_ld(z, k), 2);
        const struct tvmk_cpx fnk = tvmk_cdiv(tvmk_cpx_of(back.r, -back.i), 2);
        const struct tvmk_cpx f1 = tvmk_cpx_of(fk.r + fnk.r, fk.i + fnk.i);
        const struct tvmk_cpx f2 = tvmk_cpx_of(fk.r - fnk.r, fk.i - fnk.i);
        const struct tvmk_cpx t = tvmk_cmul(f2, p->split_re[k - 1], p->split_im[k - 1]);

        tvmk_st(z, k, tvmk_cpx_of((f1.r + t.r) >> 1, (f1.i + t.i) >> 1));
        tvmk_st(z, n - k, tvmk_cpx_of((f1.r - t.r) >> 1, (t.i - f1.i) >> 1));
    }
}

static int tvmk_rfft_valid(const struct tvmk_signal_rfft_params *p)
{
    int32_t s, n = 1;

    if (p->frames < 0 || p->length < 0 || p->length > p->fft_length || p->fft_length < 4
        || p->stages < 1 || p->radices == NULL || p->tw_re == NULL || p->tw_im == NULL
        || p->split_re == NULL || p->split_im == NULL) {
        return 0;
    }
    for (s = 0; s < p->stages; ++s) {
        if (p->radices[s] != 2 && p->radices[s] != 4) {
            return 0;
        }
        n *= p->radices[s];
    }
    return 2 * n == p->fft_length;
}

int32_t tvmk_signal_rfft_i16(const int16_t *input, int16_t *output,
                             const struct tvmk_signal_rfft_params *params,
                             void *resource_handle)
{
    const struct tvmk_signal_rfft_params *p = params;
    int32_t f, s, g;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || !tvmk_rfft_valid(p)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (f = 0; f < p->frames; ++f) {
        const int32_t n = p->fft_length / 2;
        int16_t *z = output + (size_t)f * (size_t)(2 * n + 2);
        int32_t m = 1, fstride = n;

        tvmk_rfft_load(input + (size_t)f * (size_t)p->length, z, n, p);
        for (s = p->stages - 1; s >= 0; --s) {
            const int32_t radix = p->radices[s];
            fstride /= radix;
            for (g = 0; g < n; g += radix * m) {
                if (radix == 4) {
                    tvmk_bfly4(z + 2 * g, m, fstride, p);
                } else {
                    tvmk_bfly2(z + 2 * g, m, fstride, p);
                }
            }
            m *= radix;
        }
        tvmk_rfft_split(z, n, p);
    }
    return TVM_DEVICE_OK;
}
