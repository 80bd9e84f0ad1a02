/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: TFLM's signal library from window to filter bank, bit-exact
 * with SignalWindow, SignalEnergy, SignalFilterBank and SignalFilterBankSquareRoot.
 *
 * signal_window: each frame of size samples times the int16 weights, shifted right
 * (arithmetically), saturated to int16.
 * signal_energy: re^2 + im^2 (uint32) of the bins in [start_index, end_index); the
 * other bins are 0 (TFLM leaves them unwritten; the models mask them).
 * signal_filter_bank: each channel's weighted sum of the energies plus the previous
 * channel's unweighted one, uint64 (int16 weights converted as C converts them, so a
 * negative weight wraps); channel 0, below the first band, is dropped. Every channel's
 * span is checked against the energies and the weights.
 * signal_filter_bank_sqrt: the integer square root, rounded up when the remainder
 * exceeds the root (but not past 0xFFFF for a value below 2^32, nor 0xFFFFFFFF), then
 * shifted right by shift (the FFT's scale, in [0, 31]).
 */
#include "rawint.h"

int32_t tvmk_signal_window_i16(const int16_t *input, const int16_t *weights, int16_t *output,
                               const struct tvmk_signal_window_params *params,
                               void *resource_handle)
{
    const struct tvmk_signal_window_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || weights == NULL || output == NULL || p == NULL || p->count < 0
        || p->size < 1 || p->count % p->size != 0 || p->shift < 0 || p->shift > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->count; ++i) {
        const int32_t v = ((int32_t)input[i] * weights[i % p->size]) >> p->shift;
        output[i] = (int16_t)(v < INT16_MIN ? INT16_MIN : (v > INT16_MAX ? INT16_MAX : v));
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_signal_energy_i16(const int16_t *input, uint32_t *output,
                               const struct tvmk_signal_energy_params *params,
                               void *resource_handle)
{
    const struct tvmk_signal_energy_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->start_index < 0
        || p->start_index > p->end_index || p->end_index > p->bins) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->bins; ++i) {
        const int32_t re = input[2 * i], im = input[2 * i + 1];
        output[i] = i >= p->start_index && i < p->end_index
                        ? (uint32_t)(re * re) + (uint32_t)(im * im)
                        : 0u;
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_signal_filter_bank_u32(const uint32_t *input, const int16_t *weights,
                                    const int16_t *unweights,
                                    const int16_t *channel_frequency_starts,
                                    const int16_t *channel_weight_starts,
                                    const int16_t *channel_widths, uint64_t *output,
                                    const struct tvmk_signal_filter_bank_params *params,
                                    void *resource_handle)
{
    const struct tvmk_signal_filter_bank_params *p = params;
    uint64_t carry = 0;
    int32_t ch, j;

    (void)resource_handle;
    if (input == NULL || weights == NULL || unweights == NULL
        || channel_frequency_starts == NULL || channel_weight_starts == NULL
        || channel_widths == NULL || output == NULL || p == NULL || p->num_channels < 1) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (ch = 0; ch <= p->num_channels; ++ch) {
        const int32_t f0 = channel_frequency_starts[ch], w0 = channel_weight_starts[ch];
        const int32_t width = channel_widths[ch];
        uint64_t acc = carry, unacc = 0;

        if (f0 < 0 || w0 < 0 || width < 0 || f0 + width > p->input_count
            || w0 + width > p->weight_count) {
            return TVM_DEVICE_ERR_INVALID;
        }
        for (j = 0; j < width; ++j) {
            acc += (uint64_t)(int64_t)weights[w0 + j] * input[f0 + j];
            unacc += (uint64_t)(int64_t)unweights[w0 + j] * input[f0 + j];
        }
        if (ch > 0) {
            output[ch - 1] = acc;
        }
        carry = unacc;
    }
    return TVM_DEVICE_OK;
}

/* floor(sqrt(v)), one bit pair at a time; *rest: v less its square. */
static uint64_t tvmk_isqrt(uint64_t v, uint64_t *rest)
{
    uint64_t root = 0, bit = (uint64_t)1 << 62;

    while (bit > v) {
        bit >>= 2;
    }
    while (bit != 0) {
        if (v >= root + bit) {
            v -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    *rest = v;
    return root;
}

int32_t tvmk_signal_filter_bank_sqrt_u64(const uint64_t *input, const int32_t *shift,
                                         uint32_t *output,
                                         const struct tvmk_unary_params *params,
                                         void *resource_handle)
{
    int32_t i;

    (void)resource_handle;
    if (input == NULL || shift == NULL || output == NULL || params == NULL
        || params->count < 0 || *shift < 0 || *shift > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < params->count; ++i) {
        const uint64_t cap = input[i] >> 32 == 0 ? 0xFFFFu : 0xFFFFFFFFu;
        uint64_t rest;
        uint64_t root = tvmk_isqrt(input[i], &rest);

        if (rest > root && root != cap) {
            ++root;
        }
        output[i] = (uint32_t)root >> *shift;
    }
    return TVM_DEVICE_OK;
}
