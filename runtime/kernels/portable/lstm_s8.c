/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: int8 UNIDIRECTIONAL_SEQUENCE_LSTM, TFLM's 8x8->16 EvalLstm:
 * int8 input and hidden state, int16 cell state and gate buffers (Q3.12 products, Q0.15
 * activations), TFLM's int16 sigmoid and tanh interpolating params->sigmoid_table.
 * Integer arithmetic as tvmdev/model/s8/lstm.py computes it.
 */
#include <stddef.h>

#include "sigmoid_lut.h"
#include "tvmk_fixedpoint.h"
#include "tvmk_recurrent.h"

struct tvmk_lstm_s8_gate {
    const int8_t *w, *r;
    const int32_t *bias;
    int32_t in_multiplier, in_shift, rec_multiplier, rec_shift;
    int tanh_act;
};

/* The four gates, named (not an array: no stack buffer). */
struct tvmk_lstm_s8_gates {
    struct tvmk_lstm_s8_gate input, forget, cell, output;
};

struct tvmk_lstm_s8_rows {
    const int8_t *x;
    int8_t *h;
    int16_t *c;
    int32_t rows, in, state;
};

/* Fill one gate; 0 when an operand is missing. */
static int tvmk_lstm_s8_gate_set(struct tvmk_lstm_s8_gate *g, const int8_t *w, const int8_t *r,
                                 const int32_t *bias, int32_t in_multiplier, int32_t in_shift,
                                 int32_t rec_multiplier, int32_t rec_shift, int tanh_act)
{
    g->w = w;
    g->r = r;
    g->bias = bias;
    g->in_multiplier = in_multiplier;
    g->in_shift = in_shift;
    g->rec_multiplier = rec_multiplier;
    g->rec_shift = rec_shift;
    g->tanh_act = tanh_act;
    return w != NULL && r != NULL && bias != NULL;
}

static int32_t tvmk_lstm_clamp(int32_t v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : (v > hi ? hi : v);
}

/* TFLM's int16 logistic of a Q3.12 value into Q0.15. */
static int16_t tvmk_lstm_sigmoid16(const uint16_t *table, int32_t x)
{
    return tvmk_lut_sigmoid16(table, x * 3);
}

/* TFLM's int16 tanh of x * multiplier, rounded right by shift, into Q0.15. */
static int16_t tvmk_lstm_tanh16(const uint16_t *table, int32_t x, int32_t multiplier,
                                int32_t shift)
{
    return tvmk_lut_tanh16(table, tvmk_lut_scaled(x, multiplier, shift));
}

/* One product into int16 at 2^-12: MBQM(sum (v + offset) * w (+ bias)), saturated. */
static int32_t tvmk_lstm_dot(const int8_t *v, int32_t offset, const int8_t *w, int32_t n,
                             int32_t bias, int32_t multiplier, int32_t shift)
{
    int32_t acc = bias, k;

    for (k = 0; k < n; k++) {
        acc += (int32_t)w[k] * ((int32_t)v[k] + offset);
    }
    return tvmk_lstm_clamp(tvmk_multiply_by_quantized_multiplier(acc, multiplier, shift),
                           -32768, 32767);
}

static void tvmk_lstm_gate_s8(const struct tvmk_lstm_s8_params *p,
                              const struct tvmk_lstm_s8_rows *s,
                              const struct tvmk_lstm_s8_gate *g, int16_t *out)
{
    int32_t b, j;

    for (b = 0; b < s->rows; b++) {
        for (j = 0; j < s->state; j++) {
            const int32_t a = tvmk_lstm_dot(s->x + b * s->in, -p->input_zero_point,
                                            g->w + j * s->in, s->in, g->bias[j],
                                            g->in_multiplier, g->in_shift);
            const int32_t r = tvmk_lstm_dot(s->h + b * s->state, -p->hidden_zero_point,
                                            g->r + j * s->state, s->state, 0,
                                            g->rec_multiplier, g->rec_shift);
            const int32_t sum = tvmk_lstm_clamp(a + r, -32768, 32767);
            out[b * s->state + j] = g->tanh_act
                ? tvmk_lstm_tanh16(p->sigmoid_table, sum, 3, 0)
                : tvmk_lstm_sigmoid16(p->sigmoid_table, sum);
        }
    }
}

static int32_t tvmk_lstm_mul(int32_t a, int32_t b, int32_t multiplier, int32_t shift,
                             int32_t offset, int32_t lo, int32_t hi)
{
    return tvmk_lstm_clamp(tvmk_multiply_by_quantized_multiplier(a * b, multiplier, shift)
                           + offset, lo, hi);
}

static void tvmk_lstm_step_s8(const struct tvmk_lstm_s8_params *p,
                              const struct tvmk_lstm_s8_rows *s,
                              const struct tvmk_lstm_s8_gates *gates, int16_t *buf,
                              int8_t *out)
{
    const int32_t n = s->rows * s->state;
    const int32_t shift = 15 + p->cell_scale_power - 3;  /* TFLM's tanh of the cell */
    const int32_t t_mult = shift < 0 ? 3 : 3 << shift, t_shift = shift < 0 ? -shift : 0;
    int16_t *f = buf, *i = buf + n, *g = buf + 2 * n, *o = buf + 3 * n;
    int32_t k;

    tvmk_lstm_gate_s8(p, s, &gates->forget, f);
    tvmk_lstm_gate_s8(p, s, &gates->input, i);
    tvmk_lstm_gate_s8(p, s, &gates->cell, g);
    tvmk_lstm_gate_s8(p, s, &gates->output, o);  /* reads h before it changes */
    for (k = 0; k < n; k++) {
        int32_t c = tvmk_lstm_mul(f[k], s->c[k], p->forget_mul_multiplier,
                                  p->forget_mul_shift, 0, -32768, 32767);
        c = tvmk_lstm_clamp(c + tvmk_lstm_mul(i[k], g[k], p->input_mul_multiplier,
                                              p->input_mul_shift, 0, -32768, 32767),
                            -32768, 32767);
        if (p->cell_clip > 0) {
            c = tvmk_lstm_clamp(c, -p->cell_clip, p->cell_clip);
        }
        s->c[k] = (int16_t)c;
        s->h[k] = (int8_t)tvmk_lstm_mul(tvmk_lstm_tanh16(p->sigmoid_table, c, t_mult, t_shift),
                                        o[k], p->output_mul_multiplier, p->output_mul_shift,
                                        p->hidden_zero_point, -128, 127);
        out[k] = s->h[k];
    }
}

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
                     void *resource_handle)
{
    const struct tvmk_lstm_s8_params *p = params;
    struct tvmk_lstm_s8_gates gates;
    struct tvmk_lstm_s8_rows s;
    int32_t b, t, sequences;

    (void)resource_handle;
    if (input == NULL || output_state == NULL || cell_state == NULL || output == NULL
        || p == NULL || p->scratch == NULL || p->sigmoid_table == NULL) {
        return TVM_DEVICE_ERR_INVALID;
    }
    if (!tvmk_lstm_s8_gate_set(&gates.input, input_to_input_weights,
                               recurrent_to_input_weights, input_gate_bias,
                               p->input_inp_multiplier, p->input_inp_shift,
                               p->input_rec_multiplier, p->input_rec_shift, 0)
        || !tvmk_lstm_s8_gate_set(&gates.forget, input_to_forget_weights,
                                  recurrent_to_forget_weights, forget_gate_bias,
                                  p->forget_inp_multiplier, p->forget_inp_shift,
                                  p->forget_rec_multiplier, p->forget_rec_shift, 0)
        || !tvmk_lstm_s8_gate_set(&gates.cell, input_to_cell_weights,
                                  recurrent_to_cell_weights, cell_gate_bias,
                                  p->cell_inp_multiplier, p->cell_inp_shift,
                                  p->cell_rec_multiplier, p->cell_rec_shift, 1)
        || !tvmk_lstm_s8_gate_set(&gates.output, input_to_output_weights,
                                  recurrent_to_output_weights, output_gate_bias,
                                  p->output_inp_multiplier, p->output_inp_shift,
                                  p->output_rec_multiplier, p->output_rec_shift, 0)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    s.rows = p->time_major ? p->batch : 1;
    if (p->scratch_bytes < (int32_t)sizeof(int16_t) * 4 * s.rows * p->state_size) {
        return TVM_DEVICE_ERR_INVALID;
    }
    s.in = p->input_size;
    s.state = p->state_size;
    sequences = p->time_major ? 1 : p->batch;
    for (b = 0; b < sequences; b++) {
        s.h = output_state + b * p->state_size;
        s.c = cell_state + b * p->state_size;
        for (t = 0; t < p->time_steps; t++) {
            const int32_t step = b * p->time_steps + t;
            s.x = input + step * s.rows * p->input_size;
            tvmk_lstm_step_s8(p, &s, &gates, (int16_t *)p->scratch,
                              output + step * s.rows * p->state_size);
        }
    }
    return TVM_DEVICE_OK;
}
