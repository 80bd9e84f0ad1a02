/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels on raw integers (int8, int16, int32, uint32, uint64 values
 * without quantization), bit-exact with TFLM: CAST between integer types (C's
 * conversions) and to float32, int32 ADD, MUL, DIV, MAXIMUM, MINIMUM with broadcasting
 * and the fused activation's clamp, CONCATENATION, RESHAPE and STRIDED_SLICE (strided_slice.c);
 * and TFLM's signal library (micro_speech's audio front end). C99, no allocation, a few
 * locals; the calling convention is the float kernels' (tvmk_portable.h).
 *
 * Params come from tvmdev/model/rawint, whose numpy references (with
 * tvmdev/model/signal) compute the same bits. int32 sums and products wrap modulo 2^32,
 * as TFLM's do in practice; DIV by zero, or INT32_MIN by -1, returns
 * TVM_DEVICE_ERR_INVALID (TFLM traps).
 *
 * One kernel keeps state between runs: tvmk_signal_noise_estimate_u32 updates its state
 * argument in place, a state tensor of the model (zeroed by the model's reset, as TFLM
 * zeroes the spectral subtraction's persistent noise buffer at Prepare and Reset).
 */
#ifndef TVMK_RAWINT_H_
#define TVMK_RAWINT_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tvmk_binary_params' broadcast, and the fused activation's int32 clamp. */
struct tvmk_int_binary_params {
    int32_t ndim, count;
    int32_t shape[TVMK_MAX_DIMS];
    int32_t a_strides[TVMK_MAX_DIMS];
    int32_t b_strides[TVMK_MAX_DIMS];
    int32_t activation;
    int32_t act_min, act_max;
};

struct tvmk_signal_window_params {
    int32_t count, size, shift;
};

/* radices: each stage's (4 or 2), outermost first; tw_*: the fft_length / 2 Q15
 * twiddles; split_*: the fft_length / 4 of the real split. */
struct tvmk_signal_rfft_params {
    int32_t frames, length, fft_length, stages;
    const int32_t *radices;
    const int16_t *tw_re;
    const int16_t *tw_im;
    const int16_t *split_re;
    const int16_t *split_im;
};

struct tvmk_signal_energy_params {
    int32_t bins, start_index, end_index;
};

struct tvmk_signal_filter_bank_params {
    int32_t num_channels, input_count, weight_count;
};

struct tvmk_signal_noise_params {
    int32_t count;
    int32_t smoothing, one_minus_smoothing, alternate_smoothing,
        alternate_one_minus_smoothing;
    int32_t smoothing_bits, spectral_subtraction_bits, clamping;
};

struct tvmk_signal_subtraction_params {
    int32_t count, smoothing_bits, spectral_subtraction_bits, min_signal_remaining;
};

struct tvmk_signal_pcan_params {
    int32_t count, snr_shift;
};

struct tvmk_signal_log_params {
    int32_t count, output_scale, input_correction_bits;
    const uint16_t *lut; /* 130 entries: 65536 * (log2(1 + i/128) - i/128), then 0 */
};

int32_t tvmk_cast_i16_i32(const int16_t *input, int32_t *output,
                          const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_i16_f32(const int16_t *input, float *output,
                          const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_u32_i32(const uint32_t *input, int32_t *output,
                          const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_i32_u32(const int32_t *input, uint32_t *output,
                          const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_i32_i8(const int32_t *input, int8_t *output,
                         const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_i32_i16(const int32_t *input, int16_t *output,
                          const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_cast_i32_f32(const int32_t *input, float *output,
                          const struct tvmk_unary_params *params, void *resource_handle);

int32_t tvmk_add_i32(const int32_t *A, const int32_t *B, int32_t *C,
                     const struct tvmk_int_binary_params *params, void *resource_handle);
int32_t tvmk_mul_i32(const int32_t *A, const int32_t *B, int32_t *C,
                     const struct tvmk_int_binary_params *params, void *resource_handle);
int32_t tvmk_div_i32(const int32_t *A, const int32_t *B, int32_t *C,
                     const struct tvmk_int_binary_params *params, void *resource_handle);
int32_t tvmk_maximum_i32(const int32_t *A, const int32_t *B, int32_t *C,
                         const struct tvmk_int_binary_params *params, void *resource_handle);
int32_t tvmk_minimum_i32(const int32_t *A, const int32_t *B, int32_t *C,
                         const struct tvmk_int_binary_params *params, void *resource_handle);

int32_t tvmk_concat_i32(const int32_t *const *inputs, int32_t *concat_result,
                        const struct tvmk_concat_params *params, void *resource_handle);
int32_t tvmk_reshape_i32(const int32_t *data, int32_t *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle);
int32_t tvmk_reshape_u32(const uint32_t *data, uint32_t *reshaped,
                         const struct tvmk_unary_params *params, void *resource_handle);
/* STRIDED_SLICE, SPLIT, SPLIT_V on raw integers: strided_slice.c's copy, with
 * tvmk_strided_slice_params (tvmk_portable.h). */
int32_t tvmk_strided_slice_i16(const int16_t *input, int16_t *output,
                               const struct tvmk_strided_slice_params *params,
                               void *resource_handle);
int32_t tvmk_strided_slice_i32(const int32_t *input, int32_t *output,
                               const struct tvmk_strided_slice_params *params,
                               void *resource_handle);
int32_t tvmk_strided_slice_u32(const uint32_t *input, uint32_t *output,
                               const struct tvmk_strided_slice_params *params,
                               void *resource_handle);

int32_t tvmk_signal_window_i16(const int16_t *input, const int16_t *weights, int16_t *output,
                               const struct tvmk_signal_window_params *params,
                               void *resource_handle);
int32_t tvmk_signal_fft_shift_i16(const int16_t *input, int32_t *output,
                                  const struct tvmk_unary_params *params,
                                  void *resource_handle);
int32_t tvmk_signal_fft_scale_i16(const int16_t *input, const int32_t *shift, int16_t *output,
                                  const struct tvmk_unary_params *params,
                                  void *resource_handle);
int32_t tvmk_signal_rfft_i16(const int16_t *input, int16_t *output,
                             const struct tvmk_signal_rfft_params *params,
                             void *resource_handle);
int32_t tvmk_signal_energy_i16(const int16_t *input, uint32_t *output,
                               const struct tvmk_signal_energy_params *params,
                               void *resource_handle);
int32_t tvmk_signal_filter_bank_u32(const uint32_t *input, const int16_t *weights,
                                    const int16_t *unweights,
                                    const int16_t *channel_frequency_starts,
                                    const int16_t *channel_weight_starts,
                                    const int16_t *channel_widths, uint64_t *output,
                                    const struct tvmk_signal_filter_bank_params *params,
                                    void *resource_handle);
int32_t tvmk_signal_filter_bank_sqrt_u64(const uint64_t *input, const int32_t *shift,
                                         uint32_t *output,
                                         const struct tvmk_unary_params *params,
                                         void *resource_handle);
int32_t tvmk_signal_noise_estimate_u32(const uint32_t *input, uint32_t *state,
                                       uint32_t *output,
                                       const struct tvmk_signal_noise_params *params,
                                       void *resource_handle);
int32_t tvmk_signal_spectral_subtraction_u32(
    const uint32_t *input, const uint32_t *noise, uint32_t *output,
    const struct tvmk_signal_subtraction_params *params, void *resource_handle);
int32_t tvmk_signal_pcan_u32(const uint32_t *input, const uint32_t *noise,
                             const int16_t *gain_lut, uint32_t *output,
                             const struct tvmk_signal_pcan_params *params,
                             void *resource_handle);
int32_t tvmk_signal_filter_bank_log_u32(const uint32_t *input, int16_t *output,
                                        const struct tvmk_signal_log_params *params,
                                        void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_RAWINT_H_ */
