/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels with state: TFLite's SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM,
 * float32 and int8 (bit-exact with TFLM's reference kernels). C99, no allocation.
 *
 * The state arguments (an SVDF's state, an LSTM's output_state and cell_state) are the
 * model's variable tensors: the kernel reads them and updates them in place, and the
 * executor keeps them from one run to the next (tvmgen_<model>_reset sets them). Every
 * buffer a kernel needs beyond its tensors is its scratch (scratch_bytes, scratch), sized
 * by tvmdev/model/recurrent.py (svdf_scratch, lstm_scratch) in the workspace.
 */
#ifndef TVMK_RECURRENT_H_
#define TVMK_RECURRENT_H_

#include <stdint.h>

#include "tvmk_portable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SVDF: input [batch, input_size]; weights_feature [num_filters, input_size];
 * weights_time [num_filters, memory_size]; bias [num_units] (optional); state
 * [batch, num_filters * memory_size], each filter's memory oldest first; output
 * [batch, num_units], num_units = num_filters / rank. activation: TVMK_ACT_*.
 * Scratch: 4 * batch * (num_filters + num_units) bytes. */
struct tvmk_svdf_params {
    int32_t batch, input_size, num_filters, memory_size, rank, num_units;
    int32_t activation;
    int32_t scratch_bytes;
    void *scratch;
};

/* int8 SVDF (TFLM's EvalIntegerSvdfReference): the newest state slot of each filter is
 * clamp(MBQM(sum (input - input_zero_point) * weights_feature, scale_1), state_min,
 * state_max) + state_zero_point; the output clamp(MBQM(bias + sum over the unit's rank
 * filters of sum weights_time * (state - state_zero_point), scale_2) +
 * output_zero_point, -128, 127). state_min / state_max: the state type's range (int16
 * or int8). No fused activation (TFLM applies none). Scratch as the float kernel's. */
struct tvmk_svdf_s8_params {
    int32_t batch, input_size, num_filters, memory_size, rank, num_units;
    int32_t input_zero_point, state_zero_point, output_zero_point;
    int32_t scale_1_multiplier, scale_1_shift;
    int32_t scale_2_multiplier, scale_2_shift;
    int32_t state_min, state_max;
    int32_t scratch_bytes;
    void *scratch;
};

/* UNIDIRECTIONAL_SEQUENCE_LSTM, the standard LSTM: input [batch, time_steps,
 * input_size] ([time_steps, batch, input_size] when time_major); the weights
 * [state_size, input_size] (input_to_*) and [state_size, state_size] (recurrent_to_*),
 * gates in the order input, forget, cell, output; the gates' biases [state_size];
 * output_state and cell_state batch x state_size; output as the input with state_size
 * last. The cell is clipped to +-cell_clip when cell_clip > 0.
 * Scratch: four gate buffers of (time_major ? batch : 1) x state_size floats. */
struct tvmk_lstm_params {
    int32_t batch, time_steps, input_size, state_size, time_major;
    float cell_clip;
    int32_t scratch_bytes;
    void *scratch;
};

/* int8 LSTM (TFLM's 8x8->16 EvalLstm): each gate's two products into int16 at 2^-12,
 * <gate>_inp_* and <gate>_rec_* requantizing the input's and the hidden state's (each
 * less its zero point; the input's with the gate's bias), added with saturation; TFLM's
 * int16 sigmoid (tanh for the cell gate) from sigmoid_table (256 entries, Q0.16) into
 * Q0.15. forget_mul_*, input_mul_*: the products into the cell's scale; output_mul_*:
 * tanh(cell) * output gate into the hidden state's scale, plus hidden_zero_point.
 * cell_scale_power: the cell scale is 2^cell_scale_power; cell_clip: the quantized
 * clip (0: none). Scratch: four gate buffers of (time_major ? batch : 1) x state_size
 * int16. */
struct tvmk_lstm_s8_params {
    int32_t batch, time_steps, input_size, state_size, time_major;
    int32_t input_zero_point, hidden_zero_point;
    int32_t input_inp_multiplier, input_inp_shift, input_rec_multiplier, input_rec_shift;
    int32_t forget_inp_multiplier, forget_inp_shift, forget_rec_multiplier, forget_rec_shift;
    int32_t cell_inp_multiplier, cell_inp_shift, cell_rec_multiplier, cell_rec_shift;
    int32_t output_inp_multiplier, output_inp_shift, output_rec_multiplier, output_rec_shift;
    int32_t forget_mul_multiplier, forget_mul_shift;
    int32_t input_mul_multiplier, input_mul_shift;
    int32_t output_mul_multiplier, output_mul_shift;
    int32_t cell_clip, cell_scale_power;
    const uint16_t *sigmoid_table;
    int32_t scratch_bytes;
    void *scratch;
};

int32_t tvmk_svdf_f32(const float *input, const float *weights_feature,
                      const float *weights_time, const float *bias, float *state, float *output,
                      const struct tvmk_svdf_params *params, void *resource_handle);
int32_t tvmk_svdf_s8_s16(const int8_t *input, const int8_t *weights_feature,
                         const int16_t *weights_time, const int32_t *bias, int16_t *state,
                         int8_t *output, const struct tvmk_svdf_s8_params *params,
                         void *resource_handle);
int32_t tvmk_svdf_s8(const int8_t *input, const int8_t *weights_feature,
                     const int8_t *weights_time, const int32_t *bias, int8_t *state,
                     int8_t *output, const struct tvmk_svdf_s8_params *params,
                     void *resource_handle);

/* The LSTM kernels take their 13 constant operands in tvmdev's order (as the struct's
 * comment), then output_state, cell_state, the output. */
int32_t tvmk_lstm_f32(const float *input, const float *input_to_input_weights,
                      const float *input_to_forget_weights, const float *input_to_cell_weights,
                      const float *input_to_output_weights,
                      const float *recurrent_to_input_weights,
                      const float *recurrent_to_forget_weights,
                      const float *recurrent_to_cell_weights,
                      const float *recurrent_to_output_weights, const float *input_gate_bias,
                      const float *forget_gate_bias, const float *cell_gate_bias,
                      const float *output_gate_bias, float *output_state, float *cell_state,
                      float *output, const struct tvmk_lstm_params *params,
                      void *resource_handle);
int32_t tvmk_lstm_s8(const int8_t *input, const int8_t *input_to_input_weights,
                     const int8_t *input_to_forget_weights, const int8_t *input_to_cell_weights,
                     const int8_t *input_to_output_weights,
                     const int8_t *recurrent_to_input_weights,
                     const int8_t *recurrent_to_forget_weights,
                     const int8_t *recurrent_to_cell_weights,
                     const int8_t *recurrent_to_output_weights, const int32_t *input_gate_bias,
                     const int32_t *forget_gate_bias, const int32_t *cell_gate_bias,
                     const int32_t *output_gate_bias, int8_t *output_state, int16_t *cell_state,
                     int8_t *output, const struct tvmk_lstm_s8_params *params,
                     void *resource_handle);

#ifdef __cplusplus
}
#endif

#endif /* TVMK_RECURRENT_H_ */
