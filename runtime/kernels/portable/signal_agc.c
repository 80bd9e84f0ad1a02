/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: TFLM's signal library after the filter bank, bit-exact with
 * SignalFilterBankSpectralSubtraction (as two kernels), SignalPCAN and
 * SignalFilterBankLog.
 *
 * signal_noise_estimate: per channel, the estimate kept in state (a state tensor of
 * the model, zero after a reset) smoothed toward the input scaled up by smoothing_bits
 * (even channels with smoothing, odd ones with alternate_smoothing, in Q of
 * spectral_subtraction_bits), clamped to the scaled input when clamping; updated in
 * place and written to the output too.
 * signal_spectral_subtraction: the scaled input less the estimate (at most the input),
 * scaled back, at least min_signal_remaining of the input.
 * signal_pcan: the gain of the noise estimate (a piecewise quadratic in gain_lut, three
 * coefficients an octave), the SNR (input * gain >> snr_shift) softly compressed.
 * signal_filter_bank_log: output_scale * ln(input << input_correction_bits) in fixed
 * point (log2 from the highest bit and a corrected linear interpolation, lut), rounded,
 * at most INT16_MAX; 0 for a shifted input of 0 or 1.
 */
#include "rawint.h"

#define TVMK_PCAN_SNR_BITS 12
#define TVMK_PCAN_OUTPUT_BITS 6
#define TVMK_LOG_COEFF 45426u /* 65536 * ln(2), rounded */

int32_t tvmk_signal_noise_estimate_u32(const uint32_t *input, uint32_t *state,
                                       uint32_t *output,
                                       const struct tvmk_signal_noise_params *params,
                                       void *resource_handle)
{
    const struct tvmk_signal_noise_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || state == NULL || output == NULL || p == NULL || p->count < 0
        || p->smoothing_bits < 0 || p->smoothing_bits > 31
        || p->spectral_subtraction_bits < 0 || p->spectral_subtraction_bits > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->count; ++i) {
        const uint32_t smoothing = (uint32_t)((i & 1) ? p->alternate_smoothing : p->smoothing);
        const uint32_t rest = (uint32_t)((i & 1) ? p->alternate_one_minus_smoothing
                                                 : p->one_minus_smoothing);
        const uint32_t up = input[i] << p->smoothing_bits;
        uint32_t estimate = (uint32_t)(((uint64_t)up * smoothing
                                        + (uint64_t)state[i] * rest)
                                       >> p->spectral_subtraction_bits);

        if (p->clamping && estimate > up) {
            estimate = up;
        }
        state[i] = estimate;
        output[i] = estimate;
    }
    return TVM_DEVICE_OK;
}

int32_t tvmk_signal_spectral_subtraction_u32(
    const uint32_t *input, const uint32_t *noise, uint32_t *output,
    const struct tvmk_signal_subtraction_params *params, void *resource_handle)
{
    const struct tvmk_signal_subtraction_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || noise == NULL || output == NULL || p == NULL || p->count < 0
        || p->smoothing_bits < 0 || p->smoothing_bits > 31
        || p->spectral_subtraction_bits < 0 || p->spectral_subtraction_bits > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->count; ++i) {
        const uint32_t up = input[i] << p->smoothing_bits;
        const uint32_t estimate = noise[i] < up ? noise[i] : up;
        const uint32_t floor = (uint32_t)(((uint64_t)input[i]
                                           * (uint32_t)p->min_signal_remaining)
                                          >> p->spectral_subtraction_bits);
        const uint32_t left = (up - estimate) >> p->smoothing_bits;

        output[i] = left > floor ? left : floor;
    }
    return TVM_DEVICE_OK;
}

/* The gain for noise estimate x: lut[x] up to 2, else a quadratic in x's octave. */
static int16_t tvmk_pcan_gain(uint32_t x, const int16_t *lut)
{
    int32_t octave, frac, r;
    const int16_t *c;

    if (x <= 2) {
        return (int16_t)lut[x]; /* the table holds the gains of 0, 1 and 2 */
    }
    octave = tvmk_bit_length(x);
    c = lut + 4 * octave - 6;
    frac = (int32_t)((octave < 11 ? x << (11 - octave) : x >> (octave - 11)) & 0x3FFu);
    r = ((int32_t)c[2] * frac) >> 5;
    r = tvmk_s32((uint32_t)r + ((uint32_t)(int32_t)c[1] << 5));
    r = tvmk_s32((uint32_t)r * (uint32_t)frac);
    r = tvmk_s32((uint32_t)r + (1u << 14)) >> 15;
    return tvmk_s16(tvmk_s32((uint32_t)r + (uint32_t)(int32_t)c[0]));
}

int32_t tvmk_signal_pcan_u32(const uint32_t *input, const uint32_t *noise,
                             const int16_t *gain_lut, uint32_t *output,
                             const struct tvmk_signal_pcan_params *params,
                             void *resource_handle)
{
    const struct tvmk_signal_pcan_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || noise == NULL || gain_lut == NULL || output == NULL || p == NULL
        || p->count < 0 || p->snr_shift < 0 || p->snr_shift > 63) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->count; ++i) {
        const uint32_t gain = (uint32_t)(int32_t)tvmk_pcan_gain(noise[i], gain_lut);
        const uint32_t snr = (uint32_t)(((uint64_t)input[i] * gain) >> p->snr_shift);

        if (snr < (2u << TVMK_PCAN_SNR_BITS)) {
            output[i] = (snr * snr) >> (2 + 2 * TVMK_PCAN_SNR_BITS - TVMK_PCAN_OUTPUT_BITS);
        } else {
            output[i] = (snr >> (TVMK_PCAN_SNR_BITS - TVMK_PCAN_OUTPUT_BITS))
                        - (1u << TVMK_PCAN_OUTPUT_BITS);
        }
    }
    return TVM_DEVICE_OK;
}

/* output_scale * ln(x) in Q16 rounded, for x > 1. */
static uint32_t tvmk_log_scaled(uint32_t x, uint32_t output_scale, const uint16_t *lut)
{
    const int32_t whole = tvmk_bit_length(x) - 1;
    int32_t frac = (int32_t)(x - (1u << whole));
    int32_t seg, rel;
    uint32_t log2, loge;

    frac = whole < 16 ? frac << (16 - whole) : frac >> (whole - 16);
    seg = frac >> 9;
    rel = (((int32_t)lut[seg + 1] - (int32_t)lut[seg]) * (frac - 512 * seg)) >> 16;
    log2 = ((uint32_t)whole << 16) + (uint32_t)(frac + (int32_t)lut[seg] + rel);
    loge = (uint32_t)(((uint64_t)TVMK_LOG_COEFF * log2 + 32768u) >> 16);
    return (output_scale * loge + 32768u) >> 16;
}

int32_t tvmk_signal_filter_bank_log_u32(const uint32_t *input, int16_t *output,
                                        const struct tvmk_signal_log_params *params,
                                        void *resource_handle)
{
    const struct tvmk_signal_log_params *p = params;
    int32_t i;

    (void)resource_handle;
    if (input == NULL || output == NULL || p == NULL || p->lut == NULL || p->count < 0
        || p->input_correction_bits < 0 || p->input_correction_bits > 31) {
        return TVM_DEVICE_ERR_INVALID;
    }
    for (i = 0; i < p->count; ++i) {
        const uint32_t x = input[i] << p->input_correction_bits;
        uint32_t v = 0;

        if (x > 1) {
            v = tvmk_log_scaled(x, (uint32_t)p->output_scale, p->lut);
            v = v < INT16_MAX ? v : INT16_MAX;
        }
        output[i] = (int16_t)v;
    }
    return TVM_DEVICE_OK;
}
