/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev's "tvmdev_cm" kernel library: int8 kernels of tvmdev's own for Cortex-M,
 * specialized at generation time (tvmdev/plan/hooks/tvmdev_cm.py), with the portable
 * kernels' calling convention and params structs (tvmk_s8.h). Where it does not apply it
 * declined at generation time and CMSIS-NN (or the portable kernel) took the operator.
 *
 * depthwise_conv2d: channel multiplier 1, no dilation, a square 3x3, 5x5 or 7x7 filter,
 * stride 1 or 2 in both directions. Each channel of the input is copied, widened to
 * int16, into a plane in the scratch whose padding holds the input's zero point, so the
 * loops have no bounds checks, and the channel's filter is widened into int16 pairs for
 * the DSP extension's SMLAD (per row, (KW + 1) / 2 words, the low half the even tap, the
 * high half the odd one, a zero after an odd row) beside it, with its bias plus
 * input_offset times the sum of its taps: sum(w * x) over the window plus that folded
 * bias is TFLM's accumulator exactly (modulo 2^32, where SMLAD wraps). The filter stays
 * int8 in flash: widening it costs a few instructions per channel and call, against the
 * thousands of its outputs. Requantization is TFLM's MultiplyByQuantizedMultiplier
 * (tvmk_cm_arith.h). Without the DSP extension (Cortex-M3, the host) the same loops
 * compute each SMLAD in C.
 *
 * conv2d: no groups, no dilation, a filter of more than one tap and at most 32 taps per
 * output channel (KH x KW x C: a network's first convolution). packed_weights: per output
 * channel, its taps in the filter's order (row, column, channel) as int16 pairs, a zero
 * after an odd count; folded_bias: its bias plus input_offset times the sum of its
 * taps (at generation time: the filter is small). Each output row's windows are
 * widened into the scratch (OW x the taps rounded up to even, int16), padding holding
 * the zero point.
 *
 * conv2d with a 1x1 filter (conv1x1_s8.c, tvmk_cm_conv1x1_s8, called by tvmk_cm_conv2d_s8):
 * no groups, no dilation, no padding, any stride. packed_weights, per group of four output
 * channels (the last padded with zero channels): the four accumulator starts (bias plus
 * input_offset times the sum of the channel's weights, scaled by 2^(left shift + 1)); per
 * quad of input channels (the last padded with zeros) eight words, the four channels'
 * int16 pairs (w[4j], w[4j + 2]) then (w[4j + 1], w[4j + 3]), scaled alike: the order
 * SXTB16, and SXTB16 of the word rotated by 8, give four int8 activations; then per
 * channel its multiplier, 2^(right - 1) + output_offset * 2^right, and its right shift.
 * folded_bias is not read. Where the widened filter would exceed the board's flash
 * budget (and C is a multiple of 4), packed_weights is NULL and the int8 filter W is read,
 * four pixels at a time; folded_bias then holds per channel five words: the folded bias
 * (unscaled), the multiplier, the left shift plus one, the rounding-and-offset constant,
 * the right shift. The scratch holds four pixels widened (32 bytes per quad).
 *
 * conv2d with more than TVMK_CM_TAPS_MAX taps (conv_general_s8.c, tvmk_cm_conv_general_s8,
 * called by tvmk_cm_conv2d_s8): no groups, no dilation; any filter size, stride and
 * padding. Each output pixel's window is the 1x1's input over KH x KW x C taps (in the
 * filter's order): packed_weights and folded_bias as the 1x1's with C the taps (the int8
 * filter: taps a multiple of 4). The scratch holds four windows widened (32 bytes per quad
 * of taps), then 4 bytes per quad for the windows gathered at the input's edges.
 */
#define TVMK_CM_TAPS_MAX 32 /* the first-convolution kernel's taps (conv2d_s8.c) */
#ifndef TVMK_CM_H_
#define TVMK_CM_H_

#include <stdint.h>

#include "tvmk_s8.h"
#include "tvmk_s8_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

int32_t tvmk_cm_conv2d_s8(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                          const struct tvmk_conv2d_s8_params *params, void *resource_handle);
int32_t tvmk_cm_conv1x1_s8(const int8_t *X, const int8_t *W, int8_t *Y,
                           const struct tvmk_conv2d_s8_params *params);
int32_t tvmk_cm_conv_general_s8(const int8_t *X, const int8_t *W, int8_t *Y,
                                const struct tvmk_conv2d_s8_params *params);
int32_t tvmk_cm_depthwise_conv2d_s8(const int8_t *input, const int8_t *filter,
                                    const int32_t *bias, int8_t *output,
                                    const struct tvmk_depthwise_conv2d_s8_params *params,
                                    void *resource_handle);
/* The Helium (MVE) path of depthwise_conv2d (depthwise_conv2d_s8_mve.c), which the entry
 * point calls on a core with MVE: an int32 plane per channel, eight outputs a pass. */
int32_t tvmk_cm_depthwise_conv2d_s8_mve(const int8_t *input, const int8_t *filter,
                                        const int32_t *bias, int8_t *output,
                                        const struct tvmk_depthwise_conv2d_s8_params *params);
/* The Helium (MVE) path of depthwise_conv2d across channels (depthwise_conv2d_s8_mvec.c):
 * eight output channels a vector, a ring of input rows; _takes says whether it serves p
 * (the hooks' rule, tvmdev_cm_mvedw.py), else the plane path does. */
int32_t tvmk_cm_depthwise_conv2d_s8_mvec(const int8_t *input, const int8_t *filter,
                                         const int32_t *bias, int8_t *output,
                                         const struct tvmk_depthwise_conv2d_s8_params *params);
int32_t tvmk_cm_dw_mvec_takes(const struct tvmk_depthwise_conv2d_s8_params *params);
/* ADD on Helium (add_s8_mve.c): two operands of the output's shape, four elements a
 * vector, TFLM's arithmetic; elsewhere declined (TVM_DEVICE_ERR_INVALID). */
int32_t tvmk_cm_add_s8(const int8_t *A, const int8_t *B, int8_t *C,
                       const struct tvmk_add_s8_params *params, void *resource_handle);
/* The Helium (MVE) path of conv2d (conv2d_s8_mve.c): a 1x1 filter over at most 16 input
 * channels, four pixels' inputs in registers across every output channel. */
int32_t tvmk_cm_conv2d_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                              const struct tvmk_conv2d_s8_params *params);
/* Its 1x1 filter over more input channels (16 to more than 16 outputs), or strided
 * (conv1x1_s8_mve.c): four pixels in a tile, two output channels a pass
 * (tvmk_cm_mve_mm.h). */
int32_t tvmk_cm_conv1x1_s8_mve(const int8_t *X, const int8_t *W, const int32_t *B, int8_t *Y,
                               const struct tvmk_conv2d_s8_params *params);

/* FULLY_CONNECTED int8 (fully_connected_s8.c; its Helium path fully_connected_s8_mve.c):
 * weights per tensor or per row, zero point 0, TFLM's layout; kernel_sums: per row its
 * bias plus input_offset times the sum of its weights (tvmdev/plan/hooks/tvmdev_cm_fc.py),
 * on the DSP path followed by a requantization record per row and a flag. The DSP path's
 * scratch holds the input row widened, two words per four inputs; Helium's needs none. */
int32_t tvmk_cm_fully_connected_s8(const int8_t *input, const int8_t *weights,
                                   const int32_t *bias, int8_t *output,
                                   const struct tvmk_fully_connected_s8_params *params,
                                   void *resource_handle);
int32_t tvmk_cm_fully_connected_s8_mve(const int8_t *input, const int8_t *weights,
                                       int8_t *output,
                                       const struct tvmk_fully_connected_s8_params *params);

/* The Helium (MVE) path of conv2d with more than one tap per input channel
 * (conv2d_gen_s8_mve.c): two windows gathered, times four output channels a block. */
int32_t tvmk_cm_conv2d_gen_s8_mve(const int8_t *X, const int8_t *W, int8_t *Y,
                                  const struct tvmk_conv2d_s8_params *params);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_CM_H_ */
