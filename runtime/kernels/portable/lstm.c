/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tvmdev portable kernels: float32 UNIDIRECTIONAL_SEQUENCE_LSTM, the standard LSTM as
 * TFLM's EvalLstm<float> computes it: per step, the forget, input and cell gates, the
 * cell update, the output gate and the hidden state, copied to the output. Time-major
 * input runs the whole batch each step; batch-major runs each sequence in turn.
 */
#include <math.h>
#include <stddef.h>

#include "tvmk_recurrent.h"

/* The operands of one gate. */
struct tvmk_lstm_gate {
    const float *w, *r, *bias;
    int tanh_act;
};

/* The four gates, named (not an array: no stack buffer). */
struct tvmk_lstm_gates {
    struct tvmk_lstm_gate input, forget, cell, output;
};

/* One step's rows: the input, hidden and cell rows, and the sizes. */
struct tvmk_lstm_rows {
    const float *x;
    float *h, *c;
    int32_t rows, in, state;
};

static int tvmk_lstm_gate_ok(const struct tvmk_lstm_gate *g)
{
    return g->w != NULL && g->r != NULL && g->bias != NULL;
}

static float tvmk_lstm_sigmoid(float v)
{
    if (v >= 0.0f) {
        return 1.0f / (1.0f + expf(-v));
    }
    return expf(v) / (1.0f + expf(v));
}

/* out = act(W x + R h + b), each row of the step. */
static void tvmk_lstm_gate_f32(const struct tvmk_lstm_rows *s, const struct tvmk_lstm_gate *g,
                               float *out)
{
    int32_t b, j, k;

    for (b = 0; b < s->rows; b++) {
        for (j = 0; j < s->state; j++) {
            float acc = g->bias[j];
            float rec = 0.0f;
            for (k = 0; k < s->in; k++) {
                acc += g->w[j * s->in + k] * s->x[b * s->in + k];
            }
            for (k = 0; k < s->state; k++) {
                rec += g->r[j * s->state + k] * s->h[b * s->state + k];
            }
            acc += rec;
            out[b * s->state + j] = g->tanh_act ? tanhf(acc) : tvmk_lstm_sigmoid(acc);
        }
    }
}

static void tvmk_lstm_step_f32(const struct tvmk_lstm_rows *s,
                               const struct tvmk_lstm_gates *gates, float clip, float *buf,
                               float *out)
{
    const int32_t n = s->rows * s->state;
    float *f = buf, *i = buf + n, *g = buf + 2 * n, *o = buf + 3 * n;
    int32_t k;

    tvmk_lstm_gate_f32(s, &gates->forget, f);
    tvmk_lstm_gate_f32(s, &gates->input, i);
    tvmk_lstm_gate_f32(s, &gates->cell, g);
    tvmk_lstm_gate_f32(s, &gates->output, o);  /* reads h before it changes */
    for (k = 0; k < n; k++) {
        float c = f[k] * s->c[k] + i[k] * g[k];
        if (clip > 0.0f) {
            c = c > clip ? clip : (c < -clip ? -clip : c);
        }
        s->c[k] = c;
        s->h[k] = o[k] * tanhf(c);
        out[k] = s->h[k];
    }
}

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
                      void *resource_handle)
{
    const struct tvmk_lstm_params *p = params;
    const struct tvmk_lstm_gates gates = {
        {input_to_input_weights, recurrent_to_input_weights, input_gate_bias, 0},
        {input_to_forget_weights, recurrent_to_forget_weights, forget_gate_bias, 0},
        {input_to_cell_weights, recurrent_to_cell_weights, cell_gate_bias, 1},
        {input_to_output_weights, recurrent_to_output_weights, output_gate_bias, 0},
    };
    struct tvmk_lstm_rows s;
    int32_t b, t, sequences;

    (void)resource_handle;
    if (input == NULL || output_state == NULL || cell_state == NULL || output == NULL
        || p == NULL || p->scratch == NULL || !tvmk_lstm_gate_ok(&gates.input)
        || !tvmk_lstm_gate_ok(&gates.forget) || !tvmk_lstm_gate_ok(&gates.cell)
        || !tvmk_lstm_gate_ok(&gates.output)) {
        return TVM_DEVICE_ERR_INVALID;
    }
    s.rows = p->time_major ? p->batch : 1;
    if (p->scratch_bytes < (int32_t)sizeof(float) * 4 * s.rows * p->state_size) {
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
            tvmk_lstm_step_f32(&s, &gates, p->cell_clip, (float *)p->scratch,
                               output + step * s.rows * p->state_size);
        }
    }
    return TVM_DEVICE_OK;
}
